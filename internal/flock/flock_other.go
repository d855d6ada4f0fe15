//go:build !unix && !windows

package flock

import (
	"errors"
	"fmt"
	"os"
)

var errUnsupported = fmt.Errorf("%w: file locks are not supported on this system", errors.ErrUnsupported)

func tryLock(*os.File) (bool, error) { return false, errUnsupported }
func lock(*os.File) error            { return errUnsupported }
func unlock(*os.File) error          { return errUnsupported }
