//go:build linux

package ckpt

import (
	"context"
	"testing"
	"time"

	"github.com/seed1cedbf7c/ckpt/internal/watch"
)

// shortTrust makes the watcher's idle checks come within seconds.
func shortTrust(t *testing.T) {
	t.Helper()
	m := watch.MaxTrust
	t.Cleanup(func() { watch.MaxTrust = m })
	watch.MaxTrust = 4 * time.Second
}

// A watcher whose store is open but that holds no stat cache in memory
// (every save it was asked for was refused: here the client scans with
// another --max-file-size, so it saves itself) still runs its idle
// checks; one must not take the missing cache for one and crash the
// watcher's process.
func TestWatchIdleCheckWithoutCache(t *testing.T) {
	shortTrust(t)
	ctx := context.Background()
	ws, store := t.TempDir(), t.TempDir()
	writeFile(t, ws, "sub/a.txt", "a\n")
	writeFile(t, ws, "top.txt", "t\n")
	r, err := Open(ctx, ws, Options{Store: store, MaxFileSize: 1024})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	startWatcher(t, r)
	for i := 0; i < 2; i++ {
		res, err := r.Save(ctx, SaveOptions{AllowEmpty: true})
		if err != nil {
			t.Fatal(err)
		}
		if res.Served {
			t.Fatal("a client with another --max-file-size was served")
		}
	}
	st0, err := r.WatchStatus(ctx)
	if err != nil {
		t.Fatal(err)
	}
	// Past the point an idle check is due (half MaxTrust after the last
	// full read, the flusher ticking every second), and then some.
	time.Sleep(time.Until(st0.LastFull.Add(watch.MaxTrust/2 + 3*time.Second)))
	if _, err := r.WatchStatus(ctx); err != nil {
		t.Fatalf("the watcher is gone: %v", err)
	}
	writeFile(t, ws, "top.txt", "t2\n")
	saveMatchesFull(t, r, "a save after the idle check was due")
}
