package ckpt

import (
	"io/fs"
	"os"

	"github.com/seed1cedbf7c/ckpt/internal/fsroot"
)

// OpenRegularFile opens a file named by untrusted input — an agent's
// transcript, say — for reading, only if it is a regular file: it never
// blocks on a FIFO (O_NONBLOCK), and it checks the opened file, so a
// symlink to /dev/zero is refused too (the error wraps [ErrNotRegular]).
// A symlink to a regular file is followed. The caller bounds what it
// reads.
func OpenRegularFile(path string) (*os.File, fs.FileInfo, error) {
	return fsroot.OpenRegular(path)
}
