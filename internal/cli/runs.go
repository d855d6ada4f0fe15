package cli

import (
	"context"
	"fmt"
	"strings"

	"github.com/seed1cedbf7c/ckpt"
	"github.com/spf13/cobra"
)

type runsOptions struct{ json bool }

func newRunsCmd(e *env) *cobra.Command {
	o := &runsOptions{}
	c := &cobra.Command{
		Use:   "runs [show ID | revert ID]",
		Short: "List guarded runs, show one, or revert a finished one",
		Long: `Runs lists the runs in .decree/runs, newest first: id, status (done, dead,
interrupted, reverted), attempts, files changed, and what the run was for.

  ckpt runs show ID     the run's record and files (any unique id prefix)
  ckpt runs revert ID   undo a finished run: its changes.diff in reverse,
                        verified against its manifest.json (also a dead run
                        whose changes could not be undone when it died)`,
		Example: `  ckpt runs
  ckpt runs --json
  ckpt runs show 2026112214
  ckpt runs revert 2026112214300000-0`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			runs, err := withRepo(e, o.json, (*ckpt.Repo).Runs)
			if err != nil {
				return err
			}
			return listing(e, o.json, nonNil(runs), "no runs yet (ckpt run -- CMD, or ckpt process)",
				func(rec *ckpt.RunRecord) string { return rec.ID },
				func(rec *ckpt.RunRecord) string {
					return fmt.Sprintf("%-20s %-11s %d attempt(s) %4d file(s)  %s", rec.ID, rec.Status, len(rec.Attempts), rec.Files(), rec.Title)
				})
		},
	}
	jsonFlag(c, &o.json, "")
	show := &cobra.Command{
		Use:     "show ID",
		Short:   "Show a run's record",
		Example: `  ckpt runs show 2026112214300000-0`,
		Args:    cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			d, err := withRepo(e, o.json, func(r *ckpt.Repo, ctx context.Context) (*ckpt.RunDetail, error) {
				return r.RunShow(ctx, args[0])
			})
			if err != nil {
				return err
			}
			if o.json {
				return e.printJSON(d)
			}
			rec := d.Record
			e.printf("run %s\nstatus:     %s\n", rec.ID, rec.Status)
			if rec.Reason != "" {
				e.printf("reason:     %s\n", rec.Reason)
			}
			e.printf("type:       %s\nroutine:    %s\n", rec.Type, rec.Routine)
			if len(rec.Command) > 0 {
				e.printf("command:    %s\n", strings.Join(rec.Command, " "))
			}
			if rec.InputFile != "" {
				e.printf("input file: %s\n", rec.InputFile)
			}
			if rec.Checkpoint != "" {
				e.printf("checkpoint: %s (before the run)\n", shortID(rec.Checkpoint))
			}
			if rec.Result != "" {
				e.printf("result:     %s\n", shortID(rec.Result))
			}
			e.printf("directory:  %s\n", d.Dir)
			for _, a := range rec.Attempts {
				e.printf("\nattempt %d: %s, %s, %s\n", a.N, a.Exit, ckpt.FormatCounts(a.Added, a.Modified, a.Deleted), a.Ended.Sub(a.Started).Round(1e6))
				if a.Stat != "" {
					e.printf("%s", a.Stat)
				}
			}
			e.printf("\nfiles: %s\n", strings.Join(d.Files, " "))
			return nil
		},
	}
	jsonFlag(show, &o.json, "")
	revert := &cobra.Command{
		Use:   "revert ID",
		Short: "Undo a finished run (its changes.diff in reverse, verified)",
		Long: `Revert undoes what a finished run changed: it checkpoints the current state,
applies the run's changes.diff in reverse and hash-checks every affected file
against the run's manifest.json. If the workspace no longer matches what the
run left, nothing is changed and the command exits with status 3 naming the
paths. The revert is on the timeline: ckpt undo takes it back.`,
		Example: `  ckpt runs revert 2026112214300000-0`,
		Args:    cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			rec, err := withRepo(e, o.json, func(r *ckpt.Repo, ctx context.Context) (*ckpt.RunRecord, error) {
				return r.RevertRun(ctx, args[0])
			})
			if err != nil {
				return err
			}
			return e.result(o.json, rec, "", func() {
				e.printf("reverted run %s (%d file(s))\n", rec.ID, rec.Files())
			})
		},
	}
	jsonFlag(revert, &o.json, "")
	c.AddCommand(show, revert)
	return c
}

func shortID(s string) string {
	if len(s) > 12 {
		return s[:12]
	}
	return s
}
