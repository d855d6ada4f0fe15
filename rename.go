package ckpt

import (
	"context"
	"path"
	"sort"

	"github.com/seed1cedbf7c/ckpt/internal/diff"
	"github.com/seed1cedbf7c/ckpt/internal/object"
)

// Rename detection's bounds, git's idea: similarity is estimated for at
// most renameLimit deleted × renameLimit added files, each at most
// renameMaxSize bytes; identical contents are always found.
const (
	renameLimit   = 1000
	renameMaxSize = 4 << 20
)

// findRenames pairs deleted and added files: first identical contents
// (same id, same type), then, bounded as above, the most similar pairs at
// or above threshold percent, best first, as git diff -M does.
func (d *DiffResult) findRenames(ctx context.Context, threshold int) error {
	if threshold <= 0 {
		threshold = 50
	}
	threshold = min(threshold, 100)
	var srcs, dsts []int
	for i, fc := range d.Files {
		switch fc.Status {
		case "deleted":
			srcs = append(srcs, i)
		case "added":
			dsts = append(dsts, i)
		}
	}
	if len(srcs) == 0 || len(dsts) == 0 {
		return nil
	}
	used := map[int]bool{}
	var found []Rename
	pair := func(s, t int, score int) {
		used[s], used[t] = true, true
		found = append(found, Rename{From: d.Files[s].Path, To: d.Files[t].Path, Similarity: score * 100 / diff.MaxScore})
	}

	// Identical contents: prefer a source with the same base name.
	byID := map[object.ID][]int{}
	for _, s := range srcs {
		byID[d.Files[s].old.ID] = append(byID[d.Files[s].old.ID], s)
	}
	for _, t := range dsts {
		te := d.Files[t].new
		best := -1
		for _, s := range byID[te.ID] {
			if used[s] || !sameType(d.Files[s].old, te) {
				continue
			}
			if best < 0 || path.Base(string(d.Files[s].Path)) == path.Base(string(d.Files[t].Path)) {
				best = s
			}
		}
		if best >= 0 {
			pair(best, t, diff.MaxScore)
		}
	}

	if threshold < 100 {
		if err := d.similarRenames(ctx, srcs, dsts, used, threshold*diff.MaxScore/100, pair); err != nil {
			return err
		}
	}
	sort.Slice(found, func(i, j int) bool { return found[i].To < found[j].To })
	d.Renames = found
	d.renameFrom, d.renameTo = map[Path]int{}, map[Path]int{}
	for i, rn := range found {
		d.renameFrom[rn.From], d.renameTo[rn.To] = i, i
	}
	return nil
}

// similarRenames scores the unpaired deleted and added files against each
// other and pairs them best first.
func (d *DiffResult) similarRenames(ctx context.Context, srcs, dsts []int, used map[int]bool, minScore int, pair func(s, t, score int)) error {
	small := func(is []int, old bool) []int {
		var out []int
		for _, i := range is {
			e := d.Files[i].new
			if old {
				e = d.Files[i].old
			}
			if !used[i] && e.Size <= renameMaxSize {
				out = append(out, i)
			}
		}
		return out
	}
	srcs, dsts = small(srcs, true), small(dsts, false)
	if len(srcs) == 0 || len(dsts) == 0 || len(srcs) > renameLimit || len(dsts) > renameLimit {
		return nil
	}
	chunks := map[int]*diff.Chunks{}
	load := func(i int, old bool) error {
		fc := d.Files[i]
		e, working := fc.new, d.To == nil
		if old {
			e, working = fc.old, false
		}
		s, err := d.side(ctx, string(fc.Path), e, working)
		if err != nil {
			return err
		}
		chunks[i] = diff.NewChunks(s.Content)
		return nil
	}
	type cand struct{ s, t, score int }
	var cands []cand
	for _, t := range dsts {
		for _, s := range srcs {
			se, te := d.Files[s].old, d.Files[t].new
			if !sameType(se, te) || !sizesAllow(se.Size, te.Size, minScore) {
				continue
			}
			for _, i := range []int{s, t} {
				if chunks[i] == nil {
					if err := load(i, i == s); err != nil {
						return err
					}
				}
			}
			if score := diff.Similarity(chunks[s], chunks[t], minScore); score >= minScore {
				cands = append(cands, cand{s, t, score})
			}
		}
	}
	sort.SliceStable(cands, func(i, j int) bool {
		a, b := cands[i], cands[j]
		if a.score != b.score {
			return a.score > b.score
		}
		return sameBase(d.Files[a.s].Path, d.Files[a.t].Path) && !sameBase(d.Files[b.s].Path, d.Files[b.t].Path)
	})
	for _, c := range cands {
		if !used[c.s] && !used[c.t] {
			pair(c.s, c.t, c.score)
		}
	}
	return nil
}

func sameType(a, b *object.Entry) bool {
	return a.Mode&object.ModeTypeMask == b.Mode&object.ModeTypeMask
}

func sameBase(a, b Path) bool { return path.Base(string(a)) == path.Base(string(b)) }

// sizesAllow reports whether two sizes alone leave minScore possible.
func sizesAllow(a, b int64, minScore int) bool {
	hi, lo := max(a, b), min(a, b)
	return hi*int64(diff.MaxScore-minScore) >= (hi-lo)*int64(diff.MaxScore)
}
