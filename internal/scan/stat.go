package scan

import (
	"path/filepath"
	"time"

	"golang.org/x/sys/unix"
)

// statInfo is the part of lstat a cache entry compares.
type statInfo struct {
	mode  uint32 // st_mode: type and permission bits
	size  int64
	mtime int64
	ctime int64
	ino   uint64
	dev   uint64
	nlink uint64
}

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

const (
	sIFMT  = unix.S_IFMT
	sIFREG = unix.S_IFREG
	sIFDIR = unix.S_IFDIR
	sIFLNK = unix.S_IFLNK
)

// FSClock returns the current time as the file system holding dir sees it:
// the mtime of a file created there just now. File timestamps come from the
// kernel's coarse clock, which can lag time.Now(); comparing mtimes against
// this clock is what makes the racy-timestamp rule sound. The file is an
// unnamed one (O_TMPFILE), so a crash leaves nothing behind. Where that is
// not possible (dir not writable, a file system without O_TMPFILE) it falls
// back to time.Now() minus two seconds (safe: more files count as racy and
// are re-hashed).
func FSClock(dir string) int64 {
	fallback := time.Now().Add(-2 * time.Second).UnixNano()
	fd, err := openTmpfile(dir)
	if err != nil {
		return fallback
	}
	defer unix.Close(fd)
	st, err := fstat(fd)
	if err != nil {
		return fallback
	}
	return st.mtime
}

// SameDevice reports whether two paths are on the same file system.
func SameDevice(a, b string) bool {
	sa, err1 := lstatPath(a)
	sb, err2 := lstatPath(filepath.Clean(b))
	return err1 == nil && err2 == nil && sa.dev == sb.dev
}
