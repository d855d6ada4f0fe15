package ckpt

import (
	"context"
	"strings"

	"github.com/seed1cedbf7c/ckpt/internal/store"
)

// Step is where undo or redo would move the workspace.
type Step struct {
	// Op is the operation log entry being undone or redone.
	Op     int64  `json:"op"`
	OpKind OpKind `json:"op_kind"`
	// To is the checkpoint the workspace would be restored to.
	To ID `json:"to"`
	// Branch is the branch HEAD would be on afterwards, when the step
	// crosses a switch.
	Branch string `json:"branch,omitempty"`
}

// Timeline is the undo/redo position of a workspace.
type Timeline struct {
	Head ID    `json:"head"`
	Undo *Step `json:"undo"`
	Redo *Step `json:"redo"`
}

// OpKind is the kind of an operation-log entry.
type OpKind string

// The operations the log records.
const (
	OpSave           OpKind = "save"            // a checkpoint of the whole workspace
	OpSavePaths      OpKind = "save-paths"      // a partial checkpoint (HEAD unmoved)
	OpRestore        OpKind = "restore"         // the workspace made equal to a checkpoint
	OpUndo           OpKind = "undo"            // a step of the timeline taken back
	OpRedo           OpKind = "redo"            // ... and taken again
	OpSwitch         OpKind = "switch"          // to another branch
	OpRewind         OpKind = "rewind"          // a session's turn rewound
	OpRevert         OpKind = "revert"          // a guarded run's changes reverted
	OpBranch         OpKind = "branch"          // a branch created or moved
	OpBranchDelete   OpKind = "branch-delete"   // a branch deleted
	OpTag            OpKind = "tag"             // a tag set
	OpTagDelete      OpKind = "tag-delete"      // a tag deleted
	OpSnapshotDelete OpKind = "snapshot-delete" // a named snapshot deleted
)

// Undoable reports whether operations of kind k are steps of the timeline:
// those undo takes back and redo takes again.
func (k OpKind) Undoable() bool {
	switch k {
	case OpSave, OpRestore, OpSwitch, OpRewind, OpRevert:
		return true
	}
	return false
}

// undoable reports whether an op-log kind is a step of the timeline.
func undoable(kind string) bool { return OpKind(kind).Undoable() }

// timeline replays the operation log: every save or restore pushes onto the
// undo stack (and clears the redo stack); undo moves its op to the redo
// stack, redo moves it back.
func timeline(ops []store.Op) (done, redo []store.Op) {
	for _, op := range ops {
		switch {
		case undoable(op.Kind):
			done = append(done, op)
			redo = redo[:0]
		case OpKind(op.Kind) == OpUndo:
			if n := len(done); n > 0 && done[n-1].Seq == op.Target {
				redo = append(redo, done[n-1])
				done = done[:n-1]
			}
		case OpKind(op.Kind) == OpRedo:
			if n := len(redo); n > 0 && redo[n-1].Seq == op.Target {
				// Undoing it again goes back to where the redo started:
				// with unsaved changes, the checkpoint that kept them.
				step := redo[n-1]
				if !op.Before.IsZero() {
					step.Before = op.Before
				}
				done = append(done, step)
				redo = redo[:n-1]
			}
		}
	}
	return done, redo
}

// Timeline reports where undo and redo would go.
func (r *Repo) Timeline(ctx context.Context) (*Timeline, error) {
	ops, err := r.st.Ops(ctx, 0)
	if err != nil {
		return nil, err
	}
	t := &Timeline{}
	if ref, _, err := r.head(ctx); err != nil {
		return nil, err
	} else if ref != nil {
		t.Head = ref.ID
	}
	t.Undo, t.Redo = steps(ops)
	return t, nil
}

// steps replays the operation log and returns where undo and redo would
// go (nil: nowhere).
func steps(ops []store.Op) (undo, redo *Step) {
	done, redone := timeline(ops)
	if n := len(done); n > 0 && !done[n-1].Before.IsZero() {
		op := done[n-1]
		undo = &Step{Op: op.Seq, OpKind: OpKind(op.Kind), To: op.Before}
		if from, _, ok := switchBranches(op); ok {
			undo.Branch = from
		}
	}
	if n := len(redone); n > 0 {
		op := redone[n-1]
		redo = &Step{Op: op.Seq, OpKind: OpKind(op.Kind), To: op.After}
		if _, to, ok := switchBranches(op); ok {
			redo.Branch = to
		}
	}
	return undo, redo
}

// Undo steps the timeline back: it restores the state before the last save
// or restore (or redo). If the workspace has unsaved changes, they are
// first recorded as a checkpoint (kind pre-restore) and that save is what
// is undone, so Redo brings them back.
func (r *Repo) Undo(ctx context.Context) (*RestoreResult, error) {
	unlock, err := r.begin(ctx)
	if err != nil {
		return nil, err
	}
	defer unlock()
	if _, head, err := r.head(ctx); err != nil {
		return nil, err
	} else if head != nil {
		// Unsaved changes become a checkpoint first (a no-op when clean).
		if _, err := r.saveLocked(ctx, SaveOptions{Kind: KindPreRestore, Message: "unsaved changes before undo"}, nil); err != nil {
			return nil, err
		}
	}
	t, err := r.Timeline(ctx)
	if err != nil {
		return nil, err
	}
	if t.Undo == nil {
		return nil, withHint(ErrNothingToUndo, "the timeline starts at the first checkpoint; `ckpt log` shows it")
	}
	return r.restoreLocked(ctx, journalData{Op: OpUndo, Target: t.Undo.To, OpTarget: t.Undo.Op, Branch: t.Undo.Branch}, false)
}

// Redo steps the timeline forward again after [Repo.Undo].
func (r *Repo) Redo(ctx context.Context) (*RestoreResult, error) {
	unlock, err := r.begin(ctx)
	if err != nil {
		return nil, err
	}
	defer unlock()
	t, err := r.Timeline(ctx)
	if err != nil {
		return nil, err
	}
	if t.Redo == nil {
		return nil, withHint(ErrNothingToRedo, "redo follows undo; a new save or restore after an undo starts a new timeline")
	}
	return r.restoreLocked(ctx, journalData{Op: OpRedo, Target: t.Redo.To, OpTarget: t.Redo.Op, Branch: t.Redo.Branch}, false)
}

// switchBranches returns the branches a switch op left and entered.
func switchBranches(op store.Op) (from, to string, ok bool) {
	if OpKind(op.Kind) != OpSwitch {
		return "", "", false
	}
	from, to, ok = strings.Cut(op.Detail, " -> ")
	return from, to, ok && from != "" && to != ""
}
