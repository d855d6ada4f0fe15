//go:build unix

package main

import (
	"os"
	"runtime"
	"syscall"
)

// maxRSSKB returns the peak resident memory of the finished process, in KB.
func maxRSSKB(ps *os.ProcessState) int64 {
	ru, ok := ps.SysUsage().(*syscall.Rusage)
	if !ok {
		return 0
	}
	if runtime.GOOS == "darwin" {
		return int64(ru.Maxrss) >> 10 // bytes on macOS
	}
	return int64(ru.Maxrss)
}

// syncAll flushes every file system's dirty data.
func syncAll() { syscall.Sync() }
