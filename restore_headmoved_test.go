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

// HEAD moves between a restore reading it and the restore's first
// transaction (a watcher finishing a save for a client that died, while
// the next lock holder restores): the state before the restore is that
// moved HEAD, so undo must bring it back and it must stay in the
// history, not be skipped by a pre-restore checkpoint built on the HEAD
// the restore read first.
func TestRestoreHeadMovedBeforeTransaction(t *testing.T) {
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
	first, err := r.Save(ctx, SaveOptions{Message: "first"})
	if err != nil {
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
	disarm := failpoint.Set("restore/before-tx", func(string) error {
		if fired.Swap(true) {
			return nil
		}
		t.Setenv("CKPT_WATCH_SERVE", "0")
		moved, merr = other.saveLocked(ctx, SaveOptions{Kind: KindManual, Message: "moved"}, nil)
		os.Unsetenv("CKPT_WATCH_SERVE")
		return nil
	})
	defer disarm()
	if _, err := r.Restore(ctx, first.Checkpoint.ID.String(), RestoreOptions{}); err != nil {
		t.Fatal(err)
	}
	if merr != nil || moved == nil || !moved.Created {
		t.Fatalf("moving HEAD: %v", merr)
	}
	if _, err := r.Undo(ctx); err != nil {
		t.Fatal(err)
	}
	log, err := r.Log(ctx, LogOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	found := false
	for _, cp := range log {
		got = append(got, cp.Message)
		found = found || cp.ID == moved.Checkpoint.ID
	}
	if !found {
		t.Fatalf("after undoing the restore, log = %q: the checkpoint HEAD moved to (%q) is not in it", got, moved.Checkpoint.Message)
	}
}
