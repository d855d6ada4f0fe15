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
	"sort"
	"strings"

	"github.com/seed1cedbf7c/ckpt/internal/fsroot"
	"github.com/seed1cedbf7c/ckpt/internal/hint"
	"github.com/seed1cedbf7c/ckpt/internal/run"
)

// ProcessOptions configure [Process].
type ProcessOptions struct {
	Output io.Writer
	Report func(string)
}

// ProcessResult is what [Process] did.
type ProcessResult struct {
	// Runs are the messages run, in order.
	Runs []*run.Record
	// Errors are the messages that could not be run (invalid front matter,
	// routine or input file); nothing was written for them.
	Errors []error
	// Interrupted reports that processing stopped because ctx was cancelled.
	Interrupted bool
	// Stopped, if not nil, is why processing stopped early: a run's
	// changes could not be undone, so the workspace is not the tree
	// before it, and no later message ran.
	Stopped *StoppedError
}

// Dead returns the runs dead-lettered (every attempt failed, or the chain
// too deep).
func (p *ProcessResult) Dead() []*run.Record {
	var out []*run.Record
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
// diff is written) and ends processing. A run whose changes cannot be
// undone stops processing ([ProcessResult.Stopped], a [*StoppedError]).
func Process(ctx context.Context, e Engine, opts ProcessOptions) (*ProcessResult, error) {
	f := newFlow(e)
	cfg, err := run.LoadConfig(f.root)
	if err != nil {
		return nil, err
	}
	unlock, err := f.e.ProcessLock()
	if err != nil {
		return nil, err
	}
	defer unlock()
	if err := f.checkUnreverted(ctx); err != nil {
		return nil, err
	}
	if err := f.queueSpecs(cfg); err != nil {
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
		msgs, errs := f.inbox(cfg)
		for _, merr := range errs {
			if !tried["error:"+merr.Error()] {
				tried["error:"+merr.Error()] = true
				out.Errors = append(out.Errors, merr)
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
		rec, err := f.runMessage(ctx, next, cfg, cfg.MaxRetries, opts.Output, opts.Report)
		var stop *StoppedError
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

// checkUnreverted refuses to process while a run's changes could not be
// undone (run.json says unreverted) and the workspace is not the tree
// before that run: no message runs on a tree that is not the one it would
// have had. Once the workspace is that tree again (the user restored its
// checkpoint), the mark is cleared.
func (f *flow) checkUnreverted(ctx context.Context) error {
	ids, err := run.ListRuns(f.root)
	if err != nil {
		return err
	}
	for _, id := range ids {
		dir := run.RunDir(f.root, id)
		rec, err := run.LoadRecord(dir)
		if err != nil || !rec.Unreverted {
			continue
		}
		if same, err := f.e.WorkspaceIs(ctx, rec.Checkpoint); err != nil {
			return err
		} else if same {
			rec.Unreverted = false
			if err := rec.Save(dir); err != nil {
				return err
			}
			continue
		}
		return hint.With(fmt.Errorf("run %s failed and its changes could not be undone, and the workspace is not the tree before it; nothing was processed", id),
			"restore the state before it (ckpt restore "+shortRev(rec.Checkpoint)+") or try its revert again (ckpt runs revert "+id+"), then run ckpt process again; to keep the workspace as it is, remove "+filepath.Join(run.RunsDir, id))
	}
	return nil
}

type inboxMessage struct {
	file    string // name in the inbox
	msg     *run.Message
	raw     []byte
	routine *run.Routine
}

// inbox reads, validates and normalizes the inbox messages, sorted by chain,
// seq and name. Invalid messages are returned as errors, untouched.
func (f *flow) inbox(cfg run.Config) ([]*inboxMessage, []error) {
	dir := filepath.Join(f.root, filepath.FromSlash(run.InboxDir))
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
		m.Normalize(cfg.DefaultRoutine, func() string { return run.NewChainID(f.now(), f.chainTaken) })
		if !run.ValidID(m.ID) {
			errs = append(errs, &run.MessageError{Name: de.Name(), Err: fmt.Errorf("id %q is not CHAIN-SEQ", m.ID)})
			continue
		}
		if err := f.checkInputFile(m.InputFile); err != nil {
			errs = append(errs, &run.MessageError{Name: de.Name(), Err: err})
			continue
		}
		rt, err := run.ResolveRoutine(f.root, m.Routine, cfg)
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
func (f *flow) checkInputFile(p string) error {
	return run.CheckInputFileIn(f.root, p)
}

// chainTaken reports whether a chain id is used by a run or a queued message.
func (f *flow) chainTaken(chain string) bool {
	ids, _ := run.ListRuns(f.root)
	for _, id := range ids {
		if strings.HasPrefix(id, chain+"-") {
			return true
		}
	}
	for _, d := range []string{run.InboxDir, run.DoneDir, run.DeadDir} {
		des, _ := os.ReadDir(filepath.Join(f.root, filepath.FromSlash(d)))
		for _, de := range des {
			if strings.HasPrefix(de.Name(), chain+"-") {
				return true
			}
			if !de.Type().IsRegular() {
				continue
			}
			if data, err := run.ReadPrefix(filepath.Join(f.root, filepath.FromSlash(d), de.Name()), run.MaxMessageSize); err == nil &&
				bytes.Contains(data, []byte("chain: "+chain)) {
				return true
			}
		}
	}
	return false
}

// queueSpecs writes an inbox message for every unprocessed spec that has
// none, as decree process does.
func (f *flow) queueSpecs(cfg run.Config) error {
	specs, err := run.Specs(f.root)
	if err != nil || len(specs) == 0 {
		return err
	}
	queued := map[string]bool{}
	msgs, _ := f.inbox(cfg)
	for _, m := range msgs {
		queued[m.msg.InputFile] = true
	}
	for _, s := range specs {
		input := run.SpecsDir + "/" + s
		if queued[input] {
			continue
		}
		m := run.NewMessage(run.NewChainID(f.now(), f.chainTaken), 0, "spec", input, run.SpecRoutine(f.root, s), "")
		m.Normalize(cfg.DefaultRoutine, nil)
		name := run.Kebab(strings.TrimSuffix(s, ".spec.md"))
		if name == "" {
			name = m.ID
		}
		dir := filepath.Join(f.root, filepath.FromSlash(run.InboxDir))
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

// moveMessage moves an inbox message to done or dead (name unchanged).
func moveMessage(root, file, to string) error {
	dir := filepath.Join(root, filepath.FromSlash(to))
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	// inbox/done or dead, inbox and .decree: never through a symlink.
	if err := run.CheckDirs(dir, 3); err != nil {
		return err
	}
	return os.Rename(filepath.Join(root, filepath.FromSlash(run.InboxDir), file), filepath.Join(dir, file))
}
