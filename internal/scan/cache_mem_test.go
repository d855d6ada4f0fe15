//go:build unix

package scan

import (
	"bytes"
	"path/filepath"
	"strconv"
	"testing"
)

// A cache kept in memory shares the blocks of the directories a save did
// not change with the cache before it, and holds its own copy of a
// changed one: a save costs its changed directories, not the cache.
func TestMemCacheSharesUnchangedBlocks(t *testing.T) {
	f := newFixture(t)
	for i := range 40 {
		f.write(filepath.Join("d"+strconv.Itoa(i%8), "f"+strconv.Itoa(i)), "x", 0o644)
	}
	f.scan()
	waitClock(t, f.root)
	f.scan()
	old := f.cache
	f.write("d3/f3", "changed", 0o644)
	f.scan()
	for dir, ref := range f.cache.dirs {
		prev, ok := old.dirs[dir]
		if !ok {
			t.Fatalf("%q: a new block", dir)
		}
		same := &ref.raw[0] == &prev.raw[0]
		if changed := dir == "" || dir == "d3"; same == changed {
			t.Errorf("%q: block shared %v, changed %v", dir, same, changed)
		}
	}
}

// A cache in memory made from a mapped cache file copies the blocks it
// takes: the file is unmapped when its save ends.
func TestMemCacheFromMappedFile(t *testing.T) {
	f := newFixture(t)
	for i := range 20 {
		f.write(filepath.Join("d"+strconv.Itoa(i%4), "f"+strconv.Itoa(i)), "x", 0o644)
	}
	f.scan()
	waitClock(t, f.root)
	f.scan()
	p := filepath.Join(t.TempDir(), "statcache")
	if err := f.cache.WriteFile(p); err != nil {
		t.Fatal(err)
	}
	want := f.cache
	mapped, err := LoadCache(p)
	if err != nil || mapped == nil {
		t.Fatalf("load: %v", err)
	}
	f.cache = mapped
	f.write("d1/f1", "changed", 0o644)
	f.scan()
	mapped.Close()
	for dir := range want.dirs {
		got, _, ok := f.cache.blockBytes(dir)
		if !ok {
			t.Fatalf("%q: no block", dir)
		}
		if dir != "" && dir != "d1" && !bytes.Equal(got, want.dirs[dir].raw) {
			t.Errorf("%q: block differs after the file was unmapped", dir)
		}
	}
	if _, _, ok := f.cache.block("d2"); !ok {
		t.Error("d2: block does not read back")
	}
}
