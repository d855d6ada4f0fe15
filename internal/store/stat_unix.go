//go:build unix

package store

import (
	"io/fs"
	"os"
	"syscall"
)

// statDev returns the device number of fi's file system.
func statDev(fi fs.FileInfo) (uint64, bool) {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return 0, false
	}
	return uint64(st.Dev), true
}

// ownedByMe reports whether this process's effective user owns fi.
func ownedByMe(fi fs.FileInfo) bool {
	st, ok := fi.Sys().(*syscall.Stat_t)
	return ok && int(st.Uid) == os.Geteuid()
}
