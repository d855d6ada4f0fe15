package main

import "syscall"

// dieWithParent makes the S3 server die with the benchmark, even when the
// benchmark is killed.
func dieWithParent() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}
