// Package store keeps ckpt's objects and metadata: blobs, trees and
// checkpoints (content-addressed, verified on every read), refs, the
// operation log and the restore journal.
//
// Two backends implement [Store]: the SQLite backend ([OpenSQLite]), one
// database in WAL mode in the store directory, and the memory backend
// ([NewMemory]) for the Go API and tests. Both give the same guarantees:
// [Store.Update] is atomic (a crash leaves all of it or none), every read of
// an object re-hashes it and fails with a [*CorruptError] on mismatch, and
// [Store.Lock] serializes mutating operations across processes.
package store

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/seed1cedbf7c/ckpt/internal/object"
)

// Sentinel errors. The root package re-exports them.
var (
	// ErrNotFound: the object, ref or checkpoint does not exist.
	ErrNotFound = errors.New("not found")
	// ErrCorrupt: stored data does not match its hash or cannot be decoded.
	ErrCorrupt = errors.New("store is corrupt")
	// ErrLocked: another process holds the store's lock past the timeout.
	ErrLocked = errors.New("store is locked")
	// ErrFull: the store's file system has no space left (SQLITE_FULL).
	ErrFull = errors.New("no space left for the store")
	// ErrExists: a ref, session or other named thing already exists.
	ErrExists = errors.New("already exists")
)

// CorruptError reports a corrupt object. It wraps [ErrCorrupt].
type CorruptError struct {
	Kind   string // "blob", "chunk", "tree", "checkpoint", "database", ...
	ID     object.ID
	Detail string
}

// Error implements error.
func (e *CorruptError) Error() string {
	s := "corrupt " + e.Kind
	if !e.ID.IsZero() {
		s += " " + e.ID.String()
	}
	if e.Detail != "" {
		s += ": " + e.Detail
	}
	return s
}

// Unwrap returns [ErrCorrupt].
func (e *CorruptError) Unwrap() error { return ErrCorrupt }

// Hint suggests what to do about a damaged database file (other kinds
// have none: fsck and the object's id say enough).
func (e *CorruptError) Hint() string {
	if e.Kind != "database" {
		return ""
	}
	return "the store's database is damaged or is not a ckpt database; put back a backup of it if you have one, " +
		"or move the store directory aside (ckpt then starts a new, empty one there)"
}

// NotFoundError reports a missing object. It wraps [ErrNotFound].
type NotFoundError struct {
	Kind string
	ID   object.ID
}

// Error implements error.
func (e *NotFoundError) Error() string { return fmt.Sprintf("%s %s not found", e.Kind, e.ID) }

// Unwrap returns [ErrNotFound].
func (e *NotFoundError) Unwrap() error { return ErrNotFound }

// Stats are the counts recorded with a checkpoint: the change against its
// first parent and the size of its tree.
type Stats struct {
	Added    int   `json:"added"`
	Modified int   `json:"modified"`
	Deleted  int   `json:"deleted"`
	Files    int64 `json:"files"`
	Bytes    int64 `json:"bytes"`
}

// Record is a stored checkpoint with its id, insertion order and stats.
type Record struct {
	*object.Checkpoint
	ID    object.ID
	Seq   int64
	Stats Stats
}

// Ref names a checkpoint: "HEAD", "snapshots/<name>", "tags/<name>",
// "branches/<name>".
type Ref struct {
	Name string
	ID   object.ID
	// Symbolic, for HEAD only: the branch HEAD is on ("" when detached).
	Symbolic string
	Time     time.Time
	// Expires is the time a snapshot expires (zero: never).
	Expires time.Time
}

// Op is one entry of the operation log: what an operation did to HEAD.
type Op struct {
	Seq    int64
	Time   time.Time
	Kind   string    // "save", "restore", "undo", "redo", ...
	Before object.ID // HEAD before (zero: none)
	After  object.ID // HEAD after
	// Target is the seq of the op an undo or redo acted on.
	Target int64
	// Checkpoint is the checkpoint the op created, if any.
	Checkpoint object.ID
	Detail     string
}

// Journal is the record of an operation in progress that touches the
// workspace. Its presence after a crash means the operation must be finished
// or rolled back before anything else happens.
type Journal struct {
	Kind string
	Data []byte
	Time time.Time
}

// ListFilter selects checkpoints for [Store.Checkpoints].
type ListFilter struct {
	Limit int    // 0: all
	Kind  string // "": all
	// BeforeSeq, when positive, keeps only checkpoints stored before the
	// one with this [Record.Seq]: the cursor of the next page, which the
	// store finds by its index, so a page costs what its rows cost.
	BeforeSeq int64
}

// Info describes a store.
type Info struct {
	Backend   string
	Path      string // directory ("" for memory)
	Workspace string
	Created   time.Time
	Size      int64 // bytes on disk
	// Instance is a random id chosen when the store was created.
	Instance string
	// Generation changes whenever objects may have been deleted (gc, clear),
	// invalidating caches that assume objects exist.
	Generation int64
	// CacheSeq counts stat cache writes: each transaction that writes a
	// new cache bumps it (meta "cache_seq") and the cache records the new
	// value, so a cache newer than its database (an older ckpt.db put
	// back) is recognised.
	CacheSeq int64
}

// Store is a checkpoint store. All methods are safe for concurrent use.
type Store interface {
	Info(ctx context.Context) (Info, error)

	// HasBlob reports whether the blob exists.
	HasBlob(ctx context.Context, id object.ID) (bool, error)
	// ReadBlob returns a blob's content, verified against id.
	ReadBlob(ctx context.Context, id object.ID) ([]byte, error)
	// OpenBlob streams a blob's content. The reader verifies every chunk and
	// the whole content; Read returns a [*CorruptError] at the first mismatch,
	// at the latest with the final bytes, so a caller that writes to a
	// temporary file discards it on error.
	OpenBlob(ctx context.Context, id object.ID) (io.ReadCloser, int64, error)
	// HasTree reports whether the tree exists.
	HasTree(ctx context.Context, id object.ID) (bool, error)
	// ReadTree returns a decoded, verified tree.
	ReadTree(ctx context.Context, id object.ID) (*object.Tree, error)
	// Checkpoint returns a verified checkpoint.
	Checkpoint(ctx context.Context, id object.ID) (*Record, error)
	// Checkpoints lists checkpoints, newest first.
	Checkpoints(ctx context.Context, f ListFilter) ([]*Record, error)
	// FindCheckpoints returns the ids starting with the hex prefix (at most limit).
	FindCheckpoints(ctx context.Context, hexPrefix string, limit int) ([]object.ID, error)

	// Ref returns the named ref, or ErrNotFound.
	Ref(ctx context.Context, name string) (Ref, error)
	// Refs lists refs whose name starts with prefix, sorted by name.
	Refs(ctx context.Context, prefix string) ([]Ref, error)
	// Ops returns the operation log from seq after+1 on, oldest first.
	Ops(ctx context.Context, after int64) ([]Op, error)
	// Journal returns the pending journal, or nil.
	Journal(ctx context.Context) (*Journal, error)
	// Meta returns a store-wide setting ("" if unset).
	Meta(ctx context.Context, key string) (string, error)

	// Update runs fn in one atomic transaction. fn's writes are visible to
	// later reads only after Update returns nil.
	Update(ctx context.Context, fn func(Tx) error) error
	// Lock takes the store's exclusive operation lock, waiting up to timeout
	// (reporting the wait through waiting, which may be nil). Mutating
	// operations hold it from before they look at the workspace until after
	// their last write.
	Lock(ctx context.Context, timeout time.Duration, waiting func(holder string)) (unlock func(), err error)
	// Fsck re-hashes and re-decodes every object and checks every reference
	// between objects, refs and ops. It reports each problem to report and
	// returns the number of objects checked.
	Fsck(ctx context.Context, report func(Problem), progress func(done, total int64)) (int64, error)

	// Index lists every stored object for garbage collection.
	Index(ctx context.Context) (*Index, error)

	// Totals counts what the store holds without listing it.
	Totals(ctx context.Context) (*Totals, error)
	// Sweep deletes what a plan lists, atomically, recording the deleted
	// checkpoints as pruned. The caller holds the lock.
	Sweep(ctx context.Context, p *SweepPlan) (SweepResult, error)
	// Pruned reports whether gc deleted a checkpoint.
	Pruned(ctx context.Context, id object.ID) (bool, error)
	// Vacuum gives space freed by Sweep back to the file system.
	Vacuum(ctx context.Context) error
	// Usage reports the store's size.
	Usage(ctx context.Context) (Usage, error)
	// Clear deletes all history (objects, checkpoints, refs, ops), keeping
	// the store's identity and settings.
	Clear(ctx context.Context, extraTables ...string) error

	Close() error
}

// Problem is one fsck finding.
type Problem struct {
	Kind   string // object kind or "ref", "op"
	ID     object.ID
	Name   string // ref name, if any
	Detail string
}

// String implements fmt.Stringer.
func (p Problem) String() string {
	s := p.Kind
	if p.Name != "" {
		s += " " + p.Name
	}
	if !p.ID.IsZero() {
		s += " " + p.ID.String()
	}
	return s + ": " + p.Detail
}

// Tx is a write transaction. PutBlob, NewBlobWriter and HasBlob are safe for
// concurrent use by the goroutines of one operation.
type Tx interface {
	// HasBlob reports whether the blob exists, including this transaction's writes.
	HasBlob(id object.ID) (bool, error)
	// PutBlob stores a small blob (data must hash to id). Idempotent.
	PutBlob(id object.ID, data []byte) error
	// PutBlobFrom is PutBlob for content that is probably similar to the
	// blob base (a previous version of the same file): the store may keep
	// it as a delta against base. A zero or unknown base is ignored.
	PutBlobFrom(id object.ID, data []byte, base object.ID) error
	// NewBlobWriter starts a large blob, stored in content-defined chunks as
	// it is written. Commit names it; Abort drops it.
	NewBlobWriter() BlobWriter
	// HasTree reports whether the tree exists, including this transaction's writes.
	HasTree(id object.ID) (bool, error)
	// PutTree stores an encoded tree. Idempotent.
	PutTree(id object.ID, data []byte) error
	// PutTreeFrom is PutTree with a likely-similar base tree (the previous
	// version of the same directory), like PutBlobFrom.
	PutTreeFrom(id object.ID, data []byte, base object.ID) error
	// ReadTree reads a verified tree, including this transaction's writes.
	ReadTree(id object.ID) (*object.Tree, error)
	// PutCheckpoint stores a checkpoint.
	PutCheckpoint(cp *object.Checkpoint, stats Stats) (object.ID, error)
	// MarkPruned records that checkpoint id was removed from the history
	// on purpose (by gc, here or in the store a pulled history came from),
	// so that a checkpoint naming it as a parent is not missing one.
	MarkPruned(id object.ID) error
	// SetRef creates or moves a ref.
	SetRef(r Ref) error
	// DeleteRef removes a ref (no error if absent).
	DeleteRef(name string) error
	// AppendOp appends to the operation log and returns the op's seq.
	AppendOp(op Op) (int64, error)
	// SetJournal records (j != nil) or clears (j == nil) the pending journal.
	SetJournal(j *Journal) error
	// SetMeta sets a store-wide setting.
	SetMeta(key, value string) error
}

// BlobWriter receives a large blob's content.
type BlobWriter interface {
	io.Writer
	// Commit stores the blob under id (the SHA-256 of everything written).
	Commit(id object.ID) error
	// Abort discards it.
	Abort()
}
