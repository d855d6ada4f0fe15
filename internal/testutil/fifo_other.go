//go:build !unix

package testutil

import "errors"

// Mkfifo fails: no FIFO can be made at a path here.
func Mkfifo(path string, mode uint32) error { return errors.ErrUnsupported }
