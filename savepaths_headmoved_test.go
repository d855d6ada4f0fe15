//go:build linux

package ckpt

import (
	"context"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"

	"github.com/seed1cedbf7c/ckpt/internal/failpoint"
)

// HEAD moves between a save of some paths reading it and the save's
// transaction (a watcher finishing a save for a client that died): the
// partial checkpoint must build on the moved HEAD, as a whole-tree save
// does (TestSaveHeadMovedBeforeTransaction), not on the HEAD it read
// first.
func TestSavePathsHeadMovedBeforeTransaction(t *testing.T) {
	ctx := context.Background()
	ws, store := t.TempDir(), t.TempDir()
	if err := os.WriteFile(filepath.Join(ws, "a.txt"), []byte("a\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	r, err := Open(ctx, ws, Options{Store: store})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	other, err := Open(ctx, ws, Options{Store: store})
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	if _, err := r.Save(ctx, SaveOptions{Message: "first"}); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(ws, "b.txt"), []byte("b\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	var (
		fired atomic.Bool
		moved *SaveResult
		merr  error
	)
	disarm := failpoint.Set("save/before-tx", func(string) error {
		if fired.Swap(true) {
			return nil
		}
		t.Setenv("CKPT_WATCH_SERVE", "0")
		moved, merr = other.saveLocked(ctx, SaveOptions{Kind: KindManual, Message: "moved"}, nil)
		os.Unsetenv("CKPT_WATCH_SERVE")
		if err := os.WriteFile(filepath.Join(ws, "a.txt"), []byte("a2\n"), 0o644); err != nil {
			merr = err
		}
		return nil
	})
	defer disarm()
	mine, err := r.Save(ctx, SaveOptions{Message: "mine", Paths: []string{"a.txt"}})
	if err != nil {
		t.Fatal(err)
	}
	if merr != nil || moved == nil || !moved.Created {
		t.Fatalf("moving HEAD: %v", merr)
	}
	if p := mine.Checkpoint.Parents; len(p) != 1 || p[0] != moved.Checkpoint.ID {
		t.Fatalf("the partial save's parents = %v, want the moved HEAD %v", p, moved.Checkpoint.ID)
	}
}
