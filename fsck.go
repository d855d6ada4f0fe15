package ckpt

import (
	"context"
	"fmt"
	"strings"

	"github.com/seed1cedbf7c/ckpt/internal/store"
)

// FsckProblem is one finding of [Repo.Fsck].
type FsckProblem = store.Problem

// FsckResult reports a store check.
type FsckResult struct {
	Checked  int64         `json:"checked"`
	Problems []FsckProblem `json:"problems"`
}

// FsckError is returned when fsck finds problems; it wraps [ErrCorrupt].
type FsckError struct{ Problems []FsckProblem }

// Error implements error.
func (e *FsckError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "store is corrupt: %d problem(s)", len(e.Problems))
	for i, p := range e.Problems {
		if i == 10 {
			fmt.Fprintf(&b, "; ...")
			break
		}
		b.WriteString("; ")
		b.WriteString(p.String())
	}
	return b.String()
}

// Unwrap returns [ErrCorrupt].
func (e *FsckError) Unwrap() error { return ErrCorrupt }

// Fsck re-hashes every object in the store and checks every reference
// between trees, checkpoints, refs and the operation log. Problems are
// returned in the result and as a [*FsckError].
func (r *Repo) Fsck(ctx context.Context) (*FsckResult, error) {
	out := &FsckResult{Problems: []FsckProblem{}}
	var prog func(done, total int64)
	if r.opts.Progress != nil {
		prog = func(done, total int64) { r.progress(Progress{Op: "fsck", Files: done, TotalFiles: total}) }
	}
	n, err := r.st.Fsck(ctx, func(p store.Problem) { out.Problems = append(out.Problems, p) }, prog)
	out.Checked = n
	if err != nil {
		return out, err
	}
	if len(out.Problems) > 0 {
		return out, &FsckError{Problems: out.Problems}
	}
	return out, nil
}
