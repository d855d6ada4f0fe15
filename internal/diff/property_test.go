package diff

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
)

// TestRoundTripRandomTrees renders the diff between random trees with
// binary and empty files, symlinks, file/symlink swaps, odd permission bits
// and names with control bytes and invalid UTF-8, parses it, and applies it
// forward and in reverse.
func TestRoundTripRandomTrees(t *testing.T) {
	r := rand.New(rand.NewPCG(42, 1))
	o := genOpts{binary: true, symlinks: true, oddModes: true, oddNames: true}
	trials := 1000
	if testing.Short() {
		trials = 100
	}
	for trial := range trials {
		a := randTree(r, o)
		b := mutate(r, a, o)
		if trial%7 == 0 {
			// Swap some files and symlinks.
			for p, s := range b {
				if s.Mode == modeSymlink {
					b[p] = &Side{Mode: 0o100644, Content: s.Content}
				} else if r.IntN(2) == 0 {
					b[p] = &Side{Mode: modeSymlink, Content: []byte("to-" + p[:min(len(p), 3)])}
				}
			}
		}
		d := render(t, a, b)
		p, err := Parse(d)
		if err != nil {
			t.Fatalf("trial %d: Parse: %v\n%s", trial, err, d)
		}
		for _, dir := range []struct {
			reverse  bool
			from, to tree
		}{{false, a, b}, {true, b, a}} {
			m := &memTree{files: dir.from.clone()}
			changed, err := ApplyTree(m, p, dir.reverse)
			if err != nil {
				t.Fatalf("trial %d: ApplyTree(reverse=%v): %v\n%s", trial, dir.reverse, err, d)
			}
			if got := diffTrees(m.files, dir.to); got != "" {
				t.Fatalf("trial %d: ApplyTree(reverse=%v) gave a different tree:\n%s\ndiff:\n%s", trial, dir.reverse, got, d)
			}
			var want []string
			for _, c := range changes(dir.from, dir.to) {
				if !sameSide(c.Old, c.New) {
					want = append(want, c.Path)
				}
			}
			if !equalStrings(changed, want) {
				t.Fatalf("trial %d: ApplyTree(reverse=%v): got changed %q, want %q", trial, dir.reverse, changed, want)
			}
		}
		// Rendering is deterministic.
		if d2 := render(t, a, b); !bytes.Equal(d, d2) {
			t.Fatalf("trial %d: rendering twice gave different diffs", trial)
		}
	}
}

func equalStrings(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// TestDiffLinesRandom checks that the edit scripts of diffLines turn a into
// b on random inputs of all sizes, including ones beyond the exact search.
func TestDiffLinesRandom(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for trial := range 300 {
		n := r.IntN(50)
		if trial%10 == 0 {
			n = 2000
		}
		var a []string
		for range n {
			a = append(a, vocabulary[r.IntN(len(vocabulary))]+"\n")
		}
		if trial%3 == 0 {
			for i := range a {
				a[i] = string(rune('a'+i%26)) + a[i] + string(rune('0'+i%10))
			}
		}
		b := splitLines(string(editText(r, []byte(joinLines(a)))))
		for k := 0; k < n/20; k++ {
			b = splitLines(string(editText(r, []byte(joinLines(b)))))
		}
		ds := diffLines(a, b)
		var got []string
		pos := 0
		for i, d := range ds {
			if d.Start < pos || d.End < d.Start || d.ReplEnd < d.ReplStart || (i > 0 && d.Start == ds[i-1].End && d.ReplStart == ds[i-1].ReplEnd) {
				t.Fatalf("trial %d: bad edit %+v after position %d", trial, d, pos)
			}
			got = append(got, a[pos:d.Start]...)
			got = append(got, b[d.ReplStart:d.ReplEnd]...)
			pos = d.End
		}
		got = append(got, a[pos:]...)
		if joinLines(got) != joinLines(b) {
			t.Fatalf("trial %d: edits do not turn a into b", trial)
		}
	}
}

func joinLines(ls []string) string {
	var b bytes.Buffer
	for _, l := range ls {
		b.WriteString(l)
	}
	return b.String()
}

// TestDiffLinesLarge checks that large inputs with many edits, beyond the
// exact search of lcs.DiffLines, still get edit scripts close to the edits
// made, with and without unique lines to anchor on.
func TestDiffLinesLarge(t *testing.T) {
	const n = 50000
	r := rand.New(rand.NewPCG(5, 6))
	for _, period := range []int{n, 5000, 50} { // lines repeat every period lines
		a := make([]string, n)
		for i := range a {
			a[i] = fmt.Sprintf("line %d\n", i%period)
		}
		b := slices.Clone(a)
		const edits = 5000
		for k := range edits {
			b[r.IntN(len(b))] = fmt.Sprintf("edit %d\n", k)
		}
		ds := diffLines(a, b)
		// Replacing a line costs 2 (a deletion and an insertion).
		if got, limit := cost(ds), 2*edits*13/10; got > limit {
			t.Errorf("period %d: got an edit script of cost %d, want at most %d", period, got, limit)
		}
	}
}
