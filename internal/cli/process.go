package cli

import (
	"context"
	"fmt"

	"github.com/seed1cedbf7c/ckpt"
	"github.com/spf13/cobra"
)

type processOptions struct{ json, verbose bool }

func newProcessCmd(e *env) *cobra.Command {
	o := &processOptions{}
	c := &cobra.Command{
		Use:   "process",
		Short: "Run every Decree inbox message (and unprocessed spec) under checkpoint",
		Long: `Process runs the messages in .decree/inbox through Decree's flow, in order of
chain and seq: for each, a checkpoint (manifest.json), the routine from
.decree/routines (bash <name>.sh, or papermill for <name>.ipynb), changes.diff
after every attempt, retries that keep partial work (max_retries attempts in
.decree/config.yml, default 3), a clean-slate last attempt with
failure-context.md, and — if all fail — a verified revert and a dead letter
(.decree/inbox/dead). A message that succeeds moves to .decree/inbox/done and
marks its spec processed (specs/processed-spec.md).

Unprocessed specs/*.spec.md are queued as messages first. Messages a routine
adds to the inbox run too, its chain's first. Invalid messages (front matter
that is not YAML, a routine name with '/' or '..', an input_file outside the
workspace, a message over 1 MiB, front matter over 64 KiB or YAML that
expands beyond 1 MiB or 100 aliases) are reported and left untouched. Interrupting ckpt (Ctrl-C,
SIGTERM) stops the running attempt's process group within a second (it
counts as failed, its diff is written) and leaves its message in the inbox;
the next ckpt process resumes it — and, if ckpt was killed, first stops what
is left of the routine and records the attempt.

A revert handles every change a routine can make: file, directory and
symlink type changes, modes, binary files, and files its new ignore rules
hide. If changes.diff still does not reverse, the run's checkpoint (the
state before it) is restored instead. If that fails too, processing stops:
the message is dead-lettered with the reason, no later message runs, and
ckpt process refuses to run any until the workspace is the tree before that
run again (ckpt restore CHECKPOINT, or ckpt runs revert ID).

Routines' output goes to each run's routine.log (and attempt-N.log); -v also
shows it on stderr.

Exit status: 0 every message succeeded (or there was none); 4 some messages
were dead-lettered (every attempt failed; their changes were reverted); 1
some messages could not be run (reported, left in the inbox) or an error; 3
processing stopped because a run's changes could not be undone; 130 or 143
interrupted.`,
		Example: `  ckpt process
  ckpt process -v                  # show the routines' output too
  ckpt process --json | jq '.runs[] | {id, status}'`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error { return runProcess(e, o) },
	}
	jsonFlag(c, &o.json, "print the runs' records as JSON")
	c.Flags().BoolVarP(&o.verbose, "verbose", "v", false, "show the routines' output on stderr too (it is always in each run's routine.log)")
	return c
}

func runProcess(e *env, o *processOptions) error {
	res, err := withRepo(e, o.json, func(r *ckpt.Repo, ctx context.Context) (*ckpt.ProcessResult, error) {
		return r.Process(ctx, ckpt.ProcessOptions{Output: e.talk(o.json, o.verbose), Report: e.reporter(o.json)})
	})
	if err != nil {
		return err
	}
	var errs []string
	for _, err := range res.Errors {
		errs = append(errs, err.Error())
	}
	if o.json {
		stopped := ""
		if res.Stopped != nil {
			stopped = res.Stopped.Error()
		}
		if err := e.printJSON(struct {
			Runs        []*ckpt.RunRecord `json:"runs"`
			Errors      []string          `json:"errors"`
			Interrupted bool              `json:"interrupted"`
			Dead        int               `json:"dead"`
			Stopped     string            `json:"stopped,omitempty"`
		}{nonNil(res.Runs), nonNil(errs), res.Interrupted, len(res.Dead()), stopped}); err != nil {
			return err
		}
	} else {
		if len(res.Runs) == 0 && len(errs) == 0 {
			e.infof("nothing to process: .decree/inbox has no messages")
		}
		if !e.quiet {
			for _, rec := range res.Runs {
				printRunLine(e, rec)
			}
		}
		for _, m := range errs {
			fmt.Fprintf(e.stderr, "ckpt: %s\n", m)
		}
	}
	switch {
	case res.Stopped != nil:
		return res.Stopped // exit 3, with its hint
	case res.Interrupted:
		return &exitStatusError{130}
	case len(errs) > 0:
		return &exitStatusError{ExitError}
	case len(res.Dead()) > 0:
		return &exitStatusError{ExitDeadLetters}
	}
	return nil
}
