//go:build unix

package restore

import (
	"errors"

	"github.com/seed1cedbf7c/ckpt/internal/fsroot"
	"golang.org/x/sys/unix"
)

// canSyncFS: large restores may flush the whole file system once.
const canSyncFS = true

// syncFS flushes the file system holding dir.
func syncFS(dir string) {
	fd, err := unix.Open(dir, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return
	}
	syncFSFD(fd)
	unix.Close(fd)
}

// syncDir fsyncs the directory d below root.
func syncDir(root *fsroot.Root, d string) {
	// O_DIRECTORY: whatever replaced a directory meanwhile (a FIFO,
	// whose open would block) is not opened.
	if fd, err := root.OpenDirFD(d); err == nil {
		unix.Fsync(fd)
		unix.Close(fd)
	}
}

func isNotEmpty(err error) bool {
	return errors.Is(err, unix.ENOTEMPTY) || errors.Is(err, unix.EEXIST)
}

func isCrossDevice(err error) bool { return errors.Is(err, unix.EXDEV) }
