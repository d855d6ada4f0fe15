package cli

import (
	"context"

	"github.com/seed1cedbf7c/ckpt"
	"github.com/spf13/cobra"
)

// The pieces every command is built from, so that each one handles
// --json, -q, the progress bar and empty listings the same way.

// jsonFlag adds --json to c, its value in p. usage says what it prints
// ("print JSON" when empty).
func jsonFlag(c *cobra.Command, p *bool, usage string) {
	if usage == "" {
		usage = "print JSON"
	}
	c.Flags().BoolVar(p, "json", false, usage)
}

// withRepo opens the repo (with --json, no progress bar), calls op on it
// and ends the progress bar. It returns what op returned, the error too.
//
// A method of the repo that takes only the context is an op as it is:
//
//	res, err := withRepo(e, o.json, (*ckpt.Repo).Undo)
func withRepo[T any](e *env, asJSON bool, op func(*ckpt.Repo, context.Context) (T, error)) (T, error) {
	r, err := e.open(asJSON)
	if err != nil {
		var zero T
		return zero, err
	}
	v, err := op(r, e.ctx)
	e.doneProgress()
	return v, err
}

// controller opens the repo (with --json, no progress bar) and the
// session id names (the current one when empty).
func (e *env) controller(asJSON bool, id string) (*ckpt.Controller, error) {
	r, err := e.open(asJSON)
	if err != nil {
		return nil, err
	}
	c, _, err := r.Controller(e.ctx, ckpt.ControllerOptions{ID: id})
	return c, err
}

// result prints a command's result: v as JSON with --json; with -q only
// id, on a line (nothing when id is empty); else text (if not nil).
func (e *env) result(asJSON bool, v any, id string, text func()) error {
	switch {
	case asJSON:
		return e.printJSON(v)
	case e.quiet:
		if id != "" {
			e.printf("%s\n", id)
		}
	case text != nil:
		text()
	}
	return nil
}

// listing prints a listing: the items as JSON with --json; with -q the
// id of each, one a line; else a line for each, or, when there are
// none, empty on stderr (if not "").
func listing[T any](e *env, asJSON bool, items []T, empty string, id, line func(T) string) error {
	if asJSON {
		return e.printJSON(items)
	}
	if len(items) == 0 && empty != "" {
		e.infof("%s", empty)
	}
	for _, it := range items {
		if e.quiet {
			e.printf("%s\n", id(it))
			continue
		}
		e.printf("%s\n", line(it))
	}
	return nil
}

// sayf prints a message for people on stdout: what a command did, when
// there is nothing else to print. Not with -q.
func (e *env) sayf(format string, a ...any) {
	if !e.quiet {
		e.printf(format, a...)
	}
}
