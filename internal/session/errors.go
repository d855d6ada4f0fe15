package session

import "errors"

// ErrNoSession: the workspace has no session yet.
var ErrNoSession = errors.New("no session")
