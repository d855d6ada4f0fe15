package diff

import (
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

func TestMerge3(t *testing.T) {
	tests := []struct {
		name, base, ours, theirs, want string
		conflicts                      int
	}{
		{"identical", "a\n", "a\n", "a\n", "a\n", 0},
		{"ours only", "a\nb\nc\n", "a\nB\nc\n", "a\nb\nc\n", "a\nB\nc\n", 0},
		{"theirs only", "a\nb\nc\n", "a\nb\nc\n", "a\nb\nC\n", "a\nb\nC\n", 0},
		{"both, apart", "1\n2\n3\n4\n5\n6\n7\n", "1\nX\n3\n4\n5\n6\n7\n", "1\n2\n3\n4\n5\n6\nY\n", "1\nX\n3\n4\n5\n6\nY\n", 0},
		{"same change", "a\nb\nc\n", "a\nB\nc\n", "a\nB\nc\n", "a\nB\nc\n", 0},
		{"conflict keeps ours", "a\nb\nc\n", "a\nOURS\nc\n", "a\nTHEIRS\nc\n", "a\nOURS\nc\n", 1},
		{"insert and delete apart", "1\n2\n3\n4\n5\n6\n", "0\n1\n2\n3\n4\n5\n6\n", "1\n2\n3\n4\n5\n", "0\n1\n2\n3\n4\n5\n", 0},
		{"no newline at end", "a\nx\nb", "a\nx\nb\nc", "z\nx\nb", "z\nx\nb\nc", 0},
		{"adjacent edits conflict (as in diff3)", "a\nb", "a\nb\nc", "z\nb", "a\nb\nc", 1},
	}
	for _, tt := range tests {
		got, n := Merge3(tt.base, tt.ours, tt.theirs)
		if got != tt.want || n != tt.conflicts {
			t.Errorf("%s: got %q (%d conflicts), want %q (%d)", tt.name, got, n, tt.want, tt.conflicts)
		}
	}
}

// TestMerge3AgainstGit: on random edits to separate regions, Merge3 agrees
// with git merge-file; on overlapping edits it reports a conflict whenever
// git does, keeping ours.
func TestMerge3AgainstGit(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Fatal("git is needed for this test (scripts/test installs it)")
	}
	dir := t.TempDir()
	r := rand.New(rand.NewPCG(3, 4))
	for i := 0; i < 200; i++ {
		n := 5 + r.IntN(30)
		var base []string
		for k := 0; k < n; k++ {
			base = append(base, fmt.Sprintf("line %d\n", k))
		}
		edit := func(lines []string, lo, hi int, tag string) []string {
			out := append([]string(nil), lines[:lo]...)
			for k := lo; k < hi; k++ {
				switch r.IntN(3) {
				case 0: // change
					out = append(out, fmt.Sprintf("%s %d\n", tag, k))
				case 1: // delete
				case 2: // insert before
					out = append(out, fmt.Sprintf("%s new %d\n", tag, k), lines[k])
				}
			}
			return append(out, lines[hi:]...)
		}
		mid := n / 2
		ours := edit(base, 0, r.IntN(mid-1)+1, "ours")
		theirs := edit(base, mid+1+r.IntN(n-mid-1), n, "theirs")
		if r.IntN(4) == 0 { // overlapping
			theirs = edit(base, 0, n, "theirs")
		}
		b, o, th := strings.Join(base, ""), strings.Join(ours, ""), strings.Join(theirs, "")
		for name, c := range map[string]string{"base": b, "ours": o, "theirs": th} {
			os.WriteFile(filepath.Join(dir, name), []byte(c), 0o644)
		}
		cmd := exec.Command("git", "merge-file", "-p", "--our", filepath.Join(dir, "ours"), filepath.Join(dir, "base"), filepath.Join(dir, "theirs"))
		gitOut, _ := cmd.Output()
		gitConflict := exec.Command("git", "merge-file", "-p", filepath.Join(dir, "ours"), filepath.Join(dir, "base"), filepath.Join(dir, "theirs")).Run() != nil
		got, conflicts := Merge3(b, o, th)
		if conflicts == 0 && gitConflict {
			t.Fatalf("case %d: git sees a conflict, Merge3 none\nbase:\n%s\nours:\n%s\ntheirs:\n%s", i, b, o, th)
		}
		if !gitConflict && conflicts == 0 && got != string(gitOut) {
			t.Fatalf("case %d: got\n%s\ngit merge-file:\n%s", i, got, gitOut)
		}
	}
}
