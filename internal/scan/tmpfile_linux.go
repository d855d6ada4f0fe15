package scan

import "golang.org/x/sys/unix"

// openTmpfile creates an unnamed file in dir.
func openTmpfile(dir string) (int, error) {
	return unix.Open(dir, unix.O_TMPFILE|unix.O_RDWR|unix.O_CLOEXEC, 0o600)
}
