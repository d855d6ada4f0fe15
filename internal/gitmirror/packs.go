package gitmirror

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/format/idxfile"
	"github.com/go-git/go-git/v5/plumbing/format/objfile"
)

// objectIndex is the repository's object database, for the two things an
// export does thousands of times: ask whether an object exists (a lookup
// in the pack indexes, read once per process with go-git's idxfile decoder,
// then a stat of the loose object's file) and write a loose object (with
// go-git's objfile writer). go-git's storage does both through its
// sandboxed file system, which resolves every path component again and
// cost more than the rest of a turn's export.
type objectIndex struct {
	objects string
	packs   []*idxfile.MemoryIndex
	loaded  bool
}

func (oi *objectIndex) has(h plumbing.Hash) (bool, error) {
	// Packs first: a lookup in memory, where a loose check is a system call.
	if !oi.loaded {
		if err := oi.load(); err != nil {
			return false, err
		}
	}
	for _, idx := range oi.packs {
		if ok, err := idx.Contains(h); err != nil || ok {
			return ok, err
		}
	}
	_, err := os.Lstat(oi.path(h))
	if err == nil {
		return true, nil
	}
	if os.IsNotExist(err) {
		return false, nil
	}
	return false, err
}

// path is the file of a loose object.
func (oi *objectIndex) path(h plumbing.Hash) string {
	hex := h.String()
	return filepath.Join(oi.objects, hex[:2], hex[2:])
}

// write stores a loose object the way git does: zlib-compressed with
// go-git's object file writer into a temporary file beside it, then renamed
// into place (read-only, as git leaves them). h must be the object's id.
func (oi *objectIndex) write(h plumbing.Hash, t plumbing.ObjectType, size int64, content io.Reader) (err error) {
	final := oi.path(h)
	dir := filepath.Dir(final)
	f, err := os.CreateTemp(dir, "tmp_obj_")
	if os.IsNotExist(err) {
		if err = os.MkdirAll(dir, 0o777); err == nil {
			f, err = os.CreateTemp(dir, "tmp_obj_")
		}
	}
	if err != nil {
		return err
	}
	defer func() {
		if err != nil {
			f.Close()
			os.Remove(f.Name())
		}
	}()
	bw := bufio.NewWriterSize(f, 32<<10)
	w := objfile.NewWriter(bw)
	if err := w.WriteHeader(t, size); err != nil {
		return err
	}
	if _, err := io.Copy(w, content); err != nil {
		return err
	}
	if err := w.Close(); err != nil {
		return err
	}
	if w.Hash() != h {
		return fmt.Errorf("git object %s: content hashes to %s (it changed while being written)", h, w.Hash())
	}
	if err := bw.Flush(); err != nil {
		return err
	}
	if err := f.Chmod(0o444); err != nil {
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	return os.Rename(f.Name(), final)
}

func (oi *objectIndex) load() error {
	oi.loaded = true
	des, err := os.ReadDir(filepath.Join(oi.objects, "pack"))
	if os.IsNotExist(err) {
		return nil
	}
	if err != nil {
		return err
	}
	for _, de := range des {
		name := de.Name()
		if !strings.HasPrefix(name, "pack-") || !strings.HasSuffix(name, ".idx") {
			continue
		}
		path := filepath.Join(oi.objects, "pack", name)
		// An index whose pack is gone (mid-repack) does not count.
		if _, err := os.Stat(strings.TrimSuffix(path, ".idx") + ".pack"); err != nil {
			continue
		}
		f, err := os.Open(path)
		if err != nil {
			return err
		}
		idx := idxfile.NewMemoryIndex()
		err = idxfile.NewDecoder(bufio.NewReaderSize(f, 1<<20)).Decode(idx)
		f.Close()
		if err != nil {
			return fmt.Errorf("read pack index %s: %w", path, err)
		}
		oi.packs = append(oi.packs, idx)
	}
	return nil
}
