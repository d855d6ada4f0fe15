//go:build unix

// Package procstat measures the benchmark programs' children: peak memory,
// and flushing file systems between measurements.
package procstat

import (
	"os"
	"runtime"
	"syscall"
)

// MaxRSSKB returns the peak resident memory of the finished process, in KB.
func MaxRSSKB(ps *os.ProcessState) int64 {
	ru, ok := ps.SysUsage().(*syscall.Rusage)
	if !ok {
		return 0
	}
	if runtime.GOOS == "darwin" {
		return int64(ru.Maxrss) >> 10 // bytes on macOS
	}
	return int64(ru.Maxrss)
}

// SyncAll flushes every file system's dirty data.
func SyncAll() { syscall.Sync() }

// CloseOnExec keeps descriptor fd from the processes this one starts.
func CloseOnExec(fd int) { syscall.CloseOnExec(fd) }
