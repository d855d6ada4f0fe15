//go:build linux

package ckpt

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/seed1cedbf7c/ckpt/internal/failpoint"
	"github.com/seed1cedbf7c/ckpt/internal/watch"
)

// A watcher whose store is open but that holds no stat cache in memory
// (every save it was asked for was refused: here the client scans with
// another --max-file-size, so it saves itself) still runs its idle
// checks; one must not take the missing cache for one and crash the
// watcher's process.
func TestWatchIdleCheckWithoutCache(t *testing.T) {
	shortTrust(t, 4*time.Second) // idle checks within seconds
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

// duringCheck arms scan/read-dir so that when the next idle check is
// about to read its n-th directory, act runs there (the check waiting),
// and waits (a minute at most) for that. The test must not scan while
// it waits: every scan until then is the watcher's idle check.
func duringCheck(t *testing.T, n int, act func(rel string)) {
	t.Helper()
	var mu sync.Mutex
	hits := 0
	done := make(chan struct{})
	disarm := failpoint.Set("scan/read-dir", func(rel string) error {
		mu.Lock()
		hits++
		fire := hits == n
		mu.Unlock()
		if fire {
			act(rel)
			close(done)
		}
		return nil
	})
	defer disarm()
	select {
	case <-done:
	case <-time.After(time.Minute):
		t.Fatalf("after a minute, no idle check read %d directories", n)
	}
}

// within runs f in its own goroutine and fails the test if it does not
// return within a minute (a save waiting for the idle check).
func within(t *testing.T, what string, f func() error) {
	t.Helper()
	errc := make(chan error, 1)
	go func() { errc <- f() }()
	select {
	case err := <-errc:
		if err != nil {
			t.Errorf("%s: %v", what, err)
		}
	case <-time.After(time.Minute):
		t.Fatalf("%s: not done after a minute", what)
	}
}

// outsideWrite writes s to the workspace file p through a hard link
// made outside the workspace, and removes the link again: a change the
// watcher does not see.
func outsideWrite(t *testing.T, ws, p, s string) {
	link := filepath.Join(t.TempDir(), "link")
	if err := os.Link(filepath.Join(ws, p), link); err != nil {
		t.Error(err)
		return
	}
	if err := os.WriteFile(link, []byte(s), 0o644); err != nil {
		t.Error(err)
	}
	if err := os.Remove(link); err != nil {
		t.Error(err)
	}
}

// A save that comes while an idle check reads (at each of the check's
// directories) is served at once and cancels the check; one made by
// another process (an undo here: a restore is never served) goes ahead
// beside it. Every save records what a full scan finds.
func TestWatchIdleCheckSaveDuring(t *testing.T) {
	shortTrust(t, 4*time.Second) // idle checks within seconds
	files := map[string]string{"a/x.txt": "x\n", "a/b/y.txt": "y\n", "c/z.txt": "z\n", "top.txt": "t\n"}
	r, ws := watchReady(t, files)
	ctx := context.Background()
	for n := 1; n <= 4; n++ {
		var res *SaveResult
		duringCheck(t, n, func(rel string) {
			writeFile(t, ws, "a/b/y.txt", fmt.Sprintf("y%d\n", n))
			within(t, "a save during the idle check", func() (err error) {
				res, err = r.Save(ctx, SaveOptions{AllowEmpty: true})
				return err
			})
		})
		if res == nil || !res.Served {
			t.Fatalf("round %d: the save during the check was not served: %+v", n, res)
		}
		if want := fullScanTree(t, r); res.Checkpoint.Tree != want {
			t.Fatalf("round %d: the save during the check differs from a full scan", n)
		}
		saveMatchesFull(t, r, fmt.Sprintf("round %d: the save after", n))
	}
	duringCheck(t, 2, func(rel string) {
		within(t, "an undo during the idle check", func() error {
			_, err := r.Undo(ctx)
			return err
		})
	})
	saveMatchesFull(t, r, "the save after an undo during the check")
	writeFile(t, ws, "c/z.txt", "z2\n")
	saveMatchesFull(t, r, "the save after that")
}

// A change the watcher does not see, made while an idle check reads
// (before or after it reads that directory), is in the first save made
// more than MaxTrust after it: the check vouches for the tree from its
// start at most.
func TestWatchIdleCheckUnseenDuring(t *testing.T) {
	shortTrust(t, 4*time.Second) // idle checks within seconds
	files := map[string]string{"a/x.txt": "x\n", "a/b/y.txt": "y\n", "c/z.txt": "z\n", "top.txt": "t\n"}
	r, ws := watchReady(t, files)
	for _, n := range []int{1, 4} {
		var changed time.Time
		duringCheck(t, n, func(rel string) {
			outsideWrite(t, ws, "a/b/y.txt", fmt.Sprintf("y%d written through a link made outside\n", n))
			changed = time.Now()
		})
		time.Sleep(time.Until(changed.Add(watch.MaxTrust + 100*time.Millisecond)))
		saveMatchesFull(t, r, fmt.Sprintf("round %d: the first save MaxTrust after the unseen change", n))
	}
}

// A watcher stopped while its idle check reads stops (the check ends),
// and writes a stat cache a save without it can use.
func TestWatchIdleCheckStopped(t *testing.T) {
	shortTrust(t, 4*time.Second) // idle checks within seconds
	r, ws := openTest(t, map[string]string{"a/x.txt": "x\n", "c/z.txt": "z\n"})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- r.Watch(ctx, WatchOptions{}) }()
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(10 * time.Millisecond) {
		if _, err := r.WatchStatus(context.Background()); err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the watcher did not start")
		}
	}
	for i := 0; i < 2; i++ {
		if _, err := r.Save(context.Background(), SaveOptions{AllowEmpty: true}); err != nil {
			t.Fatal(err)
		}
	}
	duringCheck(t, 2, func(string) { cancel() })
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(time.Minute):
		t.Fatal("the watcher did not stop within a minute")
	}
	writeFile(t, ws, "a/x.txt", "x2\n")
	saveMatchesFull(t, r, "a save after the watcher stopped mid-check")
}
