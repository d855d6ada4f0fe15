package remote

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/seed1cedbf7c/ckpt/internal/flock"
)

// fileBackend keeps a remote in a directory: one file per key. Writes go
// through a temporary file; a create-only write links it into place (which
// fails if the key exists), a replace takes an flock on the key's lock file,
// compares the current content's hash with the ETag and renames.
type fileBackend struct {
	dir string
}

// NewFile returns the backend of a directory, which must exist.
func NewFile(dir string) (Backend, error) {
	fi, err := os.Stat(dir)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("remote directory %s does not exist (create it first: mkdir -p %s)", dir, dir)
		}
		return nil, err
	}
	if !fi.IsDir() {
		return nil, fmt.Errorf("remote %s is not a directory", dir)
	}
	return &fileBackend{dir: dir}, nil
}

func (b *fileBackend) String() string { return "file://" + filepath.ToSlash(b.dir) }

func (b *fileBackend) path(key string) (string, error) {
	if !validKey(key) {
		return "", fmt.Errorf("invalid key %q", key)
	}
	return filepath.Join(b.dir, filepath.FromSlash(key)), nil
}

// validKey accepts the keys this package makes: '/'-separated components
// of letters, digits, '-', '_' and '.', none empty, "." or "..".
func validKey(key string) bool {
	if key == "" || len(key) > 1024 {
		return false
	}
	for _, c := range strings.Split(key, "/") {
		if c == "" || c == "." || c == ".." || strings.HasPrefix(c, ".ckpt-") {
			return false
		}
		for i := 0; i < len(c); i++ {
			ch := c[i]
			if !(ch >= 'a' && ch <= 'z' || ch >= 'A' && ch <= 'Z' || ch >= '0' && ch <= '9' || ch == '-' || ch == '_' || ch == '.') {
				return false
			}
		}
	}
	return true
}

func etagOf(data []byte) string {
	s := sha256.Sum256(data)
	return hex.EncodeToString(s[:16])
}

func (b *fileBackend) wrap(op, key string, err error) error {
	if err == nil {
		return nil
	}
	if errors.Is(err, fs.ErrNotExist) {
		err = ErrNotExist
	}
	return &OpError{Op: op, Remote: b.String(), Key: key, Err: err}
}

func (b *fileBackend) Get(ctx context.Context, key string) ([]byte, string, error) {
	p, err := b.path(key)
	if err != nil {
		return nil, "", b.wrap("get", key, err)
	}
	data, err := os.ReadFile(p)
	if err != nil {
		return nil, "", b.wrap("get", key, err)
	}
	return data, etagOf(data), nil
}

func (b *fileBackend) GetRange(ctx context.Context, key string, offset, length int64) ([]byte, error) {
	p, err := b.path(key)
	if err != nil {
		return nil, b.wrap("get", key, err)
	}
	f, err := os.Open(p)
	if err != nil {
		return nil, b.wrap("get", key, err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, b.wrap("get", key, err)
	}
	if offset < 0 || length < 0 || length > maxRange || offset+length > fi.Size() {
		return nil, b.wrap("get", key, fmt.Errorf("%w: %d+%d of %d bytes", ErrShort, offset, length, fi.Size()))
	}
	buf := make([]byte, length)
	n, err := f.ReadAt(buf, offset)
	if err == io.EOF && int64(n) == length {
		err = nil
	}
	if err != nil {
		if err == io.EOF {
			err = fmt.Errorf("%w: %d+%d", ErrShort, offset, length)
		}
		return nil, b.wrap("get", key, err)
	}
	return buf, nil
}

func (b *fileBackend) Put(ctx context.Context, key string, data []byte, cond Cond) (string, error) {
	p, err := b.path(key)
	if err != nil {
		return "", b.wrap("put", key, err)
	}
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return "", b.wrap("put", key, err)
	}
	tmp, err := writeTemp(filepath.Dir(p), data)
	if err != nil {
		return "", b.wrap("put", key, err)
	}
	defer os.Remove(tmp)
	switch {
	case cond.IfNoneMatch:
		if err := os.Link(tmp, p); err != nil {
			if errors.Is(err, fs.ErrExist) {
				return "", b.wrap("put", key, ErrPrecondition)
			}
			return "", b.wrap("put", key, err)
		}
	case cond.IfMatch != "":
		unlock, err := lockFile(p + ".lock")
		if err != nil {
			return "", b.wrap("put", key, err)
		}
		defer unlock()
		cur, err := os.ReadFile(p)
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return "", b.wrap("put", key, ErrPrecondition)
			}
			return "", b.wrap("put", key, err)
		}
		if etagOf(cur) != cond.IfMatch {
			return "", b.wrap("put", key, ErrPrecondition)
		}
		if err := os.Rename(tmp, p); err != nil {
			return "", b.wrap("put", key, err)
		}
	default:
		if err := os.Rename(tmp, p); err != nil {
			return "", b.wrap("put", key, err)
		}
	}
	syncDir(filepath.Dir(p))
	return etagOf(data), nil
}

func writeTemp(dir string, data []byte) (string, error) {
	f, err := os.CreateTemp(dir, ".ckpt-tmp-*")
	if err != nil {
		return "", err
	}
	_, err = f.Write(data)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(f.Name())
		return "", err
	}
	return f.Name(), nil
}

func syncDir(dir string) {
	if d, err := os.Open(dir); err == nil {
		d.Sync()
		d.Close()
	}
}

func lockFile(path string) (func(), error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, err
	}
	if err := flock.Lock(f); err != nil {
		f.Close()
		return nil, err
	}
	return func() { flock.Unlock(f); f.Close() }, nil
}

func (b *fileBackend) List(ctx context.Context, prefix string) ([]Entry, error) {
	var out []Entry
	err := filepath.WalkDir(b.dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return nil
			}
			return err
		}
		if d.IsDir() {
			rel, _ := filepath.Rel(b.dir, p)
			rel = filepath.ToSlash(rel)
			if rel != "." && !strings.HasPrefix(rel+"/", prefix) && !strings.HasPrefix(prefix, rel+"/") {
				return filepath.SkipDir
			}
			return nil
		}
		if strings.HasPrefix(d.Name(), ".ckpt-") || strings.HasSuffix(d.Name(), ".lock") || !d.Type().IsRegular() {
			return nil
		}
		rel, _ := filepath.Rel(b.dir, p)
		key := filepath.ToSlash(rel)
		if !strings.HasPrefix(key, prefix) {
			return nil
		}
		fi, err := d.Info()
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return nil
			}
			return err
		}
		out = append(out, Entry{Key: key, Size: fi.Size(), ModTime: fi.ModTime()})
		return nil
	})
	if err != nil {
		return nil, b.wrap("list", prefix, err)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Key < out[j].Key })
	return out, nil
}

func (b *fileBackend) Delete(ctx context.Context, key string) error {
	p, err := b.path(key)
	if err != nil {
		return b.wrap("delete", key, err)
	}
	if err := os.Remove(p); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return b.wrap("delete", key, err)
	}
	return nil
}
