//go:build linux

package ckpt

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/seed1cedbf7c/ckpt/internal/failpoint"
)

// At the inotify watch limit (simulated with the failpoint watch/add for
// chosen directories), the watcher keeps vouching for the directories it
// watches and names the others in every answer: each save after changes
// in an unwatched directory records what a full scan records.
func TestWatchAtLimitMatchesScan(t *testing.T) {
	for _, d := range []string{"slow", "slow/inner", "mid/slow"} {
		disarm := failpoint.Set("watch/add("+d+")", func(string) error { return errors.New("no watch left") })
		t.Cleanup(disarm)
	}
	r, ws := watchReady(t, map[string]string{"slow/a.txt": "a\n", "slow/inner/b.txt": "b\n",
		"slow/inner/watched/c.txt": "c\n", "mid/slow/d.txt": "d\n", "mid/ok/e.txt": "e\n",
		"other/f.txt": "f\n", "top.txt": "t\n"})
	ctx := context.Background()
	st, err := r.WatchStatus(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if st.Error != "" || st.Unwatched != 3 || !strings.Contains(st.Warning, "3 directories are not watched") {
		t.Fatalf("status: error %q, %d unwatched, warning %q", st.Error, st.Unwatched, st.Warning)
	}

	saveMatchesFull(t, r, "nothing changed")
	writeFile(t, ws, "slow/a.txt", "a2\n")
	saveMatchesFull(t, r, "after editing slow/a.txt")
	writeFile(t, ws, "slow/inner/new.txt", "n\n")
	writeFile(t, ws, "mid/slow/d.txt", "d2\n")
	saveMatchesFull(t, r, "after editing in slow/inner and mid/slow")
	// A directory created in an unwatched one raises no event.
	writeFile(t, ws, "slow/inner/made/g.txt", "g\n")
	saveMatchesFull(t, r, "after mkdir in slow/inner")
	writeFile(t, ws, "slow/inner/made/g.txt", "g2\n")
	saveMatchesFull(t, r, "after editing in slow/inner/made")
	writeFile(t, ws, "slow/inner/watched/c.txt", "c2\n")
	saveMatchesFull(t, r, "after editing in slow/inner/watched")
	if err := os.Remove(filepath.Join(ws, "slow/a.txt")); err != nil {
		t.Fatal(err)
	}
	saveMatchesFull(t, r, "after removing slow/a.txt")

	// A hard link made in an unwatched directory gives no name the
	// watcher sees; a write through it changes other/f.txt, whose
	// directory has no event.
	saveMatchesFull(t, r, "again")
	if err := os.Link(filepath.Join(ws, "other/f.txt"), filepath.Join(ws, "slow/link.txt")); err != nil {
		t.Fatal(err)
	}
	f, err := os.OpenFile(filepath.Join(ws, "slow/link.txt"), os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString("written through the link in slow\n")
	f.Close()
	saveMatchesFull(t, r, "after writing through a link made in slow")
	saveMatchesFull(t, r, "and again")

	// The watched directories are still taken from the cache.
	writeFile(t, ws, "top.txt", "t2\n")
	res, err := r.Save(ctx, SaveOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if want := fullScanTree(t, r); res.Checkpoint.Tree != want {
		t.Fatal("a save after editing top.txt differs from a full scan")
	}
	if res.Scanned != -1 { // -1: some directories were taken from the cache
		t.Fatalf("a save after editing top.txt took no directory from the cache (scanned %d)", res.Scanned)
	}
}

// At the limit, a save says so: SaveResult.Warning carries the watcher's
// warning (ckpt save prints it), served or not.
func TestWatchLimitWarningReachesSave(t *testing.T) {
	disarm := failpoint.Set("watch/add(slow)", func(string) error { return errors.New("no watch left") })
	t.Cleanup(disarm)
	for _, noServe := range []bool{false, true} {
		r, ws := openTest(t, map[string]string{"slow/a.txt": "a\n", "fast/b.txt": "b\n"})
		startWatcherWith(t, r, WatchOptions{NoServe: noServe})
		ctx := context.Background()
		// The first save finds the directories; the watcher then tries
		// to watch them and hits the limit.
		if _, err := r.Save(ctx, SaveOptions{}); err != nil {
			t.Fatal(err)
		}
		writeFile(t, ws, "slow/a.txt", "a2\n")
		res, err := r.Save(ctx, SaveOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if res.Served == noServe || !strings.Contains(res.Warning, "not watched") {
			t.Fatalf("NoServe %v: served %v, warning %q", noServe, res.Served, res.Warning)
		}
	}
}
