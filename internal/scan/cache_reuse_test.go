//go:build unix

package scan

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/seed1cedbf7c/ckpt/internal/store"
)

// A chain of in-memory caches, each made by a scan that takes the
// directories a watcher would call unchanged from the one before (blocks
// shared), holds exactly the blocks a scan reading everything with the
// same cache makes, and gives the same tree.
func TestReusedBlocksMatchFullRead(t *testing.T) {
	f := newFixture(t)
	rng := rand.New(rand.NewPCG(5, 6))
	path := func() string {
		return fmt.Sprintf("d%d/e%d/f%d/g%d", rng.IntN(4), rng.IntN(3), rng.IntN(3), rng.IntN(3))
	}
	for range 120 {
		f.write(path(), "x", 0o644)
	}
	ctx := context.Background()
	scanWith := func(cache *Cache, unchanged func(string) bool, workers int) (*Result, *Cache) {
		t.Helper()
		cw, err := NewCacheWriter("", FSClock(f.root), 1, "test", "")
		if err != nil {
			t.Fatal(err)
		}
		var res *Result
		err = f.mem.Update(ctx, func(tx store.Tx) error {
			var err error
			res, err = Scan(ctx, Options{Root: f.root, Cache: cache, CacheOut: cw, Sink: tx, LoadTree: tx.ReadTree, Unchanged: unchanged, Workers: workers})
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		c, err := cw.Cache()
		if err != nil {
			t.Fatal(err)
		}
		return res, c
	}
	_, cache := scanWith(nil, nil, 4)
	waitClock(t, f.root)
	_, cache = scanWith(cache, nil, 4)
	reusedSome := false
	for step := range 30 {
		var dirty []string
		for range rng.IntN(4) {
			p := path()
			if rng.IntN(4) == 0 {
				os.RemoveAll(filepath.Join(f.root, filepath.Dir(p)))
				dirty = append(dirty, filepath.Dir(filepath.Dir(p)))
			} else {
				f.write(p, fmt.Sprint(step, rng.IntN(100)), 0o644)
				for d := filepath.Dir(p); d != "."; d = filepath.Dir(d) {
					dirty = append(dirty, d) // made by MkdirAll, maybe
				}
			}
		}
		if step%3 == 0 {
			waitClock(t, f.root)
		}
		full, fc := scanWith(cache, nil, 1)
		res, rc := scanWith(cache, unchangedBut(dirty...), 1+step%8)
		if res.Root != full.Root {
			t.Fatalf("step %d (dirty %q): the tree differs from a full read", step, dirty)
		}
		if res.Files < 0 {
			reusedSome = true
		}
		want, got := fc.DirList(), rc.DirList()
		slices.Sort(want)
		slices.Sort(got)
		if !slices.Equal(want, got) {
			t.Fatalf("step %d: directories %q, want %q", step, got, want)
		}
		for _, d := range want {
			wb, wr, _ := fc.blockBytes(d)
			gb, gr, _ := rc.blockBytes(d)
			if !bytes.Equal(wb, gb) || wr.tree != gr.tree || wr.size != gr.size || wr.flags != gr.flags || wr.count != gr.count || wr.dev != gr.dev {
				t.Fatalf("step %d: block of %q differs from a full read's", step, d)
			}
		}
		cache = rc
	}
	if !reusedSome {
		t.Fatal("no scan took a directory from the cache")
	}
}
