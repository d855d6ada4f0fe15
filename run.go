package ckpt

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/seed1cedbf7c/ckpt/internal/diff"
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

// RunOptions configure [Repo.Run], one ad-hoc guarded command.
type RunOptions struct {
	// Command is the argv to run (the message's routine).
	Command []string
	// Attempts is the number of attempts (0: max_retries from
	// .decree/config.yml, default 3).
	Attempts int
	// ID is the run's <chain>-<seq> (default: a new chain, seq 0).
	ID string
	// Message describes the run (the message body).
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
}

// Process runs every message in .decree/inbox through Decree's flow (seed
// 001): for each, in order of chain and seq, a checkpoint (manifest.json),
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
		raw, err := os.ReadFile(filepath.Join(dir, de.Name()))
		if err != nil {
			errs = append(errs, err)
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
// through a symlink).
func (r *Repo) checkInputFile(p string) error {
	if err := run.CheckInputFile(p); err != nil {
		return err
	}
	if p == "" {
		return nil
	}
	full := filepath.Join(r.root, filepath.FromSlash(p))
	if real, err := filepath.EvalSymlinks(full); err == nil {
		if rel, err := filepath.Rel(r.root, real); err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
			return fmt.Errorf("input_file %s is outside the workspace (through a symlink)", p)
		}
	}
	return nil
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
			if data, err := os.ReadFile(filepath.Join(r.root, filepath.FromSlash(d), de.Name())); err == nil &&
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
	if err == nil {
		switch old.Status {
		case run.StatusInterrupted, run.StatusRunning:
			// An attempt was interrupted (or ckpt was killed): go on from
			// where it stopped, against the run's original checkpoint.
			return r.resumeMessage(ctx, im, cfg, attempts, old, output, report)
		}
		return nil, &run.MessageError{Name: m.Name, Err: fmt.Errorf("run %s already exists (%s); rename the message or remove %s", m.ID, old.Status, filepath.Join(run.RunsDir, m.ID))}
	}
	if im.file != "" && !m.Normalized() {
		return nil, &run.MessageError{Name: im.file, Err: errors.New("not normalized")}
	}
	if im.file != "" && !bytes.Equal(im.raw, m.Marshal()) {
		// The message is rewritten normalized, as Decree does.
		if err := run.WriteFileAtomic(filepath.Join(r.root, filepath.FromSlash(run.InboxDir), im.file), m.Marshal()); err != nil {
			return nil, err
		}
	}
	if m.Seq >= cfg.MaxDepth && im.file != "" {
		note := fmt.Sprintf("\n\n<!-- decree: dead-lettered — MaxDepthExceeded (seq=%d, max=%d) -->\n", m.Seq, cfg.MaxDepth)
		p := filepath.Join(r.root, filepath.FromSlash(run.InboxDir), im.file)
		data, _ := os.ReadFile(p)
		run.WriteFileAtomic(p, append(data, note...))
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
		Title: title(m)}
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
	if err := r.writeManifest(ctx, runDir, rec.Checkpoint); err != nil {
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
		if err := r.writeManifest(ctx, runDir, rec.Checkpoint); err != nil {
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
	rec.Status, rec.Reason, rec.MaxTries = run.StatusRunning, "", attempts
	if err := rec.Save(runDir); err != nil {
		return nil, err
	}
	say("  resuming %s after %d attempt(s) (routine: %s)", m.ID, len(rec.Attempts), rec.Routine)
	return r.attempts(ctx, im, rec, runDir, attempts, papermill, params, output, say)
}

// attempts runs the attempts of a run after the ones rec already has.
func (r *Repo) attempts(ctx context.Context, im *inboxMessage, rec *RunRecord, runDir string, attempts int, papermill string, params map[string]string, output io.Writer, say func(string, ...any)) (*RunRecord, error) {
	m := im.msg
	for n := len(rec.Attempts) + 1; n <= attempts; n++ {
		if n == attempts && n > 1 {
			// The last attempt starts clean, knowing what went wrong.
			if _, err := r.revertRun(ctx, runDir, rec, "before the final attempt of run "+m.ID, nil); err != nil {
				rec.Status, rec.Reason, rec.Ended = run.StatusDead, "revert failed: "+err.Error(), r.now().UTC()
				rec.Save(runDir)
				return rec, err
			}
			fc := run.FailureContext(rec.Attempts, func(k int) string {
				return run.Tail(filepath.Join(runDir, fmt.Sprintf("attempt-%d.log", k)), run.TailLines)
			})
			if err := run.WriteFileAtomic(filepath.Join(runDir, "failure-context.md"), fc); err != nil {
				return nil, err
			}
		}
		say("    attempt %d/%d", n, attempts)
		a, err := r.attempt(ctx, runDir, rec, im.routine, papermill, params, n, output)
		if err != nil {
			return nil, err
		}
		rec.Attempts = append(rec.Attempts, *a)
		rec.Save(runDir)
		switch {
		case a.Exit.Interrupted:
			rec.Status, rec.Reason, rec.Ended = run.StatusInterrupted, "interrupted during attempt "+fmt.Sprint(n), r.now().UTC()
			rec.Save(runDir)
			say("    attempt %d interrupted; its changes are kept (changes.diff); run it again to resume (ckpt process, or ckpt run --id %s)", n, m.ID)
			return rec, nil
		case a.Exit.OK():
			rec.Status, rec.Result, rec.Ended = run.StatusDone, a.Checkpoint, r.now().UTC()
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
			say("    attempt %d failed (%s)", n, a.Exit)
		}
	}
	// Every attempt failed: back to the checkpoint, and a dead letter. The
	// revert writes the record and moves the message (so does the recovery
	// of a revert a crash interrupted).
	dead := &runMark{ID: rec.ID, Status: run.StatusDead, Reason: fmt.Sprintf("all %d attempts failed for %s", attempts, m.ID),
		Result: rec.Checkpoint, Ended: r.now().UTC(), Inbox: im.file}
	reverted, err := r.revertRun(ctx, runDir, rec, "run "+m.ID+" exhausted its attempts", dead)
	if err != nil {
		rec.Status, rec.Reason, rec.Ended = run.StatusDead, "revert failed: "+err.Error(), r.now().UTC()
		rec.Save(runDir)
		return rec, err
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

func title(m *run.Message) string {
	if m.InputFile != "" {
		return m.InputFile
	}
	if c := m.Custom["command"]; c != "" {
		return c
	}
	for _, l := range strings.Split(m.Body, "\n") {
		if l = strings.TrimSpace(strings.TrimLeft(l, "# ")); l != "" {
			if len(l) > 60 {
				l = l[:57] + "..."
			}
			return l
		}
	}
	return m.ID
}

// attempt runs the routine once, checkpoints what it left, and writes
// changes.diff (against the run's checkpoint) and the attempt's log.
func (r *Repo) attempt(ctx context.Context, runDir string, rec *RunRecord, rt *run.Routine, papermill string, params map[string]string, n int, output io.Writer) (*RunAttempt, error) {
	logPath := filepath.Join(runDir, rt.LogName())
	logf, err := os.OpenFile(logPath, os.O_CREATE|os.O_TRUNC|os.O_WRONLY, 0o644)
	if err != nil {
		return nil, err
	}
	a := &RunAttempt{N: n, Started: r.now().UTC()}
	a.Exit = run.Execute(ctx, rt.Argv(papermill, runDir, params), r.root, run.Env(params), logf, output)
	logf.Close()
	a.Ended = r.now().UTC()
	if data, err := os.ReadFile(logPath); err == nil {
		run.WriteFileAtomic(filepath.Join(runDir, fmt.Sprintf("attempt-%d.log", n)), data)
	}
	// What the attempt left, kept whatever happens next.
	bctx := context.WithoutCancel(ctx)
	res, err := r.Save(bctx, SaveOptions{Kind: KindRun, AllowEmpty: true,
		Message: fmt.Sprintf("run %s attempt %d (%s)", rec.ID, n, a.Exit), Meta: map[string]string{"run": rec.ID}})
	if err != nil {
		return nil, err
	}
	a.Checkpoint = res.Checkpoint.ID.String()
	d, err := r.Diff(bctx, DiffOptions{From: rec.Checkpoint, To: a.Checkpoint})
	if err != nil {
		return nil, err
	}
	a.Added, a.Modified, a.Deleted = d.Summary()
	var patch, stat bytes.Buffer
	// changes.diff keeps Decree's format: base64 blocks for binary files.
	if err := d.writePatch(bctx, &patch, diff.Base64Blocks); err != nil {
		return nil, err
	}
	if err := d.WriteStat(bctx, &stat); err != nil {
		return nil, err
	}
	a.Stat = stat.String()
	if err := run.WriteFileAtomic(filepath.Join(runDir, "changes.diff"), patch.Bytes()); err != nil {
		return nil, err
	}
	if err := run.WriteFileAtomic(filepath.Join(runDir, fmt.Sprintf("attempt-%d.diff", n)), patch.Bytes()); err != nil {
		return nil, err
	}
	return a, nil
}

func (r *Repo) writeManifest(ctx context.Context, runDir, id string) error {
	m, err := r.Manifest(ctx, id)
	if err != nil {
		return err
	}
	b, _ := m.MarshalJSON()
	return run.WriteFileAtomic(filepath.Join(runDir, "manifest.json"), append(b, '\n'))
}

// moveMessage moves an inbox message to done or dead (name unchanged).
func (r *Repo) moveMessage(file, to string) error {
	dir := filepath.Join(r.root, filepath.FromSlash(to))
	if err := os.MkdirAll(dir, 0o755); err != nil {
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
			// A Decree run without ckpt's record: what its files say.
			rec = &RunRecord{ID: ids[i], Status: "unknown"}
		}
		out = append(out, rec)
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
		rec = &RunRecord{ID: full, Status: "unknown"}
	}
	d := &RunDetail{Record: rec, Dir: dir}
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
	switch rec.Status {
	case run.StatusDone, run.StatusInterrupted:
	case run.StatusReverted:
		// Reverted, and perhaps brought back since (ckpt undo): revert
		// again if its changes are there.
	case run.StatusDead:
		return nil, fmt.Errorf("run %s is %s: its changes were already reverted", full, rec.Status)
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
	reverted, err := r.revertRun(ctx, dir, rec, "run "+full+" reverted", mark)
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
