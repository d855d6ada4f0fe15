package fsroot

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
)

// ErrNotRegular is wrapped by [ReadRegular]'s error for a path that is not
// a regular file: a FIFO, a device such as /dev/zero, a socket, a
// directory.
var ErrNotRegular = errors.New("not a regular file")

// ErrTooLarge is wrapped by [ReadRegular]'s error for a file larger than
// its limit.
var ErrTooLarge = errors.New("file too large")

// ReadRegular reads the regular file at path (symlinks followed, as for
// any file a user names), at most limit bytes. Metadata that someone else
// may have planted — a git HEAD, a config, an exclude file, an agent's
// transcript — is read only through it: a FIFO is opened without blocking
// and refused, a device is refused before a byte is read, and a file that
// grows past limit is an error, never an unbounded read. A missing file's
// error wraps fs.ErrNotExist.
func ReadRegular(path string, limit int64) ([]byte, error) {
	f, fi, err := OpenRegular(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if fi.Size() > limit {
		return nil, &fs.PathError{Op: "read", Path: path, Err: fmt.Errorf("%w: %d bytes, more than %d", ErrTooLarge, fi.Size(), limit)}
	}
	data, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return nil, err
	}
	if int64(len(data)) > limit {
		return nil, &fs.PathError{Op: "read", Path: path, Err: fmt.Errorf("%w: more than %d bytes", ErrTooLarge, limit)}
	}
	return data, nil
}

// OpenRegular opens the regular file at path for reading, as
// [ReadRegular] reads it — without blocking on a FIFO, refusing anything
// that is not a regular file once opened (the error wraps
// [ErrNotRegular]) — for a caller that reads only part of it (the end of
// a long transcript). The caller bounds what it reads; fi is the opened
// file's.
func OpenRegular(path string) (f *os.File, fi fs.FileInfo, err error) {
	f, err = os.OpenFile(path, os.O_RDONLY|ONonblock, 0)
	if err != nil {
		return nil, nil, err
	}
	fi, err = f.Stat()
	if err != nil {
		f.Close()
		return nil, nil, err
	}
	if !fi.Mode().IsRegular() {
		f.Close()
		return nil, nil, &fs.PathError{Op: "read", Path: path, Err: fmt.Errorf("%w (%s)", ErrNotRegular, kindOf(fi.Mode()))}
	}
	return f, fi, nil
}

// kindOf names a file type for an error message.
func kindOf(m fs.FileMode) string {
	switch {
	case m&fs.ModeNamedPipe != 0:
		return "a FIFO"
	case m&fs.ModeSocket != 0:
		return "a socket"
	case m&fs.ModeCharDevice != 0:
		return "a character device"
	case m&fs.ModeDevice != 0:
		return "a block device"
	case m.IsDir():
		return "a directory"
	}
	return "a special file"
}

// OpenNoFollow opens the file at path for reading without following a
// symlink in its last component (the error wraps ELOOP) and without
// blocking on a FIFO. The caller checks what it opened.
func OpenNoFollow(path string) (*os.File, error) { return openNoFollow(path) }
