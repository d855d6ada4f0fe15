//go:build !linux

package restore

import "golang.org/x/sys/unix"

func syncFS(fd int) { unix.Sync() }
