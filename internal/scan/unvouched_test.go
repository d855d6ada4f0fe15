//go:build unix

package scan

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/seed1cedbf7c/ckpt/internal/store"
)

// unchangedBut says every directory is unchanged except those of dirty and
// the directories above them (as the watcher's answer does).
func unchangedBut(dirty ...string) func(string) bool {
	touched := map[string]bool{"": true}
	for _, d := range dirty {
		for p := d; p != "" && p != "."; p = parentDir(p) {
			touched[p] = true
		}
	}
	return func(rel string) bool { return !touched[rel] }
}

// Options.Unvouched: a scan taking directories from the cache keeps doing
// so only when each unvouched directory is, or is below, one the rules
// leave out, whether it is there or not; otherwise it reads everything.
func TestUnvouchedLeftOut(t *testing.T) {
	cases := []struct {
		name      string
		unvouched []string
		tracked   []string
		goneTemp  []string
		want      string // Result.Unvouched
	}{
		{name: "ignored", unvouched: []string{"src/build"}},
		{name: "ignored and gone", unvouched: []string{"src/gone.tmp"}},
		{name: "below an ignored directory", unvouched: []string{"src/build/x/y"}},
		{name: "reserved name", unvouched: []string{"src/.git"}},
		{name: "read by a save", unvouched: []string{"src/build", "src/new"}, want: "src/new"},
		{name: "gone, not ignored", unvouched: []string{"src/gone"}, want: "src/gone"},
		{name: "ignored but a path below it tracked", unvouched: []string{"src/build"}, tracked: []string{"src/build/keep.o"}, want: "src/build"},
		{name: "below a directory not read", unvouched: []string{"other/x.tmp"}, want: "other/x.tmp"},
		{name: "not a clean path", unvouched: []string{"../src/build"}, want: "../src/build"},
		{name: "a finished restore's staging directory, gone", unvouched: []string{".ckpt-tmp-0a1b"}, goneTemp: []string{".ckpt-tmp-0a1b"}},
		{name: "its rollback directory, gone", unvouched: []string{".ckpt-tmp-0a1b-back"}, goneTemp: []string{".ckpt-tmp-99", ".ckpt-tmp-0a1b"}},
		{name: "a staging name still there", unvouched: []string{"src/.ckpt-tmp-here"}, goneTemp: []string{".ckpt-tmp-here"}, want: "src/.ckpt-tmp-here"},
		{name: "another restore's staging name", unvouched: []string{".ckpt-tmp-ffff"}, goneTemp: []string{".ckpt-tmp-0a1b"}, want: ".ckpt-tmp-ffff"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f := unvouchedFixture(t)
			full := f.scanUnvouched(t, Options{Tracked: c.tracked})
			res := f.scanUnvouched(t, Options{Unchanged: unchangedBut("src"), Unvouched: c.unvouched, Tracked: c.tracked, GoneTemp: c.goneTemp})
			if res.Unvouched != c.want {
				t.Fatalf("Result.Unvouched %q, want %q", res.Unvouched, c.want)
			}
			if res.Root != full.Root {
				t.Fatal("the tree differs from a scan without the watcher")
			}
			if incremental := res.Files < 0; incremental != (c.want == "") {
				t.Fatalf("took directories from the cache: %v (files %d)", incremental, res.Files)
			}
		})
	}
}

// unvouchedFixture is a tree with ignored directories, scanned twice
// (its cache trusted), then src/a.go changed.
func unvouchedFixture(t *testing.T) *fixture {
	f := newFixture(t)
	f.write(".gitignore", "build/\n*.tmp/\n", 0o644)
	f.write("src/a.go", "a\n", 0o644)
	f.write("src/build/x/y/a.o", "o\n", 0o644)
	f.write("src/build/keep.o", "k\n", 0o644)
	f.write("src/new/n.go", "n\n", 0o644)
	f.write("other/b.go", "b\n", 0o644)
	f.write("lib/c.go", "c\n", 0o644)
	f.write("src/.ckpt-tmp-here/u.txt", "a user's\n", 0o644)
	f.scan()
	waitClock(t, f.root)
	f.scan()
	if err := os.WriteFile(filepath.Join(f.root, "src/a.go"), []byte("a2\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return f
}

// scanUnvouched scans with o's Unchanged, Unvouched, Tracked and GoneTemp
// into the fixture's store (its cache stays).
func (f *fixture) scanUnvouched(t *testing.T, o Options) *Result {
	t.Helper()
	var res *Result
	cw, err := NewCacheWriter("", FSClock(f.root), 1, "test", "")
	if err != nil {
		t.Fatal(err)
	}
	err = f.mem.Update(context.Background(), func(tx store.Tx) error {
		var err error
		o.Root, o.Cache, o.CacheOut, o.Sink, o.LoadTree, o.Workers = f.root, f.cache, cw, tx, tx.ReadTree, 2
		res, err = Scan(context.Background(), o)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := cw.Cache(); err != nil {
		t.Fatal(err)
	}
	return res
}
