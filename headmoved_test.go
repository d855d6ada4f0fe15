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

// HEAD moving between an operation reading it and the operation's
// transaction: a watcher finishing a save for a client that died, while
// the next lock holder saves or restores. Once the transaction has begun
// no other writer can commit, so HEAD read there is what the operation
// must build on, or the moved-to checkpoint drops off the branch.

// headMover is a workspace with a first checkpoint and two Repos on its
// store: r does the operation under test, other moves HEAD.
type headMover struct {
	ctx       context.Context
	ws, store string
	r, other  *Repo
	first     *SaveResult
	moved     *SaveResult // other's checkpoint, once the point was hit
	merr      error
}

func newHeadMover(t *testing.T) *headMover {
	t.Helper()
	h := &headMover{ctx: context.Background(), ws: t.TempDir(), store: t.TempDir()}
	store := h.store
	h.write(t, "a.txt", "a\n")
	var err error
	if h.r, err = Open(h.ctx, h.ws, Options{Store: store}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { h.r.Close() })
	if h.other, err = Open(h.ctx, h.ws, Options{Store: store}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { h.other.Close() })
	if h.first, err = h.r.Save(h.ctx, SaveOptions{Message: "first"}); err != nil {
		t.Fatal(err)
	}
	return h
}

func (h *headMover) write(t *testing.T, name, data string) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(h.ws, name), []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
}

// arm makes the first hit of point commit a checkpoint of other (without
// its lock, as a watcher saving for a dead client would), then run then
// (may be nil). Later hits (other's own save, a client saving itself
// after the watcher refused) pass.
func (h *headMover) arm(t *testing.T, point string, then func() error) {
	var fired atomic.Bool
	disarm := failpoint.Set(point, func(string) error {
		if fired.Swap(true) {
			return nil
		}
		t.Setenv("CKPT_WATCH_SERVE", "0")
		h.moved, h.merr = h.other.saveLocked(h.ctx, SaveOptions{Kind: KindManual, Message: "moved", AllowEmpty: true}, nil)
		os.Unsetenv("CKPT_WATCH_SERVE")
		if h.merr == nil && then != nil {
			h.merr = then()
		}
		return nil
	})
	t.Cleanup(disarm)
}

// checkMoved fails unless HEAD was moved.
func (h *headMover) checkMoved(t *testing.T) {
	t.Helper()
	if h.merr != nil || h.moved == nil || !h.moved.Created {
		t.Fatalf("moving HEAD: %v", h.merr)
	}
}

// A whole-tree save builds on the moved HEAD, so both checkpoints stay on
// the branch, one after the other. A watcher saving for a client finds
// the move inside its transaction and leaves the save to the client.
func TestSaveHeadMovedBeforeTransaction(t *testing.T) {
	for _, served := range []bool{false, true} {
		name := "unserved"
		if served {
			name = "served"
		}
		t.Run(name, func(t *testing.T) {
			h := newHeadMover(t)
			if served {
				startWatcher(t, h.r)
			}
			h.write(t, "b.txt", "b\n")
			// The workspace changes after the move, for the save to see.
			h.arm(t, "save/before-tx", func() error {
				return os.WriteFile(filepath.Join(h.ws, "c.txt"), []byte("c\n"), 0o644)
			})
			mine, err := h.r.Save(h.ctx, SaveOptions{Message: "mine"})
			if err != nil {
				t.Fatal(err)
			}
			h.checkMoved(t)
			if served && mine.Served {
				t.Errorf("the watcher saved although HEAD moved under it")
			}
			log, err := h.r.Log(h.ctx, LogOptions{})
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, cp := range log {
				got = append(got, cp.Message)
			}
			if len(log) != 3 || log[0].ID != mine.Checkpoint.ID || log[1].ID != h.moved.Checkpoint.ID || log[2].ID != h.first.Checkpoint.ID {
				t.Fatalf("log = %q, want mine, moved, first", got)
			}
			if p := mine.Checkpoint.Parents; len(p) != 1 || p[0] != h.moved.Checkpoint.ID {
				t.Fatalf("mine's parents = %v, want the moved HEAD %v", p, h.moved.Checkpoint.ID)
			}
		})
	}
}

// A save of some paths builds on the moved HEAD too.
func TestSavePathsHeadMovedBeforeTransaction(t *testing.T) {
	h := newHeadMover(t)
	h.write(t, "b.txt", "b\n")
	h.arm(t, "save/before-tx", func() error {
		return os.WriteFile(filepath.Join(h.ws, "a.txt"), []byte("a2\n"), 0o644)
	})
	mine, err := h.r.Save(h.ctx, SaveOptions{Message: "mine", Paths: []string{"a.txt"}})
	if err != nil {
		t.Fatal(err)
	}
	h.checkMoved(t)
	if p := mine.Checkpoint.Parents; len(p) != 1 || p[0] != h.moved.Checkpoint.ID {
		t.Fatalf("the partial save's parents = %v, want the moved HEAD %v", p, h.moved.Checkpoint.ID)
	}
}

// The state before a restore is the moved HEAD: undo brings it back, and
// it stays in the history instead of being skipped by a pre-restore
// checkpoint built on the HEAD the restore read first.
func TestRestoreHeadMovedBeforeTransaction(t *testing.T) {
	h := newHeadMover(t)
	h.write(t, "b.txt", "b\n")
	h.arm(t, "restore/before-tx", nil)
	if _, err := h.r.Restore(h.ctx, h.first.Checkpoint.ID.String(), RestoreOptions{}); err != nil {
		t.Fatal(err)
	}
	h.checkMoved(t)
	if _, err := h.r.Undo(h.ctx); err != nil {
		t.Fatal(err)
	}
	log, err := h.r.Log(h.ctx, LogOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	found := false
	for _, cp := range log {
		got = append(got, cp.Message)
		found = found || cp.ID == h.moved.Checkpoint.ID
	}
	if !found {
		t.Fatalf("after undoing the restore, log = %q: the checkpoint HEAD moved to (%q) is not in it", got, h.moved.Checkpoint.Message)
	}
}

// A watcher saving for a client checks again, inside its transaction,
// that the client still holds the store's lock: a client killed since it
// asked, whose lock another process took, must not get a checkpoint from
// the watcher built alongside that process's work. The lock file naming
// another process is what the watcher sees then. It refuses, and the
// client (here still alive) saves itself.
func TestServedSaveLockLostBeforeTransaction(t *testing.T) {
	h := newHeadMover(t)
	startWatcher(t, h.r)
	if res, err := h.r.Save(h.ctx, SaveOptions{AllowEmpty: true}); err != nil || !res.Served {
		t.Fatalf("a save before the test is not served: %+v, %v", res, err)
	}
	h.write(t, "b.txt", "b\n")
	lock := filepath.Join(h.store, "lock")
	var fired atomic.Bool
	t.Cleanup(failpoint.Set("save/before-tx", func(string) error {
		if !fired.Swap(true) {
			// The first hit is the watcher's, serving the save below.
			if err := os.WriteFile(lock, []byte("1 another ckpt\n"), 0o600); err != nil {
				t.Error(err)
			}
		}
		return nil
	}))
	mine, err := h.r.Save(h.ctx, SaveOptions{Message: "mine"})
	if err != nil {
		t.Fatal(err)
	}
	if !fired.Load() {
		t.Fatal("the failpoint was not hit")
	}
	if mine.Served {
		t.Fatal("the watcher saved for a process that no longer holds the store's lock")
	}
	log, err := h.r.Log(h.ctx, LogOptions{})
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, cp := range log {
		if cp.Message == "mine" {
			n++
		}
	}
	if n != 1 || log[0].ID != mine.Checkpoint.ID {
		t.Fatalf("%d checkpoints named mine, HEAD %v; want one, at HEAD", n, log[0].ID)
	}
}
