package cli

import (
	"syscall"

	"golang.org/x/sys/windows"
)

// detached starts a daemon without a console and in a process group of
// its own, away from the console's Ctrl+C.
func detached() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{CreationFlags: windows.DETACHED_PROCESS | windows.CREATE_NEW_PROCESS_GROUP}
}
