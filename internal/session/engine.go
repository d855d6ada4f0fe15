package session

import (
	"context"
	"time"

	"github.com/seed1cedbf7c/ckpt/internal/object"
	"github.com/seed1cedbf7c/ckpt/internal/store"
)

// ID names a checkpoint, tree or blob.
type ID = object.ID

// Path is a workspace-relative, slash-separated path.
type Path = object.Path

// Engine is what sessions need of the checkpoint engine (the root
// package's Repo implements it). R is its restore result, S its result
// of switching branches; the session package carries them through to
// its callers without looking inside.
//
// Methods marked "lock held" expect the caller to hold the lock [Engine.Lock]
// took, and never take it themselves.
type Engine[R, S any] interface {
	// Lock takes the store's operation lock (finishing an interrupted
	// operation first); unlock ends the operation.
	Lock(ctx context.Context) (unlock func(), err error)
	// Now is the engine's clock.
	Now() time.Time
	// Emit delivers an event to the workspace's subscribers.
	Emit(Event)
	// Sessions is the store's table of sessions and their messages.
	Sessions() store.Sessions
	// Head returns the checkpoint HEAD names; the zero ID when there is
	// none yet.
	Head(ctx context.Context) (ID, error)
	// Tree returns a checkpoint's root tree.
	Tree(ctx context.Context, checkpoint ID) (ID, error)
	// Save checkpoints the whole workspace as a turn's checkpoint (lock
	// held) and returns its id.
	Save(ctx context.Context, message string, meta map[string]string) (ID, error)
	// Changes lists the paths that differ from checkpoint from to
	// checkpoint to, or to the working tree when to is zero.
	Changes(ctx context.Context, from, to ID) ([]TurnFile, error)
	// Restore makes the workspace equal to the checkpoint target through
	// the verified, undoable restore, as a rewind (lock held). A dry run
	// reports what it would write and changes nothing.
	Restore(ctx context.Context, target ID, dryRun bool) (*R, error)
	// RestoreEdited applies edits to the workspace (lock held): it scans
	// the workspace, calls plan with it, stores the workspace's tree with
	// the planned edits as a checkpoint with this message and meta, and
	// restores that checkpoint. If the workspace changes before the
	// restore starts, it scans and calls plan again. A dry run stores
	// nothing and reports what the restore would write.
	//
	// track lists ignored files the workspace's tree (and the checkpoint)
	// is to hold, as turns an agent's edit tool changed them in hold them
	// (see Amend).
	RestoreEdited(ctx context.Context, dryRun bool, message string, meta map[string]string, track []Path, plan func(*Workspace) (*Edits, error)) (*R, error)
	// Amend records a checkpoint holding what base holds and, as they
	// are now on disk, the ignored files paths name, so that a rewind can
	// put them back (lock held). HEAD does not move. It returns the new
	// checkpoint (base itself when it took nothing) and the paths it took:
	// files over the size limit and anything but files and symlinks are
	// not taken.
	Amend(ctx context.Context, base ID, paths []Path, message string) (ID, []Path, error)
	// Tracked returns the ignored paths a checkpoint holds, present or
	// absent (see Amend): a restore to it speaks for them and leaves other
	// ignored files alone.
	Tracked(ctx context.Context, checkpoint ID) ([]Path, error)
	// LastOp returns the sequence number of the operation log's last
	// entry (lock held): after a Restore, the restore's own.
	LastOp(ctx context.Context) (int64, error)
	// InEffect reads the operation log once and returns a function that
	// reports whether any of the operations ops (LastOp's numbers) is in
	// effect: done, and not taken back by an undo.
	InEffect(ctx context.Context) (func(ops []int64) bool, error)
	// Fork creates the history branch name at checkpoint at and switches
	// the workspace to it (lock held; the current state is checkpointed
	// first).
	Fork(ctx context.Context, name string, at ID) (*S, error)
	// Summarizer returns the summarizer command the store's config
	// names; "" means the built-in summarizer.
	Summarizer() string
	// RunSummarizer runs the summarizer command with the transcript (JSON)
	// on its stdin and returns what it printed.
	RunSummarizer(ctx context.Context, transcript []byte) (string, error)
}

// Workspace is the workspace as [Engine.RestoreEdited] scanned it, for
// planning edits on top of it.
type Workspace struct {
	// Tree is its root tree.
	Tree ID
	// Root is its directory (absolute), for the paths agents' tools name.
	Root string
	// ReadTree reads a tree: one of the workspace's, or any stored one.
	ReadTree func(ctx context.Context, id ID) (*object.Tree, error)
	// ReadFile reads the content of the file (or symlink) e at path p:
	// the stored blob or, in a dry run that did not store the workspace,
	// the file on disk.
	ReadFile func(ctx context.Context, e *object.Entry, p string) ([]byte, error)
}

// Edits are changes to a workspace's tree: each path set to an entry
// (nil: removed), covering everything below it, and the contents of new
// blobs the entries name.
type Edits struct {
	Paths map[string]*object.Entry
	Blobs map[ID][]byte
}

// Event is something that happened to a session, for [Engine.Emit].
type Event struct {
	Kind       string // one of the Event… constants
	Session    string
	Turn       int
	Checkpoint ID
	Message    string
	Paths      []Path
}

// Event kinds.
const (
	EventTurnBegan  = "turn-began" // a session's turn began (checkpoint taken)
	EventTurnEnded  = "turn-ended" // a session's turn ended
	EventMessage    = "message"    // a message was added to a session
	EventRewound    = "rewound"    // a session was rewound (code, conversation or both)
	EventForked     = "forked"     // a session was forked from a turn
	EventSummarized = "summarized" // a session's turns were summarized
)
