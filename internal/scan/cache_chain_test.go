//go:build unix

package scan

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"

	"github.com/seed1cedbf7c/ckpt/internal/store"
)

// A chain of caches in memory, each made from the one before by a scan
// with several workers (blocks shared, some from a mapped file the chain
// restarts from), gives what a scan without a cache gives, and each
// writes out and loads back the same.
func TestMemCacheChainMatchesFullScan(t *testing.T) {
	f := newFixture(t)
	rng := rand.New(rand.NewPCG(3, 4))
	path := func() string {
		return fmt.Sprintf("d%d/e%d/f%d", rng.IntN(5), rng.IntN(3), rng.IntN(4))
	}
	for range 60 {
		f.write(path(), "x", 0o644)
	}
	ctx := context.Background()
	var cache *Cache
	for step := range 25 {
		for range rng.IntN(4) {
			p := path()
			if rng.IntN(3) == 0 {
				os.RemoveAll(filepath.Join(f.root, filepath.Dir(p)))
			} else {
				f.write(p, fmt.Sprint(step, rng.IntN(100)), 0o644)
			}
		}
		if step%3 == 0 {
			waitClock(t, f.root)
		}
		cw, err := NewCacheWriter("", FSClock(f.root), 1, "test", "")
		if err != nil {
			t.Fatal(err)
		}
		var res *Result
		err = f.mem.Update(ctx, func(tx store.Tx) error {
			var err error
			res, err = Scan(ctx, Options{Root: f.root, Cache: cache, CacheOut: cw, Sink: tx, LoadTree: tx.ReadTree, Workers: 8})
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		if cache != nil {
			cache.Close()
		}
		if err := cw.Commit(); err != nil {
			t.Fatal(err)
		}
		mc, err := cw.Cache()
		if err != nil {
			t.Fatal(err)
		}
		var full *Result
		err = f.mem.Update(ctx, func(tx store.Tx) error {
			var err error
			full, err = Scan(ctx, Options{Root: f.root, Sink: tx, LoadTree: tx.ReadTree, Workers: 3})
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		if res.Root != full.Root {
			t.Fatalf("step %d: root %s with the cache, %s without", step, res.Root, full.Root)
		}
		p := filepath.Join(t.TempDir(), "c")
		if err := mc.WriteFile(p); err != nil {
			t.Fatal(err)
		}
		fc, err := LoadCache(p)
		if err != nil || fc == nil {
			t.Fatalf("step %d: load: %v", step, err)
		}
		if fc.Dirs() != mc.Dirs() {
			t.Fatalf("step %d: %d dirs loaded, %d in memory", step, fc.Dirs(), mc.Dirs())
		}
		for d, m := range mc.dirs {
			fb, fr, ok := fc.blockBytes(d)
			if !ok || !bytes.Equal(fb, m.raw) || fr.tree != m.tree || fr.flags != m.flags || fr.size != m.size || fr.count != m.count {
				t.Fatalf("step %d: %q differs", step, d)
			}
			if _, _, ok := mc.block(d); !ok {
				t.Fatalf("step %d: %q: block does not decode", step, d)
			}
		}
		if step%4 == 3 {
			cache = fc // the next scan starts from the mapped file
		} else {
			fc.Close()
			cache = mc
		}
	}
}
