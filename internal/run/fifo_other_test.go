//go:build !unix

package run

import "errors"

func mkfifo(string, uint32) error { return errors.ErrUnsupported }
