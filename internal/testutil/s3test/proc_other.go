//go:build !linux

package s3test

import "syscall"

// procAttr is nothing special where there is no parent-death signal; the
// test's cleanup kills the gateway.
func procAttr() *syscall.SysProcAttr { return nil }
