package s3test

import "syscall"

// procAttr makes the kernel kill the gateway when the test process dies,
// so a test binary killed by its timeout leaves no server behind.
func procAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}
