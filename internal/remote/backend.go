// Package remote keeps ckpt's checkpoints on storage that outlives the
// machine: an S3-compatible bucket or a directory (local or on a network
// file system). A remote holds immutable, content-addressed pack files of
// objects, one index per pack, and one small object per ref, updated with
// conditional writes so many stores can push to one remote at once without
// a lock. See docs/formats.md ("Remotes") for the layout.
package remote

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"
)

// Errors a [Backend] returns.
var (
	// ErrNotExist: no object has the key.
	ErrNotExist = errors.New("no such object")
	// ErrPrecondition: a conditional write found another value (or, for
	// a create, an object) under the key.
	ErrPrecondition = errors.New("the object changed meanwhile")
	// ErrShort: an object is shorter than a range asked of it (an index
	// that does not match its pack). A retry does not change it.
	ErrShort = errors.New("the object is shorter than the range asked")
)

// maxRange bounds a range request: no object of a pack is larger.
const maxRange = 1 << 32

// Entry is one listed object.
type Entry struct {
	Key     string
	Size    int64
	ModTime time.Time
}

// Cond is the condition of a write: none, create-only (IfNoneMatch), or
// replace a version (IfMatch, an ETag from Get or Put).
type Cond struct {
	IfNoneMatch bool
	IfMatch     string
}

// Backend is the storage under a remote: a flat key space of immutable or
// conditionally replaced objects. Keys are '/'-separated and never start
// with '/'. Implementations are safe for concurrent use.
type Backend interface {
	// Get returns an object's content and its ETag.
	Get(ctx context.Context, key string) ([]byte, string, error)
	// GetRange returns length bytes of an object from offset.
	GetRange(ctx context.Context, key string, offset, length int64) ([]byte, error)
	// Put writes an object if cond holds and returns its new ETag.
	Put(ctx context.Context, key string, data []byte, cond Cond) (string, error)
	// List lists the objects whose keys start with prefix, in key order.
	List(ctx context.Context, prefix string) ([]Entry, error)
	// Delete removes an object (no error if absent).
	Delete(ctx context.Context, key string) error
	// String names the backend for messages (no credentials).
	String() string
}

// OpError is a failed backend operation: what, which key, on which remote.
type OpError struct {
	Op     string
	Remote string
	Key    string
	Err    error
}

func (e *OpError) Error() string {
	s := fmt.Sprintf("%s %s", e.Op, e.Remote)
	if e.Key != "" {
		s += "/" + e.Key
	}
	return s + ": " + e.Err.Error()
}

func (e *OpError) Unwrap() error { return e.Err }

// readAllLimit reads r to the end, refusing more than limit bytes.
func readAllLimit(r io.Reader, limit int64) ([]byte, error) {
	b, err := io.ReadAll(io.LimitReader(r, limit+1))
	if err != nil {
		return nil, err
	}
	if int64(len(b)) > limit {
		return nil, fmt.Errorf("object larger than %d bytes", limit)
	}
	return b, nil
}
