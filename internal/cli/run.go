package cli

import (
	"fmt"
	"io"
	"strings"

	"github.com/seed1cedbf7c/ckpt"
	"github.com/spf13/cobra"
)

type runOptions struct {
	retries int
	id      string
	message string
	json    bool
	verbose bool
}

func newRunCmd(e *env) *cobra.Command {
	o := &runOptions{}
	c := &cobra.Command{
		Use:   "run [--retries N] [--id CHAIN-SEQ] [-m MSG] [-v] -- CMD [ARG...]",
		Short: "Run one command under checkpoint, with retries and revert (Decree's flow)",
		Long: `Run runs CMD as an ad-hoc Decree message whose routine is the command.

It checkpoints the workspace (.decree/runs/<id>/manifest.json, and a ckpt
checkpoint of kind run), runs the command with its output in routine.log, and
writes changes.diff after every attempt. A failed attempt's work is kept for
the next one; the last attempt starts clean (the earlier ones' changes
reverted) and can read failure-context.md. If every attempt fails, the
workspace is reverted: changes.diff applied in reverse and every affected
file hash-checked against manifest.json (a mismatch exits with status 3).

The command gets Decree's environment variables: message_id, message_dir,
message_file, chain, seq, spec_file. Its output goes to the run's
routine.log (and attempt-N.log); -v also shows it on stderr.

Exit status: the command's own (its last attempt's). ckpt's own failures use
statuses commands rarely do, as env, nice and timeout do: 124 an integrity
failure (a revert that does not verify, a corrupt store), 125 any other error
(usage included); 126 and 127 the command could not be started or found.
It runs in its own process group: what it leaves running there is killed
when it exits, and ckpt does not wait for output held open by a daemon it
started. Interrupting ckpt (Ctrl-C, SIGTERM) stops the command's process
group (SIGTERM, then SIGKILL 0.25 s later) and ends ckpt within a second;
the attempt counts as failed, its diff is written, and nothing is reverted
half-way; running the same --id again resumes the run with its next attempt.
If ckpt itself was killed, ckpt recover (or running the same --id again)
stops what is left of the command and records the attempt as interrupted.`,
		Example: `  ckpt run -- make test
  ckpt run -v --retries 1 -m "try the migration" -- ./migrate.sh
  ckpt run --id 2026112214300000-0 -- bash -c 'go generate ./... && go test ./...'`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error { return runRun(e, o, args) },
	}
	c.Flags().IntVar(&o.retries, "retries", -1, "retry a failed command up to `N` times: N+1 attempts, at most 100 (default: max_retries in .decree/config.yml attempts, or 3)")
	c.Flags().StringVar(&o.id, "id", "", "the run's `CHAIN-SEQ` id (default: a new chain)")
	c.Flags().StringVarP(&o.message, "message", "m", "", "what the run is for (its title, and the message body)")
	c.Flags().BoolVarP(&o.verbose, "verbose", "v", false, "show the command's output on stderr too (it is always in routine.log)")
	c.Flags().BoolVar(&o.json, "json", false, "print the run's record as JSON")
	return c
}

// exitStatusError ends the command with a given status, silently.
type exitStatusError struct{ code int }

func (e *exitStatusError) Error() string { return fmt.Sprintf("exit status %d", e.code) }

func runRun(e *env, o *runOptions, args []string) error {
	r, err := e.open(o.json)
	if err != nil {
		return err
	}
	attempts := 0 // max_retries from .decree/config.yml
	if o.retries >= 0 {
		if o.retries >= ckpt.MaxRunAttempts {
			return usagef("--retries %d: at most %d retries (%d attempts)", o.retries, ckpt.MaxRunAttempts-1, ckpt.MaxRunAttempts)
		}
		attempts = o.retries + 1
	}
	res, err := r.Run(e.ctx, ckpt.RunOptions{Command: args, Attempts: attempts, ID: o.id, Message: o.message,
		Output: e.talk(o.json, o.verbose), Report: e.reporter(o.json)})
	e.doneProgress()
	if err != nil {
		return err
	}
	if o.json {
		if err := e.printJSON(res.Record); err != nil {
			return err
		}
	} else if !e.quiet {
		printRunLine(e, res.Record)
	}
	if res.ExitCode != 0 {
		return &exitStatusError{res.ExitCode}
	}
	return nil
}

// talk is where a routine's output goes besides its log: stderr with -v,
// unless printing JSON.
func (e *env) talk(json, verbose bool) io.Writer {
	if json || !verbose {
		return nil
	}
	return e.stderr
}

func (e *env) reporter(json bool) func(string) {
	if json || e.quiet {
		return nil
	}
	return func(s string) {
		e.bar.clear()
		fmt.Fprintf(e.stderr, "%s\n", s)
	}
}

func printRunLine(e *env, rec *ckpt.RunRecord) {
	n := len(rec.Attempts)
	line := fmt.Sprintf("%s %s after %d attempt(s)", rec.ID, rec.Status, n)
	if n > 0 {
		a := rec.Attempts[n-1]
		line += fmt.Sprintf(", last %s, %s", a.Exit, ckpt.FormatCounts(a.Added, a.Modified, a.Deleted))
	}
	if rec.Status == "dead" {
		line += ", reverted"
	}
	if rec.Reason != "" && rec.Status != "done" {
		line += ": " + rec.Reason
	}
	e.printf("%s\n", line)
}

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
	c.Flags().BoolVar(&o.json, "json", false, "print the runs' records as JSON")
	c.Flags().BoolVarP(&o.verbose, "verbose", "v", false, "show the routines' output on stderr too (it is always in each run's routine.log)")
	return c
}

func runProcess(e *env, o *processOptions) error {
	r, err := e.open(o.json)
	if err != nil {
		return err
	}
	res, err := r.Process(e.ctx, ckpt.ProcessOptions{Output: e.talk(o.json, o.verbose), Report: e.reporter(o.json)})
	e.doneProgress()
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
		if len(res.Runs) == 0 && len(errs) == 0 && !e.quiet {
			fmt.Fprintln(e.stderr, "ckpt: nothing to process: .decree/inbox has no messages")
		}
		for _, rec := range res.Runs {
			if !e.quiet {
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
			r, err := e.open(o.json)
			if err != nil {
				return err
			}
			runs, err := r.Runs(e.ctx)
			if err != nil {
				return err
			}
			if o.json {
				return e.printJSON(nonNil(runs))
			}
			if len(runs) == 0 && !e.quiet {
				fmt.Fprintln(e.stderr, "ckpt: no runs yet (ckpt run -- CMD, or ckpt process)")
			}
			for _, rec := range runs {
				if e.quiet {
					e.printf("%s\n", rec.ID)
					continue
				}
				e.printf("%-20s %-11s %d attempt(s) %4d file(s)  %s\n", rec.ID, rec.Status, len(rec.Attempts), rec.Files(), rec.Title)
			}
			return nil
		},
	}
	c.Flags().BoolVar(&o.json, "json", false, "print JSON")
	show := &cobra.Command{
		Use:     "show ID",
		Short:   "Show a run's record",
		Example: `  ckpt runs show 2026112214300000-0`,
		Args:    cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			r, err := e.open(o.json)
			if err != nil {
				return err
			}
			d, err := r.RunShow(e.ctx, args[0])
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
	show.Flags().BoolVar(&o.json, "json", false, "print JSON")
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
			r, err := e.open(o.json)
			if err != nil {
				return err
			}
			rec, err := r.RevertRun(e.ctx, args[0])
			if err != nil {
				return err
			}
			if o.json {
				return e.printJSON(rec)
			}
			if !e.quiet {
				e.printf("reverted run %s (%d file(s))\n", rec.ID, rec.Files())
			}
			return nil
		},
	}
	revert.Flags().BoolVar(&o.json, "json", false, "print JSON")
	c.AddCommand(show, revert)
	return c
}

func shortID(s string) string {
	if len(s) > 12 {
		return s[:12]
	}
	return s
}
