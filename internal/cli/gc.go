package cli

import (
	"bufio"
	"fmt"
	"os"
	"strings"

	"github.com/seed1cedbf7c/ckpt"
	"github.com/spf13/cobra"
)

type gcOptions struct {
	keep    int
	maxAge  string
	maxSize string
	dryRun  bool
	json    bool
}

func newGCCmd(e *env) *cobra.Command {
	o := &gcOptions{}
	c := &cobra.Command{
		Use:   "gc [--keep N] [--max-age DUR] [--max-size SIZE] [--dry-run]",
		Short: "Remove old checkpoints and free their space",
		Long: `Gc applies the retention policy: per branch it keeps the newest --keep
checkpoints younger than --max-age, then drops the oldest of those until the
store fits in --max-size. Defaults come from the store's settings (ckpt
config: keep 100, max_age 30d, max_size 1GiB). Checkpoints named by HEAD, a
branch, a tag or a snapshot are never removed by count, age or size; expired
snapshots (--ttl) are removed. The operation log keeps the window whose
checkpoints are kept, so undo never leads to a removed checkpoint. Then every
object nothing kept refers to is deleted and the store is compacted.

Gc also runs by itself after a save once the store is well over its limits
(without compacting, so it stays quick).`,
		Example: `  ckpt gc --dry-run            # what would go
  ckpt gc
  ckpt gc --keep 20 --max-age 7d
  ckpt gc --max-size 200MiB --json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error { return runGC(e, o, cmd) },
	}
	c.Flags().IntVar(&o.keep, "keep", 0, "checkpoints to keep per branch (default: setting keep)")
	c.Flags().StringVar(&o.maxAge, "max-age", "", "drop checkpoints older than `DUR`, e.g. 7d, 12h; 0: no limit (default: setting max_age)")
	c.Flags().StringVar(&o.maxSize, "max-size", "", "keep the store under `SIZE`, e.g. 500MiB; 0: no limit (default: setting max_size)")
	c.Flags().BoolVarP(&o.dryRun, "dry-run", "n", false, "show what would be removed, remove nothing")
	c.Flags().BoolVar(&o.json, "json", false, "print the result as JSON")
	return c
}

func runGC(e *env, o *gcOptions, cmd *cobra.Command) error {
	r, err := e.open(o.json)
	if err != nil {
		return err
	}
	ret := r.Config().Retention()
	if cmd.Flags().Changed("keep") {
		if o.keep < 0 {
			return usagef("--keep %d: want a number >= 0", o.keep)
		}
		ret.Keep = o.keep
	}
	if o.maxAge != "" {
		if ret.MaxAge, err = ckpt.ParseDuration(o.maxAge); err != nil {
			return usagef("--max-age: %v", err)
		}
	}
	if o.maxSize != "" {
		if ret.MaxSize, err = ckpt.ParseSize(o.maxSize); err != nil {
			return usagef("--max-size: %v", err)
		}
	}
	res, err := r.GC(e.ctx, ckpt.GCOptions{Retention: &ret, DryRun: o.dryRun})
	if err != nil {
		return err
	}
	if o.json {
		return e.printJSON(res)
	}
	if e.quiet {
		return nil
	}
	verb := "removed"
	if res.DryRun {
		verb = "would remove"
	}
	for _, c := range res.Removed {
		e.printf("%s %s\n", verb, listLine(c))
	}
	for _, s := range res.ExpiredSnapshots {
		e.printf("%s expired snapshot %s\n", verb, s)
	}
	for _, s := range res.Sessions {
		e.printf("%s session %s (idle for longer than %s)\n", verb, s, ckpt.FormatDuration(res.Retention.MaxAge))
	}
	e.printf("%s %d checkpoint(s), %d object(s), %s; kept %d checkpoint(s)", verb, len(res.Removed), res.Objects, ckpt.HumanSize(res.Freed), res.Kept)
	if res.Ops > 0 {
		e.printf("; undo history before the oldest kept step dropped (%d operation(s))", res.Ops)
	}
	e.printf("\n")
	if !res.DryRun {
		e.printf("store size %s -> %s\n", ckpt.HumanSize(res.SizeBefore), ckpt.HumanSize(res.SizeAfter))
	}
	return nil
}

func newStatsCmd(e *env) *cobra.Command {
	var asJSON bool
	c := &cobra.Command{
		Use:   "stats",
		Short: "Show the history's size: checkpoints by kind, bytes stored vs on disk",
		Long: `Stats reports the workspace's history: checkpoints by kind, branches, tags and
snapshots, the oldest and newest checkpoint, HEAD's files, what the
checkpoints would take as full copies (logical), the distinct content
(unique), what the store holds after compression and deltas (stored), the
store's size on disk, the resulting ratio, and HEAD's largest files. With -q it
prints nothing; its exit status says whether the store could be read.`,
		Example: "  ckpt stats\n  ckpt stats --json",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			r, err := e.open(asJSON)
			if err != nil {
				return err
			}
			s, err := r.Stats(e.ctx)
			if err != nil {
				return err
			}
			if asJSON {
				return e.printJSON(s) // with its ratio
			}
			if e.quiet {
				return nil // read the store, print nothing: the status says it could
			}
			var kinds []string
			for _, k := range []string{"manual", "turn", "run", "edit", "pre-restore", "restore"} {
				if n := s.Checkpoints[k]; n > 0 {
					kinds = append(kinds, fmt.Sprintf("%d %s", n, k))
				}
			}
			e.printf("workspace:   %s\nstore:       %s (%s)\n", s.Workspace, s.Store, s.Backend)
			e.printf("checkpoints: %d", s.Total)
			if len(kinds) > 0 {
				e.printf(" (%s)", strings.Join(kinds, ", "))
			}
			e.printf("\nrefs:        %d branch(es), %d tag(s), %d snapshot(s)\n", s.Branches, s.Tags, s.Snapshots)
			if s.Total > 0 {
				e.printf("oldest:      %s\nnewest:      %s\n", fmtTime(s.Oldest), fmtTime(s.Newest))
			}
			e.printf("HEAD:        %d file(s), %s\n", s.Files, ckpt.HumanSize(s.FileBytes))
			e.printf("logical:     %s (every checkpoint as a full copy)\n", ckpt.HumanSize(s.Logical))
			e.printf("unique:      %s (distinct file contents)\n", ckpt.HumanSize(s.Unique))
			e.printf("stored:      %s (%d blobs, %d trees, %d chunks; compressed, deltas)\n", ckpt.HumanSize(s.Stored), s.Blobs, s.Trees, s.Chunks)
			e.printf("on disk:     %s", ckpt.HumanSize(s.Disk))
			if r := s.Ratio(); r >= 1.05 {
				e.printf(" (%.1fx smaller than full copies)", r)
			} else if s.Logical > 0 {
				e.printf(" (a small store is mostly fixed overhead)")
			}
			e.printf("\n")
			if len(s.Largest) > 0 {
				e.printf("largest files in HEAD:\n")
				for _, f := range s.Largest {
					e.printf("  %10s  %s\n", ckpt.HumanSize(f.Size), displayPath(f.Path))
				}
			}
			return nil
		},
	}
	c.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	return c
}

func newClearCmd(e *env) *cobra.Command {
	var yes bool
	c := &cobra.Command{
		Use:   "clear [--yes]",
		Short: "Remove this workspace's whole history (files are not touched)",
		Long: `Clear deletes every checkpoint, branch, tag, snapshot, operation and session
of this workspace from its store. The workspace's files are not touched and
the store's settings are kept. It asks for confirmation on a terminal;
otherwise --yes is required.`,
		Example: "  ckpt clear\n  ckpt clear --yes",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			r, err := e.open(false)
			if err != nil {
				return err
			}
			if !yes {
				in, ok := e.stdin.(*os.File)
				if !ok || !isTerminal(in) || !isTerminal(e.stderr) {
					return usagef("clear removes the whole history of %s; run it with --yes to confirm", r.Root())
				}
				st, _ := r.Stats(e.ctx)
				n := 0
				if st != nil {
					n = st.Total
				}
				fmt.Fprintf(e.stderr, "ckpt: remove all %d checkpoint(s) of %s? The files stay. [y/N] ", n, r.Root())
				line, _ := bufio.NewReader(e.stdin).ReadString('\n')
				if a := strings.ToLower(strings.TrimSpace(line)); a != "y" && a != "yes" {
					fmt.Fprintln(e.stderr, "ckpt: nothing removed")
					return &exitStatusError{1}
				}
			}
			if err := r.Clear(e.ctx); err != nil {
				return err
			}
			if !e.quiet {
				e.printf("cleared the history of %s\n", r.Root())
			}
			return nil
		},
	}
	c.Flags().BoolVarP(&yes, "yes", "y", false, "do not ask for confirmation")
	return c
}

func newWorkspacesCmd(e *env) *cobra.Command {
	var asJSON, prune, dryRun bool
	c := &cobra.Command{
		Use:   "workspaces [--prune]",
		Short: "List every workspace with a store, its size, and whether it still exists",
		Long: `Workspaces lists the stores under the state directory ($XDG_STATE_HOME/ckpt,
or ~/.local/state/ckpt): each workspace, its store's size, and whether the
workspace directory still exists ("exists"), is provably gone ("gone"), or
cannot be checked ("unknown", with the reason on stderr). --prune removes
the stores of workspaces that are provably gone: the directory does not
exist, and its parent exists, can be read and is on the file system the
workspace was on. The store of a workspace ckpt cannot stat (permission
denied) or that may be on a disk that is not mounted is kept, and --prune
says why.`,
		Example: "  ckpt workspaces\n  ckpt workspaces --prune --dry-run\n  ckpt workspaces --prune\n  ckpt workspaces --json",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if dryRun && !prune {
				return usagef("--dry-run goes with --prune")
			}
			if prune {
				gone, kept, err := ckpt.PruneWorkspaces(e.ctx, ckpt.PruneOptions{DryRun: dryRun})
				verb := "removed"
				if dryRun {
					verb = "would remove"
				}
				for _, w := range gone {
					if !e.quiet && !asJSON {
						e.printf("%s store of %s (%s)\n", verb, w.Workspace, ckpt.HumanSize(w.Size))
					}
				}
				if !asJSON {
					for _, w := range kept {
						e.warnf("kept the store of %s: %s", w.Workspace, w.Reason)
					}
				}
				if err != nil {
					return err
				}
				if asJSON {
					return e.printJSON(struct {
						Removed []*ckpt.WorkspaceInfo `json:"removed"`
						Kept    []*ckpt.WorkspaceInfo `json:"kept"`
						DryRun  bool                  `json:"dry_run,omitempty"`
					}{nonNil(gone), nonNil(kept), dryRun})
				}
				if len(gone) == 0 && len(kept) == 0 && !e.quiet {
					fmt.Fprintln(e.stderr, "ckpt: every workspace with a store still exists; nothing to prune")
				}
				return nil
			}
			ws, err := ckpt.Workspaces()
			if err != nil {
				return err
			}
			if asJSON {
				return e.printJSON(ws)
			}
			if len(ws) == 0 && !e.quiet {
				fmt.Fprintln(e.stderr, "ckpt: no stores yet")
			}
			for _, w := range ws {
				if e.quiet {
					e.printf("%s\n", w.Workspace)
					continue
				}
				state := "exists"
				switch {
				case w.Gone:
					state = "gone"
				case !w.Exists:
					state = "unknown"
					e.warnf("%s", w.Reason)
				}
				e.printf("%-8s %6s  %s\n", state, ckpt.HumanSize(w.Size), w.Workspace)
			}
			return nil
		},
	}
	c.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	c.Flags().BoolVar(&prune, "prune", false, "remove the stores of workspaces that are provably gone")
	c.Flags().BoolVarP(&dryRun, "dry-run", "n", false, "with --prune: say which stores would be removed, remove nothing")
	return c
}
