package ckpt

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"time"

	"github.com/seed1cedbf7c/ckpt/internal/fsroot"
	"github.com/seed1cedbf7c/ckpt/internal/object"
	"github.com/seed1cedbf7c/ckpt/internal/restore"
	"github.com/seed1cedbf7c/ckpt/internal/run"
	"github.com/seed1cedbf7c/ckpt/internal/scan"
	"github.com/seed1cedbf7c/ckpt/internal/session"
	"github.com/seed1cedbf7c/ckpt/internal/store"
	"github.com/seed1cedbf7c/ckpt/internal/tree"
)

// sessionEngine is the engine as internal/session sees it: the Repo's
// lock, checkpoints, restores and branches, behind session.Engine.
type sessionEngine struct{ r *Repo }

var _ session.Engine[RestoreResult, SwitchResult] = sessionEngine{}

func (r *Repo) sessionEngine() sessionEngine { return sessionEngine{r} }

func (r *Repo) sessions() store.Sessions { return r.st.(store.Sessions) }

func (e sessionEngine) Lock(ctx context.Context) (func(), error) { return e.r.begin(ctx) }

func (e sessionEngine) Now() time.Time { return e.r.now() }

func (e sessionEngine) Sessions() store.Sessions { return e.r.sessions() }

func (e sessionEngine) Emit(ev session.Event) {
	e.r.emit(Event{Kind: EventKind(ev.Kind), Checkpoint: ev.Checkpoint, Paths: ev.Paths, Message: ev.Message, Session: ev.Session, Turn: ev.Turn})
}

func (e sessionEngine) Head(ctx context.Context) (ID, error) {
	_, rec, err := e.r.head(ctx)
	if err != nil || rec == nil {
		return ID{}, err
	}
	return rec.ID, nil
}

func (e sessionEngine) LastOp(ctx context.Context) (int64, error) {
	ops, err := e.r.st.Ops(ctx, 0)
	if err != nil || len(ops) == 0 {
		return 0, err
	}
	return ops[len(ops)-1].Seq, nil
}

func (e sessionEngine) InEffect(ctx context.Context) (func([]int64) bool, error) {
	ops, err := e.r.st.Ops(ctx, 0)
	if err != nil {
		return nil, err
	}
	done, _ := timeline(ops)
	in := make(map[int64]bool, len(done))
	for _, op := range done {
		in[op.Seq] = true
	}
	return func(seqs []int64) bool {
		for _, seq := range seqs {
			// gc drops the log's oldest entries once a checkpoint they
			// name is gone, with every undo or redo of them: no undo
			// reaches one of those any more, so it stays in effect.
			if in[seq] || seq > 0 && (len(ops) == 0 || seq < ops[0].Seq) {
				return true
			}
		}
		return false
	}, nil
}

func (e sessionEngine) Tree(ctx context.Context, checkpoint ID) (ID, error) {
	rec, err := e.r.st.Checkpoint(ctx, checkpoint)
	if err != nil {
		return ID{}, err
	}
	return rec.Tree, nil
}

func (e sessionEngine) Save(ctx context.Context, message string, meta map[string]string) (ID, error) {
	res, err := e.r.saveLocked(ctx, SaveOptions{Kind: KindTurn, Message: message, Meta: meta}, nil)
	if err != nil {
		return ID{}, err
	}
	return res.Checkpoint.ID, nil
}

func (e sessionEngine) Changes(ctx context.Context, from, to ID) ([]TurnFile, error) {
	if !from.IsZero() && !to.IsZero() {
		if files, ok := e.r.lastChanges(from, to); ok {
			return files, nil
		}
	}
	opts := DiffOptions{From: from.String()}
	if !to.IsZero() {
		opts.To = to.String()
	}
	d, err := e.r.Diff(ctx, opts)
	if err != nil {
		return nil, err
	}
	out := []TurnFile{}
	for _, f := range d.Files {
		out = append(out, TurnFile{Path: f.Path, Status: f.Status})
	}
	return out, nil
}

func (e sessionEngine) Restore(ctx context.Context, target ID, dryRun bool) (*RestoreResult, error) {
	if dryRun {
		return e.r.dryRun(ctx, target, nil)
	}
	return e.r.restoreLocked(ctx, journalData{Op: OpRewind, Target: target}, false)
}

func (e sessionEngine) RestoreEdited(ctx context.Context, dryRun bool, message string, meta map[string]string, track []Path, plan func(*session.Workspace) (*session.Edits, error)) (*RestoreResult, error) {
	cp := &object.Checkpoint{Kind: KindRestore, Message: message, Meta: meta}
	_, headRec, err := e.r.head(ctx)
	if err != nil {
		return nil, err
	}
	tracked := trackedOf(headRec)
	for _, p := range track {
		tracked = append(tracked, string(p))
	}
	tracked = unionPaths(tracked)
	if dryRun {
		var res *RestoreResult
		_, _, err := e.storeEdited(ctx, cp, tracked, plan, &res)
		return res, err
	}
	return e.r.computeAndRestore(ctx, journalData{Op: OpRewind}, func() (ID, ID, error) {
		return e.storeEdited(ctx, cp, tracked, plan, nil)
	})
}

// Tracked returns the ignored paths a checkpoint holds (see MetaTracked).
func (e sessionEngine) Tracked(ctx context.Context, id ID) ([]Path, error) {
	rec, err := e.r.st.Checkpoint(ctx, id)
	if err != nil {
		return nil, err
	}
	var out []Path
	for _, p := range trackedOf(rec) {
		out = append(out, Path(p))
	}
	return out, nil
}

// Amend records a checkpoint holding what base holds and, as they are now,
// the ignored files paths name (see MetaTracked). HEAD does not move. It
// returns the checkpoint and the paths it took: a file over the size
// limit, or not a file or symlink, is not taken.
func (e sessionEngine) Amend(ctx context.Context, base ID, paths []Path, message string) (ID, []Path, error) {
	r := e.r
	rec, err := r.st.Checkpoint(ctx, base)
	if err != nil {
		return ID{}, nil, err
	}
	headRef, _, err := r.head(ctx)
	if err != nil {
		return ID{}, nil, err
	}
	var ps []string
	for _, p := range paths {
		ps = append(ps, string(p))
	}
	ps = unionPaths(ps)
	var (
		out   ID
		taken []Path
	)
	err = r.st.Update(ctx, func(tx store.Tx) error {
		cache := r.loadCache(ctx)
		defer cache.Close()
		o := r.scanOptions(ctx, tx, cache)
		o.Tracked = ps
		edits := map[string]*object.Entry{}
		var names []string
		for _, p := range ps {
			ent, res, err := scan.Path(ctx, o, p)
			var ie *scan.IgnoredError
			if errors.As(err, &ie) || err == nil && res != nil && len(res.Skipped) > 0 {
				continue // ckpt's own, a directory, too large, a FIFO: not taken
			}
			if err != nil {
				return scanError(err)
			}
			edits[p] = ent
			names = append(names, p)
			taken = append(taken, Path(p))
		}
		if len(names) == 0 {
			out = rec.ID
			return nil
		}
		load := func(ctx context.Context, id object.ID) (*object.Tree, error) { return tx.ReadTree(id) }
		root, err := tree.Overlay(ctx, load, tx.PutTree, rec.Tree, edits)
		if err != nil {
			return err
		}
		var bytes int64
		if t, err := load(ctx, root); err == nil {
			bytes = t.Size()
		}
		cp := &object.Checkpoint{Tree: root, Kind: rec.Kind, Branch: rec.Branch, Author: rec.Author, Message: message,
			Meta: withTracked(rec.Meta, unionPaths(trackedOf(rec), names))}
		nrec, err := r.newCheckpoint(ctx, tx, cp, rec, -1, bytes, false, headRef)
		if err != nil {
			return err
		}
		out = nrec.ID
		return nil
	})
	if err != nil {
		return ID{}, nil, err
	}
	return out, taken, nil
}

// storeEdited scans the workspace, plans edits on it and stores the
// edited tree as the checkpoint cp (its tree set here). It returns the
// checkpoint and the workspace tree it edited. With dry set, it stores
// nothing: the workspace is scanned into memory, and *dry is the plan of
// the restore the checkpoint would make.
func (e sessionEngine) storeEdited(ctx context.Context, cp *object.Checkpoint, tracked []string, plan func(*session.Workspace) (*session.Edits, error), dry **RestoreResult) (result, base ID, err error) {
	r := e.r
	// The current state. Its objects are committed first (not a dry run),
	// so the merge reads the user's files from the store.
	var (
		nowTree   object.ID
		untracked map[string]bool
		memTrees  map[ID][]byte
	)
	if dry != nil {
		cache := r.loadCache(ctx)
		o := r.scanOptions(ctx, nil, cache)
		o.Tracked = tracked
		res, err := scan.Scan(ctx, o)
		cache.Close()
		if err != nil {
			return ID{}, ID{}, scanError(err)
		}
		nowTree, untracked, memTrees = res.Root, res.Untracked, res.Trees
	} else {
		var rules *captureRules
		if len(tracked) > 0 {
			rules = &captureRules{tracked: tracked}
		}
		c0, err := r.captureStored(ctx, rules)
		if err != nil {
			return ID{}, ID{}, err
		}
		nowTree, untracked = c0.res.Root, c0.res.Untracked
	}
	ws := &session.Workspace{Tree: nowTree, Root: r.root,
		ReadTree: func(ctx context.Context, id object.ID) (*object.Tree, error) {
			if data, ok := memTrees[id]; ok {
				return object.DecodeTree(data)
			}
			return r.st.ReadTree(ctx, id)
		},
		ReadFile: func(ctx context.Context, ent *object.Entry, p string) ([]byte, error) {
			b, err := r.st.ReadBlob(ctx, ent.ID)
			if errors.Is(err, ErrNotFound) && dry != nil {
				// A dry run did not store the workspace's files: read it.
				if b, err = r.readWorking(p, ent.Mode); err == nil && object.Sum(b) != ent.ID {
					err = fmt.Errorf("%s changed while the rewind was planned", p)
				}
			}
			return b, err
		}}
	edits, err := plan(ws)
	if err != nil {
		return ID{}, ID{}, err
	}
	err = r.st.Update(ctx, func(tx store.Tx) error {
		for id, data := range edits.Blobs {
			if err := tx.PutBlob(id, data); err != nil {
				return err
			}
		}
		for id, data := range memTrees {
			if err := tx.PutTree(id, data); err != nil {
				return err
			}
		}
		txload := func(ctx context.Context, id object.ID) (*object.Tree, error) { return tx.ReadTree(id) }
		root, err := tree.Overlay(ctx, txload, tx.PutTree, nowTree, edits.Paths)
		if err != nil {
			return err
		}
		headRef, headRec, err := r.head(ctx)
		if err != nil {
			return err
		}
		var bytes int64
		if t, err := txload(ctx, root); err == nil {
			bytes = t.Size()
		}
		cp := *cp
		cp.Tree = root
		cp.Meta = withTracked(cp.Meta, tracked)
		rec, err := r.newCheckpoint(ctx, tx, &cp, headRec, -1, bytes, false, headRef)
		if err != nil {
			return err
		}
		result = rec.ID
		if dry == nil {
			return nil
		}
		// A dry run plans the restore inside the transaction, then rolls
		// it back: nothing is stored.
		plan, err := restore.MakePlan(ctx, txload, nowTree, root, nil, untracked)
		if err != nil {
			return err
		}
		keepStore(plan, r.exclude)
		osroot, err := fsroot.Open(r.root)
		if err != nil {
			return err
		}
		defer osroot.Close()
		checked, err := (&restore.Applier{Root: osroot}).Check(plan)
		if err != nil {
			return err
		}
		res := &RestoreResult{DryRun: true, Actions: []Action{}, Target: toCheckpoint(rec, nil)}
		if headRec != nil {
			res.Head = headRec.ID
		}
		for _, a := range checked {
			res.Actions = append(res.Actions, Action{Path: Path(a.Path), Op: string(a.Op), Reason: a.Reason})
		}
		*dry = res
		return errDryRun
	})
	if errors.Is(err, errDryRun) {
		return ID{}, ID{}, nil
	}
	if err != nil {
		return ID{}, ID{}, err
	}
	return result, nowTree, nil
}

func (e sessionEngine) Fork(ctx context.Context, name string, at ID) (*SwitchResult, error) {
	if _, err := e.r.createBranchLocked(ctx, name, at.String()); err != nil {
		return nil, err
	}
	return e.r.switchLocked(ctx, name, SwitchOptions{})
}

func (e sessionEngine) Summarizer() string { return strings.TrimSpace(e.r.cfg.Summarizer) }

// RunSummarizer runs the configured summarizer (trusted: set on this
// machine, or given by the program through Options.Config) in the
// workspace, in its own process group, for at most five minutes.
func (e sessionEngine) RunSummarizer(ctx context.Context, transcript []byte) (string, error) {
	r, cmdline := e.r, e.Summarizer()
	if r.opts.Config == nil && r.storeDir != "" {
		if err := checkApproved(r.storeDir, "summarizer", cmdline); err != nil {
			return "", err
		}
	}
	parent := ctx
	ctx, cancel := context.WithTimeout(ctx, 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "sh", "-c", cmdline)
	cmd.Dir = r.root
	cmd.Stdin = bytes.NewReader(transcript)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	cmd.Env = append(os.Environ(), "CKPT_WORKSPACE="+r.root)
	// Stopping it stops what the shell started too (a pipeline, a model's
	// client), which would otherwise hold its output open and keep Run
	// waiting: it runs in its own process group, killed as a whole.
	run.OwnGroup(cmd)
	cmd.WaitDelay = time.Second
	if err := cmd.Run(); err != nil {
		if parent.Err() != nil {
			return "", fmt.Errorf("summarizer %q stopped: %w", cmdline, parent.Err())
		}
		msg := strings.TrimSpace(stderr.String())
		if msg != "" {
			msg, _, _ = strings.Cut(msg, "\n")
			if len(msg) > 300 {
				msg = msg[:297] + "..."
			}
			msg = ": " + msg
		}
		return "", withHint(fmt.Errorf("summarizer %q failed: %v%s", cmdline, err, msg),
			"fix the command, or go back to the built-in summarizer with `ckpt config --unset summarizer`")
	}
	out := strings.TrimSpace(stdout.String())
	if out == "" {
		return "", errors.New("summarizer " + cmdline + " printed nothing")
	}
	return out, nil
}
