//go:build unix

package cli

import "syscall"

// detached starts a daemon in a session of its own, away from the
// terminal's signals.
func detached() *syscall.SysProcAttr { return &syscall.SysProcAttr{Setsid: true} }
