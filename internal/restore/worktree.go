package restore

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"

	"github.com/seed1cedbf7c/ckpt/internal/diff"
	"github.com/seed1cedbf7c/ckpt/internal/object"
	"golang.org/x/sys/unix"
)

// WorkTree is a workspace seen as a [diff.Tree], so a diff can be applied
// to it (Decree's revert applies changes.diff in reverse). Writes go
// through os.Root: temp file, fsync, rename; a parent that is a symlink is
// never written through.
type WorkTree struct {
	Root *os.Root
}

var _ diff.Tree = (*WorkTree)(nil)

// Read returns the file or symlink at p, or nil if there is none.
func (w *WorkTree) Read(p string) (*diff.Side, error) {
	if !object.ValidPath(p) {
		return nil, fmt.Errorf("invalid path %q", p)
	}
	for _, d := range parents(p) {
		fi, err := w.Root.Lstat(d)
		if errors.Is(err, fs.ErrNotExist) || errors.Is(err, unix.ENOTDIR) || err == nil && !fi.IsDir() {
			return nil, nil // no such file: a parent is missing or not a directory
		}
		if err != nil {
			return nil, err
		}
	}
	fi, err := w.Root.Lstat(p)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	switch {
	case fi.Mode()&fs.ModeSymlink != 0:
		t, err := w.Root.Readlink(p)
		if err != nil {
			return nil, err
		}
		return &diff.Side{Mode: object.ModeSymlink, Content: []byte(t)}, nil
	case fi.Mode().IsRegular():
		f, err := w.Root.OpenFile(p, os.O_RDONLY|unix.O_NOFOLLOW, 0)
		if err != nil {
			return nil, err
		}
		defer f.Close()
		data, err := io.ReadAll(f)
		if err != nil {
			return nil, err
		}
		return &diff.Side{Mode: object.ModeFile | uint32(fi.Mode().Perm()), Content: data}, nil
	case fi.IsDir():
		return nil, fmt.Errorf("%s is a directory", p)
	}
	return nil, fmt.Errorf("%s is not a regular file or symlink", p)
}

// Write creates or replaces p atomically, creating parent directories.
func (w *WorkTree) Write(p string, s *diff.Side) error {
	if !object.ValidPath(p) {
		return fmt.Errorf("invalid path %q", p)
	}
	dir := path.Dir(p)
	if dir != "." {
		for _, d := range parents(p) {
			if fi, err := w.Root.Lstat(d); err == nil && !fi.IsDir() {
				return fmt.Errorf("%s is not a directory", d)
			}
		}
		if err := w.Root.MkdirAll(dir, 0o755); err != nil {
			return err
		}
	}
	if fi, err := w.Root.Lstat(p); err == nil && fi.IsDir() {
		return fmt.Errorf("%s is a directory", p)
	}
	var rnd [6]byte
	rand.Read(rnd[:])
	tmp := path.Join(dir, TempName+hex.EncodeToString(rnd[:]))
	if object.IsSymlink(s.Mode) {
		if err := w.Root.Symlink(string(s.Content), tmp); err != nil {
			return err
		}
	} else {
		f, err := w.Root.OpenFile(tmp, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o600)
		if err != nil {
			return err
		}
		_, err = f.Write(s.Content)
		if err == nil {
			err = f.Chmod(fs.FileMode(s.Mode & 0o777))
		}
		if err == nil {
			err = f.Sync()
		}
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			w.Root.Remove(tmp)
			return err
		}
	}
	if err := w.Root.Rename(tmp, p); err != nil {
		w.Root.Remove(tmp)
		return err
	}
	return nil
}

// Remove deletes p and the parent directories that become empty.
func (w *WorkTree) Remove(p string) error {
	if !object.ValidPath(p) {
		return fmt.Errorf("invalid path %q", p)
	}
	if err := w.Root.Remove(p); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	for d := path.Dir(p); d != "."; d = path.Dir(d) {
		if w.Root.Remove(d) != nil {
			break // not empty (or gone): stop
		}
	}
	return nil
}

// TempName starts the names of temporary files ckpt writes in the
// workspace (see scan.TempPrefix).
const TempName = ".ckpt-tmp-"
