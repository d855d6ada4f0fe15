//go:build unix

package scan

import (
	"io"
	"os"

	"golang.org/x/sys/unix"
)

// errPlatform is nil: scanning works here.
var errPlatform error

func closeFD(fd int) error { return unix.Close(fd) }

func lstatAt(dirfd int, name string) (statInfo, error) {
	var st unix.Stat_t
	for {
		err := unix.Fstatat(dirfd, name, &st, unix.AT_SYMLINK_NOFOLLOW)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return statInfo{}, err
		}
		return fromStat(&st), nil
	}
}

func fstat(fd int) (statInfo, error) {
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return statInfo{}, err
	}
	return fromStat(&st), nil
}

// Lstat returns the stat fields ckpt compares for an absolute path.
func lstatPath(path string) (statInfo, error) {
	var st unix.Stat_t
	if err := unix.Lstat(path, &st); err != nil {
		return statInfo{}, err
	}
	return fromStat(&st), nil
}

// readFileAt reads the regular file name in dirfd, not following a symlink.
func readFileAt(dirfd int, name string) ([]byte, error) {
	fd, err := unix.Openat(dirfd, name, unix.O_RDONLY|unix.O_NOFOLLOW|unix.O_NONBLOCK|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, err
	}
	f := os.NewFile(uintptr(fd), name)
	defer f.Close()
	if st, err := fstat(fd); err != nil {
		return nil, err
	} else if st.mode&sIFMT != sIFREG {
		return nil, unix.ENOENT // replaced meanwhile: as if gone
	}
	return io.ReadAll(f)
}

func readlinkAt(dirfd int, name string) ([]byte, error) {
	for size := 256; ; size *= 2 {
		buf := make([]byte, size)
		n, err := unix.Readlinkat(dirfd, name, buf)
		if err != nil {
			return nil, err
		}
		if n < size {
			return buf[:n], nil
		}
	}
}

// mapFile maps the open file f of size bytes read-only; unmap releases it.
func mapFile(f *os.File, size int64) (data []byte, unmap func(), err error) {
	data, err = unix.Mmap(int(f.Fd()), 0, int(size), unix.PROT_READ, unix.MAP_SHARED)
	if err != nil {
		return nil, nil, err
	}
	return data, func() { unix.Munmap(data) }, nil
}
