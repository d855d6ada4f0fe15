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

// HEAD moves between a save reading it and the save's transaction (a
// watcher finishing a save for a client that died, while the next lock
// holder saves): the save must build on the moved HEAD, so both
// checkpoints stay on the branch, one after the other. A watcher saving
// for a client finds the move inside its transaction and leaves the save
// to the client.
func TestSaveHeadMovedBeforeTransaction(t *testing.T) {
	for _, served := range []bool{false, true} {
		name := "unserved"
		if served {
			name = "served"
		}
		t.Run(name, func(t *testing.T) {
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
			if served {
				startWatcher(t, r)
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
					return nil // other's own save, or the client's after a refusal
				}
				t.Setenv("CKPT_WATCH_SERVE", "0")
				moved, merr = other.saveLocked(ctx, SaveOptions{Kind: KindManual, Message: "moved", AllowEmpty: true}, nil)
				os.Unsetenv("CKPT_WATCH_SERVE")
				// and the workspace changes after it, for this save to see
				if err := os.WriteFile(filepath.Join(ws, "c.txt"), []byte("c\n"), 0o644); err != nil {
					merr = err
				}
				return nil
			})
			defer disarm()
			mine, err := r.Save(ctx, SaveOptions{Message: "mine"})
			if err != nil {
				t.Fatal(err)
			}
			if merr != nil || moved == nil {
				t.Fatalf("moving HEAD: %v", merr)
			}
			if served && mine.Served {
				t.Errorf("the watcher saved although HEAD moved under it")
			}
			log, err := r.Log(ctx, LogOptions{})
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, cp := range log {
				got = append(got, cp.Message)
			}
			if len(log) != 3 || log[0].ID != mine.Checkpoint.ID || log[1].ID != moved.Checkpoint.ID || log[2].ID != first.Checkpoint.ID {
				t.Fatalf("log = %q, want mine, moved, first", got)
			}
			if p := mine.Checkpoint.Parents; len(p) != 1 || p[0] != moved.Checkpoint.ID {
				t.Fatalf("mine's parents = %v, want the moved HEAD %v", p, moved.Checkpoint.ID)
			}
		})
	}
}
