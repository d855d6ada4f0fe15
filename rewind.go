package ckpt

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path"
	"sort"
	"strings"
	"syscall"
	"time"

	"github.com/seed1cedbf7c/ckpt/internal/diff"
	"github.com/seed1cedbf7c/ckpt/internal/fsroot"
	"github.com/seed1cedbf7c/ckpt/internal/object"
	"github.com/seed1cedbf7c/ckpt/internal/restore"
	"github.com/seed1cedbf7c/ckpt/internal/scan"
	"github.com/seed1cedbf7c/ckpt/internal/store"
	"github.com/seed1cedbf7c/ckpt/internal/tree"
)

// Scope says what a rewind takes back.
type Scope string

// Rewind scopes.
const (
	ScopeCode         Scope = "code"         // the workspace's files
	ScopeConversation Scope = "conversation" // the session's messages
	ScopeBoth         Scope = "both"
)

// RewindOptions configure [Controller.Rewind].
type RewindOptions struct {
	// KeepUserEdits undoes only what the agent's turns changed: edits made
	// between turns (by the user or another session) survive; where both
	// touched a file the three are merged, and conflicting hunks keep the
	// user's side.
	KeepUserEdits bool
	// DryRun reports what the rewind would do and changes nothing.
	DryRun bool
}

// RewindResult reports a rewind.
type RewindResult struct {
	Scope  Scope `json:"scope"`
	Turn   int   `json:"turn"`
	DryRun bool  `json:"dry_run,omitempty"`
	// Restore is the code rewind (its pre-restore checkpoint keeps the
	// state before, so `ckpt undo` takes the rewind back).
	Restore *RestoreResult `json:"restore,omitempty"`
	// Conflicts are paths where the user's edits and the turns' changes
	// overlapped; the user's side was kept.
	Conflicts []Path `json:"conflicts"`
	// Kept are paths whose user edits were kept (merged or untouched).
	Kept []Path `json:"kept"`
	// Prompt is the rewound turn's prompt, for re-sending (conversation).
	Prompt string `json:"prompt,omitempty"`
	// Messages is the number of messages removed from the conversation.
	Messages int `json:"messages"`
	// Turns is the number of turns removed from the conversation.
	Turns int `json:"turns"`
}

// Rewind takes the session back to the start of a turn: its code (the
// workspace as it was when the turn began, through the engine's verified,
// undoable restore), its conversation (the messages from the turn's prompt
// on, hidden; the prompt is returned to be sent again), or both.
func (c *Controller) Rewind(ctx context.Context, turn int, scope Scope, opts RewindOptions) (*RewindResult, error) {
	switch scope {
	case ScopeCode, ScopeConversation, ScopeBoth:
	default:
		return nil, fmt.Errorf("rewind: unknown scope %q (want code, conversation or both)", scope)
	}
	s, unlock, err := c.lockSession(ctx)
	if err != nil {
		return nil, err
	}
	defer unlock()
	t, err := c.turn(s, turn)
	if err != nil {
		return nil, err
	}
	out := &RewindResult{Scope: scope, Turn: turn, DryRun: opts.DryRun, Conflicts: []Path{}, Kept: []Path{}}
	if scope != ScopeConversation {
		if err := c.rewindCode(ctx, s, t, opts, out); err != nil {
			return nil, err
		}
	}
	if scope != ScopeCode {
		msgs, err := c.Messages(ctx, true)
		if err != nil {
			return nil, err
		}
		out.Prompt = t.Prompt
		out.Turns = len(s.Turns) - turn + 1
		var data [][]byte
		for _, m := range msgs {
			if m.Turn >= turn && m.Hidden == "" {
				out.Messages++
				m.Hidden = "rewound"
			}
			b, _ := json.Marshal(m)
			data = append(data, b)
		}
		if !opts.DryRun {
			s.Rewound = append(s.Rewound, s.Turns[turn-1:]...)
			s.Turns = s.Turns[:turn-1]
			s.Updated = c.r.now().UTC()
			doc, err := json.Marshal(s)
			if err != nil {
				return nil, err
			}
			if err := c.r.sessions().ReplaceMessages(ctx, s.ID, data, &store.SessionRow{ID: s.ID, Updated: s.Updated, Data: doc}); err != nil {
				return nil, err
			}
		}
	}
	if !opts.DryRun {
		c.r.emit(Event{Kind: EventRewound, Session: s.ID, Turn: turn, Message: string(scope)})
	}
	return out, nil
}

// rewindCode restores the workspace to the turn's start, or with
// KeepUserEdits undoes only the changes of the turns from t on.
func (c *Controller) rewindCode(ctx context.Context, s *Session, t *Turn, opts RewindOptions, out *RewindResult) error {
	target := t.Begin
	if opts.KeepUserEdits {
		if opts.DryRun {
			_, _, err := c.keepUserEdits(ctx, s, t.N, true, out)
			return err // keepUserEdits planned it, storing nothing
		}
		// The merge is computed from the workspace as it is; an edit made
		// before the restore starts makes it compute again (the restore
		// would otherwise undo that edit).
		res, err := c.r.computeAndRestore(ctx, journalData{Op: OpRewind}, func() (ID, ID, error) {
			out.Conflicts, out.Kept = nil, nil
			return c.keepUserEdits(ctx, s, t.N, false, out)
		})
		if err != nil {
			return err
		}
		out.Restore = res
		return nil
	}
	if opts.DryRun {
		res, err := c.r.dryRun(ctx, target, nil)
		if err != nil {
			return err
		}
		out.Restore = res
		return nil
	}
	res, err := c.r.restoreLocked(ctx, journalData{Op: OpRewind, Target: target}, false)
	if err != nil {
		return err
	}
	out.Restore = res
	return nil
}

// keepUserEdits computes the state that undoes the changes of turns n..last
// (each part of a summary turn separately) on top of the current
// workspace, from the last turn back. For each path a turn changed: base
// is its state at the turn's end, theirs at the turn's start, ours the
// state so far (starting from the workspace now). Ours equal to base: the
// path goes back to theirs. Ours equal to theirs: nothing to do. Both
// changed: a line merge of text files, and anything else — a conflict, a
// binary file, a file the user deleted or turned into a directory, a
// directory above the path whose type the user changed — keeps ours and is
// reported. Directories are compared by their tree ids, so a directory the
// user added to is never replaced wholesale. The result is stored as a
// checkpoint (kind restore) whose id is returned; a dry run stores nothing
// and fills out.Restore with the plan.
//
// It returns the merged checkpoint and the workspace tree it merged.
func (c *Controller) keepUserEdits(ctx context.Context, s *Session, n int, dryRun bool, out *RewindResult) (result, base ID, err error) {
	// The current state. Its objects are committed first (not a dry run),
	// so the merge reads the user's files from the store.
	var (
		nowTree   object.ID
		untracked map[string]bool
		memTrees  map[ID][]byte
	)
	if dryRun {
		cache := c.r.loadCache(ctx)
		res, err := scan.Scan(ctx, c.r.scanOptions(ctx, nil, cache))
		cache.Close()
		if err != nil {
			return ID{}, ID{}, scanError(err)
		}
		nowTree, untracked, memTrees = res.Root, res.Untracked, res.Trees
	} else {
		c0, err := c.r.captureStored(ctx, nil)
		if err != nil {
			return ID{}, ID{}, err
		}
		nowTree, untracked = c0.res.Root, c0.res.Untracked
	}
	v := &mergeView{c: c, ctx: ctx, nowTree: nowTree, memTrees: memTrees, dryRun: dryRun, pending: map[ID][]byte{}}
	plan, err := v.plan(s, n)
	if err != nil {
		return ID{}, ID{}, err
	}
	for p := range plan.conflicts {
		out.Conflicts = append(out.Conflicts, Path(p))
	}
	for p := range plan.kept {
		out.Kept = append(out.Kept, Path(p))
	}
	sortPaths(out.Conflicts)
	sortPaths(out.Kept)
	edits := coveringEdits(plan.cur)
	pending := v.pending
	err = c.r.st.Update(ctx, func(tx store.Tx) error {
		for id, data := range pending {
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
		root, err := tree.Overlay(ctx, txload, tx.PutTree, nowTree, edits)
		if err != nil {
			return err
		}
		headRef, headRec, err := c.r.head(ctx)
		if err != nil {
			return err
		}
		var bytes int64
		if t, err := txload(ctx, root); err == nil {
			bytes = t.Size()
		}
		cp := &object.Checkpoint{Tree: root, Kind: KindRestore,
			Message: fmt.Sprintf("rewind session %s to turn %d, keeping user edits", s.ID, n),
			Meta:    map[string]string{"session": s.ID, "turn": fmt.Sprint(n)}}
		rec, err := c.r.newCheckpoint(ctx, tx, cp, headRec, -1, bytes, false, headRef)
		if err != nil {
			return err
		}
		result = rec.ID
		if !dryRun {
			return nil
		}
		// A dry run plans the restore inside the transaction, then rolls
		// it back: nothing is stored.
		plan, err := restore.MakePlan(ctx, txload, nowTree, root, nil, untracked)
		if err != nil {
			return err
		}
		keepStore(plan, c.r.exclude)
		osroot, err := fsroot.Open(c.r.root)
		if err != nil {
			return err
		}
		defer osroot.Close()
		checked, err := (&restore.Applier{Root: osroot}).Check(plan)
		if err != nil {
			return err
		}
		dry := &RestoreResult{DryRun: true, Actions: []Action{}, Target: toCheckpoint(rec, nil)}
		if headRec != nil {
			dry.Head = headRec.ID
		}
		for _, a := range checked {
			dry.Actions = append(dry.Actions, Action{Path: Path(a.Path), Op: string(a.Op), Reason: a.Reason})
		}
		out.Restore = dry
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

// mergeView reads the three sides of a rewind that keeps the user's
// edits: the turns' checkpoints, and the workspace now (nowTree, its new
// trees in memTrees for a dry run) with the changes planned so far.
type mergeView struct {
	c        *Controller
	ctx      context.Context
	nowTree  object.ID
	memTrees map[ID][]byte
	dryRun   bool
	pending  map[ID][]byte // merged contents, stored at the end
}

// keepEditsPlan is the three-way plan: the paths the rewind changes (nil:
// absent), the conflicts (the user's side stays) and the paths where the
// user's edits are kept.
type keepEditsPlan struct {
	cur             map[string]*object.Entry
	conflicts, kept map[string]bool
}

func (v *mergeView) load(ctx context.Context, id object.ID) (*object.Tree, error) {
	if data, ok := v.memTrees[id]; ok {
		return object.DecodeTree(data)
	}
	return v.c.r.st.ReadTree(ctx, id)
}

func (v *mergeView) lookup(root object.ID, p string) (*object.Entry, error) {
	e, ok, err := tree.Lookup(v.ctx, v.load, root, p)
	if err != nil || !ok {
		return nil, err
	}
	return &e, nil
}

// state reads p through the changes m holds, falling back on the
// workspace's tree.
func (v *mergeView) state(m map[string]*object.Entry, p string) (*object.Entry, error) {
	if e, ok := m[p]; ok {
		return e, nil
	}
	for q := path.Dir(p); q != "."; q = path.Dir(q) {
		if e, ok := m[q]; ok {
			if e == nil || !object.IsDir(e.Mode) {
				return nil, nil // below a file or a removed path: absent
			}
			return v.lookup(e.ID, p[len(q)+1:])
		}
	}
	return v.lookup(v.nowTree, p)
}

// content reads a side's file content.
func (v *mergeView) content(e *object.Entry, p string) ([]byte, error) {
	if b, ok := v.pending[e.ID]; ok {
		return b, nil
	}
	b, err := v.c.r.st.ReadBlob(v.ctx, e.ID)
	if errors.Is(err, ErrNotFound) && v.dryRun {
		// A dry run did not store the workspace's files: read it.
		if b, err = v.c.r.readWorking(p, e.Mode); err == nil && object.Sum(b) != e.ID {
			err = fmt.Errorf("%s changed while the rewind was planned", p)
		}
	}
	return b, err
}

// plan undoes turns n… of s, newest part first, against the workspace:
// a path the user left as a turn made it goes back, one the user changed
// is merged three ways (the turn's end as the base), and a conflict
// keeps the user's side. It writes nothing (merged contents wait in
// v.pending).
func (v *mergeView) plan(s *Session, n int) (*keepEditsPlan, error) {
	ctx := v.ctx
	kp := &keepEditsPlan{cur: map[string]*object.Entry{}, conflicts: map[string]bool{}, kept: map[string]bool{}}
	cur, conflicts, kept := kp.cur, kp.conflicts, kp.kept
	for k := len(s.Turns); k >= n; k-- {
		parts := s.Turns[k-1].parts()
		for pi := len(parts) - 1; pi >= 0; pi-- {
			part := parts[pi]
			end := v.nowTree
			if part.End != nil {
				rec, err := v.c.r.st.Checkpoint(ctx, *part.End)
				if err != nil {
					return nil, err
				}
				end = rec.Tree
			}
			beginRec, err := v.c.r.st.Checkpoint(ctx, part.Begin)
			if err != nil {
				return nil, err
			}
			begin := beginRec.Tree
			// Every lookup of this part sees the state before it.
			prev := make(map[string]*object.Entry, len(cur))
			for p, e := range cur {
				prev[p] = e
			}
			err = tree.Diff(ctx, v.load, begin, end, nil, func(ch tree.Change) error {
				p := ch.Path
				// A directory above p whose type the user changed (a file
				// where the turn left a directory, or the reverse): the
				// user's side stays.
				for q := path.Dir(p); q != "."; q = path.Dir(q) {
					o, err := v.state(prev, q)
					if err != nil {
						return err
					}
					b, err := v.lookup(end, q)
					if err != nil {
						return err
					}
					if kindOf(o) != kindOf(b) {
						conflicts[p], kept[p] = true, true
						return nil
					}
				}
				base, err := v.lookup(end, p)
				if err != nil {
					return err
				}
				theirs, err := v.lookup(begin, p)
				if err != nil {
					return err
				}
				ours, err := v.state(prev, p)
				if err != nil {
					return err
				}
				switch {
				case sameEntry(ours, base): // untouched since: take it back
					cur[p] = theirs
				case sameEntry(ours, theirs): // already as before the turn
				default:
					kept[p] = true
					merged, ok, err := v.c.merge3(p, base, ours, theirs, v.content)
					if err != nil {
						return err
					}
					if !ok {
						conflicts[p] = true
						return nil // keep ours
					}
					id := object.Sum(merged)
					v.pending[id] = merged
					mode := ours.Mode
					if ours.Mode == base.Mode {
						mode = theirs.Mode
					}
					cur[p] = &object.Entry{Name: path.Base(p), Mode: mode, ID: id, Size: int64(len(merged))}
				}
				return nil
			})
			if err != nil {
				return nil, err
			}
		}
	}
	return kp, nil
}

// coveringEdits turns the planned changes into tree edits: a path set to
// a file, symlink or directory covers everything below it.
func coveringEdits(cur map[string]*object.Entry) map[string]*object.Entry {
	edits := map[string]*object.Entry{}
	for p, e := range cur {
		covered := false
		for q := path.Dir(p); q != "." && !covered; q = path.Dir(q) {
			if ae, ok := cur[q]; ok && ae != nil {
				covered = true
			}
		}
		if !covered {
			if e != nil {
				ee := *e
				ee.Name = path.Base(p)
				e = &ee
			}
			edits[p] = e
		}
	}
	return edits
}

// kindOf is an entry's kind for comparing directory structure: absent,
// directory, or anything else (file, symlink).
func kindOf(e *object.Entry) int {
	switch {
	case e == nil:
		return 0
	case object.IsDir(e.Mode):
		return 1
	}
	return 2
}

// sameEntry compares two states of a path (a directory by its tree id).
func sameEntry(a, b *object.Entry) bool {
	if a == nil || b == nil {
		return a == nil && b == nil
	}
	return a.Mode == b.Mode && a.ID == b.ID
}

// merge3 merges one file: false when the two sides conflict (or are not
// all text files).
func (c *Controller) merge3(p string, base, ours, theirs *object.Entry, content func(*object.Entry, string) ([]byte, error)) ([]byte, bool, error) {
	if base == nil || ours == nil || theirs == nil ||
		!object.IsFile(base.Mode) || !object.IsFile(ours.Mode) || !object.IsFile(theirs.Mode) {
		return nil, false, nil
	}
	var texts [3]string
	for i, e := range []*object.Entry{base, ours, theirs} {
		b, err := content(e, p)
		if err != nil {
			return nil, false, err
		}
		if diff.IsBinary(b) {
			return nil, false, nil // binary: no line merge
		}
		texts[i] = string(b)
	}
	merged, conflicts := diff.Merge3(texts[0], texts[1], texts[2])
	if conflicts > 0 {
		return nil, false, nil
	}
	return []byte(merged), true, nil
}

func sortPaths(ps []Path) { sort.Slice(ps, func(i, j int) bool { return ps[i] < ps[j] }) }

// summarize runs the configured summarizer, or the built-in one.
func (r *Repo) summarize(ctx context.Context, tr *transcript) (string, error) {
	cmdline := strings.TrimSpace(r.cfg.Summarizer)
	if cmdline == "" {
		return builtinSummary(tr), nil
	}
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
	cmd.Stdin = bytes.NewReader(marshalIndent(tr))
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	cmd.Env = append(os.Environ(), "CKPT_WORKSPACE="+r.root)
	// Stopping it stops what the shell started too (a pipeline, a model's
	// client), which would otherwise hold its output open and keep Run
	// waiting: it runs in its own process group, killed as a whole.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = time.Second
	if err := cmd.Run(); err != nil {
		if parent.Err() != nil {
			return "", fmt.Errorf("summarizer %q stopped: %w", cmdline, parent.Err())
		}
		msg := strings.TrimSpace(stderr.String())
		if msg != "" {
			msg = ": " + firstLine(msg, 300)
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
