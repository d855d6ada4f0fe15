package ckpt

import (
	"io/fs"
	"os"

	"github.com/seed1cedbf7c/ckpt/internal/fsroot"
)

// ErrNotRegular: a file ckpt was asked to read by a path it did not choose
// is not a regular file (a device such as /dev/zero, a FIFO, a socket, a
// directory), so it is not read.
var ErrNotRegular = fsroot.ErrNotRegular

// OpenRegularFile opens a file named by untrusted input — an agent's
// transcript, say — for reading, only if it is a regular file: it never
// blocks on a FIFO (O_NONBLOCK), and it checks the opened file, so a
// symlink to /dev/zero is refused too (the error wraps [ErrNotRegular]).
// A symlink to a regular file is followed. The caller bounds what it
// reads.
func OpenRegularFile(path string) (*os.File, fs.FileInfo, error) {
	return fsroot.OpenRegular(path)
}
