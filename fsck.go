package ckpt

import (
	"context"
	"fmt"

	"github.com/seed1cedbf7c/ckpt/internal/object"
	"github.com/seed1cedbf7c/ckpt/internal/scan"
	"github.com/seed1cedbf7c/ckpt/internal/store"
)

// FsckProblem is one finding of [Repo.Fsck].
type FsckProblem = store.Problem

// FsckResult reports a store check.
type FsckResult struct {
	Checked  int64         `json:"checked"`
	Problems []FsckProblem `json:"problems"`
	// Warnings are findings that lose nothing (a stat cache that does not
	// belong to the database, removed); they do not fail fsck.
	Warnings []string `json:"warnings,omitempty"`
}

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
	if w := r.checkCache(ctx); w != "" {
		out.Warnings = append(out.Warnings, w)
	}
	if len(out.Problems) > 0 {
		return out, &FsckError{Problems: out.Problems}
	}
	return out, nil
}

// checkCache reports a stat cache that does not belong to the database —
// another store's, one newer than the database (ckpt.db replaced by an
// older copy), one naming trees the database lacks, a damaged one — and
// removes it: it is only a cache, the next save rebuilds it. "" if the
// cache is fine or absent.
func (r *Repo) checkCache(ctx context.Context) string {
	p := r.cachePath()
	if p == "" {
		return ""
	}
	c, err := scan.LoadCache(p)
	if c == nil && err == nil {
		return ""
	}
	why := ""
	if err != nil {
		why = "is damaged (" + err.Error() + ")"
	} else {
		defer c.Close()
		info, err := r.st.Info(ctx)
		if err != nil {
			return ""
		}
		switch {
		case c.Instance != info.Instance:
			why = fmt.Sprintf("belongs to another store (instance %s; this one is %s)", c.Instance, info.Instance)
		case c.Generation > info.Generation || c.Seq > info.CacheSeq:
			why = fmt.Sprintf("is newer than the database (written at cache write %d, generation %d; the database has had %d, generation %d): ckpt.db was replaced by an older copy",
				c.Seq, c.Generation, info.CacheSeq, info.Generation)
		case c.Generation == info.Generation:
			missing := 0
			for _, id := range c.Trees() {
				if id.IsZero() || id == object.EmptyTree {
					continue
				}
				if ok, err := r.st.HasTree(ctx, id); err == nil && !ok {
					missing++
				}
			}
			if missing > 0 {
				why = fmt.Sprintf("names %d tree(s) the database does not have", missing)
			}
		}
	}
	if why == "" {
		return ""
	}
	msg := "stat cache " + p + " " + why
	if r.dropCache() {
		msg += "; removed (the next save rebuilds it)"
	}
	return msg
}
