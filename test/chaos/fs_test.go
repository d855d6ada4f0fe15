//go:build linux

package chaos

import (
	"errors"
	"io"
	"os"
	"path"
	"strings"

	"golang.org/x/sys/unix"
)

// wsfs changes the workspace the way a user or an agent would, but never
// through a symlink and never outside: every path is resolved beneath the
// workspace's descriptor with openat2(RESOLVE_NO_SYMLINKS), and the last
// component is never followed. So whatever ckpt puts where (a symlink to
// the sentinel directory included), a change outside the workspace can
// only be ckpt's.
type wsfs struct {
	root     int                // O_PATH descriptor of the workspace
	outside  int                // O_PATH descriptor of the sentinel directory
	sentinel map[[2]uint64]bool // device and inode of every file outside
}

var errSkip = errors.New("skipped")

func openWSFS(ws, outside string) (*wsfs, error) {
	root, err := unix.Open(ws, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, err
	}
	out, err := unix.Open(outside, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		unix.Close(root)
		return nil, err
	}
	return &wsfs{root: root, outside: out, sentinel: map[[2]uint64]bool{}}, nil
}

func (f *wsfs) close() {
	unix.Close(f.root)
	unix.Close(f.outside)
}

// addSentinel records a file outside whose inode must never be written.
func (f *wsfs) addSentinel(full string) error {
	var st unix.Stat_t
	if err := unix.Lstat(full, &st); err != nil {
		return err
	}
	f.sentinel[[2]uint64{st.Dev, st.Ino}] = true
	return nil
}

func (f *wsfs) isSentinel(st *unix.Stat_t) bool { return f.sentinel[[2]uint64{st.Dev, st.Ino}] }

// openDir opens the directory rel ("." the workspace) without following
// any symlink.
func (f *wsfs) openDir(rel string) (int, error) {
	if rel == "." || rel == "" {
		return unix.Dup(f.root)
	}
	return unix.Openat2(f.root, rel, &unix.OpenHow{
		Flags:   unix.O_PATH | unix.O_DIRECTORY | unix.O_CLOEXEC,
		Resolve: unix.RESOLVE_BENEATH | unix.RESOLVE_NO_SYMLINKS,
	})
}

// at runs fn with a descriptor of rel's parent directory and rel's name.
func (f *wsfs) at(rel string, fn func(dfd int, base string) error) error {
	dfd, err := f.openDir(path.Dir(rel))
	if err != nil {
		return err
	}
	defer unix.Close(dfd)
	return fn(dfd, path.Base(rel))
}

// readAt reads the entry name in dfd: a file's content or a symlink's
// target; ok is false when it is neither (absent, a directory).
func readAt(dfd int, name string) (data string, link, ok bool) {
	buf := make([]byte, 4096)
	if n, err := unix.Readlinkat(dfd, name, buf); err == nil {
		return string(buf[:n]), true, true
	}
	fd, err := unix.Openat(dfd, name, unix.O_RDONLY|unix.O_NOFOLLOW|unix.O_NONBLOCK|unix.O_CLOEXEC, 0)
	if err != nil {
		return "", false, false
	}
	fl := os.NewFile(uintptr(fd), name)
	defer fl.Close()
	var st unix.Stat_t
	if unix.Fstat(fd, &st) != nil || st.Mode&unix.S_IFMT != unix.S_IFREG {
		return "", false, false
	}
	b, err := io.ReadAll(fl)
	if err != nil {
		return "", false, false
	}
	return string(b), false, true
}

// read reads rel (see readAt).
func (f *wsfs) read(rel string) (data string, link, ok bool) {
	f.at(rel, func(dfd int, base string) error {
		data, link, ok = readAt(dfd, base)
		return nil
	})
	return
}

// writeInPlace writes data into the file rel (created with mode if
// absent), through its descriptor as an editor saving in place does. It
// returns the content it replaced, if there was a file.
func (f *wsfs) writeInPlace(rel, data string, mode uint32) (old string, had bool, err error) {
	err = f.at(rel, func(dfd int, base string) error {
		created := false
		fd, err := unix.Openat(dfd, base, unix.O_RDWR|unix.O_NOFOLLOW|unix.O_NONBLOCK|unix.O_CLOEXEC, 0)
		if err == unix.ENOENT {
			created = true
			fd, err = unix.Openat(dfd, base, unix.O_RDWR|unix.O_CREAT|unix.O_EXCL|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0o600)
		}
		if err != nil {
			return err
		}
		fl := os.NewFile(uintptr(fd), base)
		defer fl.Close()
		var st unix.Stat_t
		if err := unix.Fstat(fd, &st); err != nil {
			return err
		}
		if st.Mode&unix.S_IFMT != unix.S_IFREG || f.isSentinel(&st) {
			return errSkip
		}
		if created {
			unix.Fchmod(fd, mode)
		} else {
			b, err := io.ReadAll(fl)
			if err != nil {
				return err
			}
			old, had = string(b), true
		}
		if err := unix.Ftruncate(fd, 0); err != nil {
			return err
		}
		_, err = unix.Pwrite(fd, []byte(data), 0)
		return err
	})
	return
}

// writeReplace writes data with mode into a new file next to rel and
// renames it over rel (an atomic save). It returns what it replaced.
func (f *wsfs) writeReplace(rel, data string, mode uint32, tmp string) (old string, had bool, err error) {
	err = f.at(rel, func(dfd int, base string) error {
		fd, err := unix.Openat(dfd, tmp, unix.O_WRONLY|unix.O_CREAT|unix.O_EXCL|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0o600)
		if err != nil {
			return err
		}
		_, werr := unix.Write(fd, []byte(data))
		if werr == nil {
			werr = unix.Fchmod(fd, mode)
		}
		unix.Close(fd)
		if werr != nil {
			unix.Unlinkat(dfd, tmp, 0)
			return werr
		}
		old, _, had = readAt(dfd, base)
		if err := unix.Renameat(dfd, tmp, dfd, base); err != nil {
			unix.Unlinkat(dfd, tmp, 0)
			had = false
			return err
		}
		return nil
	})
	return
}

// mkdirAll makes the directory rel and its parents (never through a
// symlink).
func (f *wsfs) mkdirAll(rel string) error {
	if rel == "." || rel == "" {
		return nil
	}
	cur, err := unix.Dup(f.root)
	if err != nil {
		return err
	}
	for _, c := range strings.Split(rel, "/") {
		if err := unix.Mkdirat(cur, c, 0o755); err != nil && err != unix.EEXIST {
			unix.Close(cur)
			return err
		}
		next, err := unix.Openat2(cur, c, &unix.OpenHow{
			Flags:   unix.O_PATH | unix.O_DIRECTORY | unix.O_CLOEXEC,
			Resolve: unix.RESOLVE_BENEATH | unix.RESOLVE_NO_SYMLINKS,
		})
		unix.Close(cur)
		if err != nil {
			return err
		}
		cur = next
	}
	unix.Close(cur)
	return nil
}

// rename renames from to to, returning what it replaced at to.
func (f *wsfs) rename(from, to string) (old string, had bool, err error) {
	err = f.at(from, func(d1 int, b1 string) error {
		return f.at(to, func(d2 int, b2 string) error {
			old, _, had = readAt(d2, b2)
			if err := unix.Renameat(d1, b1, d2, b2); err != nil {
				had = false
				return err
			}
			return nil
		})
	})
	return
}

// link makes to a hard link of the file from.
func (f *wsfs) link(from, to string) error {
	return f.at(from, func(d1 int, b1 string) error {
		return f.at(to, func(d2 int, b2 string) error { return unix.Linkat(d1, b1, d2, b2, 0) })
	})
}

// linkOut makes rel a hard link of the file name in the sentinel directory.
func (f *wsfs) linkOut(name, rel string) error {
	return f.at(rel, func(dfd int, base string) error { return unix.Linkat(f.outside, name, dfd, base, 0) })
}

// symlink makes rel a symlink to target.
func (f *wsfs) symlink(target, rel string) error {
	return f.at(rel, func(dfd int, base string) error { return unix.Symlinkat(target, dfd, base) })
}

// remove removes the file or symlink rel, returning what it held.
func (f *wsfs) remove(rel string) (old string, had bool, err error) {
	err = f.at(rel, func(dfd int, base string) error {
		old, _, had = readAt(dfd, base)
		if err := unix.Unlinkat(dfd, base, 0); err != nil {
			had = false
			return err
		}
		return nil
	})
	return
}

// chmodX toggles the exec bits of the file rel (never of a file outside).
func (f *wsfs) chmodX(rel string) error {
	return f.at(rel, func(dfd int, base string) error {
		fd, err := unix.Openat(dfd, base, unix.O_RDONLY|unix.O_NOFOLLOW|unix.O_NONBLOCK|unix.O_CLOEXEC, 0)
		if err != nil {
			return err
		}
		defer unix.Close(fd)
		var st unix.Stat_t
		if err := unix.Fstat(fd, &st); err != nil {
			return err
		}
		if st.Mode&unix.S_IFMT != unix.S_IFREG || f.isSentinel(&st) {
			return errSkip
		}
		return unix.Fchmod(fd, (st.Mode&0o777)^0o111)
	})
}
