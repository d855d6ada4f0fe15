//go:build linux

package ckpt

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/seed1cedbf7c/ckpt/internal/watch"
)

// shortTrust sets the watcher's backstop (watch.MaxTrust) to d for the
// test; the watcher must be started after it and stop before it is put
// back (t.Cleanup runs last-in first-out).
func shortTrust(t *testing.T, d time.Duration) {
	m := watch.MaxTrust
	t.Cleanup(func() { watch.MaxTrust = m })
	watch.MaxTrust = d
}

// waitStatus polls the watcher's status until ok says yes (a minute at
// most: the watcher's idle checks run every few seconds here).
func waitStatus(t *testing.T, r *Repo, what string, ok func(*WatchStatus) bool) *WatchStatus {
	t.Helper()
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(50 * time.Millisecond) {
		st, err := r.WatchStatus(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if ok(st) {
			return st
		}
		if time.Now().After(deadline) {
			t.Fatalf("after a minute: %s (last full %v, last check %v)", what, st.LastFull, st.LastCheck)
		}
	}
}

// While saves pause, the watcher reads the whole tree and, when it finds
// it as its stat cache has it, the backstop full read (MaxTrust after the
// last one) counts from then: a turn after a quiet spell stays
// incremental. A change inotify does not see (a file written through a
// hard link made outside the workspace) makes the check find a
// difference: it vouches for nothing, and the save after MaxTrust reads
// everything and records the change.
func TestWatchIdleCheck(t *testing.T) {
	shortTrust(t, 4*time.Second)
	r, ws := watchReady(t, map[string]string{"sub/notes.txt": "v1\n", "sub/other.txt": "x\n", "top.txt": "t\n"})
	writeFile(t, ws, "top.txt", "t2\n")
	saveExpect(t, r, "an edit", true)
	st0, err := r.WatchStatus(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	st := waitStatus(t, r, "no idle check vouched for the quiet tree", func(st *WatchStatus) bool {
		return st.LastFull.After(st0.LastFull)
	})
	if st.LastCheck.Before(st.LastFull) {
		t.Fatalf("last full %v after the last check %v", st.LastFull, st.LastCheck)
	}
	// Past MaxTrust after the save's own full read: without the check's
	// word the next save would read everything.
	time.Sleep(time.Until(st0.LastFull.Add(watch.MaxTrust + 100*time.Millisecond)))
	if time.Since(st.LastFull) < watch.MaxTrust {
		writeFile(t, ws, "top.txt", "t3\n")
		saveExpect(t, r, "a turn after the quiet spell", true)
	} else {
		t.Logf("the machine was too slow to see the incremental save (the check vouched %v ago)", time.Since(st.LastFull))
	}

	// A change the watcher cannot see.
	outside := filepath.Join(t.TempDir(), "notes.txt")
	if err := os.Link(filepath.Join(ws, "sub/notes.txt"), outside); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(outside, []byte("v2 written through a link made outside\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	changed := time.Now()
	st1 := waitStatus(t, r, "no idle check ended after the unseen change", func(st *WatchStatus) bool {
		return st.LastCheck.After(changed)
	})
	// The check after that one began after the change.
	st2 := waitStatus(t, r, "no second idle check ended after the unseen change", func(st *WatchStatus) bool {
		return st.LastCheck.After(st1.LastCheck)
	})
	if !st2.LastFull.Before(changed) {
		t.Fatalf("an idle check that began after a change it could not have missed vouched for the tree (last full %v, change %v)", st2.LastFull, changed)
	}
	time.Sleep(time.Until(st2.LastFull.Add(watch.MaxTrust + 100*time.Millisecond)))
	saveMatchesFull(t, r, "the save after MaxTrust")
}

// CKPT_WATCH_IDLE_CHECK=0 in the watcher's environment: no idle check,
// and the save after MaxTrust reads everything.
func TestWatchIdleCheckOff(t *testing.T) {
	t.Setenv("CKPT_WATCH_IDLE_CHECK", "0")
	shortTrust(t, 2*time.Second)
	r, ws := watchReady(t, map[string]string{"sub/notes.txt": "v1\n", "top.txt": "t\n"})
	writeFile(t, ws, "top.txt", "t2\n")
	saveExpect(t, r, "an edit", true)
	st, err := r.WatchStatus(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(time.Until(st.LastFull.Add(watch.MaxTrust + 1500*time.Millisecond)))
	if st, err = r.WatchStatus(context.Background()); err != nil || !st.LastCheck.IsZero() {
		t.Fatalf("an idle check ran at %v (%v)", st.LastCheck, err)
	}
	writeFile(t, ws, "top.txt", "t3\n")
	saveExpect(t, r, "the save after MaxTrust", false)
}

// A watcher left running with no save for three times MaxTrust stops its
// idle checks (the user is away; the next save reads everything once).
func TestWatchIdleCheckStopsWhenSavesStop(t *testing.T) {
	shortTrust(t, 2*time.Second)
	r, ws := watchReady(t, map[string]string{"top.txt": "t\n", "sub/f.txt": "f\n"})
	writeFile(t, ws, "top.txt", "t2\n")
	saveExpect(t, r, "an edit", true)
	saved := time.Now()
	waitStatus(t, r, "no idle check ran", func(st *WatchStatus) bool { return st.LastCheck.After(saved) })
	time.Sleep(time.Until(saved.Add(3*watch.MaxTrust + time.Second)))
	st0, err := r.WatchStatus(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(2 * watch.MaxTrust)
	st1, err := r.WatchStatus(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if !st1.LastCheck.Equal(st0.LastCheck) {
		t.Fatalf("an idle check ended at %v, more than %v after the last save at %v", st1.LastCheck, 3*watch.MaxTrust, saved)
	}
	saveMatchesFull(t, r, "the save after the watcher stopped checking")
}
