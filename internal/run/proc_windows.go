package run

import (
	"os/exec"
	"syscall"

	"github.com/seed1cedbf7c/ckpt/internal/fsroot"
	"golang.org/x/sys/windows"
)

// errPlatform: a routine's processes are ended as a group (SIGTERM, then
// SIGKILL to its process group), which needs a job object on Windows that
// ckpt does not create yet. Execute refuses before starting anything.
var errPlatform error = &fsroot.UnsupportedError{What: "running a routine"}

func groupAttr() *syscall.SysProcAttr { return nil }

func signalGroup(int, syscall.Signal) error { return errPlatform }

// procStart returns the creation time of process pid (100-ns intervals
// since 1601), and false when there is no such process or it has exited.
func procStart(pid int) (uint64, bool) {
	h, err := windows.OpenProcess(windows.PROCESS_QUERY_LIMITED_INFORMATION, false, uint32(pid))
	if err != nil {
		return 0, false
	}
	defer windows.CloseHandle(h)
	var code uint32
	if err := windows.GetExitCodeProcess(h, &code); err != nil || code != 259 { // STILL_ACTIVE
		return 0, false
	}
	var created, exited, kernel, user windows.Filetime
	if err := windows.GetProcessTimes(h, &created, &exited, &kernel, &user); err != nil {
		return 0, true
	}
	return uint64(created.HighDateTime)<<32 | uint64(created.LowDateTime), true
}

// groupAlive reports whether the process pgid runs (Windows has no
// process groups ckpt made; only the leader can be known).
func groupAlive(pgid int) bool {
	_, ok := procStart(pgid)
	return ok
}

// OwnGroup leaves cmd as it is: on Windows only cmd's own process is
// killed when its context is done (exec.CommandContext's default), not
// the processes it started.
func OwnGroup(*exec.Cmd) {}
