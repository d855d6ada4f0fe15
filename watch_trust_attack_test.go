//go:build linux

package ckpt

import (
	"context"
	"os"
	"testing"
	"time"

	"github.com/seed1cedbf7c/ckpt/internal/scan"
	"github.com/seed1cedbf7c/ckpt/internal/watch"
)

// fullScanTracked is the workspace's tree as a scan without cache or
// watcher sees it, taking the ignored paths HEAD tracks (what a save
// without a watcher records).
func fullScanTracked(t *testing.T, r *Repo) ID {
	t.Helper()
	ctx := context.Background()
	_, head, err := r.head(ctx)
	if err != nil {
		t.Fatal(err)
	}
	o := r.scanOptions(ctx, nil, nil)
	o.Tracked = trackedOf(head)
	res, err := scan.Scan(ctx, o)
	if err != nil {
		t.Fatal(err)
	}
	return res.Root
}

// The stat cache records which ignored paths the capture that wrote it
// took (a checkpoint's tracked list, see MetaTracked): a cache written
// with another list holds directory trees with (or without) them, and a
// save must not take those whole. The watcher's in-memory cache and the
// one a client writes (a restore is never served) are two caches: the
// list one of them was written with says nothing of the other.
func TestWatchTrackedListPerCache(t *testing.T) {
	ctx := context.Background()
	r, _ := openTest(t, map[string]string{".gitignore": "*.env\n", "sub/secret.env": "s\n", "sub/a.txt": "a\n", "top.txt": "t\n"})
	startWatcher(t, r)
	save := func(what string, served bool) {
		t.Helper()
		res, err := r.Save(ctx, SaveOptions{AllowEmpty: true})
		if err != nil {
			t.Fatal(err)
		}
		if res.Served != served {
			t.Fatalf("%s: served %v", what, res.Served)
		}
		if want := fullScanTracked(t, r); res.Checkpoint.Tree != want {
			t.Fatalf("%s: the save (scanned %d) differs from a full scan at %v", what, res.Scanned, diffFiles(t, r, res.Checkpoint.ID))
		}
	}
	for i := 0; i < 3; i++ {
		save("a plain save", true)
	}
	_, h0, err := r.head(ctx)
	if err != nil {
		t.Fatal(err)
	}
	// A checkpoint holding HEAD and the ignored sub/secret.env as it is.
	x, _, err := sessionEngine{r}.Amend(ctx, h0.ID, []Path{"sub/secret.env"}, "track secret.env")
	if err != nil {
		t.Fatal(err)
	}
	// Restoring it writes nothing (the workspace holds it already); the
	// restore writes the client's stat cache, taking sub/secret.env.
	if _, err := r.Restore(ctx, x.String(), RestoreOptions{}); err != nil {
		t.Fatal(err)
	}
	// The watcher's saves take it too, in the watcher's cache.
	save("a save with sub/secret.env tracked", true)
	save("another", true)
	// Back to the checkpoint that tracks nothing: sub/secret.env is an
	// ignored file again, left alone; the restore writes nothing but the
	// client's stat cache, without it.
	if _, err := r.Restore(ctx, h0.ID.String(), RestoreOptions{}); err != nil {
		t.Fatal(err)
	}
	save("the save after restoring the checkpoint that tracks nothing", true)
}

// diffFiles lists the paths where the workspace differs from checkpoint id.
func diffFiles(t *testing.T, r *Repo, id ID) []string {
	t.Helper()
	d, _ := r.Diff(context.Background(), DiffOptions{From: id.String()})
	var files []string
	if d != nil {
		for _, f := range d.Files {
			files = append(files, string(f.Path))
		}
	}
	return files
}

// clientSave saves as a client that saves itself (CKPT_WATCH_SERVE=0):
// from the stat cache file, asking the watcher what changed.
func clientSave(t *testing.T, r *Repo, what string) {
	t.Helper()
	t.Setenv("CKPT_WATCH_SERVE", "0")
	defer os.Unsetenv("CKPT_WATCH_SERVE")
	res, err := r.Save(context.Background(), SaveOptions{AllowEmpty: true})
	if err != nil {
		t.Fatal(err)
	}
	if res.Served {
		t.Fatalf("%s: served", what)
	}
	if want := fullScanTree(t, r); res.Checkpoint.Tree != want {
		t.Fatalf("%s: the client's save (scanned %d) differs from a full scan at %v", what, res.Scanned, diffFiles(t, r, res.Checkpoint.ID))
	}
}

// clientSaveAny saves as clientSave does, whatever the save records.
func clientSaveAny(t *testing.T, r *Repo) {
	t.Helper()
	t.Setenv("CKPT_WATCH_SERVE", "0")
	defer os.Unsetenv("CKPT_WATCH_SERVE")
	if _, err := r.Save(context.Background(), SaveOptions{AllowEmpty: true}); err != nil {
		t.Fatal(err)
	}
}

// waitFlushed waits until the watcher has written its stat cache.
func waitFlushed(t *testing.T, r *Repo, since time.Time) {
	t.Helper()
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(20 * time.Millisecond) {
		if fi, err := os.Stat(r.cachePath()); err == nil && fi.ModTime().After(since) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatal("the watcher did not write its stat cache within a minute")
		}
	}
}

// Saves the watcher serves and saves a client makes itself, interleaved,
// with changes inotify does not see made at different moments: the
// served cache's full reads and idle checks vouch for that cache only,
// the client's (loaded from the file the watcher flushed, or its own)
// gets its own full read MaxTrust after its last, and every save after
// a change's MaxTrust records it.
func TestWatchTrustServedAndClientLineages(t *testing.T) {
	shortTrust(t, 4*time.Second) // idle checks within seconds
	files := map[string]string{"a/x.txt": "x\n", "c/z.txt": "z\n", "top.txt": "t\n"}
	r, ws := watchReady(t, files)
	t0 := time.Now()
	waitFlushed(t, r, t0.Add(-time.Hour))
	// The client's lineage starts from the flushed served cache.
	clientSave(t, r, "a client save from the flushed cache")
	outsideWrite(t, ws, "a/x.txt", "x written through a link made outside\n")
	u1 := time.Now()
	time.Sleep(time.Until(u1.Add(watch.MaxTrust + 100*time.Millisecond)))
	// The served cache is read in full (backstop); the client's, read
	// in full no later than before the change, must be too.
	saveMatchesFull(t, r, "the served save MaxTrust after the unseen change")
	clientSave(t, r, "the client's save right after the served full read")
	// The served lineage goes on, and its idle checks vouch for it; an
	// unseen change now is missed by both until MaxTrust after it.
	saveMatchesFull(t, r, "a served save")
	waitStatus(t, r, "no idle check ran", func(st *WatchStatus) bool { return st.LastCheck.After(u1) })
	outsideWrite(t, ws, "c/z.txt", "z written through a link made outside\n")
	u2 := time.Now()
	clientSaveAny(t, r) // may miss it (within MaxTrust)
	time.Sleep(time.Until(u2.Add(watch.MaxTrust + 100*time.Millisecond)))
	clientSave(t, r, "the client save MaxTrust after the second unseen change")
	saveMatchesFull(t, r, "the served save MaxTrust after the second unseen change")
	// And the other way round: the client's full read does not vouch
	// for the served cache.
	outsideWrite(t, ws, "top.txt", "t written through a link made outside\n")
	u3 := time.Now()
	if _, err := r.Save(context.Background(), SaveOptions{AllowEmpty: true}); err != nil {
		t.Fatal(err) // may miss it (within MaxTrust)
	}
	time.Sleep(time.Until(u3.Add(watch.MaxTrust + 100*time.Millisecond)))
	clientSave(t, r, "the client save MaxTrust after the third unseen change")
	saveMatchesFull(t, r, "the served save MaxTrust after the third unseen change")
}
