package gitmirror

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/go-git/go-git/v5/plumbing"
)

// Refs are read and written the way git itself does, so that a concurrent
// git command sees either the old or the new value and never a torn file:
// an update takes "<ref>.lock" with O_EXCL (git's lock), checks the ref's
// current value against the expected one under that lock, writes the new
// value into the lock file and renames it over the ref. A deletion removes
// the loose file and, if the ref is also packed, rewrites packed-refs under
// "packed-refs.lock". go-git's own reference storer rewrites a ref file in
// place under flock(2), which neither survives a crash mid-write nor
// excludes a concurrent git update-ref, so only its reading side and its
// name validation are used here.

// ErrRefChanged is returned when a ref does not hold the value an update
// expected (someone else moved it).
var ErrRefChanged = errors.New("git ref changed concurrently")

// refReader reads refs of one repository, parsing packed-refs once.
type refReader struct {
	common string
	packed map[string]plumbing.Hash
	loaded bool
}

func (rr *refReader) loadPacked() error {
	if rr.loaded {
		return nil
	}
	p, err := readPackedRefs(rr.common)
	if err != nil {
		return err
	}
	rr.packed, rr.loaded = p, true
	return nil
}

// read returns the value of a ref (loose first, then packed); found is false
// when it does not exist. Symbolic refs are not followed (ours never are).
func (rr *refReader) read(name string) (h plumbing.Hash, found bool, err error) {
	if !validRefName(name) {
		return h, false, fmt.Errorf("%q is not a valid git ref name", name)
	}
	data, err := readRegular(filepath.Join(rr.common, filepath.FromSlash(name)), maxRefSize)
	switch {
	case err == nil:
		s := strings.TrimSpace(string(data))
		if strings.HasPrefix(s, "ref:") {
			return h, false, fmt.Errorf("git ref %s is symbolic (%s); expected a commit id", name, s)
		}
		if !plumbing.IsHash(s) {
			return h, false, fmt.Errorf("git ref %s holds %q, not a commit id", name, s)
		}
		return plumbing.NewHash(s), true, nil
	case errors.Is(err, fs.ErrNotExist), isNotDir(err):
	case isDirErr(err):
		return h, false, nil // a directory of refs, not a ref
	default:
		return h, false, fmt.Errorf("read git ref %s: %w", name, err)
	}
	if err := rr.loadPacked(); err != nil {
		return h, false, err
	}
	h, found = rr.packed[name]
	return h, found, nil
}

func isNotDir(err error) bool { return errors.Is(err, syscall.ENOTDIR) }

func isDirErr(err error) bool { return errors.Is(err, syscall.EISDIR) }

// readPackedRefs parses <common>/packed-refs ("<hex> <name>" lines; "^"
// lines peel the previous tag and "#" lines are comments).
func readPackedRefs(common string) (map[string]plumbing.Hash, error) {
	out := map[string]plumbing.Hash{}
	data, err := readRegular(filepath.Join(common, "packed-refs"), maxPackedRefsSize)
	if errors.Is(err, fs.ErrNotExist) {
		return out, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", filepath.Join(common, "packed-refs"), err)
	}
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if line == "" || line[0] == '#' || line[0] == '^' {
			continue
		}
		hex, name, ok := strings.Cut(line, " ")
		if ok && plumbing.IsHash(hex) {
			out[name] = plumbing.NewHash(hex)
		}
	}
	return out, sc.Err()
}

// listRefs returns every ref whose name starts with prefix (ending in "/"),
// loose and packed, with their values.
func (rr *refReader) list(prefix string) (map[string]plumbing.Hash, error) {
	out := map[string]plumbing.Hash{}
	if err := rr.loadPacked(); err != nil {
		return nil, err
	}
	for name, h := range rr.packed {
		if strings.HasPrefix(name, prefix) {
			out[name] = h
		}
	}
	root := filepath.Join(rr.common, filepath.FromSlash(strings.TrimSuffix(prefix, "/")))
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return nil
			}
			return err
		}
		if d.IsDir() || strings.HasSuffix(p, ".lock") {
			return nil
		}
		rel, err := filepath.Rel(rr.common, p)
		if err != nil {
			return err
		}
		name := filepath.ToSlash(rel)
		h, found, err := rr.read(name)
		if err != nil {
			return err
		}
		if found {
			out[name] = h
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("list git refs under %s: %w", prefix, err)
	}
	return out, nil
}

// lockFile takes git's lock on path (path + ".lock", created exclusively).
func lockFile(path string) (*os.File, error) {
	f, err := os.OpenFile(path+".lock", os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o666)
	if errors.Is(err, fs.ErrExist) {
		return nil, fmt.Errorf("%s.lock exists: another git process is updating it (if none is running, remove the .lock file): %w", path, ErrRefChanged)
	}
	return f, err
}

// updateRef moves ref name from old to new the way git update-ref does.
// old zero: the ref must not exist. new zero: delete it.
func updateRef(common, name string, old, new plumbing.Hash) (err error) {
	if err := CheckRefFormat(name); err != nil {
		return fmt.Errorf("update git ref: %w", err)
	}
	path := filepath.Join(common, filepath.FromSlash(name))
	if err := os.MkdirAll(filepath.Dir(path), 0o777); err != nil {
		return fmt.Errorf("update git ref %s: %w", name, err)
	}
	lf, err := lockFile(path)
	if err != nil {
		return fmt.Errorf("update git ref %s: %w", name, err)
	}
	released := false
	defer func() {
		if !released {
			lf.Close()
			os.Remove(lf.Name())
		}
	}()
	rr := &refReader{common: common}
	cur, found, err := rr.read(name)
	if err != nil {
		return err
	}
	if !found {
		cur = plumbing.ZeroHash
	}
	if cur != old {
		return fmt.Errorf("git ref %s is %s, expected %s: %w", name, short(cur), short(old), ErrRefChanged)
	}
	if !new.IsZero() {
		if _, err := lf.WriteString(new.String() + "\n"); err != nil {
			return fmt.Errorf("update git ref %s: %w", name, err)
		}
		if err := lf.Close(); err != nil {
			return fmt.Errorf("update git ref %s: %w", name, err)
		}
		if err := os.Rename(lf.Name(), path); err != nil {
			return fmt.Errorf("update git ref %s: %w", name, err)
		}
		released = true
		return nil
	}
	// Delete: the loose file, then the packed entry.
	if err := os.Remove(path); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("delete git ref %s: %w", name, err)
	}
	if err := rr.loadPacked(); err != nil {
		return err
	}
	if _, ok := rr.packed[name]; ok {
		if err := removePacked(common, name); err != nil {
			return fmt.Errorf("delete git ref %s: %w", name, err)
		}
	}
	// Release the lock, then drop directories the deletion emptied, up to
	// refs/ (as git does).
	lf.Close()
	os.Remove(lf.Name())
	released = true
	for d := filepath.Dir(path); strings.HasPrefix(d, filepath.Join(common, "refs")+string(filepath.Separator)); d = filepath.Dir(d) {
		if os.Remove(d) != nil {
			break
		}
	}
	return nil
}

// removePacked rewrites packed-refs without name (and its peeled line),
// under packed-refs.lock.
func removePacked(common, name string) error {
	path := filepath.Join(common, "packed-refs")
	lf, err := lockFile(path)
	if err != nil {
		return err
	}
	released := false
	defer func() {
		if !released {
			lf.Close()
			os.Remove(lf.Name())
		}
	}()
	data, err := readRegular(path, maxPackedRefsSize)
	if err != nil {
		return err
	}
	var out bytes.Buffer
	skipPeel := false
	for _, line := range strings.SplitAfter(string(data), "\n") {
		if line == "" {
			continue
		}
		if strings.HasPrefix(line, "^") {
			if !skipPeel {
				out.WriteString(line)
			}
			continue
		}
		skipPeel = false
		if _, n, ok := strings.Cut(strings.TrimRight(line, "\n"), " "); ok && n == name && !strings.HasPrefix(line, "#") {
			skipPeel = true
			continue
		}
		out.WriteString(line)
	}
	if _, err := lf.Write(out.Bytes()); err != nil {
		return err
	}
	if err := lf.Close(); err != nil {
		return err
	}
	if err := os.Rename(lf.Name(), path); err != nil {
		return err
	}
	released = true
	return nil
}

func short(h plumbing.Hash) string {
	if h.IsZero() {
		return "absent"
	}
	return h.String()[:12]
}

// validRefName reports whether name is a ref ckpt may read: "refs/..."
// by git's check-ref-format rules (no "..", no component starting with
// '.', no control characters, ...). A symbolic ref naming anything else,
// such as "../../../dev/zero", is refused before any file is opened.
func validRefName(name string) bool {
	return strings.HasPrefix(name, "refs/") && CheckRefFormat(name) == nil
}
