package ckpt

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/seed1cedbf7c/ckpt/internal/object"
	"github.com/seed1cedbf7c/ckpt/internal/store"
	"github.com/seed1cedbf7c/ckpt/internal/tree"
)

// OpLogOptions configure [Repo.OpLog].
type OpLogOptions struct {
	// Limit keeps the newest Limit entries (0: all).
	Limit int
	// Kinds keeps only operations of these kinds (none: every kind).
	Kinds []OpKind
}

// OpEntry is one entry of the operation log, as [Repo.OpLog] reports it.
type OpEntry struct {
	// Seq numbers the operation; [Repo.OpRestore] takes it.
	Seq  int64     `json:"seq"`
	Time time.Time `json:"time"`
	Kind OpKind    `json:"kind"`
	// Before and After are HEAD before and after the operation; for a
	// branch or tag operation, the checkpoint the name pointed to before
	// and after. Zero (absent from JSON): none.
	Before ID `json:"before,omitzero"`
	After  ID `json:"after,omitzero"`
	// Checkpoint is the checkpoint the operation created or restored.
	Checkpoint ID `json:"checkpoint,omitzero"`
	// Branch is the branch HEAD was on after the operation ("" detached).
	Branch string `json:"branch,omitempty"`
	// Target is, for an undo or redo, the operation it took back or did
	// again; for a restore or switch made by [Repo.OpRestore], the
	// operation whose state it put back.
	Target int64 `json:"target,omitempty"`
	// Detail is the operation's note: the checkpoint's kind for a save,
	// "FROM -> TO" for a switch, the name for a branch, tag or snapshot
	// operation, the remote for a pull.
	Detail string `json:"detail,omitempty"`
	// Change counts the paths that differ between Before and After (the
	// first checkpoint's files count as added), for operations that
	// leave a workspace state (nil for others, or when a checkpoint is no
	// longer stored).
	Change *OpChange `json:"change,omitempty"`
	// Restorable reports whether [Repo.OpRestore] can put back the state
	// the operation left: its kind leaves one ([OpKind.HasState]) and its
	// After checkpoint is still stored.
	Restorable bool `json:"restorable"`
	// Undo marks the operation [Repo.Undo] would take back now; Redo the
	// one [Repo.Redo] would do again (see [Repo.Timeline]).
	Undo bool `json:"undo,omitempty"`
	Redo bool `json:"redo,omitempty"`
}

// OpChange counts the paths an operation added, modified and deleted
// (see [FormatCounts]).
type OpChange struct {
	Added    int `json:"added"`
	Modified int `json:"modified"`
	Deleted  int `json:"deleted"`
}

// HasState reports whether operations of kind k leave a workspace state:
// HEAD after them is a checkpoint of the whole workspace, which
// [Repo.OpRestore] can put back. Those that only name checkpoints (branch,
// tag, snapshot-delete, pull) or save some paths (save-paths) do not.
func (k OpKind) HasState() bool { return k.Undoable() || k == OpUndo || k == OpRedo }

// OpLog returns the operation log, newest first: every save, restore,
// undo, redo, switch, rewind, revert and branch, tag or snapshot change,
// with where undo and redo would go now. gc drops the oldest entries once
// a checkpoint they name is removed.
func (r *Repo) OpLog(ctx context.Context, opts OpLogOptions) ([]OpEntry, error) {
	ops, err := r.st.Ops(ctx, 0)
	if err != nil {
		return nil, err
	}
	branches, err := r.opBranches(ctx, ops)
	if err != nil {
		return nil, err
	}
	undo, redo := steps(ops)
	out := []OpEntry{}
	recs := map[ID]*store.Record{}
	for i := len(ops) - 1; i >= 0; i-- {
		if opts.Limit > 0 && len(out) == opts.Limit {
			break
		}
		op := ops[i]
		if len(opts.Kinds) > 0 && !slices.Contains(opts.Kinds, OpKind(op.Kind)) {
			continue
		}
		e := OpEntry{Seq: op.Seq, Time: op.Time, Kind: OpKind(op.Kind), Before: op.Before, After: op.After,
			Checkpoint: op.Checkpoint, Branch: branches[i], Target: op.Target, Detail: op.Detail,
			Undo: undo != nil && undo.Op == op.Seq, Redo: redo != nil && redo.Op == op.Seq}
		if e.Kind.HasState() {
			if err := r.opChange(ctx, &e, recs); err != nil {
				return nil, err
			}
		}
		out = append(out, e)
	}
	return out, nil
}

// cachedRecord reads a checkpoint once per OpLog call (nil: not stored).
func (r *Repo) cachedRecord(ctx context.Context, id ID, recs map[ID]*store.Record) (*store.Record, error) {
	if rec, ok := recs[id]; ok {
		return rec, nil
	}
	rec, err := r.st.Checkpoint(ctx, id)
	if errors.Is(err, store.ErrNotFound) {
		rec, err = nil, nil
	}
	if err != nil {
		return nil, err
	}
	recs[id] = rec
	return rec, nil
}

// opChange fills in e's Restorable and Change: a save's counts are its
// checkpoint's stats, other moves diff the two trees.
func (r *Repo) opChange(ctx context.Context, e *OpEntry, recs map[ID]*store.Record) error {
	after, err := r.cachedRecord(ctx, e.After, recs)
	if err != nil || after == nil {
		return err
	}
	e.Restorable = true
	if e.Before == e.After {
		e.Change = &OpChange{}
		return nil
	}
	// A first checkpoint's stats count its files as added.
	if e.Before.IsZero() && len(after.Parents) == 0 || len(after.Parents) > 0 && after.Parents[0] == e.Before {
		e.Change = &OpChange{Added: after.Stats.Added, Modified: after.Stats.Modified, Deleted: after.Stats.Deleted}
		return nil
	}
	if e.Before.IsZero() {
		return nil
	}
	before, err := r.cachedRecord(ctx, e.Before, recs)
	if err != nil || before == nil {
		return err
	}
	c := &OpChange{}
	load := func(ctx context.Context, id object.ID) (*object.Tree, error) { return r.st.ReadTree(ctx, id) }
	err = tree.Diff(ctx, load, before.Tree, after.Tree, nil, func(ch tree.Change) error {
		switch {
		case ch.Old == nil:
			c.Added++
		case ch.New == nil:
			c.Deleted++
		default:
			c.Modified++
		}
		return nil
	})
	if err != nil {
		return err
	}
	e.Change = c
	return nil
}

// opBranches returns the branch HEAD was on after each op of ops. The
// log records a branch only where HEAD changed branch (a switch, the
// undo or redo of one), so it walks back from where HEAD is now.
func (r *Repo) opBranches(ctx context.Context, ops []store.Op) ([]string, error) {
	branch := "main"
	switch ref, err := r.st.Ref(ctx, headName); {
	case err == nil:
		branch = ref.Symbolic
	case !errors.Is(err, store.ErrNotFound):
		return nil, err
	}
	bySeq := make(map[int64]store.Op, len(ops))
	for _, op := range ops {
		bySeq[op.Seq] = op
	}
	out := make([]string, len(ops))
	for i := len(ops) - 1; i >= 0; i-- {
		op := ops[i]
		out[i] = branch
		// The branch before op.
		switch OpKind(op.Kind) {
		case OpSwitch:
			if from, _, ok := switchBranches(op); ok {
				branch = from
			}
		case OpUndo:
			if _, to, ok := switchBranches(bySeq[op.Target]); ok {
				branch = to
			}
		case OpRedo:
			if from, _, ok := switchBranches(bySeq[op.Target]); ok {
				branch = from
			}
		}
	}
	return out, nil
}

// OpRestoreOptions configure [Repo.OpRestore].
type OpRestoreOptions struct {
	// DryRun plans the restore and reports it without changing anything.
	DryRun bool
}

// OpRestore puts the workspace back in the state operation seq of the
// operation log left: its After checkpoint, with HEAD on the branch it
// was on then (that branch moves there, and is made again if it was
// deleted since). Like [Repo.Restore] it first checkpoints unsaved
// changes, writes only what differs and verifies what it wrote; it is
// recorded as a restore (a switch when it changes branch) whose Target is
// seq, so [Repo.Undo] takes it back.
//
// An operation that left no workspace state (a tag, a branch deletion:
// see [OpKind.HasState]) is refused with an error wrapping [ErrNoOpState];
// an operation gc dropped from the log, or whose checkpoint it removed,
// with one wrapping [ErrNotFound].
func (r *Repo) OpRestore(ctx context.Context, seq int64, opts OpRestoreOptions) (*RestoreResult, error) {
	if opts.DryRun {
		op, _, err := r.opState(ctx, seq)
		if err != nil {
			return nil, err
		}
		return r.dryRun(ctx, op.After, nil)
	}
	unlock, err := r.begin(ctx)
	if err != nil {
		return nil, err
	}
	defer unlock()
	op, branch, err := r.opState(ctx, seq)
	if err != nil {
		return nil, err
	}
	j := journalData{Op: OpRestore, Target: op.After, OpTarget: op.Seq}
	if ref, err := r.st.Ref(ctx, headName); err == nil && ref.Symbolic != "" && branch != "" && branch != ref.Symbolic {
		// Recorded as a switch, so that undo goes back to the branch.
		j.Op, j.Branch, j.FromBranch = OpSwitch, branch, ref.Symbolic
	}
	return r.restoreLocked(ctx, j, false)
}

// opState finds operation seq and the branch HEAD was on after it, and
// checks that it left a state that is still stored.
func (r *Repo) opState(ctx context.Context, seq int64) (store.Op, string, error) {
	ops, err := r.st.Ops(ctx, 0)
	if err != nil {
		return store.Op{}, "", err
	}
	i, ok := slices.BinarySearchFunc(ops, seq, func(op store.Op, seq int64) int { return cmp.Compare(op.Seq, seq) })
	if !ok {
		if len(ops) > 0 && seq > 0 && seq < ops[0].Seq {
			return store.Op{}, "", withHint(&notFoundError{fmt.Sprintf("op restore: operation %d is no longer in the operation log", seq)},
				"gc drops the log's oldest operations once it removes a checkpoint they name (retention: `ckpt config keep`, `max_age`, `max_size`); `ckpt op log` lists the operations kept")
		}
		return store.Op{}, "", withHint(&notFoundError{fmt.Sprintf("op restore: no operation %d", seq)},
			"`ckpt op log` lists the operations; the number in its first column names one")
	}
	op := ops[i]
	if !OpKind(op.Kind).HasState() {
		return store.Op{}, "", withHint(fmt.Errorf("op restore: operation %d (%s) %w", seq, opName(op), ErrNoOpState), noStateHint(ops[:i], op))
	}
	if _, err := r.st.Checkpoint(ctx, op.After); errors.Is(err, store.ErrNotFound) {
		if pruned, _ := r.st.Pruned(ctx, op.After); pruned {
			return store.Op{}, "", withHint(&notFoundError{fmt.Sprintf("op restore: checkpoint %s, the state operation %d left, was removed by gc", op.After.Short(), seq)},
				"retention (`ckpt config keep`, `max_age`, `max_size`) no longer kept it; `ckpt op log` marks the operations that can still be restored")
		}
		return store.Op{}, "", withHint(fmt.Errorf("op restore: operation %d: %w", seq, err), "`ckpt fsck` checks the store")
	} else if err != nil {
		return store.Op{}, "", fmt.Errorf("op restore: operation %d: %w", seq, err)
	}
	branches, err := r.opBranches(ctx, ops)
	if err != nil {
		return store.Op{}, "", err
	}
	return op, branches[i], nil
}

// opName is how an error names an op: its kind and, for a name's
// operation, the name.
func opName(op store.Op) string {
	switch OpKind(op.Kind) {
	case OpBranch, OpBranchDelete, OpTag, OpTagDelete, OpSnapshotDelete, OpPull:
		if op.Detail != "" {
			return op.Kind + " " + op.Detail
		}
	}
	return op.Kind
}

// noStateHint says what to restore instead of an op without a state: the
// last one before it that left one, the state in effect at its time.
func noStateHint(earlier []store.Op, op store.Op) string {
	what := "it changed no files"
	if OpKind(op.Kind) == OpSavePaths {
		what = "it saved some paths and left HEAD where it was"
	}
	for i := len(earlier) - 1; i >= 0; i-- {
		if OpKind(earlier[i].Kind).HasState() {
			return fmt.Sprintf("%s; `ckpt op restore %d` puts back the state in effect then (%s to %s)", what, earlier[i].Seq, earlier[i].Kind, earlier[i].After.Short())
		}
	}
	return what + "; `ckpt op log` lists the operations that can be restored"
}
