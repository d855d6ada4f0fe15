//go:build unix && !linux

package scan

import "golang.org/x/sys/unix"

// openTmpfile: no unnamed files here; FSClock falls back to the clock.
func openTmpfile(dir string) (int, error) { return -1, unix.ENOTSUP }
