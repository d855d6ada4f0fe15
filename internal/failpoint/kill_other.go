//go:build !unix

package failpoint

import "os"

// killSelf is os.Process.Kill of the own process: TerminateProcess on
// Windows, as abrupt as SIGKILL.
func killSelf() {
	if p, err := os.FindProcess(os.Getpid()); err == nil {
		p.Kill()
	}
}
