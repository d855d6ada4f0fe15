//go:build unix

package store

import (
	"fmt"
	"io/fs"
	"os"
	"syscall"

	"golang.org/x/sys/unix"
)

// FileDevice returns the device number (st_dev) of fi's file system.
func FileDevice(fi fs.FileInfo) (uint64, bool) {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return 0, false
	}
	return uint64(st.Dev), true
}

// FileOwner returns the uid owning fi.
func FileOwner(fi fs.FileInfo) (int, bool) {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return 0, false
	}
	return int(st.Uid), true
}

// ownedByMe reports whether this process's effective user owns fi.
func ownedByMe(fi fs.FileInfo) bool {
	uid, ok := FileOwner(fi)
	return ok && uid == os.Geteuid()
}

// fileID identifies a file by its device and inode.
func fileID(fi fs.FileInfo) (string, bool) {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return "", false
	}
	return fmt.Sprintf("%d:%d", st.Dev, st.Ino), true
}

// probeWritable reports whether path could be opened for writing, without
// opening it: closing a descriptor of a database this process has open
// would drop every lock SQLite holds on it (POSIX).
func probeWritable(path string) error {
	return unix.Faccessat(unix.AT_FDCWD, path, unix.W_OK, unix.AT_EACCESS)
}
