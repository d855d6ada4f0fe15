package scan

import (
	"path/filepath"
	"syscall"
	"time"
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

const (
	sIFMT  = syscall.S_IFMT
	sIFREG = syscall.S_IFREG
	sIFDIR = syscall.S_IFDIR
	sIFLNK = syscall.S_IFLNK
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
	defer closeFD(fd)
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
