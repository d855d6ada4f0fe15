// Package atomicfile replaces a file whole or not at all: the new content
// goes to a temporary file in the same directory, which is synced and
// renamed over the file, and the directory is synced. A crash leaves the
// old file or the new one, and at worst a temporary file whose name starts
// with [TempPrefix] (which ckpt's scans leave out).
package atomicfile

import (
	"bufio"
	"io"
	"io/fs"
	"os"
	"path/filepath"
)

// TempPrefix starts the name of every temporary file Write makes.
const TempPrefix = ".ckpt-tmp-"

// WriteFile replaces path with data, mode perm, the way Write does.
func WriteFile(path string, data []byte, perm fs.FileMode) error {
	return Write(path, perm, func(w io.Writer) error {
		_, err := w.Write(data)
		return err
	})
}

// Write replaces path with what write writes (buffered, streamed, never
// held whole in memory), mode perm: through a temporary file in path's
// directory, synced, renamed over path; then the directory is synced. On
// an error path is unchanged and the temporary file removed.
func Write(path string, perm fs.FileMode, write func(w io.Writer) error) error {
	dir := filepath.Dir(path)
	f, err := os.CreateTemp(dir, TempPrefix+"*")
	if err != nil {
		return err
	}
	bw := bufio.NewWriterSize(f, 64<<10)
	err = write(bw)
	if err == nil {
		err = bw.Flush()
	}
	if err == nil {
		err = f.Chmod(perm)
	}
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(f.Name(), path)
	}
	if err != nil {
		os.Remove(f.Name())
		return err
	}
	syncDir(dir)
	return nil
}

// syncDir syncs a directory so that a rename in it survives a crash. It
// is best effort: the rename is done, and some file systems cannot sync a
// directory.
func syncDir(dir string) {
	if d, err := os.Open(dir); err == nil {
		d.Sync()
		d.Close()
	}
}
