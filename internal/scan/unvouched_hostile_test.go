//go:build unix

package scan

import (
	"strings"
	"testing"
)

// An Options.Unvouched entry that is not a clean relative path (a watcher
// answering wrongly, or a hostile one) is never accepted: the scan reads
// everything and says so in Result.Unvouched, whatever the rules say of
// the names along it.
func TestUnvouchedNotCleanReadsEverything(t *testing.T) {
	for _, u := range []string{"", ".", "..", "/src/build", "src//build", "src/build/", "src/./build",
		"src/build/../new", "build/../src/new", "src/build/..", "./src/build", "src/build\x00", strings.Repeat("src/", 2000) + "x"} {
		t.Run(strings.NewReplacer("/", "|", "\x00", "NUL").Replace(u)[:min(len(u), 40)], func(t *testing.T) {
			f := unvouchedFixture(t)
			full := f.scanUnvouched(t, Options{})
			res := f.scanUnvouched(t, Options{Unchanged: unchangedBut("src"), Unvouched: []string{"src/build", u}})
			if res.Unvouched == "" {
				t.Fatalf("%q accepted (Result.Unvouched empty)", u)
			}
			if res.Root != full.Root || res.Files != full.Files {
				t.Fatalf("root %v files %d, want %v %d (a full scan)", res.Root, res.Files, full.Root, full.Files)
			}
		})
	}
}
