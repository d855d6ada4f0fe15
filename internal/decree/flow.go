package decree

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/seed1cedbf7c/ckpt/internal/object"
	"github.com/seed1cedbf7c/ckpt/internal/run"
)

// RunOptions configure [Run], one ad-hoc guarded command.
type RunOptions struct {
	// Command is the argv to run (the message's routine).
	Command []string
	// Attempts is the number of attempts (0: max_retries from
	// .decree/config.yml, default 3).
	Attempts int
	// ID is the run's <chain>-<seq> (default: a new chain, seq 0).
	ID string
	// Message describes the run: the message body, and the run's title
	// (its first line; else the command).
	Message string
	// Output, if not nil, receives a copy of the routine's output (it is
	// always written to routine.log).
	Output io.Writer
	// Report, if not nil, receives one line per step ("attempt 1/3", ...).
	Report func(string)
}

// RunResult is what [Run] did.
type RunResult struct {
	Record *run.Record
	// ExitCode is the routine's last exit status.
	ExitCode int
}

// Run runs one command under Decree's flow, as an ad-hoc message whose
// routine is the command: same checkpoints, attempts, records and revert as
// [Process], and the same environment variables.
func Run(ctx context.Context, e Engine, opts RunOptions) (*RunResult, error) {
	f := newFlow(e)
	if len(opts.Command) == 0 {
		return nil, errors.New("run: no command given")
	}
	cfg, err := run.LoadConfig(f.root)
	if err != nil {
		return nil, err
	}
	attempts := opts.Attempts
	if attempts <= 0 {
		attempts = cfg.MaxRetries
	}
	if attempts > run.MaxAttempts {
		return nil, fmt.Errorf("run: %d attempts is more than %d", attempts, run.MaxAttempts)
	}
	chain, seq := "", 0
	if opts.ID != "" {
		if !run.ValidID(opts.ID) {
			return nil, fmt.Errorf("run: invalid id %q (want CHAIN-SEQ, e.g. 2026112214300000-0)", opts.ID)
		}
		i := strings.LastIndexByte(opts.ID, '-')
		chain = opts.ID[:i]
		fmt.Sscan(opts.ID[i+1:], &seq)
	} else {
		chain = run.NewChainID(f.now(), f.chainTaken)
	}
	m := run.NewMessage(chain, seq, "task", "", opts.Command[0], opts.Message)
	m.Custom["command"] = strings.Join(opts.Command, " ")
	im := &inboxMessage{msg: m, routine: &run.Routine{Name: opts.Command[0], Command: opts.Command}}
	rec, err := f.runMessage(ctx, im, cfg, attempts, opts.Output, opts.Report)
	if err != nil {
		return nil, err
	}
	res := &RunResult{Record: rec}
	if n := len(rec.Attempts); n > 0 {
		res.ExitCode = rec.Attempts[n-1].Exit.Code
	}
	return res, nil
}

// runMessage runs one message through the flow. The routine of an ad-hoc
// run is its command; an inbox message's file is moved to done or dead.
func (f *flow) runMessage(ctx context.Context, im *inboxMessage, cfg run.Config, attempts int, output io.Writer, report func(string)) (*run.Record, error) {
	say := func(format string, a ...any) {
		if report != nil {
			report(fmt.Sprintf(format, a...))
		}
	}
	m := im.msg
	runDir := run.RunDir(f.root, m.ID)
	old, err := run.LoadRecord(runDir)
	switch {
	case err == nil:
		switch old.Status {
		case run.StatusInterrupted, run.StatusRunning:
			// An attempt was interrupted (or ckpt was killed): go on from
			// where it stopped, against the run's original checkpoint.
			if _, err := f.settleRun(ctx, runDir, old); err != nil {
				return nil, &run.MessageError{Name: m.Name, Err: err}
			}
			return f.resumeMessage(ctx, im, cfg, attempts, old, output, report)
		}
		return nil, &run.MessageError{Name: m.Name, Err: fmt.Errorf("run %s already exists (%s); rename the message or remove %s", m.ID, old.Status, filepath.Join(run.RunsDir, m.ID))}
	case !errors.Is(err, fs.ErrNotExist):
		return nil, &run.MessageError{Name: m.Name, Err: fmt.Errorf("run %s has a record ckpt cannot use (%v); remove %s to run it again", m.ID, err, filepath.Join(run.RunsDir, m.ID))}
	}
	if err := ctx.Err(); err != nil {
		return nil, err // interrupted before the run began: nothing written
	}
	if im.file != "" && !m.Normalized() {
		return nil, &run.MessageError{Name: im.file, Err: errors.New("not normalized")}
	}
	if im.file != "" && !bytes.Equal(im.raw, m.Marshal()) {
		// The message is rewritten normalized, as Decree does.
		if err := run.CheckDirs(filepath.Join(f.root, filepath.FromSlash(run.InboxDir)), 2); err != nil {
			return nil, err
		}
		if err := run.WriteFileAtomic(filepath.Join(f.root, filepath.FromSlash(run.InboxDir), im.file), m.Marshal()); err != nil {
			return nil, err
		}
	}
	if m.Seq >= cfg.MaxDepth && im.file != "" {
		note := fmt.Sprintf("\n\n<!-- decree: dead-lettered — MaxDepthExceeded (seq=%d, max=%d) -->\n", m.Seq, cfg.MaxDepth)
		p := filepath.Join(f.root, filepath.FromSlash(run.InboxDir), im.file)
		data, _ := run.ReadPrefix(p, run.MaxMessageSize)
		if run.CheckDirs(filepath.Dir(p), 2) == nil {
			run.WriteFileAtomic(p, append(data, note...))
		}
		if err := moveMessage(f.root, im.file, run.DeadDir); err != nil {
			return nil, err
		}
		say("  dead-letter: %s: chain depth %d reaches max_depth %d", m.ID, m.Seq, cfg.MaxDepth)
		return &run.Record{ID: m.ID, Chain: m.Chain, Seq: m.Seq, Status: run.StatusDead, Reason: "chain too deep (max_depth)"}, nil
	}
	if err := os.MkdirAll(runDir, 0o755); err != nil {
		return nil, err
	}
	rec := &run.Record{ID: m.ID, Chain: m.Chain, Seq: m.Seq, Type: m.Type, InputFile: m.InputFile, Routine: m.Routine,
		Command: im.routine.Command, Inbox: im.file, Status: run.StatusRunning, MaxTries: attempts, Started: f.now().UTC(),
		Title: title(m), Owner: run.Self()}
	if err := run.CheckRunDir(runDir); err != nil {
		return nil, err
	}
	if err := run.WriteFileAtomic(filepath.Join(runDir, "message.md"), m.Marshal()); err != nil {
		return nil, err
	}
	say("  processing %s (routine: %s)", m.ID, rec.Routine)
	declared, err := im.routine.DeclaredParams()
	if err != nil {
		return nil, err
	}
	params := run.Params(m, f.root, runDir, declared)
	rec.Params = params
	papermill := ""
	if im.routine.Notebook {
		if papermill, err = run.Papermill(f.root); err != nil {
			rec.Status, rec.Reason, rec.Ended = run.StatusDead, err.Error(), f.now().UTC()
			rec.Save(runDir)
			if im.file != "" {
				if merr := moveMessage(f.root, im.file, run.DeadDir); merr != nil {
					return nil, merr
				}
			}
			say("  dead-letter: %s: %v", m.ID, err)
			return rec, nil
		}
	}
	// The checkpoint before the first attempt.
	pre, err := f.e.Save(context.WithoutCancel(ctx), Save{Kind: object.KindRun,
		Message: "run " + m.ID + " (before): " + rec.Title, Run: m.ID})
	if err != nil {
		return nil, err
	}
	rec.Checkpoint = pre
	if err := f.writeManifest(context.WithoutCancel(ctx), runDir, rec.Checkpoint); err != nil {
		return nil, err
	}
	if err := rec.Save(runDir); err != nil {
		return nil, err
	}
	return f.attempts(ctx, im, rec, runDir, attempts, papermill, params, output, say)
}

// resumeMessage goes on with a run whose last attempt was interrupted: that
// attempt counted as failed, its work is kept (as after any failed attempt)
// and the next attempt follows; the run's checkpoint and manifest.json stay
// those taken before its first attempt, so a revert still goes back there.
func (f *flow) resumeMessage(ctx context.Context, im *inboxMessage, cfg run.Config, attempts int, rec *run.Record, output io.Writer, report func(string)) (*run.Record, error) {
	say := func(format string, a ...any) {
		if report != nil {
			report(fmt.Sprintf(format, a...))
		}
	}
	m := im.msg
	runDir := run.RunDir(f.root, m.ID)
	if _, err := object.ParseID(rec.Checkpoint); err != nil {
		return nil, &run.MessageError{Name: m.Name, Err: fmt.Errorf("run %s was interrupted before its checkpoint was taken; remove %s and run it again", m.ID, filepath.Join(run.RunsDir, m.ID))}
	}
	if _, err := os.Stat(filepath.Join(runDir, "manifest.json")); err != nil {
		if err := f.writeManifest(context.WithoutCancel(ctx), runDir, rec.Checkpoint); err != nil {
			return nil, err
		}
	}
	if attempts < len(rec.Attempts) {
		attempts = len(rec.Attempts)
	}
	declared, err := im.routine.DeclaredParams()
	if err != nil {
		return nil, err
	}
	params := run.Params(m, f.root, runDir, declared)
	papermill := ""
	if im.routine.Notebook {
		if papermill, err = run.Papermill(f.root); err != nil {
			return nil, err
		}
	}
	// The state now (what the interrupted attempt left, and anything done
	// since) is checkpointed.
	_, err = f.e.Save(context.WithoutCancel(ctx), Save{Kind: object.KindRun,
		Message: "run " + m.ID + " (resumed)", Run: m.ID})
	if err != nil {
		return nil, err
	}
	rec.Status, rec.Reason, rec.MaxTries, rec.Owner = run.StatusRunning, "", attempts, run.Self()
	if err := rec.Save(runDir); err != nil {
		return nil, err
	}
	say("  resuming %s after %d attempt(s) (routine: %s)", m.ID, len(rec.Attempts), rec.Routine)
	return f.attempts(ctx, im, rec, runDir, attempts, papermill, params, output, say)
}

// attempts runs the attempts of a run after the ones rec already has. If
// it fails with the run still running, the record says interrupted (and
// names the error), so that the next ckpt resumes it.
func (f *flow) attempts(ctx context.Context, im *inboxMessage, rec *run.Record, runDir string, attempts int, papermill string, params map[string]string, output io.Writer, say func(string, ...any)) (_ *run.Record, err error) {
	defer func() {
		if err != nil && rec.Status == run.StatusRunning {
			rec.Status, rec.Reason, rec.Ended, rec.Owner = run.StatusInterrupted, "stopped by an error: "+err.Error(), f.now().UTC(), nil
			rec.Save(runDir)
		}
	}()
	m := im.msg
	for n := len(rec.Attempts) + 1; n <= attempts; n++ {
		if n == attempts && n > 1 {
			// The last attempt starts clean, knowing what went wrong.
			if _, err := f.undoRun(ctx, runDir, rec, "before the final attempt of run "+m.ID, nil, say); err != nil {
				return f.stopRun(runDir, rec, im.file, err, say)
			}
			fc := run.FailureContext(rec.Attempts, func(k int) string {
				return run.Tail(filepath.Join(runDir, fmt.Sprintf("attempt-%d.log", k)), run.TailLines)
			})
			if err := run.CheckRunDir(runDir); err != nil {
				return nil, err
			}
			if err := run.WriteFileAtomic(filepath.Join(runDir, "failure-context.md"), fc); err != nil {
				return nil, err
			}
		}
		say("    attempt %d/%d", n, attempts)
		a, err := f.attempt(ctx, runDir, rec, im.routine, papermill, params, n, output)
		if err != nil {
			return nil, err
		}
		rec.Attempts, rec.Current = append(rec.Attempts, *a), nil
		if a.Exit.Interrupted {
			rec.Owner = nil
		}
		rec.Save(runDir)
		switch {
		case a.Exit.Interrupted:
			say("    attempt %d interrupted; its changes are kept (changes.diff); run it again to resume (ckpt process, or ckpt run --id %s)", n, m.ID)
			return rec, nil
		case a.Exit.OK():
			rec.Status, rec.Result, rec.Ended, rec.Owner = run.StatusDone, a.Checkpoint, f.now().UTC(), nil
			if im.file != "" {
				if err := moveMessage(f.root, im.file, run.DoneDir); err != nil {
					return nil, err
				}
			}
			if m.Type == "spec" && m.InputFile != "" {
				if err := run.MarkProcessed(f.root, m.InputFile); err != nil {
					return nil, err
				}
			}
			rec.Save(runDir)
			say("    success")
			return rec, nil
		default:
			say("    attempt %d failed (%s); its output: %s", n, a.Exit, filepath.Join(run.RunsDir, m.ID, fmt.Sprintf("attempt-%d.log", n)))
		}
	}
	// Every attempt failed: back to the checkpoint, and a dead letter. The
	// revert writes the record and moves the message (so does the recovery
	// of a revert a crash interrupted).
	dead := &Mark{ID: rec.ID, Status: run.StatusDead, Reason: fmt.Sprintf("all %d attempts failed for %s", attempts, m.ID),
		Result: rec.Checkpoint, Ended: f.now().UTC(), Inbox: im.file}
	reverted, err := f.undoRun(ctx, runDir, rec, "run "+m.ID+" exhausted its attempts", dead, say)
	if err != nil {
		return f.stopRun(runDir, rec, im.file, err, say)
	}
	if !reverted {
		// Nothing to revert (e.g. recovery finished an interrupted revert).
		if err := Finish(f.root, dead); err != nil {
			return nil, err
		}
	}
	dead.set(rec)
	say("  dead-letter: %s", rec.Reason)
	return rec, nil
}

// undoRun puts the workspace back to the state before the run: its
// changes.diff reversed and verified (revertRun) or, if that fails, its
// checkpoint restored (restoreRunCheckpoint). It reports false when there
// was nothing to revert. If both fail, the error is a [*StoppedError].
func (f *flow) undoRun(ctx context.Context, runDir string, rec *run.Record, why string, mark *Mark, say func(string, ...any)) (bool, error) {
	reverted, err := f.e.Revert(ctx, RevertRequest{Dir: runDir, Run: rec, Why: why, Mark: mark})
	if err == nil {
		return reverted, nil
	}
	say("    revert of changes.diff failed: %v", err)
	say("    restoring checkpoint %s (the state before the run) instead", shortRev(rec.Checkpoint))
	if mark != nil {
		mark.Reason += "; changes.diff did not reverse (" + err.Error() + "), so the checkpoint before the run was restored"
	}
	rerr := f.e.RestoreCheckpoint(ctx, RevertRequest{Dir: runDir, Run: rec, Why: why, Mark: mark})
	if rerr == nil {
		return true, nil
	}
	return false, &StoppedError{ID: rec.ID, Checkpoint: rec.Checkpoint, Revert: err, Restore: rerr}
}

// stopRun records a run whose changes could not be undone (err, from
// undoRun) as dead, dead-letters its message with the reason, and returns
// err: processing stops there.
func (f *flow) stopRun(runDir string, rec *run.Record, file string, err error, say func(string, ...any)) (*run.Record, error) {
	rec.Status, rec.Reason, rec.Ended, rec.Owner, rec.Current = run.StatusDead, "the workspace could not be put back: "+err.Error(), f.now().UTC(), nil, nil
	rec.Unreverted = true
	rec.Save(runDir)
	if file != "" {
		p := filepath.Join(f.root, filepath.FromSlash(run.InboxDir), file)
		if data, rerr := run.ReadPrefix(p, run.MaxMessageSize); rerr == nil && run.CheckDirs(filepath.Dir(p), 2) == nil {
			note := fmt.Sprintf("\n\n<!-- decree: dead-lettered — RevertFailed (%s) -->\n", strings.ReplaceAll(err.Error(), "--", "- -"))
			run.WriteFileAtomic(p, append(data, note...))
		}
		if merr := moveMessage(f.root, file, run.DeadDir); merr != nil {
			say("  cannot move %s to %s: %v", file, run.DeadDir, merr)
		}
	}
	say("  dead-letter: %s: %v", rec.ID, err)
	return rec, err
}

// title is what a run is for: its input file, else the first line of its
// message, else its command.
func title(m *run.Message) string {
	if m.InputFile != "" {
		return m.InputFile
	}
	for _, l := range strings.Split(m.Body, "\n") {
		if l = strings.TrimSpace(strings.TrimLeft(l, "# ")); l != "" {
			if r := []rune(l); len(r) > 60 {
				l = string(r[:57]) + "..."
			}
			return l
		}
	}
	if c := m.Custom["command"]; c != "" {
		return c
	}
	return m.ID
}

// attempt runs the routine once, checkpoints what it left, and writes
// changes.diff (against the run's checkpoint) and the attempt's log.
// While it runs, run.json names it (Current) and its process group, so
// that if ckpt is killed meanwhile, the next ckpt can stop what is left of
// it and record it (settleRun). An interrupted attempt is recorded as
// such at once, before its changes are checkpointed.
func (f *flow) attempt(ctx context.Context, runDir string, rec *run.Record, rt *run.Routine, papermill string, params map[string]string, n int, output io.Writer) (*run.Attempt, error) {
	if err := run.CheckRunDir(runDir); err != nil {
		return nil, err
	}
	logPath := filepath.Join(runDir, rt.LogName())
	// A new file: the last attempt's log may share its inode with
	// attempt-N.log (and something may have put a symlink there).
	if err := os.Remove(logPath); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, err
	}
	logf, err := os.OpenFile(logPath, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o644)
	if err != nil {
		return nil, err
	}
	a := &run.Attempt{N: n, Started: f.now().UTC(), Log: rt.LogName()}
	rec.Current = a
	if err := rec.Save(runDir); err != nil {
		logf.Close()
		return nil, err
	}
	a.Exit = run.Execute(ctx, rt.Argv(papermill, runDir, params), f.root, run.Env(params), logf, output, func(g *run.Proc) {
		a.Group = g
		rec.Save(runDir)
	})
	logf.Close()
	a.Ended = f.now().UTC()
	a.Group = nil
	if a.Exit.Interrupted {
		// Said at once: ckpt itself may be ended any moment now.
		rec.Status, rec.Reason, rec.Ended = run.StatusInterrupted, "interrupted during attempt "+fmt.Sprint(n), a.Ended
		rec.Save(runDir)
	}
	if err := f.finishAttempt(ctx, runDir, rec, a, logPath); err != nil {
		return nil, err
	}
	return a, nil
}

// finishAttempt keeps what an attempt left: its log as attempt-N.log, the
// workspace as a checkpoint, and its changes since the run's checkpoint
// as changes.diff, attempt-N.diff and counts.
func (f *flow) finishAttempt(ctx context.Context, runDir string, rec *run.Record, a *run.Attempt, logPath string) (err error) {
	a.Log = ""
	// The routine had the run directory to itself: it must still be one.
	if err := run.CheckRunDir(runDir); err != nil {
		return err
	}
	// The log is kept as attempt-N.log too: linked or streamed, never
	// read into memory (a routine may print gigabytes).
	run.LinkAtomic(logPath, filepath.Join(runDir, fmt.Sprintf("attempt-%d.log", a.N)))
	// What the attempt left, kept whatever happens next.
	bctx := context.WithoutCancel(ctx)
	a.Checkpoint, err = f.e.Save(bctx, Save{Kind: object.KindRun,
		Message: fmt.Sprintf("run %s attempt %d (%s)", rec.ID, a.N, a.Exit), Run: rec.ID})
	if err != nil {
		return err
	}
	d, err := f.e.Changes(bctx, rec.Checkpoint, a.Checkpoint)
	if err != nil {
		return err
	}
	a.Added, a.Modified, a.Deleted = d.Added, d.Modified, d.Deleted
	a.Stat = run.TrimStat(d.Stat)
	// The diff is streamed to attempt-N.diff, and changes.diff is a copy.
	// They keep Decree's format: base64 blocks for binary files.
	attemptDiff := filepath.Join(runDir, fmt.Sprintf("attempt-%d.diff", a.N))
	if err := run.WriteAtomic(attemptDiff, func(w io.Writer) error { return d.WritePatch(w) }); err != nil {
		return err
	}
	return run.CopyAtomic(attemptDiff, filepath.Join(runDir, "changes.diff"))
}

func (f *flow) writeManifest(ctx context.Context, runDir, id string) error {
	b, err := f.e.Manifest(ctx, id)
	if err != nil {
		return err
	}
	if err := run.CheckRunDir(runDir); err != nil {
		return err
	}
	return run.WriteFileAtomic(filepath.Join(runDir, "manifest.json"), append(b, '\n'))
}

// flow is one call's view of the workspace: the engine, and the
// workspace directory its .decree is in.
type flow struct {
	e    Engine
	root string
}

func newFlow(e Engine) *flow { return &flow{e: e, root: e.Root()} }

func (f *flow) now() time.Time { return f.e.Now() }
