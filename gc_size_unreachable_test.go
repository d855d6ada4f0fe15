package ckpt

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
)

// A workspace whose current tree alone takes more than max_size (a large
// monorepo under the default 1 GiB): no gc can bring the store under it,
// since HEAD stays. Automatic gc then removed every checkpoint the count
// and age policies kept, the whole undo history, each time the store grew
// by a tenth of max_size (every few dozen turns at a million files).
// Automatic gc must keep that history (count and age still apply) and say
// why in the save's warning; an explicit `ckpt gc --max-size` still does
// what it is told (TestGCBuckets).
func TestAutoGCKeepsHistoryWhenSizeIsUnreachable(t *testing.T) {
	ctx := context.Background()
	rng := rand.New(rand.NewPCG(3, 4))
	junk := func(n int) string {
		b := make([]byte, n)
		for i := range b {
			b[i] = byte(rng.IntN(256))
		}
		return string(b)
	}
	dir, ws := t.TempDir(), t.TempDir()
	for k, v := range map[string]string{"keep": "100", "max_age": "0", "max_size": "64KiB"} {
		if err := WriteConfig(dir, k, &v); err != nil {
			t.Fatal(err)
		}
	}
	writeFile(t, ws, "big.bin", junk(256<<10)) // HEAD alone is 4x max_size
	r, err := Open(ctx, ws, Options{Store: dir})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	var ids []ID
	warned := ""
	for i := range 8 { // 8 x 256 KiB: past the 1 MiB of growth auto gc waits for
		writeFile(t, ws, "turn.bin", junk(256<<10))
		res, err := r.Save(ctx, SaveOptions{Message: fmt.Sprint("turn ", i)})
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, res.Checkpoint.ID)
		if res.Warning != "" {
			warned = res.Warning
		}
	}
	list, err := r.List(ctx, ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(list) != len(ids) {
		t.Fatalf("automatic gc left %d of %d checkpoints: it removed history to chase a max_size HEAD alone exceeds", len(list), len(ids))
	}
	if !strings.Contains(warned, "max_size") {
		t.Fatalf("no warning says max_size cannot be met (last warning %q)", warned)
	}
	// Once it can be met, it applies again: a max_size with room for
	// HEAD and a few turns removes the oldest.
	v := "1500KiB"
	if err := WriteConfig(dir, "max_size", &v); err != nil {
		t.Fatal(err)
	}
	r2, err := Open(ctx, ws, Options{Store: dir})
	if err != nil {
		t.Fatal(err)
	}
	defer r2.Close()
	for i := range 6 {
		writeFile(t, ws, "turn.bin", junk(256<<10))
		if _, err := r2.Save(ctx, SaveOptions{Message: fmt.Sprint("more ", i)}); err != nil {
			t.Fatal(err)
		}
	}
	list, err = r2.List(ctx, ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(list) >= len(ids)+6 || len(list) < 2 {
		t.Fatalf("with a reachable max_size automatic gc left %d of %d checkpoints", len(list), len(ids)+6)
	}
	if fr, err := r2.Fsck(ctx); err != nil || len(fr.Problems) != 0 {
		t.Fatalf("fsck: %+v %v", fr, err)
	}
}
