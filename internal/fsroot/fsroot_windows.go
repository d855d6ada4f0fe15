package fsroot

import (
	"errors"
	"io/fs"
	"os"
	"slices"
	"strings"
	"syscall"
	"time"
)

// On Windows a Root is an [os.Root]: nothing outside the root is ever
// reached, and a symlink or junction on a path is refused by checking each
// directory on the way with Lstat before the call. Unlike the *at calls
// of Unix, the check and the call are two steps: a directory replaced by a
// link between them is followed (inside the root only).

// ONonblock is 0: Windows has no FIFO a path could name.
const ONonblock = 0

func openNoFollow(path string) (*os.File, error) {
	if fi, err := os.Lstat(path); err == nil && fi.Mode()&(fs.ModeSymlink|fs.ModeIrregular) != 0 {
		return nil, &fs.PathError{Op: "open", Path: path, Err: syscall.ELOOP}
	}
	return os.Open(path)
}

// Stat_t is the part of lstat data ckpt reads, shaped as Unix's: Mode
// holds syscall.S_IF* type bits and permission bits, Ctim is the last
// write time (Windows reports no change time here) and Ino, Dev and Nlink
// are 0 (unknown without opening the file).
type Stat_t struct {
	Mode  uint32
	Size  int64
	Mtim  Timespec
	Ctim  Timespec
	Ino   uint64
	Dev   uint64
	Nlink uint64
}

// Timespec is a time in seconds and nanoseconds since the Unix epoch.
type Timespec struct{ Sec, Nsec int64 }

// Nano returns t in nanoseconds since the Unix epoch.
func (t Timespec) Nano() int64 { return t.Sec*1e9 + t.Nsec }

func timespec(t time.Time) Timespec {
	n := t.UnixNano()
	return Timespec{Sec: n / 1e9, Nsec: n % 1e9}
}

// errNoFD is returned by the calls that hand out raw descriptors.
var errNoFD = &UnsupportedError{What: "reading a directory by descriptor"}

// Root is an open directory tree.
type Root struct {
	root *os.Root
	name string
}

// Open opens the directory dir.
func Open(dir string) (*Root, error) {
	r, err := os.OpenRoot(dir)
	if err != nil {
		return nil, err
	}
	return &Root{root: r, name: dir}, nil
}

// Close closes the root.
func (r *Root) Close() error {
	if r == nil || r.root == nil {
		return nil
	}
	err := r.root.Close()
	r.root = nil
	return err
}

// Name returns the directory Open was given.
func (r *Root) Name() string { return r.name }

// FD returns -1: Windows has no directory descriptors.
func (r *Root) FD() int { return -1 }

// winClean is clean, also refusing what Windows would read as a separator,
// a drive or a stream (a backslash, a colon).
func winClean(rel string) (string, error) {
	rel, err := clean(rel)
	if err != nil {
		return "", err
	}
	if strings.ContainsAny(rel, `\:`) {
		return "", ErrInvalidPath
	}
	return rel, nil
}

// checkDirs makes sure every directory on the way to rel (rel excluded)
// is a directory, not a symlink or junction.
func (r *Root) checkDirs(rel string) error {
	for i := 0; i < len(rel); i++ {
		if rel[i] != '/' {
			continue
		}
		if err := r.checkDir(rel[:i]); err != nil {
			return err
		}
	}
	return nil
}

func (r *Root) checkDir(rel string) error {
	fi, err := r.root.Lstat(rel)
	if err != nil {
		return Underlying(err)
	}
	switch {
	case fi.Mode()&(fs.ModeSymlink|fs.ModeIrregular) != 0:
		return syscall.ELOOP
	case !fi.IsDir():
		return syscall.ENOTDIR
	}
	return nil
}

// prep cleans rel and checks the directories on its way.
func (r *Root) prep(rel string) (string, error) {
	rel, err := winClean(rel)
	if err != nil {
		return "", err
	}
	if err := r.checkDirs(rel); err != nil {
		return "", err
	}
	return rel, nil
}

func dot(rel string) string {
	if rel == "" {
		return "."
	}
	return rel
}

// OpenDirFD fails on Windows.
func (r *Root) OpenDirFD(rel string) (int, error) { return -1, perr("open", rel, errNoFD) }

// OpenFD fails on Windows.
func (r *Root) OpenFD(rel string, flag int, perm fs.FileMode) (int, error) {
	return -1, perr("open", rel, errNoFD)
}

// OpenFile opens the file rel with flag (os.O_* flags), refusing a
// symlink or junction anywhere on the path, the last component included.
func (r *Root) OpenFile(rel string, flag int, perm fs.FileMode) (*os.File, error) {
	c, err := r.prep(rel)
	if err == nil && c == "" {
		err = ErrInvalidPath
	}
	if err != nil {
		return nil, perr("open", rel, err)
	}
	if fi, err := r.root.Lstat(c); err == nil && fi.Mode()&(fs.ModeSymlink|fs.ModeIrregular) != 0 {
		return nil, perr("open", rel, syscall.ELOOP)
	}
	f, err := r.root.OpenFile(c, flag, perm)
	if err != nil {
		return nil, perr("open", rel, Underlying(err))
	}
	return f, nil
}

// Open opens rel for reading (a file or, with ReadDir, a directory).
func (r *Root) Open(rel string) (*os.File, error) {
	c, err := r.prep(rel)
	if err != nil {
		return nil, perr("open", rel, err)
	}
	if c != "" {
		if err := r.checkDir(c); err != nil && !errors.Is(err, syscall.ENOTDIR) {
			return nil, perr("open", rel, err)
		}
	}
	f, err := r.root.Open(dot(c))
	if err != nil {
		return nil, perr("open", rel, Underlying(err))
	}
	return f, nil
}

// Lstat returns rel's file info, not following a symlink.
func (r *Root) Lstat(rel string) (fs.FileInfo, error) {
	c, err := r.prep(rel)
	if err != nil {
		return nil, perr("lstat", rel, err)
	}
	fi, err := r.root.Lstat(dot(c))
	if err != nil {
		return nil, perr("lstat", rel, Underlying(err))
	}
	return fi, nil
}

// Stat returns rel's lstat data.
func (r *Root) Stat(rel string) (*Stat_t, error) {
	fi, err := r.Lstat(rel)
	if err != nil {
		return nil, err
	}
	m := fi.Mode()
	st := &Stat_t{Mode: uint32(m.Perm()), Size: fi.Size(), Mtim: timespec(fi.ModTime())}
	st.Ctim = st.Mtim
	switch {
	case m.IsDir():
		st.Mode |= syscall.S_IFDIR
	case m&fs.ModeSymlink != 0:
		st.Mode |= syscall.S_IFLNK
	case m.IsRegular():
		st.Mode |= syscall.S_IFREG
	case m&fs.ModeNamedPipe != 0:
		st.Mode |= syscall.S_IFIFO
	case m&fs.ModeCharDevice != 0:
		st.Mode |= syscall.S_IFCHR
	case m&fs.ModeDevice != 0:
		st.Mode |= syscall.S_IFBLK
	}
	return st, nil
}

// Remove removes the file, symlink or empty directory rel.
func (r *Root) Remove(rel string) error {
	c, err := r.prep(rel)
	if err == nil && c == "" {
		err = ErrInvalidPath
	}
	if err == nil {
		err = Underlying(r.root.Remove(c))
	}
	if err != nil {
		return perr("remove", rel, err)
	}
	return nil
}

// RemoveDir removes the empty directory rel, and nothing else: a file or
// symlink there fails with ENOTDIR.
func (r *Root) RemoveDir(rel string) error {
	c, err := r.prep(rel)
	if err == nil && c == "" {
		err = ErrInvalidPath
	}
	if err == nil {
		if err = r.checkDir(c); errors.Is(err, syscall.ELOOP) {
			err = syscall.ENOTDIR
		}
	}
	if err == nil {
		err = Underlying(r.root.Remove(c))
	}
	if err != nil {
		return perr("rmdir", rel, err)
	}
	return nil
}

// RemoveAll removes rel and everything below it, never following a
// symlink. A missing rel is not an error.
func (r *Root) RemoveAll(rel string) error {
	c, err := r.prep(rel)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err == nil && c == "" {
		err = ErrInvalidPath
	}
	if err == nil {
		err = Underlying(r.root.RemoveAll(c))
	}
	if err != nil {
		return perr("remove", rel, err)
	}
	return nil
}

// Mkdir creates the directory rel.
func (r *Root) Mkdir(rel string, perm fs.FileMode) error {
	c, err := r.prep(rel)
	if err == nil && c == "" {
		err = ErrInvalidPath
	}
	if err == nil {
		err = Underlying(r.root.Mkdir(c, perm))
	}
	if err != nil {
		return perr("mkdir", rel, err)
	}
	return nil
}

// MkdirAll creates rel and its missing parents. An existing component that
// is not a directory (a symlink or junction included) fails with ENOTDIR
// or ELOOP.
func (r *Root) MkdirAll(rel string, perm fs.FileMode) error {
	c, err := winClean(rel)
	if err != nil {
		return perr("mkdir", rel, err)
	}
	if c == "" {
		return nil
	}
	parts := strings.Split(c, "/")
	for i := range parts {
		p := strings.Join(parts[:i+1], "/")
		err := r.checkDir(p)
		if errors.Is(err, fs.ErrNotExist) {
			err = Underlying(r.root.Mkdir(p, perm))
			if errors.Is(err, fs.ErrExist) {
				err = r.checkDir(p)
			}
		}
		if err != nil {
			return perr("mkdir", rel, err)
		}
	}
	return nil
}

func (r *Root) rename(oldRel, newRel string, noReplace bool) error {
	oc, err := r.prep(oldRel)
	var nc string
	if err == nil {
		nc, err = r.prep(newRel)
	}
	if err == nil && (oc == "" || nc == "") {
		err = ErrInvalidPath
	}
	if err == nil && noReplace {
		if _, lerr := r.root.Lstat(nc); lerr == nil {
			err = syscall.EEXIST
		} else if !errors.Is(lerr, fs.ErrNotExist) {
			err = Underlying(lerr)
		}
	}
	if err == nil {
		err = Underlying(r.root.Rename(oc, nc))
	}
	if err != nil {
		return &os.LinkError{Op: "rename", Old: oldRel, New: newRel, Err: err}
	}
	return nil
}

// Symlink creates rel as a symlink to target.
func (r *Root) Symlink(target, rel string) error {
	c, err := r.prep(rel)
	if err == nil && c == "" {
		err = ErrInvalidPath
	}
	if err == nil {
		err = Underlying(r.root.Symlink(target, c))
	}
	if err != nil {
		return &os.LinkError{Op: "symlink", Old: target, New: rel, Err: err}
	}
	return nil
}

// Readlink returns the target of the symlink rel.
func (r *Root) Readlink(rel string) (string, error) {
	c, err := r.prep(rel)
	if err == nil && c == "" {
		err = ErrInvalidPath
	}
	var t string
	if err == nil {
		t, err = r.root.Readlink(c)
		err = Underlying(err)
	}
	if err != nil {
		return "", perr("readlink", rel, err)
	}
	return t, nil
}

// ReadDir reads the directory rel's entries, sorted by name.
func (r *Root) ReadDir(rel string) ([]fs.DirEntry, error) {
	c, err := r.prep(rel)
	if err == nil && c != "" {
		err = r.checkDir(c)
	}
	if err != nil {
		return nil, perr("open", rel, err)
	}
	f, err := r.root.Open(dot(c))
	if err != nil {
		return nil, perr("open", rel, Underlying(err))
	}
	defer f.Close()
	des, err := f.ReadDir(-1)
	slices.SortFunc(des, func(a, b fs.DirEntry) int { return strings.Compare(a.Name(), b.Name()) })
	return des, err
}
