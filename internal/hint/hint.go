// Package hint attaches a suggestion for the user to an error and reads it
// back: "run `ckpt session list`", "fix the command, or …". The engine
// chooses the words, as it knows what went wrong; the faces decide where
// to show them (the CLI prints "ckpt: hint: …").
package hint

// hinted is an error with a suggestion for the user.
type hinted struct {
	err  error
	hint string
}

func (h *hinted) Error() string { return h.err.Error() }
func (h *hinted) Unwrap() error { return h.err }

// Hint returns the suggestion.
func (h *hinted) Hint() string { return h.hint }

// With returns err carrying the suggestion hint; nil for a nil err.
func With(err error, hint string) error {
	if err == nil {
		return nil
	}
	return &hinted{err: err, hint: hint}
}

// Of returns the suggestion attached to err, or to the first error it
// wraps (through Unwrap() error) that has one: any error with a
// Hint() string method; "" if there is none.
func Of(err error) string {
	for err != nil {
		if h, ok := err.(interface{ Hint() string }); ok {
			return h.Hint()
		}
		u, ok := err.(interface{ Unwrap() error })
		if !ok {
			return ""
		}
		err = u.Unwrap()
	}
	return ""
}
