//go:build unix

package failpoint

import (
	"os"
	"syscall"
)

func killSelf() { syscall.Kill(os.Getpid(), syscall.SIGKILL) }
