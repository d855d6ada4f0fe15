//go:build unix

package ckpt

import (
	"os"
	"runtime"
	"syscall"
)

// peakRSS returns the peak resident memory of a finished process, in bytes.
func peakRSS(ps *os.ProcessState) (int64, bool) {
	ru, ok := ps.SysUsage().(*syscall.Rusage)
	if !ok {
		return 0, false
	}
	if runtime.GOOS == "darwin" {
		return int64(ru.Maxrss), true // bytes on macOS
	}
	return int64(ru.Maxrss) << 10, true // KiB on Linux
}
