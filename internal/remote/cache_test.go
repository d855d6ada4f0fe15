package remote

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/seed1cedbf7c/ckpt/internal/object"
)

// TestIndexCache: the one-file index cache gives what the remote's
// indexes say; a damaged cache is ignored, a stale one corrected.
func TestIndexCache(t *testing.T) {
	ctx := context.Background()
	dir, cache := t.TempDir(), t.TempDir()
	be, err := NewFile(dir)
	if err != nil {
		t.Fatal(err)
	}
	open := func() *Remote {
		t.Helper()
		r, err := Open(ctx, be, Options{Create: true, CacheDir: cache})
		if err != nil {
			t.Fatal(err)
		}
		if err := r.LoadIndex(ctx); err != nil {
			t.Fatal(err)
		}
		return r
	}
	r := open()
	var keys []ObjKey
	old := PackSize
	PackSize = 64
	defer func() { PackSize = old }()
	p := r.NewPacker(ctx)
	for i := 0; i < 20; i++ {
		data := []byte{byte(i), 'x', 'y'}
		k := ObjKey{Kind: KindBlob, ID: object.Sum(data)}
		keys = append(keys, k)
		if err := p.Add(k, data, nil); err != nil {
			t.Fatal(err)
		}
	}
	if err := p.Wait(); err != nil {
		t.Fatal(err)
	}
	r.SaveCache()
	packs := r.Packs()
	if len(packs) < 2 {
		t.Fatalf("%d packs, want several", len(packs))
	}
	check := func(r *Remote, want int) {
		t.Helper()
		n := 0
		for _, k := range keys {
			if r.Has(k) {
				n++
			}
		}
		if n != want {
			t.Fatalf("%d objects listed, want %d", n, want)
		}
		got := 0
		err := r.Fetch(ctx, keys[:0], nil)
		if err != nil {
			t.Fatal(err)
		}
		for _, k := range keys {
			if r.Has(k) {
				if err := r.Fetch(ctx, []ObjKey{k}, func(ObjKey, []byte, json.RawMessage) error { got++; return nil }); err != nil {
					t.Fatal(err)
				}
			}
		}
		if got != want {
			t.Fatalf("fetched %d, want %d", got, want)
		}
	}
	check(open(), 20)
	// A damaged cache is ignored.
	if err := os.WriteFile(filepath.Join(cache, "index.bin"), []byte("CKPTIXC1\n\xff\xff\xff"), 0o600); err != nil {
		t.Fatal(err)
	}
	check(open(), 20)
	// A pack gone from the remote (gc) leaves the cache too.
	r = open()
	if err := r.DropPack(ctx, packKey(packs[0])); err != nil {
		t.Fatal(err)
	}
	r.SaveCache()
	lost := 0
	for _, k := range keys {
		if !r.Has(k) {
			lost++
		}
	}
	check(open(), 20-lost)
}
