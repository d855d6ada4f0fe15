//go:build unix

package scan

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/seed1cedbf7c/ckpt/internal/object"
	"github.com/seed1cedbf7c/ckpt/internal/store"
)

// scanChanged scans with the watcher's word: directories other than dirty
// ones and their ancestors unchanged, and in the dirty ones only names
// changed (a directory missing from names: any entry). Its cache is the
// next scan's.
func (f *fixture) scanChanged(t *testing.T, o Options, dirty []string, names map[string][]string) *Result {
	t.Helper()
	touched := map[string]bool{"": true}
	for _, d := range dirty {
		for p := d; p != "" && p != "."; p = parentDir(p) {
			touched[p] = true
		}
	}
	isDirty := map[string]bool{}
	for _, d := range dirty {
		isDirty[d] = true
	}
	o.Unchanged = func(rel string) bool { return !touched[rel] }
	o.Changed = func(rel string) ([]string, bool) {
		switch {
		case isDirty[rel]:
			n, ok := names[rel]
			return n, ok
		case touched[rel]:
			return nil, true
		}
		return nil, false
	}
	return f.scanTx(func(tx store.Tx) Options {
		o.Sink, o.LoadTree, o.Workers = tx, tx.ReadTree, 2
		return o
	})
}

// TestChangedNamesTakeStatFromCache: in a directory read with the
// watcher's list of changed entries, the others are taken from the cache
// without a stat — so a change the list leaves out is not seen, which is
// how this test tells — unless the disk's type differs from the cache's,
// the file is over the size limit, or the directory holds a hard-linked
// file.
func TestChangedNamesTakeStatFromCache(t *testing.T) {
	f := newFixture(t)
	f.write("d/a", "aaaa", 0o644)
	f.write("d/b", "bbbb", 0o644)
	f.write("d/c", "cccc", 0o644)
	f.write("d/s/x", "x", 0o644)
	f.write("top", "t", 0o644)
	if err := os.Symlink("a", filepath.Join(f.root, "d/l")); err != nil {
		t.Fatal(err)
	}
	settle := func() {
		t.Helper()
		waitClock(t, f.root)
		f.scan()
		waitClock(t, f.root) // no entry racily clean
	}
	settle()
	idOf := func(res *Result, p string) object.ID {
		t.Helper()
		return f.files(res.Root)[p].ID
	}
	sum := func(s string) object.ID { return object.Sum([]byte(s)) }

	// a changes unseen; b is named.
	f.write("d/a", "AAAA", 0o644)
	f.write("d/b", "BBBB", 0o644)
	res := f.scanChanged(t, Options{}, []string{"d"}, map[string][]string{"d": {"b"}})
	if idOf(res, "d/a") != sum("aaaa") || idOf(res, "d/b") != sum("BBBB") {
		t.Fatalf("a %v (want the cached aaaa), b %v (want BBBB)", idOf(res, "d/a"), idOf(res, "d/b"))
	}
	// a, c, l in d and top in the root: from the cache.
	if res.FromCache != 4 {
		t.Fatalf("%d entries from the cache, want 4", res.FromCache)
	}
	// Named, a is read.
	res = f.scanChanged(t, Options{}, []string{"d"}, map[string][]string{"d": {"a"}})
	if idOf(res, "d/a") != sum("AAAA") {
		t.Fatal("a named and not read")
	}
	// Any entry: everything in d is read.
	f.write("d/c", "CCCC", 0o644)
	res = f.scanChanged(t, Options{}, []string{"d"}, nil)
	if idOf(res, "d/c") != sum("CCCC") || res.FromCache != 1 {
		t.Fatalf("d read whole: c %v, %d from the cache (want top only)", idOf(res, "d/c"), res.FromCache)
	}
	settle()

	// Replaced by a symlink unseen: readdir's type is not the cache's.
	os.Remove(filepath.Join(f.root, "d/c"))
	os.Symlink("b", filepath.Join(f.root, "d/c"))
	res = f.scanChanged(t, Options{}, []string{"d"}, map[string][]string{"d": {"zz"}})
	if e := f.files(res.Root)["d/c"]; !object.IsSymlink(e.Mode) || e.ID != sum("b") {
		t.Fatalf("d/c replaced by a symlink: %+v", e)
	}
	settle()

	// Over a lower size limit: stat'ed and skipped, as by a full read.
	res = f.scanChanged(t, Options{MaxFileSize: 3}, []string{"d"}, map[string][]string{"d": {"zz"}})
	if _, ok := f.files(res.Root)["d/a"]; ok || len(res.Skipped) == 0 {
		t.Fatalf("d/a over the limit: in the tree, skipped %v", res.Skipped)
	}
	settle()

	// A directory with a hard-linked file is read whole whatever the list.
	outside := filepath.Join(t.TempDir(), "b")
	if err := os.Link(filepath.Join(f.root, "d/b"), outside); err != nil {
		t.Fatal(err)
	}
	settle() // the full read sees the link and flags d
	if err := os.WriteFile(outside, []byte("through the link"), 0o644); err != nil {
		t.Fatal(err)
	}
	res = f.scanChanged(t, Options{}, []string{"d"}, map[string][]string{"d": {"zz"}})
	if idOf(res, "d/b") != sum("through the link") {
		t.Fatal("a write through a hard link in a flagged directory was not seen")
	}
}

// TestChangedNamesOutliveTheCache: an entry taken from a cache file (mapped
// into memory) has a name of its own, so the trees a scan hands out stay
// valid once the cache is closed and unmapped.
func TestChangedNamesOutliveTheCache(t *testing.T) {
	f := newFixture(t)
	for _, n := range []string{"a", "b", "c"} {
		f.write("d/"+n, n, 0o644)
	}
	path := filepath.Join(t.TempDir(), "statcache")
	writeCache := func() {
		t.Helper()
		cw, err := NewCacheWriter(path, FSClock(f.root), 1, "test", "")
		if err != nil {
			t.Fatal(err)
		}
		err = f.mem.Update(context.Background(), func(tx store.Tx) error {
			_, err := Scan(context.Background(), Options{Root: f.root, CacheOut: cw, Sink: tx, LoadTree: tx.ReadTree})
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		if err := cw.Commit(); err != nil {
			t.Fatal(err)
		}
	}
	waitClock(t, f.root)
	writeCache()
	waitClock(t, f.root)
	cache, err := LoadCache(path)
	if err != nil || cache == nil {
		t.Fatal(cache, err)
	}
	f.write("d/b", "B", 0o644)
	var trees []*object.Tree
	err = f.mem.Update(context.Background(), func(tx store.Tx) error {
		o := Options{Root: f.root, Cache: cache, Sink: tx, LoadTree: tx.ReadTree,
			Unchanged: func(rel string) bool { return rel != "" && rel != "d" },
			Changed: func(rel string) ([]string, bool) {
				if rel == "d" {
					return []string{"b"}, true
				}
				return nil, true
			},
			OnTree: func(_ object.ID, t *object.Tree) { trees = append(trees, t) }}
		res, err := Scan(context.Background(), o)
		if err == nil && res.FromCache != 2 {
			t.Errorf("%d entries from the cache, want 2", res.FromCache)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	cache.Close()
	var names []string
	for _, tr := range trees {
		for _, e := range tr.Entries {
			names = append(names, strings.Clone(e.Name))
		}
	}
	slices.Sort(names)
	if !slices.Equal(names, []string{"a", "b", "c", "d"}) {
		t.Fatalf("names after the cache was closed: %q", names)
	}
}
