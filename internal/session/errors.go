package session

import "errors"

// ErrNoSession: the workspace has no session yet.
var ErrNoSession = errors.New("no session")

// hinted is an error with a suggestion for the user (read by the root
// package's Hint).
type hinted struct {
	err  error
	hint string
}

func (h *hinted) Error() string { return h.err.Error() }
func (h *hinted) Unwrap() error { return h.err }

// Hint returns the suggestion.
func (h *hinted) Hint() string { return h.hint }

func withHint(err error, hint string) error { return &hinted{err: err, hint: hint} }
