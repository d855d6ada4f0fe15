package fsroot

import "errors"

// UnsupportedError reports a feature ckpt does not have on Windows yet.
// It wraps [errors.ErrUnsupported].
type UnsupportedError struct {
	What string // what is missing, e.g. "scanning a workspace"
}

func (e *UnsupportedError) Error() string {
	return e.What + " is not supported on Windows yet; run ckpt inside WSL 2"
}

func (e *UnsupportedError) Unwrap() error { return errors.ErrUnsupported }
