//go:build unix

package scan

import (
	"context"
	"encoding/binary"
	"os"
	"path/filepath"
	"testing"

	"github.com/seed1cedbf7c/ckpt/internal/object"
	"github.com/seed1cedbf7c/ckpt/internal/store"
)

// indexEntries counts the entries of a cache file's index.
func indexEntries(t *testing.T, data []byte) int {
	t.Helper()
	ft := data[len(data)-footerLen:]
	ioff := int(binary.BigEndian.Uint64(ft))
	ilen := int(binary.BigEndian.Uint32(ft[8:]))
	idx := data[ioff : ioff+ilen]
	n := 0
	for p := 0; p < len(idx); n++ {
		p += 4 + int(binary.BigEndian.Uint32(idx[p:])) + indexEntryLen - 4
	}
	return n
}

// A stale cache makes the scan start over (CacheWriter.reset): a cache
// written to a file then holds the blocks of the second pass only, one
// index entry for each directory, as a cache in memory does.
func TestStaleCacheRescanFileWriter(t *testing.T) {
	f := newFixture(t)
	for _, d := range []string{"a", "a/b", "c", "d", "e"} {
		f.write(d+"/x.txt", d+"\n", 0o644)
	}
	f.write("top.txt", "t\n", 0o644)
	stale := 0
	c, other := rescanIntoFile(t, f, func() { stale++ })
	if stale != 1 {
		t.Fatalf("OnStaleCache called %d times, want 1", stale)
	}
	if n := indexEntries(t, c.data); n != c.Dirs() {
		t.Errorf("index has %d entries for %d directories", n, c.Dirs())
	}
	for _, id := range c.Trees() {
		if ok, _ := other.HasTree(context.Background(), id); !ok && id != object.EmptyTree {
			t.Errorf("the new cache names tree %s, not in the store", id)
		}
	}
	for d := range c.dirs {
		if _, _, ok := c.block(d); !ok {
			t.Errorf("%q: block does not read back", d)
		}
	}
}

// Directories removed while the scan starts over leave a second pass
// shorter than the first: the cache file still loads, without them.
func TestStaleCacheRescanFileWriterShorter(t *testing.T) {
	f := newFixture(t)
	for _, d := range []string{"a", "b", "c", "d", "e", "f", "g", "h"} {
		for _, n := range []string{"one.txt", "two.txt", "three.txt"} {
			f.write(d+"/"+n, d+n, 0o644)
		}
	}
	f.write("top.txt", "t\n", 0o644)
	c, _ := rescanIntoFile(t, f, func() {
		for _, d := range []string{"b", "c", "d", "e", "f", "g", "h"} {
			if err := os.RemoveAll(filepath.Join(f.root, d)); err != nil {
				t.Fatal(err)
			}
		}
	})
	if _, ok := c.dirs["c"]; ok || c.Dirs() != 2 {
		t.Errorf("%d directories, want 2 (the root and a)", c.Dirs())
	}
}

// rescanIntoFile makes f's cache trusted, changes a file, and scans into
// a new store and a cache file with a store that lacks the cache's trees,
// so the scan finds the cache stale (onStale) and starts over; it returns
// the cache file loaded back, and the store.
func rescanIntoFile(t *testing.T, f *fixture, onStale func()) (*Cache, store.Store) {
	t.Helper()
	f.scan()
	waitClock(t, f.root)
	f.scan()
	f.write("top.txt", "t2\n", 0o644)
	other := store.NewMemory("")
	p := filepath.Join(t.TempDir(), "statcache")
	cw, err := NewCacheWriter(p, FSClock(f.root), 1, "test", "")
	if err != nil {
		t.Fatal(err)
	}
	err = other.Update(context.Background(), func(tx store.Tx) error {
		_, err := Scan(context.Background(), Options{Root: f.root, Cache: f.cache, CacheOut: cw, Sink: tx, LoadTree: tx.ReadTree,
			OnStaleCache: onStale, Workers: 1})
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := cw.Commit(); err != nil {
		t.Fatal(err)
	}
	c, err := LoadCache(p)
	if err != nil || c == nil {
		t.Fatalf("load the cache written after a rescan: %v", err)
	}
	t.Cleanup(c.Close)
	return c, other
}
