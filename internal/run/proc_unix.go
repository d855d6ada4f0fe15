//go:build unix

package run

import (
	"os/exec"
	"syscall"
)

// errPlatform is nil: routines run here.
var errPlatform error

// groupAttr starts a routine in a process group of its own.
func groupAttr() *syscall.SysProcAttr { return &syscall.SysProcAttr{Setpgid: true} }

// signalGroup sends sig to every process of group pgid.
func signalGroup(pgid int, sig syscall.Signal) error { return syscall.Kill(-pgid, sig) }

// OwnGroup makes cmd run in a process group of its own, all of which is
// killed (SIGKILL) when cmd's context is done: a shell's pipeline ends
// with the shell.
func OwnGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = groupAttr()
	cmd.Cancel = func() error { return signalGroup(cmd.Process.Pid, syscall.SIGKILL) }
}
