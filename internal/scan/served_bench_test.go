//go:build unix

package scan

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/seed1cedbf7c/ckpt/internal/store"
)

// BenchmarkServedScanManyDirs: a watcher-served scan of a tree of 10,000
// directories (one file each) where one leaf directory changed, into an
// in-memory stat cache made from the last one — what grows with the
// number of directories in a served save (taking the unchanged ones from
// the cache), apart from the store.
func BenchmarkServedScanManyDirs(b *testing.B) {
	root := b.TempDir()
	for i := range 10 {
		for j := range 10 {
			for k := range 100 {
				d := filepath.Join(root, fmt.Sprint("p", i), fmt.Sprint("q", j), fmt.Sprint("r", k))
				if err := os.MkdirAll(d, 0o755); err != nil {
					b.Fatal(err)
				}
				if err := os.WriteFile(filepath.Join(d, "f.txt"), []byte(d), 0o644); err != nil {
					b.Fatal(err)
				}
			}
		}
	}
	mem := store.NewMemory("")
	var cache *Cache
	scanOnce := func(unchanged func(string) bool) {
		cw, err := NewCacheWriter("", FSClock(root), 1, "bench", "")
		if err != nil {
			b.Fatal(err)
		}
		err = mem.Update(context.Background(), func(tx store.Tx) error {
			_, err := Scan(context.Background(), Options{Root: root, Cache: cache, CacheOut: cw, Sink: tx, LoadTree: tx.ReadTree, Unchanged: unchanged})
			return err
		})
		if err != nil {
			b.Fatal(err)
		}
		if cache, err = cw.Cache(); err != nil {
			b.Fatal(err)
		}
	}
	scanOnce(nil)
	for FSClock(root) <= cache.Clock {
	}
	scanOnce(nil)
	leaf := "p3/q4/r55"
	unchanged := unchangedBut(leaf)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if err := os.WriteFile(filepath.Join(root, leaf, "f.txt"), []byte(fmt.Sprint(i)), 0o644); err != nil {
			b.Fatal(err)
		}
		scanOnce(unchanged)
	}
}
