package hooks

import (
	"errors"
	"io/fs"
	"os/exec"

	"golang.org/x/sys/windows"
)

// ownGroup leaves cmd as it is: on Windows only cmd's own process is
// killed when its context is done, not the processes it started.
func ownGroup(*exec.Cmd) {}

// fileOwner reports no owner: Windows guards files with ACLs, which a
// new file inherits from its directory.
func fileOwner(fs.FileInfo) (uid, gid int, ok bool) { return 0, 0, false }

// processGone reports whether no process has id pid.
func processGone(pid int) bool {
	h, err := windows.OpenProcess(windows.PROCESS_QUERY_LIMITED_INFORMATION, false, uint32(pid))
	if err != nil {
		return errors.Is(err, windows.ERROR_INVALID_PARAMETER)
	}
	defer windows.CloseHandle(h)
	var code uint32
	return windows.GetExitCodeProcess(h, &code) == nil && code != 259 // STILL_ACTIVE
}
