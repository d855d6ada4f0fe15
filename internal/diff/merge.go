package diff

import (
	"strings"

	"github.com/aymanbagabas/go-udiff/lcs"
)

type lcsDiff = lcs.Diff

// Merge3 merges two descendants of base line by line, the way diff3 does:
// a region changed on one side only takes that side's lines; a region both
// sides changed the same way takes them once; a region both changed
// differently is a conflict, resolved by keeping ours. It returns the
// merged text and the number of conflicting regions.
func Merge3(base, ours, theirs string) (string, int) {
	if ours == theirs {
		return ours, 0
	}
	if base == ours {
		return theirs, 0
	}
	if base == theirs {
		return ours, 0
	}
	b, o, t := splitLines(base), splitLines(ours), splitLines(theirs)
	do := diffLines(b, o)
	dt := diffLines(b, t)
	var out strings.Builder
	conflicts := 0
	pos := 0 // next base line to copy
	// repl returns what a side has for base[start:end]: the replacements
	// of its edits in that region (sub) and its copies of the unchanged
	// base lines between them.
	repl := func(lines []string, all, sub []editRange, start, end int) string {
		var res strings.Builder
		i := start
		for _, e := range sub {
			for ; i < e.start; i++ {
				res.WriteString(lines[mapLine(all, i)])
			}
			for _, l := range lines[e.rstart:e.rend] {
				res.WriteString(l)
			}
			i = max(i, e.end)
		}
		for ; i < end; i++ {
			res.WriteString(lines[mapLine(all, i)])
		}
		return res.String()
	}
	eo, et := ranges(do), ranges(dt)
	io, it := 0, 0
	for io < len(eo) || it < len(et) {
		// Take the next edit, and every edit of either side overlapping
		// the growing region.
		var start, end int
		switch {
		case it >= len(et) || (io < len(eo) && eo[io].start <= et[it].start):
			start, end = eo[io].start, eo[io].end
		default:
			start, end = et[it].start, et[it].end
		}
		jo, jt := io, it
		for changed := true; changed; {
			changed = false
			for jo < len(eo) && overlaps(eo[jo], start, end) {
				start, end = min(start, eo[jo].start), max(end, eo[jo].end)
				jo++
				changed = true
			}
			for jt < len(et) && overlaps(et[jt], start, end) {
				start, end = min(start, et[jt].start), max(end, et[jt].end)
				jt++
				changed = true
			}
		}
		for ; pos < start; pos++ {
			out.WriteString(b[pos])
		}
		ro, rt := repl(o, eo, eo[io:jo], start, end), repl(t, et, et[it:jt], start, end)
		switch {
		case jt == it: // ours only
			out.WriteString(ro)
		case jo == io: // theirs only
			out.WriteString(rt)
		default:
			if ro != rt {
				conflicts++
			}
			out.WriteString(ro)
		}
		pos = end
		io, it = jo, jt
	}
	for ; pos < len(b); pos++ {
		out.WriteString(b[pos])
	}
	return out.String(), conflicts
}

// editRange is one edit: base[start:end] becomes side[rstart:rend].
type editRange struct{ start, end, rstart, rend int }

func ranges(ds []lcsDiff) []editRange {
	out := make([]editRange, len(ds))
	for i, d := range ds {
		out[i] = editRange{d.Start, d.End, d.ReplStart, d.ReplEnd}
	}
	return out
}

// overlaps reports whether edit e touches base region [start, end): it
// intersects it, or an insertion sits inside or at its edges.
func overlaps(e editRange, start, end int) bool {
	if e.start < end && e.end > start {
		return true
	}
	// Insertions (empty base range) at the region's edges, and edits
	// adjacent to an insertion region, conflict as diff3 treats them.
	return e.start == end || e.end == start
}

// mapLine maps an unchanged base line to its index on the side.
func mapLine(d []editRange, i int) int {
	shift := 0
	for _, e := range d {
		if e.end > i {
			break
		}
		shift += (e.rend - e.rstart) - (e.end - e.start)
	}
	return i + shift
}
