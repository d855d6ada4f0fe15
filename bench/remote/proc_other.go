//go:build !linux

package main

import "syscall"

// dieWithParent: only Linux can tie a child's life to its parent; elsewhere
// the benchmark stops the server when it ends normally.
func dieWithParent() *syscall.SysProcAttr { return nil }
