package decree

import (
	"context"
	"io"
	"time"

	"github.com/seed1cedbf7c/ckpt/internal/run"
)

// Engine is what the flow needs of the checkpoint engine: the root
// package's Repo implements it. Checkpoints are named by their full ids
// (hex). Every method that writes the store or the workspace takes the
// store's operation lock itself; the flow never holds it across an
// attempt, so other ckpt commands work while a routine runs.
type Engine interface {
	// Root returns the workspace directory, the one .decree is in.
	Root() string

	// Now returns the time to record in a run's files (the engine's
	// clock, which tests set).
	Now() time.Time

	// Save stores the workspace as it is as a checkpoint — a new one
	// even when nothing changed since the last — and returns its id.
	// HEAD moves to it. Once started it finishes: the flow passes a
	// context without cancellation for the checkpoints a run depends on.
	Save(ctx context.Context, s Save) (string, error)

	// WorkspaceIs reports whether the workspace holds exactly the tree of
	// checkpoint id. An id that names no checkpoint is false, not an
	// error (id comes from run.json, a file in the workspace).
	WorkspaceIs(ctx context.Context, id string) (bool, error)

	// Changes returns what changed from checkpoint from to checkpoint to:
	// an attempt's changes since its run's checkpoint.
	Changes(ctx context.Context, from, to string) (*Changes, error)

	// Manifest returns manifest.json for checkpoint id: every file's
	// SHA-256, size and mode, as Decree writes it.
	Manifest(ctx context.Context, id string) ([]byte, error)

	// ProcessLock keeps a second Process from working on the same inbox
	// until unlock is called. It fails at once if another holds it.
	ProcessLock() (unlock func(), err error)

	// Revert undoes a run Decree's way: req.Dir's changes.diff applied in
	// reverse over the workspace, every affected path checked against
	// manifest.json, and only then the workspace written — journaled,
	// verified and undoable (op "revert"). It reports false, writing
	// nothing, when every affected path already holds its state from
	// before the run. A diff that does not apply, or a result that does
	// not match the manifest, is an error wrapping
	// [restore.ErrIntegrity] and nothing is written.
	//
	// req.Mark, if not nil, travels in the revert's journal and is
	// written with [Finish] before the journal is cleared — by the revert,
	// or by the crash recovery that finishes it — so the run's record
	// never lags the workspace. If req.Mark.Result is empty, the revert
	// sets it to the state it leaves.
	Revert(ctx context.Context, req RevertRequest) (bool, error)

	// RestoreCheckpoint puts the workspace back to req.Run.Checkpoint, the
	// state before the run's first attempt, with the engine's verified
	// restore: the fallback when changes.diff does not reverse. It
	// refuses a checkpoint the run did not take (its meta "run" is not
	// req.Run.ID). req.Mark is carried and written as for Revert.
	RestoreCheckpoint(ctx context.Context, req RevertRequest) error
}

// Save describes a checkpoint the flow takes.
type Save struct {
	// Kind is object.KindRun (a run's checkpoints) or
	// object.KindPreRestore (the state before ckpt runs revert).
	Kind string
	// Message is the checkpoint's message.
	Message string
	// Run, if set, is the run the checkpoint belongs to (its meta "run").
	Run string
}

// Changes is what changed between two checkpoints.
type Changes struct {
	// Added, Modified and Deleted count the paths.
	Added, Modified, Deleted int
	// Stat is the diffstat, as git diff --stat prints it.
	Stat string
	// WritePatch writes the patch in Decree's format: git's, with
	// base64 blocks for binary files.
	WritePatch func(w io.Writer) error
}

// RevertRequest names a run to put back (see [Engine.Revert]).
type RevertRequest struct {
	// Dir is the run directory: changes.diff, manifest.json and the
	// attempts' diffs are read from there, as untrusted input.
	Dir string
	// Run is the run's record: its id, checkpoint and attempts.
	Run *run.Record
	// Why says why, in the message of the checkpoint the revert leaves.
	Why string
	// Mark is what the run's record says once the revert is done.
	Mark *Mark
}
