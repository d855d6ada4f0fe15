//go:build unix

package testutil

import "syscall"

// Mkfifo makes a FIFO at path, for tests that plant one where ckpt must
// not block on it.
func Mkfifo(path string, mode uint32) error { return syscall.Mkfifo(path, mode) }
