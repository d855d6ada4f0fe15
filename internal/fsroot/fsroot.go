// Package fsroot gives access to a directory tree without ever following a
// symbolic link inside it.
//
// [os.Root] keeps every access inside its root, but it follows symlinks that
// stay inside: if a directory is replaced by a symlink to another directory
// of the workspace while a restore runs, os.Root writes and deletes through
// the link. A [Root] refuses instead. Every path is resolved relative to the
// root's descriptor, component by component with O_NOFOLLOW|O_DIRECTORY (or
// in one openat2 call with RESOLVE_BENEATH|RESOLVE_NO_SYMLINKS where the
// kernel has it), and the last component is acted on with the *at call of
// its parent's descriptor, so a symlink anywhere on the path is never
// traversed: the call fails with ELOOP or ENOTDIR, and the caller sees a
// path that is not what it expected.
//
// Paths are relative, slash-separated, without "." or ".." components; ""
// and "." name the root. They may be longer than PATH_MAX: a long path is
// resolved in pieces.
//
// On Windows a Root is built on [os.Root] and checks each directory on a
// path with Lstat before acting (two steps, not one call); the calls that
// hand out raw descriptors (OpenDirFD, OpenFD) fail with an
// [*UnsupportedError].
package fsroot

import (
	"errors"
	"io/fs"
	"os"
	"strings"
)

// ErrInvalidPath is wrapped by the errors of paths that are absolute or hold
// empty, "." or ".." components.
var ErrInvalidPath = errors.New("invalid path below the root")

func clean(rel string) (string, error) {
	if rel == "" || rel == "." {
		return "", nil
	}
	if rel[0] == '/' || strings.IndexByte(rel, 0) >= 0 {
		return "", ErrInvalidPath
	}
	for c := range strings.SplitSeq(rel, "/") {
		if c == "" || c == "." || c == ".." {
			return "", ErrInvalidPath
		}
	}
	return rel, nil
}

func perr(op, rel string, err error) error {
	if rel == "" {
		rel = "."
	}
	return &fs.PathError{Op: op, Path: rel, Err: err}
}

// Rename moves oldRel to newRel, replacing what newRel names (as rename(2)).
func (r *Root) Rename(oldRel, newRel string) error {
	return r.rename(oldRel, newRel, false)
}

// RenameNoReplace moves oldRel to newRel only if newRel does not exist; if
// it does, the error wraps fs.ErrExist. Where the file system cannot do
// this atomically (and on Windows), the check and the rename are two steps.
func (r *Root) RenameNoReplace(oldRel, newRel string) error {
	return r.rename(oldRel, newRel, true)
}

// Underlying strips the *fs.PathError or *os.LinkError of a file-system
// call, leaving the errno-like cause.
func Underlying(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	var le *os.LinkError
	if errors.As(err, &le) {
		return le.Err
	}
	return err
}
