//go:build unix && !linux

package run

import "syscall"

// procStart reports whether process pid exists; its start time is not
// known here (0).
func procStart(pid int) (uint64, bool) {
	err := syscall.Kill(pid, 0)
	return 0, err == nil || err == syscall.EPERM
}

// groupAlive reports whether process group pgid has a process (zombies
// included).
func groupAlive(pgid int) bool { return syscall.Kill(-pgid, 0) == nil }
