package restore

import "errors"

// ErrIntegrity: what a restore wrote does not hash to what it meant to
// write, or a revert's result is not the state its records promise. The
// root package's *IntegrityError wraps it (as ckpt.ErrIntegrity), and so
// does a guarded run that could not be put back (internal/decree), which
// sits below the root package and cannot name the root's sentinel.
var ErrIntegrity = errors.New("integrity check failed")
