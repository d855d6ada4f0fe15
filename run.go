package ckpt

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/seed1cedbf7c/ckpt/internal/diff"
	"github.com/seed1cedbf7c/ckpt/internal/fsroot"
	"github.com/seed1cedbf7c/ckpt/internal/object"
	"github.com/seed1cedbf7c/ckpt/internal/run"
	"github.com/seed1cedbf7c/ckpt/internal/store"
)

// RunRecord is a guarded run's record (run.json in .decree/runs/<id>/).
type RunRecord = run.Record

// RunAttempt is one attempt of a guarded run.
type RunAttempt = run.Attempt

// RunExit is how an attempt ended.
type RunExit = run.Exit

// MaxRunAttempts bounds the attempts of a run (max_retries, and
// [RunOptions.Attempts]).
const MaxRunAttempts = run.MaxAttempts

// RunOptions configure [Repo.Run], one ad-hoc guarded command.
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

// ProcessOptions configure [Repo.Process].
type ProcessOptions struct {
	Output io.Writer
	Report func(string)
}

// ProcessResult is what [Repo.Process] did.
type ProcessResult struct {
	// Runs are the messages run, in order.
	Runs []*RunRecord
	// Errors are the messages that could not be run (invalid front matter,
	// routine or input file); nothing was written for them.
	Errors []error
	// Interrupted reports that processing stopped because ctx was cancelled.
	Interrupted bool
	// Stopped, if not nil, is why processing stopped early: a run's
	// changes could not be undone, so the workspace is not the tree
	// before it, and no later message ran.
	Stopped *RunStoppedError
}

// Dead returns the runs dead-lettered (every attempt failed, or the chain
// too deep).
func (p *ProcessResult) Dead() []*RunRecord {
	var out []*RunRecord
	for _, rec := range p.Runs {
		if rec.Status == run.StatusDead {
			out = append(out, rec)
		}
	}
	return out
}

// Process runs every message in .decree/inbox through Decree's flow: for
// each, in order of chain and seq, a checkpoint (manifest.json),
// the routine, changes.diff after every attempt, retries that keep partial
// work, a clean-slate last attempt that can read failure-context.md, and —
// when every attempt failed — a verified revert and a dead letter
// (inbox/dead). Success moves the message to inbox/done and marks its spec
// processed. Unprocessed specs/*.spec.md are queued first, as decree process
// does; messages routines add to the inbox are run too, a chain's follow-ups
// first. Cancelling ctx stops the running attempt (it counts as failed, its
// diff is written) and ends processing.
func (r *Repo) Process(ctx context.Context, opts ProcessOptions) (*ProcessResult, error) {
	cfg, err := run.LoadConfig(r.root)
	if err != nil {
		return nil, err
	}
	unlock, err := r.processLock()
	if err != nil {
		return nil, err
	}
	defer unlock()
	if err := r.checkUnreverted(ctx); err != nil {
		return nil, err
	}
	if err := r.queueSpecs(cfg); err != nil {
		return nil, err
	}
	out := &ProcessResult{}
	tried := map[string]bool{}
	lastChain := ""
	for {
		if ctx.Err() != nil {
			out.Interrupted = true
			return out, nil
		}
		msgs, errs := r.inbox(cfg)
		for _, e := range errs {
			if !tried["error:"+e.Error()] {
				tried["error:"+e.Error()] = true
				out.Errors = append(out.Errors, e)
			}
		}
		var next *inboxMessage
		for _, m := range msgs {
			if tried[m.file] {
				continue
			}
			// A chain's follow-ups first (depth-first), then inbox order.
			if next == nil || (m.msg.Chain == lastChain && next.msg.Chain != lastChain) {
				next = m
			}
		}
		if next == nil {
			return out, nil
		}
		tried[next.file] = true
		lastChain = next.msg.Chain
		rec, err := r.runMessage(ctx, next, cfg, cfg.MaxRetries, opts.Output, opts.Report)
		var stop *RunStoppedError
		if errors.As(err, &stop) {
			// Never the next message on a tree that is not the tree
			// before this one.
			out.Runs = append(out.Runs, rec)
			out.Stopped = stop
			return out, nil
		}
		if err != nil {
			out.Errors = append(out.Errors, err)
			continue
		}
		out.Runs = append(out.Runs, rec)
		if rec.Status == run.StatusInterrupted {
			out.Interrupted = true
			return out, nil
		}
	}
}

// RunResult is what [Repo.Run] did.
type RunResult struct {
	Record *RunRecord
	// ExitCode is the routine's last exit status.
	ExitCode int
}

// Run runs one command under Decree's flow, as an ad-hoc message whose
// routine is the command: same checkpoints, attempts, records and revert as
// [Repo.Process], and the same environment variables.
func (r *Repo) Run(ctx context.Context, opts RunOptions) (*RunResult, error) {
	if len(opts.Command) == 0 {
		return nil, errors.New("run: no command given")
	}
	cfg, err := run.LoadConfig(r.root)
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
		chain = run.NewChainID(r.now(), r.chainTaken)
	}
	m := run.NewMessage(chain, seq, "task", "", opts.Command[0], opts.Message)
	m.Custom["command"] = strings.Join(opts.Command, " ")
	im := &inboxMessage{msg: m, routine: &run.Routine{Name: opts.Command[0], Command: opts.Command}}
	rec, err := r.runMessage(ctx, im, cfg, attempts, opts.Output, opts.Report)
	if err != nil {
		return nil, err
	}
	res := &RunResult{Record: rec}
	if n := len(rec.Attempts); n > 0 {
		res.ExitCode = rec.Attempts[n-1].Exit.Code
	}
	return res, nil
}

// checkUnreverted refuses to process while a run's changes could not be
// undone (run.json says unreverted) and the workspace is not the tree
// before that run: no message runs on a tree that is not the one it would
// have had. Once the workspace is that tree again (the user restored its
// checkpoint), the mark is cleared.
func (r *Repo) checkUnreverted(ctx context.Context) error {
	ids, err := run.ListRuns(r.root)
	if err != nil {
		return err
	}
	for _, id := range ids {
		dir := run.RunDir(r.root, id)
		rec, err := run.LoadRecord(dir)
		if err != nil || !rec.Unreverted {
			continue
		}
		if same, err := r.workspaceIs(ctx, rec.Checkpoint); err != nil {
			return err
		} else if same {
			rec.Unreverted = false
			if err := rec.Save(dir); err != nil {
				return err
			}
			continue
		}
		return withHint(fmt.Errorf("run %s failed and its changes could not be undone, and the workspace is not the tree before it; nothing was processed", id),
			"restore the state before it (ckpt restore "+shortRev(rec.Checkpoint)+") or try its revert again (ckpt runs revert "+id+"), then run ckpt process again; to keep the workspace as it is, remove "+filepath.Join(run.RunsDir, id))
	}
	return nil
}

// workspaceIs reports whether the workspace holds exactly checkpoint rev's
// tree.
func (r *Repo) workspaceIs(ctx context.Context, rev string) (bool, error) {
	id, err := object.ParseID(rev)
	if err != nil {
		return false, nil
	}
	cp, err := r.st.Checkpoint(ctx, id)
	if err != nil {
		return false, nil
	}
	c, err := r.captureTx(ctx, nil, false, nil)
	if err != nil {
		return false, err
	}
	return c.res.Root == cp.Tree, nil
}

// processLock keeps two ckpt process from working on one inbox.
func (r *Repo) processLock() (func(), error) {
	if r.storeDir == "" {
		return func() {}, nil
	}
	s, ok := r.st.(*store.SQLite)
	if !ok {
		return func() {}, nil
	}
	return s.TryNamedLock("process")
}

type inboxMessage struct {
	file    string // name in the inbox
	msg     *run.Message
	raw     []byte
	routine *run.Routine
}

// inbox reads, validates and normalizes the inbox messages, sorted by chain,
// seq and name. Invalid messages are returned as errors, untouched.
func (r *Repo) inbox(cfg run.Config) ([]*inboxMessage, []error) {
	dir := filepath.Join(r.root, filepath.FromSlash(run.InboxDir))
	des, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, []error{err}
	}
	var out []*inboxMessage
	var errs []error
	for _, de := range des {
		if !de.Type().IsRegular() || !strings.HasSuffix(de.Name(), ".md") {
			continue
		}
		raw, err := fsroot.ReadRegular(filepath.Join(dir, de.Name()), run.MaxMessageSize)
		if err != nil {
			switch {
			case errors.Is(err, fs.ErrNotExist):
			case errors.Is(err, fsroot.ErrTooLarge):
				errs = append(errs, &run.MessageError{Name: de.Name(), Err: run.ErrMessageTooLarge})
			case errors.Is(err, run.ErrNotRegular):
				errs = append(errs, &run.MessageError{Name: de.Name(), Err: errors.New("it is not a regular file")})
			default:
				errs = append(errs, err)
			}
			continue
		}
		m, err := run.ParseMessage(de.Name(), raw)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		m.Normalize(cfg.DefaultRoutine, func() string { return run.NewChainID(r.now(), r.chainTaken) })
		if !run.ValidID(m.ID) {
			errs = append(errs, &run.MessageError{Name: de.Name(), Err: fmt.Errorf("id %q is not CHAIN-SEQ", m.ID)})
			continue
		}
		if err := r.checkInputFile(m.InputFile); err != nil {
			errs = append(errs, &run.MessageError{Name: de.Name(), Err: err})
			continue
		}
		rt, err := run.ResolveRoutine(r.root, m.Routine, cfg)
		if err != nil {
			errs = append(errs, &run.MessageError{Name: de.Name(), Err: err})
			continue
		}
		out = append(out, &inboxMessage{file: de.Name(), msg: m, raw: raw, routine: rt})
	}
	sort.SliceStable(out, func(i, j int) bool {
		a, b := out[i].msg, out[j].msg
		if a.Chain != b.Chain {
			return a.Chain < b.Chain
		}
		if a.Seq != b.Seq {
			return a.Seq < b.Seq
		}
		return out[i].file < out[j].file
	})
	return out, errs
}

// checkInputFile refuses an input_file outside the workspace (including
// through a symlink, dangling or not).
func (r *Repo) checkInputFile(p string) error {
	return run.CheckInputFileIn(r.root, p)
}

// chainTaken reports whether a chain id is used by a run or a queued message.
func (r *Repo) chainTaken(chain string) bool {
	ids, _ := run.ListRuns(r.root)
	for _, id := range ids {
		if strings.HasPrefix(id, chain+"-") {
			return true
		}
	}
	for _, d := range []string{run.InboxDir, run.DoneDir, run.DeadDir} {
		des, _ := os.ReadDir(filepath.Join(r.root, filepath.FromSlash(d)))
		for _, de := range des {
			if strings.HasPrefix(de.Name(), chain+"-") {
				return true
			}
			if !de.Type().IsRegular() {
				continue
			}
			if data, err := run.ReadPrefix(filepath.Join(r.root, filepath.FromSlash(d), de.Name()), run.MaxMessageSize); err == nil &&
				bytes.Contains(data, []byte("chain: "+chain)) {
				return true
			}
		}
	}
	return false
}

// queueSpecs writes an inbox message for every unprocessed spec that has
// none, as decree process does.
func (r *Repo) queueSpecs(cfg run.Config) error {
	specs, err := run.Specs(r.root)
	if err != nil || len(specs) == 0 {
		return err
	}
	queued := map[string]bool{}
	msgs, _ := r.inbox(cfg)
	for _, m := range msgs {
		queued[m.msg.InputFile] = true
	}
	for _, s := range specs {
		input := run.SpecsDir + "/" + s
		if queued[input] {
			continue
		}
		m := run.NewMessage(run.NewChainID(r.now(), r.chainTaken), 0, "spec", input, run.SpecRoutine(r.root, s), "")
		m.Normalize(cfg.DefaultRoutine, nil)
		name := run.Kebab(strings.TrimSuffix(s, ".spec.md"))
		if name == "" {
			name = m.ID
		}
		dir := filepath.Join(r.root, filepath.FromSlash(run.InboxDir))
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return err
		}
		p := filepath.Join(dir, name+".md")
		if _, err := os.Stat(p); err == nil {
			p = filepath.Join(dir, m.ID+".md")
		}
		if err := run.CheckDirs(dir, 2); err != nil {
			return err
		}
		if err := run.WriteFileAtomic(p, m.Marshal()); err != nil {
			return err
		}
	}
	return nil
}

// runMessage runs one message through the flow. The routine of an ad-hoc
// run is its command; an inbox message's file is moved to done or dead.
func (r *Repo) runMessage(ctx context.Context, im *inboxMessage, cfg run.Config, attempts int, output io.Writer, report func(string)) (*RunRecord, error) {
	say := func(format string, a ...any) {
		if report != nil {
			report(fmt.Sprintf(format, a...))
		}
	}
	m := im.msg
	runDir := run.RunDir(r.root, m.ID)
	old, err := run.LoadRecord(runDir)
	switch {
	case err == nil:
		switch old.Status {
		case run.StatusInterrupted, run.StatusRunning:
			// An attempt was interrupted (or ckpt was killed): go on from
			// where it stopped, against the run's original checkpoint.
			if _, err := r.settleRun(ctx, runDir, old); err != nil {
				return nil, &run.MessageError{Name: m.Name, Err: err}
			}
			return r.resumeMessage(ctx, im, cfg, attempts, old, output, report)
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
		if err := run.CheckDirs(filepath.Join(r.root, filepath.FromSlash(run.InboxDir)), 2); err != nil {
			return nil, err
		}
		if err := run.WriteFileAtomic(filepath.Join(r.root, filepath.FromSlash(run.InboxDir), im.file), m.Marshal()); err != nil {
			return nil, err
		}
	}
	if m.Seq >= cfg.MaxDepth && im.file != "" {
		note := fmt.Sprintf("\n\n<!-- decree: dead-lettered — MaxDepthExceeded (seq=%d, max=%d) -->\n", m.Seq, cfg.MaxDepth)
		p := filepath.Join(r.root, filepath.FromSlash(run.InboxDir), im.file)
		data, _ := run.ReadPrefix(p, run.MaxMessageSize)
		if run.CheckDirs(filepath.Dir(p), 2) == nil {
			run.WriteFileAtomic(p, append(data, note...))
		}
		if err := r.moveMessage(im.file, run.DeadDir); err != nil {
			return nil, err
		}
		say("  dead-letter: %s: chain depth %d reaches max_depth %d", m.ID, m.Seq, cfg.MaxDepth)
		return &RunRecord{ID: m.ID, Chain: m.Chain, Seq: m.Seq, Status: run.StatusDead, Reason: "chain too deep (max_depth)"}, nil
	}
	if err := os.MkdirAll(runDir, 0o755); err != nil {
		return nil, err
	}
	rec := &RunRecord{ID: m.ID, Chain: m.Chain, Seq: m.Seq, Type: m.Type, InputFile: m.InputFile, Routine: m.Routine,
		Command: im.routine.Command, Inbox: im.file, Status: run.StatusRunning, MaxTries: attempts, Started: r.now().UTC(),
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
	params := run.Params(m, r.root, runDir, declared)
	rec.Params = params
	papermill := ""
	if im.routine.Notebook {
		if papermill, err = run.Papermill(r.root); err != nil {
			rec.Status, rec.Reason, rec.Ended = run.StatusDead, err.Error(), r.now().UTC()
			rec.Save(runDir)
			if im.file != "" {
				if merr := r.moveMessage(im.file, run.DeadDir); merr != nil {
					return nil, merr
				}
			}
			say("  dead-letter: %s: %v", m.ID, err)
			return rec, nil
		}
	}
	// The checkpoint before the first attempt.
	pre, err := r.Save(context.WithoutCancel(ctx), SaveOptions{Kind: KindRun, AllowEmpty: true,
		Message: "run " + m.ID + " (before): " + rec.Title, Meta: map[string]string{"run": m.ID}})
	if err != nil {
		return nil, err
	}
	rec.Checkpoint = pre.Checkpoint.ID.String()
	if err := r.writeManifest(context.WithoutCancel(ctx), runDir, rec.Checkpoint); err != nil {
		return nil, err
	}
	if err := rec.Save(runDir); err != nil {
		return nil, err
	}
	return r.attempts(ctx, im, rec, runDir, attempts, papermill, params, output, say)
}

// resumeMessage goes on with a run whose last attempt was interrupted: that
// attempt counted as failed, its work is kept (as after any failed attempt)
// and the next attempt follows; the run's checkpoint and manifest.json stay
// those taken before its first attempt, so a revert still goes back there.
func (r *Repo) resumeMessage(ctx context.Context, im *inboxMessage, cfg run.Config, attempts int, rec *RunRecord, output io.Writer, report func(string)) (*RunRecord, error) {
	say := func(format string, a ...any) {
		if report != nil {
			report(fmt.Sprintf(format, a...))
		}
	}
	m := im.msg
	runDir := run.RunDir(r.root, m.ID)
	if _, err := object.ParseID(rec.Checkpoint); err != nil {
		return nil, &run.MessageError{Name: m.Name, Err: fmt.Errorf("run %s was interrupted before its checkpoint was taken; remove %s and run it again", m.ID, filepath.Join(run.RunsDir, m.ID))}
	}
	if _, err := os.Stat(filepath.Join(runDir, "manifest.json")); err != nil {
		if err := r.writeManifest(context.WithoutCancel(ctx), runDir, rec.Checkpoint); err != nil {
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
	params := run.Params(m, r.root, runDir, declared)
	papermill := ""
	if im.routine.Notebook {
		if papermill, err = run.Papermill(r.root); err != nil {
			return nil, err
		}
	}
	// The state now (what the interrupted attempt left, and anything done
	// since) is checkpointed.
	_, err = r.Save(context.WithoutCancel(ctx), SaveOptions{Kind: KindRun, AllowEmpty: true,
		Message: "run " + m.ID + " (resumed)", Meta: map[string]string{"run": m.ID}})
	if err != nil {
		return nil, err
	}
	rec.Status, rec.Reason, rec.MaxTries, rec.Owner = run.StatusRunning, "", attempts, run.Self()
	if err := rec.Save(runDir); err != nil {
		return nil, err
	}
	say("  resuming %s after %d attempt(s) (routine: %s)", m.ID, len(rec.Attempts), rec.Routine)
	return r.attempts(ctx, im, rec, runDir, attempts, papermill, params, output, say)
}

// attempts runs the attempts of a run after the ones rec already has. If
// it fails with the run still running, the record says interrupted (and
// names the error), so that the next ckpt resumes it.
func (r *Repo) attempts(ctx context.Context, im *inboxMessage, rec *RunRecord, runDir string, attempts int, papermill string, params map[string]string, output io.Writer, say func(string, ...any)) (_ *RunRecord, err error) {
	defer func() {
		if err != nil && rec.Status == run.StatusRunning {
			rec.Status, rec.Reason, rec.Ended, rec.Owner = run.StatusInterrupted, "stopped by an error: "+err.Error(), r.now().UTC(), nil
			rec.Save(runDir)
		}
	}()
	m := im.msg
	for n := len(rec.Attempts) + 1; n <= attempts; n++ {
		if n == attempts && n > 1 {
			// The last attempt starts clean, knowing what went wrong.
			if _, err := r.undoRun(ctx, runDir, rec, "before the final attempt of run "+m.ID, nil, say); err != nil {
				return r.stopRun(runDir, rec, im.file, err, say)
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
		a, err := r.attempt(ctx, runDir, rec, im.routine, papermill, params, n, output)
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
			rec.Status, rec.Result, rec.Ended, rec.Owner = run.StatusDone, a.Checkpoint, r.now().UTC(), nil
			if im.file != "" {
				if err := r.moveMessage(im.file, run.DoneDir); err != nil {
					return nil, err
				}
			}
			if m.Type == "spec" && m.InputFile != "" {
				if err := run.MarkProcessed(r.root, m.InputFile); err != nil {
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
	dead := &runMark{ID: rec.ID, Status: run.StatusDead, Reason: fmt.Sprintf("all %d attempts failed for %s", attempts, m.ID),
		Result: rec.Checkpoint, Ended: r.now().UTC(), Inbox: im.file}
	reverted, err := r.undoRun(ctx, runDir, rec, "run "+m.ID+" exhausted its attempts", dead, say)
	if err != nil {
		return r.stopRun(runDir, rec, im.file, err, say)
	}
	if !reverted {
		// Nothing to revert (e.g. recovery finished an interrupted revert).
		if err := r.finishRun(dead); err != nil {
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
// was nothing to revert. If both fail, the error is a [*RunStoppedError].
func (r *Repo) undoRun(ctx context.Context, runDir string, rec *RunRecord, why string, mark *runMark, say func(string, ...any)) (bool, error) {
	reverted, err := r.revertRun(ctx, runDir, rec, why, mark)
	if err == nil {
		return reverted, nil
	}
	say("    revert of changes.diff failed: %v", err)
	say("    restoring checkpoint %s (the state before the run) instead", shortRev(rec.Checkpoint))
	if mark != nil {
		mark.Reason += "; changes.diff did not reverse (" + err.Error() + "), so the checkpoint before the run was restored"
	}
	rerr := r.restoreRunCheckpoint(ctx, runDir, rec, mark)
	if rerr == nil {
		return true, nil
	}
	return false, &RunStoppedError{ID: rec.ID, Checkpoint: rec.Checkpoint, Revert: err, Restore: rerr}
}

func shortRev(s string) string {
	if len(s) > 12 {
		return s[:12]
	}
	return s
}

// stopRun records a run whose changes could not be undone (err, from
// undoRun) as dead, dead-letters its message with the reason, and returns
// err: processing stops there.
func (r *Repo) stopRun(runDir string, rec *RunRecord, file string, err error, say func(string, ...any)) (*RunRecord, error) {
	rec.Status, rec.Reason, rec.Ended, rec.Owner, rec.Current = run.StatusDead, "the workspace could not be put back: "+err.Error(), r.now().UTC(), nil, nil
	rec.Unreverted = true
	rec.Save(runDir)
	if file != "" {
		p := filepath.Join(r.root, filepath.FromSlash(run.InboxDir), file)
		if data, rerr := run.ReadPrefix(p, run.MaxMessageSize); rerr == nil && run.CheckDirs(filepath.Dir(p), 2) == nil {
			note := fmt.Sprintf("\n\n<!-- decree: dead-lettered — RevertFailed (%s) -->\n", strings.ReplaceAll(err.Error(), "--", "- -"))
			run.WriteFileAtomic(p, append(data, note...))
		}
		if merr := r.moveMessage(file, run.DeadDir); merr != nil {
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
func (r *Repo) attempt(ctx context.Context, runDir string, rec *RunRecord, rt *run.Routine, papermill string, params map[string]string, n int, output io.Writer) (*RunAttempt, error) {
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
	a := &RunAttempt{N: n, Started: r.now().UTC(), Log: rt.LogName()}
	rec.Current = a
	if err := rec.Save(runDir); err != nil {
		logf.Close()
		return nil, err
	}
	a.Exit = run.Execute(ctx, rt.Argv(papermill, runDir, params), r.root, run.Env(params), logf, output, func(g *run.Proc) {
		a.Group = g
		rec.Save(runDir)
	})
	logf.Close()
	a.Ended = r.now().UTC()
	a.Group = nil
	if a.Exit.Interrupted {
		// Said at once: ckpt itself may be ended any moment now.
		rec.Status, rec.Reason, rec.Ended = run.StatusInterrupted, "interrupted during attempt "+fmt.Sprint(n), a.Ended
		rec.Save(runDir)
	}
	if err := r.finishAttempt(ctx, runDir, rec, a, logPath); err != nil {
		return nil, err
	}
	return a, nil
}

// finishAttempt keeps what an attempt left: its log as attempt-N.log, the
// workspace as a checkpoint, and its changes since the run's checkpoint
// as changes.diff, attempt-N.diff and counts.
func (r *Repo) finishAttempt(ctx context.Context, runDir string, rec *RunRecord, a *RunAttempt, logPath string) error {
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
	res, err := r.Save(bctx, SaveOptions{Kind: KindRun, AllowEmpty: true,
		Message: fmt.Sprintf("run %s attempt %d (%s)", rec.ID, a.N, a.Exit), Meta: map[string]string{"run": rec.ID}})
	if err != nil {
		return err
	}
	a.Checkpoint = res.Checkpoint.ID.String()
	d, err := r.Diff(bctx, DiffOptions{From: rec.Checkpoint, To: a.Checkpoint})
	if err != nil {
		return err
	}
	a.Added, a.Modified, a.Deleted = d.Summary()
	var stat bytes.Buffer
	if err := d.WriteStat(bctx, &stat); err != nil {
		return err
	}
	a.Stat = run.TrimStat(stat.String())
	// The diff is streamed to attempt-N.diff, and changes.diff is a copy.
	// They keep Decree's format: base64 blocks for binary files.
	attemptDiff := filepath.Join(runDir, fmt.Sprintf("attempt-%d.diff", a.N))
	if err := run.WriteAtomic(attemptDiff, func(w io.Writer) error { return d.writePatch(bctx, w, diff.Base64Blocks) }); err != nil {
		return err
	}
	return run.CopyAtomic(attemptDiff, filepath.Join(runDir, "changes.diff"))
}

// settleRuns settles (see settleRun) every run left running by a ckpt
// that is gone, and returns their ids, with the temporary files ckpt left
// in run directories (an atomic write of a run's file cut short) that it
// removed.
func (r *Repo) settleRuns(ctx context.Context) (settled []string, removed []Path, err error) {
	ids, err := run.ListRuns(r.root)
	if err != nil {
		return nil, nil, err
	}
	settled = []string{}
	for _, id := range ids {
		dir := run.RunDir(r.root, id)
		rec, err := run.LoadRecord(dir)
		if err != nil || rec.ID != id {
			continue
		}
		ok, err := r.settleRun(ctx, dir, rec)
		var busy *RunBusyError
		switch {
		case errors.As(err, &busy):
			continue // its ckpt is alive, and may be writing its files
		case err != nil:
			return settled, removed, fmt.Errorf("recover run %s: %w", id, err)
		case ok:
			settled = append(settled, id)
		}
		// A run no ckpt runs: its temporary files are leftovers, but
		// for one that a ckpt (runs revert, say) may be writing now.
		age := time.Minute
		if ok {
			age = 0
		}
		for _, name := range run.RemoveTemps(dir, age) {
			removed = append(removed, Path(path.Join(run.RunsDir, id, name)))
		}
	}
	return settled, removed, nil
}

// unusable says why a run has no record ckpt can use ("" when it has
// none at all).
func unusable(err error) string {
	if errors.Is(err, fs.ErrNotExist) {
		return ""
	}
	return "run.json: " + err.Error()
}

// cutShort shows a run that a ckpt which is gone left "running" as what
// it is, interrupted (the record on disk says so once settled: see
// settleRun).
func cutShort(rec *RunRecord) *RunRecord {
	if rec.Status != run.StatusRunning || rec.Owner.Alive() {
		return rec
	}
	rec.Status = run.StatusInterrupted
	rec.Reason = "ckpt was stopped during the run; ckpt recover (or running it again) settles it"
	return rec
}

// StopRoutines kills the process groups of the routines that runs in
// this process are running. A program that must exit in the middle of
// [Repo.Run] or [Repo.Process] (at a second SIGINT) calls it first, so no
// routine outlives it; the run's record is settled by the next ckpt
// ([Repo.Recover], or the next run of it).
func StopRoutines() { run.KillRunning() }

// settleRun finishes the record of a run that a ckpt which is gone (killed,
// or ended at a second signal) left running, or that an error stopped
// with an attempt under way: what is left of the attempt's routine — its
// process group — is killed, and the attempt is recorded as interrupted,
// as after SIGINT (its log kept as attempt-N.log, its changes checkpointed
// and written to changes.diff); the run is then interrupted, and the next
// ckpt process (or ckpt run --id) resumes it. It reports whether it
// changed anything, and refuses a run whose ckpt is still running.
func (r *Repo) settleRun(ctx context.Context, runDir string, rec *RunRecord) (bool, error) {
	if rec.Status != run.StatusRunning && rec.Current == nil {
		return false, nil
	}
	if rec.Owner.Alive() && rec.Owner.PID != os.Getpid() {
		return false, &RunBusyError{ID: rec.ID, PID: rec.Owner.PID}
	}
	if _, err := object.ParseID(rec.Checkpoint); err != nil {
		// Stopped before its checkpoint: no attempt ran.
		rec.Current = nil
	}
	n := len(rec.Attempts) + 1
	if a := rec.Current; a != nil {
		run.KillGroup(a.Group)
		log := a.Log
		if log != "papermill.log" {
			log = "routine.log"
		}
		*a = RunAttempt{N: n, Started: a.Started, Ended: r.now().UTC(), Exit: run.Exit{Code: 130, Interrupted: true}}
		if err := r.finishAttempt(ctx, runDir, rec, a, filepath.Join(runDir, log)); err != nil {
			return false, err
		}
		rec.Attempts = append(rec.Attempts, *a)
		rec.Current = nil
	}
	rec.Status, rec.Ended, rec.Owner = run.StatusInterrupted, r.now().UTC(), nil
	switch {
	case strings.HasPrefix(rec.Reason, "stopped by an error"):
	case len(rec.Attempts) == n:
		rec.Reason = fmt.Sprintf("ckpt was stopped during attempt %d", n)
	default:
		rec.Reason = "ckpt was stopped between attempts"
	}
	return true, rec.Save(runDir)
}

func (r *Repo) writeManifest(ctx context.Context, runDir, id string) error {
	m, err := r.Manifest(ctx, id)
	if err != nil {
		return err
	}
	b, _ := m.MarshalJSON()
	if err := run.CheckRunDir(runDir); err != nil {
		return err
	}
	return run.WriteFileAtomic(filepath.Join(runDir, "manifest.json"), append(b, '\n'))
}

// moveMessage moves an inbox message to done or dead (name unchanged).
func (r *Repo) moveMessage(file, to string) error {
	dir := filepath.Join(r.root, filepath.FromSlash(to))
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	// inbox/done or dead, inbox and .decree: never through a symlink.
	if err := run.CheckDirs(dir, 3); err != nil {
		return err
	}
	return os.Rename(filepath.Join(r.root, filepath.FromSlash(run.InboxDir), file), filepath.Join(dir, file))
}

// Runs returns the guarded runs' records, newest first.
func (r *Repo) Runs(ctx context.Context) ([]*RunRecord, error) {
	ids, err := run.ListRuns(r.root)
	if err != nil {
		return nil, err
	}
	var out []*RunRecord
	for i := len(ids) - 1; i >= 0; i-- {
		rec, err := run.LoadRecord(run.RunDir(r.root, ids[i]))
		if err != nil {
			// A Decree run without ckpt's record (or with one ckpt
			// cannot use): what its files say.
			rec = &RunRecord{ID: ids[i], Status: "unknown", Reason: unusable(err)}
		}
		out = append(out, cutShort(rec))
	}
	return out, nil
}

// RunDetail is a run's record and the paths of its files.
type RunDetail struct {
	Record *RunRecord `json:"record"`
	// Dir is the run directory; Files lists what it holds.
	Dir   string   `json:"dir"`
	Files []string `json:"files"`
}

// RunShow returns the run an id (or unique id prefix) names.
func (r *Repo) RunShow(ctx context.Context, id string) (*RunDetail, error) {
	full, err := run.ResolveRun(r.root, id)
	if err != nil {
		return nil, withHint(err, "`ckpt runs` lists the runs")
	}
	dir := run.RunDir(r.root, full)
	rec, err := run.LoadRecord(dir)
	if err != nil {
		rec = &RunRecord{ID: full, Status: "unknown", Reason: unusable(err)}
	}
	d := &RunDetail{Record: cutShort(rec), Dir: dir}
	des, _ := os.ReadDir(dir)
	for _, de := range des {
		if !strings.HasPrefix(de.Name(), ".") {
			d.Files = append(d.Files, de.Name())
		}
	}
	return d, nil
}

// RevertRun undoes a finished run: its changes.diff in reverse, verified
// against its manifest.json. The current state is checkpointed first.
func (r *Repo) RevertRun(ctx context.Context, id string) (*RunRecord, error) {
	full, err := run.ResolveRun(r.root, id)
	if err != nil {
		return nil, withHint(err, "`ckpt runs` lists the runs")
	}
	dir := run.RunDir(r.root, full)
	rec, err := run.LoadRecord(dir)
	if err != nil {
		return nil, fmt.Errorf("run %s has no ckpt record: %w", full, err)
	}
	// A run a ckpt that is gone left running is settled first.
	if _, err := r.settleRun(ctx, dir, rec); err != nil {
		return nil, err
	}
	switch rec.Status {
	case run.StatusDone, run.StatusInterrupted:
	case run.StatusReverted:
		// Reverted, and perhaps brought back since (ckpt undo): revert
		// again if its changes are there.
	case run.StatusDead:
		if !rec.Unreverted {
			return nil, fmt.Errorf("run %s is %s: its changes were already reverted", full, rec.Status)
		}
		// Its changes could not be undone when it died: try again.
	default:
		return nil, fmt.Errorf("run %s is %s and cannot be reverted", full, rec.Status)
	}
	pre, err := r.Save(ctx, SaveOptions{Kind: KindPreRestore, AllowEmpty: true, Message: "before reverting run " + full})
	if err != nil {
		return nil, err
	}
	// For a finished run, changes.diff is what the last attempt left. The
	// revert writes the record (so does the recovery of a revert a crash
	// interrupted).
	mark := &runMark{ID: full, Status: run.StatusReverted, Reason: "reverted with ckpt runs revert"}
	var reverted bool
	if rec.Unreverted {
		// A dead run: back to the state before it, by its checkpoint if
		// changes.diff still does not reverse.
		mark = &runMark{ID: full, Status: run.StatusDead, Reason: strings.TrimPrefix(rec.Reason, "the workspace could not be put back: ") + "; reverted later with ckpt runs revert"}
		reverted, err = r.undoRun(ctx, dir, rec, "run "+full+" reverted", mark, func(string, ...any) {})
	} else {
		reverted, err = r.revertRun(ctx, dir, rec, "run "+full+" reverted", mark)
	}
	var ie *IntegrityError
	switch {
	case rec.Status == run.StatusReverted && (!reverted && err == nil || errors.As(err, &ie)):
		return nil, fmt.Errorf("run %s is reverted: its changes were already reverted (and are not in the workspace)", full)
	case err != nil:
		return nil, err
	case !reverted:
		// Its changes are not in the workspace: nothing to write.
		mark.Result = pre.Checkpoint.ID.String()
		if err := r.finishRun(mark); err != nil {
			return nil, err
		}
	}
	return run.LoadRecord(dir)
}
