//go:build !unix

package main

import (
	"fmt"
	"os"
	"runtime"
)

func init() {
	fmt.Fprintf(os.Stderr, "bench: peak memory is not measured on %s (reported as 0), and file systems are not flushed between measurements\n", runtime.GOOS)
}

// maxRSSKB returns 0: not measured here.
func maxRSSKB(*os.ProcessState) int64 { return 0 }

// syncAll does nothing: there is no unprivileged sync(2) here.
func syncAll() {}
