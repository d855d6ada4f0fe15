//go:build !unix

package ckpt

import "os"

// peakRSS reports no measurement: the process's peak memory is not known
// here.
func peakRSS(*os.ProcessState) (int64, bool) { return 0, false }
