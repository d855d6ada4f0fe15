package diff

import (
	"sort"
	"strings"

	"github.com/aymanbagabas/go-udiff/lcs"
)

// splitLines splits s into lines that keep their "\n"; only the last line may
// lack it.
func splitLines(s string) []string {
	if s == "" {
		return nil
	}
	n := strings.Count(s, "\n")
	if !strings.HasSuffix(s, "\n") {
		n++
	}
	out := make([]string, 0, n)
	for len(s) > 0 {
		i := strings.IndexByte(s, '\n')
		if i < 0 {
			out = append(out, s)
			break
		}
		out = append(out, s[:i+1])
		s = s[i+1:]
	}
	return out
}

// exactCost is the largest edit script lcs.DiffLines is sure to find
// exactly: it searches 50 steps from each end before giving up and
// replacing the unexplored middle wholesale.
const exactCost = 100

// maxRefine bounds how many times diffLines cuts a region into pieces.
const maxRefine = 12

// diffLines returns the edits turning a into b, sorted and non-adjacent.
//
// It uses lcs.DiffLines (Myers), which is exact for small edit scripts and
// otherwise gives a valid but coarse answer. When the answer is coarse the
// region is cut at the lines that occur exactly once on each side, in the
// same order on both (the anchors of patience diff), or in proportional
// halves when there are none, and each piece is diffed again; the finer
// answer is kept when it is smaller. Each level of cuts costs time linear
// in the input, and there are at most maxRefine levels.
func diffLines(a, b []string) []lcs.Diff {
	return diffRegion(a, b, 0)
}

func diffRegion(a, b []string, depth int) []lcs.Diff {
	pre := 0
	for pre < len(a) && pre < len(b) && a[pre] == b[pre] {
		pre++
	}
	suf := 0
	for suf < len(a)-pre && suf < len(b)-pre && a[len(a)-1-suf] == b[len(b)-1-suf] {
		suf++
	}
	return appendShifted(nil, diffCore(a[pre:len(a)-suf], b[pre:len(b)-suf], depth), pre, pre)
}

func diffCore(a, b []string, depth int) []lcs.Diff {
	switch {
	case len(a) == 0 && len(b) == 0:
		return nil
	case len(a) == 0 || len(b) == 0:
		return []lcs.Diff{{Start: 0, End: len(a), ReplStart: 0, ReplEnd: len(b)}}
	}
	ds := lcs.DiffLines(a, b)
	if cost(ds) <= exactCost || depth >= maxRefine {
		return ds
	}
	// Cut the region at its unique common lines, or, when there are none,
	// into proportional halves. Any cut gives a valid script; the finer
	// one is kept only if it is smaller.
	cuts := uniqueAnchors(a, b)
	skip := 1 // an anchor line is common to both sides
	if len(cuts) == 0 {
		if len(a) < 2*exactCost || len(b) < 2*exactCost {
			return ds
		}
		cuts, skip = [][2]int{{len(a) / 2, len(b) / 2}}, 0
	}
	var out []lcs.Diff
	pa, pb := 0, 0
	for _, c := range append(cuts, [2]int{len(a), len(b)}) {
		out = appendShifted(out, diffRegion(a[pa:c[0]], b[pb:c[1]], depth+1), pa, pb)
		pa, pb = c[0]+skip, c[1]+skip
	}
	if cost(out) < cost(ds) {
		return out
	}
	return ds
}

// appendShifted appends the edits ds, offset by pa and pb, to out, joining
// an edit that starts where the last one ends.
func appendShifted(out, ds []lcs.Diff, pa, pb int) []lcs.Diff {
	for _, d := range ds {
		d.Start += pa
		d.End += pa
		d.ReplStart += pb
		d.ReplEnd += pb
		if n := len(out); n > 0 && out[n-1].End == d.Start && out[n-1].ReplEnd == d.ReplStart {
			out[n-1].End, out[n-1].ReplEnd = d.End, d.ReplEnd
			continue
		}
		out = append(out, d)
	}
	return out
}

// cost is the number of deleted plus inserted lines of an edit script.
func cost(ds []lcs.Diff) int {
	n := 0
	for _, d := range ds {
		n += d.End - d.Start + d.ReplEnd - d.ReplStart
	}
	return n
}

// uniqueAnchors returns index pairs (i, j) with a[i] == b[j] where the line
// occurs exactly once in a and once in b, forming the longest sequence
// increasing on both sides.
func uniqueAnchors(a, b []string) [][2]int {
	type seen struct{ na, nb, ia, ib int }
	idx := make(map[string]int, len(a))
	var info []seen
	for i, l := range a {
		k, ok := idx[l]
		if !ok {
			k = len(info)
			idx[l] = k
			info = append(info, seen{ia: i})
		}
		info[k].na++
	}
	for j, l := range b {
		if k, ok := idx[l]; ok {
			info[k].nb++
			info[k].ib = j
		}
	}
	// Candidate pairs in order of j; keep the longest run increasing in i.
	var pairs [][2]int
	for j, l := range b {
		k := idx[l]
		if s := info[k]; s.na == 1 && s.nb == 1 {
			pairs = append(pairs, [2]int{s.ia, j})
		}
	}
	if len(pairs) == 0 {
		return nil
	}
	// Longest increasing subsequence on the a index (patience sorting).
	tails := []int{}                // tails[k]: index into pairs ending a run of length k+1
	prev := make([]int, len(pairs)) // predecessor in the run
	for p, pr := range pairs {
		k := sort.Search(len(tails), func(t int) bool { return pairs[tails[t]][0] >= pr[0] })
		if k > 0 {
			prev[p] = tails[k-1]
		} else {
			prev[p] = -1
		}
		if k == len(tails) {
			tails = append(tails, p)
		} else {
			tails[k] = p
		}
	}
	out := make([][2]int, len(tails))
	for k, p := len(tails)-1, tails[len(tails)-1]; k >= 0; k, p = k-1, prev[p] {
		out[k] = pairs[p]
	}
	return out
}
