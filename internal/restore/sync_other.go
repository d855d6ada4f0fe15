//go:build unix && !linux

package restore

import "golang.org/x/sys/unix"

func syncFSFD(fd int) { unix.Sync() }
