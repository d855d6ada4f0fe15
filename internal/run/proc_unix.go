//go:build unix

package run

import "syscall"

// errPlatform is nil: routines run here.
var errPlatform error

// groupAttr starts a routine in a process group of its own.
func groupAttr() *syscall.SysProcAttr { return &syscall.SysProcAttr{Setpgid: true} }

// signalGroup sends sig to every process of group pgid.
func signalGroup(pgid int, sig syscall.Signal) error { return syscall.Kill(-pgid, sig) }
