//go:build !unix

package procstat

import (
	"fmt"
	"os"
	"runtime"
)

func init() {
	fmt.Fprintf(os.Stderr, "bench: peak memory is not measured on %s (reported as 0), and file systems are not flushed between measurements\n", runtime.GOOS)
}

// MaxRSSKB returns 0: not measured here.
func MaxRSSKB(*os.ProcessState) int64 { return 0 }

// SyncAll does nothing: there is no unprivileged sync(2) here.
func SyncAll() {}

// CloseOnExec does nothing here.
func CloseOnExec(int) {}
