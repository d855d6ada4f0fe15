//go:build unix

package fsroot

import (
	"errors"
	"io/fs"
	"os"
	"path"
	"strings"
	"time"

	"golang.org/x/sys/unix"
)

// ONonblock is O_NONBLOCK: opening a FIFO with it does not wait for a
// writer.
const ONonblock = unix.O_NONBLOCK

func openNoFollow(path string) (*os.File, error) {
	return os.OpenFile(path, os.O_RDONLY|unix.O_NONBLOCK|unix.O_NOFOLLOW, 0)
}

// Stat_t is raw lstat data.
type Stat_t = unix.Stat_t

// Root is an open directory tree.
type Root struct {
	fd   int
	name string
}

// Open opens the directory dir (an absolute path; it is opened as given,
// symlinks in dir itself resolved by the kernel).
func Open(dir string) (*Root, error) {
	fd, err := unix.Open(dir, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, &fs.PathError{Op: "open", Path: dir, Err: err}
	}
	return &Root{fd: fd, name: dir}, nil
}

// Close closes the root's descriptor.
func (r *Root) Close() error {
	if r == nil || r.fd < 0 {
		return nil
	}
	err := unix.Close(r.fd)
	r.fd = -1
	return err
}

// Name returns the directory Open was given.
func (r *Root) Name() string { return r.name }

// FD returns the root's descriptor (owned by the Root).
func (r *Root) FD() int { return r.fd }

// OpenDirFD opens the directory rel for reading its entries and returns its
// descriptor, which the caller closes. A symlink anywhere on the path, the
// last component included, fails with ELOOP or ENOTDIR.
func (r *Root) OpenDirFD(rel string) (int, error) {
	rel, err := clean(rel)
	if err != nil {
		return -1, perr("open", rel, err)
	}
	fd, err := r.resolve(rel, unix.O_RDONLY)
	if err != nil {
		return -1, perr("open", rel, err)
	}
	return fd, nil
}

// parent opens rel's parent directory (for *at calls) and returns its
// descriptor and rel's last component. The caller calls done.
func (r *Root) parent(rel string) (dirfd int, base string, done func(), err error) {
	rel, err = clean(rel)
	if err != nil {
		return -1, "", nil, err
	}
	if rel == "" {
		return -1, "", nil, ErrInvalidPath
	}
	dir, base := path.Split(rel)
	if dir == "" {
		return r.fd, base, func() {}, nil
	}
	fd, err := r.resolve(strings.TrimSuffix(dir, "/"), pathFlag)
	if err != nil {
		return -1, "", nil, err
	}
	return fd, base, func() { unix.Close(fd) }, nil
}

// OpenFile opens the file rel with flag (os.O_* flags), never following a
// symlink, the last component's included (O_NOFOLLOW).
func (r *Root) OpenFile(rel string, flag int, perm fs.FileMode) (*os.File, error) {
	fd, err := r.OpenFD(rel, flag, perm)
	if err != nil {
		return nil, err
	}
	return os.NewFile(uintptr(fd), path.Join(r.name, rel)), nil
}

// OpenFD is OpenFile returning the raw descriptor.
func (r *Root) OpenFD(rel string, flag int, perm fs.FileMode) (int, error) {
	if c, err := clean(rel); err == nil && c != "" {
		if fd, ok, err := r.openDirect(c, flag, uint32(perm.Perm())); ok {
			if err != nil {
				return -1, perr("open", rel, err)
			}
			return fd, nil
		}
	}
	dirfd, base, done, err := r.parent(rel)
	if err != nil {
		return -1, perr("open", rel, err)
	}
	defer done()
	for {
		fd, err := unix.Openat(dirfd, base, flag|unix.O_NOFOLLOW|unix.O_CLOEXEC, uint32(perm.Perm()))
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return -1, perr("open", rel, err)
		}
		return fd, nil
	}
}

// Open opens rel for reading (a file or, with ReadDir, a directory).
func (r *Root) Open(rel string) (*os.File, error) {
	rel, err := clean(rel)
	if err != nil {
		return nil, perr("open", rel, err)
	}
	if rel == "" {
		fd, err := unix.Openat(r.fd, ".", unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
		if err != nil {
			return nil, perr("open", rel, err)
		}
		return os.NewFile(uintptr(fd), r.name), nil
	}
	return r.OpenFile(rel, os.O_RDONLY, 0)
}

// Lstat returns rel's file info, not following a symlink.
func (r *Root) Lstat(rel string) (fs.FileInfo, error) {
	st, err := r.Stat(rel)
	if err != nil {
		return nil, err
	}
	return fileInfo{name: path.Base(rel), st: st}, nil
}

// Stat returns rel's raw lstat data.
func (r *Root) Stat(rel string) (*Stat_t, error) {
	var st unix.Stat_t
	if c, err := clean(rel); err == nil && c == "" {
		if err := unix.Fstat(r.fd, &st); err != nil {
			return nil, perr("lstat", rel, err)
		}
		return &st, nil
	}
	dirfd, base, done, err := r.parent(rel)
	if err != nil {
		return nil, perr("lstat", rel, err)
	}
	defer done()
	for {
		err := unix.Fstatat(dirfd, base, &st, unix.AT_SYMLINK_NOFOLLOW)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return nil, perr("lstat", rel, err)
		}
		return &st, nil
	}
}

// Remove removes the file, symlink or empty directory rel.
func (r *Root) Remove(rel string) error {
	dirfd, base, done, err := r.parent(rel)
	if err != nil {
		return perr("remove", rel, err)
	}
	defer done()
	err = unix.Unlinkat(dirfd, base, 0)
	if err == unix.EISDIR || err == unix.EPERM {
		if err2 := unix.Unlinkat(dirfd, base, unix.AT_REMOVEDIR); err2 == nil || err2 != unix.ENOTDIR {
			err = err2
		}
	}
	if err != nil {
		return perr("remove", rel, err)
	}
	return nil
}

// RemoveDir removes the empty directory rel, and nothing else: a file or
// symlink there fails with ENOTDIR, a directory with entries with
// ENOTEMPTY (or EEXIST).
func (r *Root) RemoveDir(rel string) error {
	dirfd, base, done, err := r.parent(rel)
	if err != nil {
		return perr("rmdir", rel, err)
	}
	defer done()
	if err := unix.Unlinkat(dirfd, base, unix.AT_REMOVEDIR); err != nil {
		return perr("rmdir", rel, err)
	}
	return nil
}

// RemoveAll removes rel and everything below it, never following a
// symlink. A missing rel is not an error.
func (r *Root) RemoveAll(rel string) error {
	dirfd, base, done, err := r.parent(rel)
	if err != nil {
		if errors.Is(err, unix.ENOENT) {
			return nil
		}
		return perr("remove", rel, err)
	}
	defer done()
	if err := removeAllAt(dirfd, base, 0); err != nil && err != unix.ENOENT {
		return perr("remove", rel, err)
	}
	return nil
}

func removeAllAt(dirfd int, name string, depth int) error {
	err := unix.Unlinkat(dirfd, name, 0)
	if err == nil || err == unix.ENOENT {
		return err
	}
	if err != unix.EISDIR && err != unix.EPERM {
		return err
	}
	fd, err := unix.Openat(dirfd, name, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return err
	}
	f := os.NewFile(uintptr(fd), name)
	for {
		names, rerr := f.Readdirnames(256)
		for _, n := range names {
			if err := removeAllAt(fd, n, depth+1); err != nil && err != unix.ENOENT {
				f.Close()
				return err
			}
		}
		if rerr != nil || len(names) == 0 {
			break
		}
	}
	f.Close()
	return unix.Unlinkat(dirfd, name, unix.AT_REMOVEDIR)
}

// Mkdir creates the directory rel.
func (r *Root) Mkdir(rel string, perm fs.FileMode) error {
	dirfd, base, done, err := r.parent(rel)
	if err != nil {
		return perr("mkdir", rel, err)
	}
	defer done()
	if err := unix.Mkdirat(dirfd, base, uint32(perm.Perm())); err != nil {
		return perr("mkdir", rel, err)
	}
	return nil
}

// MkdirAll creates rel and its missing parents. An existing component that
// is not a directory (a symlink included) fails with ENOTDIR or ELOOP.
func (r *Root) MkdirAll(rel string, perm fs.FileMode) error {
	rel, err := clean(rel)
	if err != nil {
		return perr("mkdir", rel, err)
	}
	if rel == "" {
		return nil
	}
	// Fast path: it exists.
	if fd, err := r.resolve(rel, pathFlag); err == nil {
		unix.Close(fd)
		return nil
	}
	cur := r.fd
	defer func() {
		if cur != r.fd {
			unix.Close(cur)
		}
	}()
	for c := range strings.SplitSeq(rel, "/") {
		err := unix.Mkdirat(cur, c, uint32(perm.Perm()))
		if err != nil && err != unix.EEXIST {
			return perr("mkdir", rel, err)
		}
		next, err := openDirAt(cur, c, pathFlag)
		if err != nil {
			return perr("mkdir", rel, err)
		}
		if cur != r.fd {
			unix.Close(cur)
		}
		cur = next
	}
	return nil
}

func (r *Root) rename(oldRel, newRel string, noReplace bool) error {
	ofd, obase, odone, err := r.parent(oldRel)
	if err != nil {
		return &os.LinkError{Op: "rename", Old: oldRel, New: newRel, Err: err}
	}
	defer odone()
	nfd, nbase, ndone, err := r.parent(newRel)
	if err != nil {
		return &os.LinkError{Op: "rename", Old: oldRel, New: newRel, Err: err}
	}
	defer ndone()
	if noReplace {
		err = renameNoReplace(ofd, obase, nfd, nbase)
	} else {
		err = unix.Renameat(ofd, obase, nfd, nbase)
	}
	if err != nil {
		return &os.LinkError{Op: "rename", Old: oldRel, New: newRel, Err: err}
	}
	return nil
}

// Symlink creates rel as a symlink to target.
func (r *Root) Symlink(target, rel string) error {
	dirfd, base, done, err := r.parent(rel)
	if err != nil {
		return &os.LinkError{Op: "symlink", Old: target, New: rel, Err: err}
	}
	defer done()
	if err := unix.Symlinkat(target, dirfd, base); err != nil {
		return &os.LinkError{Op: "symlink", Old: target, New: rel, Err: err}
	}
	return nil
}

// Readlink returns the target of the symlink rel.
func (r *Root) Readlink(rel string) (string, error) {
	dirfd, base, done, err := r.parent(rel)
	if err != nil {
		return "", perr("readlink", rel, err)
	}
	defer done()
	for size := 256; ; size *= 2 {
		buf := make([]byte, size)
		n, err := unix.Readlinkat(dirfd, base, buf)
		if err != nil {
			return "", perr("readlink", rel, err)
		}
		if n < size {
			return string(buf[:n]), nil
		}
	}
}

// ReadDir reads the directory rel's entries, sorted by name.
func (r *Root) ReadDir(rel string) ([]fs.DirEntry, error) {
	fd, err := r.OpenDirFD(rel)
	if err != nil {
		return nil, err
	}
	f := os.NewFile(uintptr(fd), path.Join(r.name, rel))
	defer f.Close()
	return f.ReadDir(-1)
}

// fileInfo is an fs.FileInfo of raw stat data.
type fileInfo struct {
	name string
	st   *Stat_t
}

func (fi fileInfo) Name() string { return fi.name }
func (fi fileInfo) Size() int64  { return fi.st.Size }
func (fi fileInfo) Mode() fs.FileMode {
	m := fs.FileMode(fi.st.Mode & 0o777)
	switch fi.st.Mode & unix.S_IFMT {
	case unix.S_IFDIR:
		m |= fs.ModeDir
	case unix.S_IFLNK:
		m |= fs.ModeSymlink
	case unix.S_IFIFO:
		m |= fs.ModeNamedPipe
	case unix.S_IFSOCK:
		m |= fs.ModeSocket
	case unix.S_IFCHR:
		m |= fs.ModeDevice | fs.ModeCharDevice
	case unix.S_IFBLK:
		m |= fs.ModeDevice
	}
	if fi.st.Mode&unix.S_ISUID != 0 {
		m |= fs.ModeSetuid
	}
	if fi.st.Mode&unix.S_ISGID != 0 {
		m |= fs.ModeSetgid
	}
	if fi.st.Mode&unix.S_ISVTX != 0 {
		m |= fs.ModeSticky
	}
	return m
}
func (fi fileInfo) ModTime() time.Time { return time.Unix(0, fi.st.Mtim.Nano()) }
func (fi fileInfo) IsDir() bool        { return fi.st.Mode&unix.S_IFMT == unix.S_IFDIR }

// Sys returns the *unix.Stat_t.
func (fi fileInfo) Sys() any { return fi.st }
