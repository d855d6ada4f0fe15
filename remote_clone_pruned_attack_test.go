package ckpt

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/seed1cedbf7c/ckpt/internal/testutil"
)

// A checkpoint whose parent gc removed is pushed and cloned: the clone is
// a store as good as the original, and fsck passes on both. It fails: the
// original store records the parent as pruned, the clone does not, and
// ckpt fsck of a fresh clone exits 3 ("checkpoint ...: missing parent
// ..."). ckpt at 3920a3d (before S2) does the same.
func TestCloneOfCheckpointWithPrunedParentFscks(t *testing.T) {
	ctx := context.Background()
	ws := t.TempDir()
	r := openTestRepo(t, ws)
	for _, v := range []string{"one", "two", "three"} {
		testutil.WriteFiles(t, ws, map[string]string{"a.txt": v + "\n"})
		if _, err := r.Save(ctx, SaveOptions{Message: v}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := r.GC(ctx, GCOptions{Retention: &Retention{Keep: 1}}); err != nil {
		t.Fatal(err)
	}
	if _, err := r.Fsck(ctx); err != nil {
		t.Fatalf("fsck of the original after gc: %v", err)
	}
	url := fileRemote(t)
	if _, err := r.AddRemote(ctx, RemoteConfig{Name: "origin", URL: url}); err != nil {
		t.Fatal(err)
	}
	if _, err := r.Push(ctx, "", PushOptions{}); err != nil {
		t.Fatal(err)
	}
	c, _, err := Clone(ctx, url, filepath.Join(t.TempDir(), "clone"), CloneOptions{Open: Options{Store: t.TempDir()}})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, err := c.Fsck(ctx); err != nil {
		t.Errorf("fsck of the clone: %v", err)
	}
}
