package cli

import (
	"fmt"
	"io"

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
	jsonFlag(c, &o.json, "print the run's record as JSON")
	return c
}

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
	if err := e.result(o.json, res.Record, "", func() { printRunLine(e, res.Record) }); err != nil {
		return err
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
	switch {
	case rec.Status == "dead" && rec.Unreverted:
		line += ", not reverted" // its changes are still in the workspace
	case rec.Status == "dead":
		line += ", reverted"
	}
	if rec.Reason != "" && rec.Status != "done" {
		line += ": " + rec.Reason
	}
	e.printf("%s\n", line)
}
