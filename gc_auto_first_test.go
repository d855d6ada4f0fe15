package ckpt

import (
	"context"
	"crypto/rand"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"

	"github.com/seed1cedbf7c/ckpt/internal/failpoint"
)

// A workspace's first save over the store's size limit plans no gc: one
// checkpoint is all there is and HEAD, nothing a gc could remove, and
// planning one reads an index of every object (hundreds of MB at a
// million files, more than the save itself). Once there is history, the
// automatic gc runs as before.
func TestAutoGCSkipsALoneCheckpoint(t *testing.T) {
	ctx := context.Background()
	dir, ws := t.TempDir(), t.TempDir()
	for k, v := range map[string]string{"keep": "0", "max_age": "0", "max_size": "1MB"} {
		if err := WriteConfig(dir, k, &v); err != nil {
			t.Fatal(err)
		}
	}
	noise := func(name string, n int) {
		b := make([]byte, n)
		rand.Read(b)
		if err := os.WriteFile(filepath.Join(ws, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	noise("big.bin", 3<<20)
	var plans atomic.Int32
	defer failpoint.Set("gc/plan", func(string) error { plans.Add(1); return nil })()
	r, err := Open(ctx, ws, Options{Store: dir})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	mustSave(t, r, "first")
	if n := plans.Load(); n != 0 {
		t.Fatalf("the first save over the size limit planned %d gc", n)
	}
	noise("big2.bin", 3<<20)
	mustSave(t, r, "second")
	if n := plans.Load(); n != 1 {
		t.Fatalf("the second save, 3 MB over the limit, planned %d gc, want 1", n)
	}
}
