package ckpt

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/seed1cedbf7c/ckpt/internal/testutil"
)

// TestRemoteGC: what no ref reaches is marked, then deleted only after the
// grace period; a push that needs a marked pack's objects uploads them
// again, so deleting the pack loses nothing; a pack a push cut short left
// goes once it is old.
func TestRemoteGC(t *testing.T) {
	ctx := context.Background()
	now := time.Date(2026, 11, 1, 12, 0, 0, 0, time.UTC)
	ws := t.TempDir()
	testutil.WriteFiles(t, ws, map[string]string{"keep.txt": "kept\n", "gone.txt": "only in the first checkpoint\n"})
	r := openTestRepo(t, ws)
	r.opts.Now = func() time.Time { return now }
	url := fileRemote(t)
	dir := strings.TrimPrefix(url, "file://")
	if _, err := r.AddRemote(ctx, RemoteConfig{Name: "origin", URL: url}); err != nil {
		t.Fatal(err)
	}
	first, err := r.Save(ctx, SaveOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := r.CreateTag(ctx, "old", "", false); err != nil {
		t.Fatal(err)
	}
	if _, err := r.Push(ctx, "", PushOptions{Revs: []string{"old"}}); err != nil {
		t.Fatal(err)
	}
	// The remote's only ref goes (as if deleted from another machine).
	rc, _ := r.remoteConfig(ctx, "origin")
	rm, _, err := r.openRemote(ctx, rc, false)
	if err != nil {
		t.Fatal(err)
	}
	if err := rm.DeleteRef(ctx, "tags/old"); err != nil {
		t.Fatal(err)
	}
	// A pack a push cut short left, old, and one being written now.
	for name, age := range map[string]time.Duration{strings.Repeat("a", 64): 2 * time.Hour, strings.Repeat("b", 64): time.Minute} {
		p := filepath.Join(dir, "packs", name[:2], name)
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte("CKPTPACK1\npartial"), 0o644); err != nil {
			t.Fatal(err)
		}
		os.Chtimes(p, now.Add(-age), now.Add(-age))
	}
	res, err := r.GCRemote(ctx, "origin", RemoteGCOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Marked) == 0 || len(res.Deleted) != 0 {
		t.Fatalf("first gc: marked %d, deleted %d; want some marked, none deleted", len(res.Marked), len(res.Deleted))
	}
	if len(res.Orphans) != 0 || !slices.Contains(res.Marked, strings.Repeat("a", 64)) || slices.Contains(res.Marked, strings.Repeat("b", 64)) {
		t.Errorf("first gc: orphans %v, marked %v; want the old unlisted pack marked, the new one left, none deleted", res.Orphans, res.Marked)
	}
	// Meanwhile another store pushes the same content: it must not count
	// on the marked packs.
	ws2 := t.TempDir()
	testutil.WriteFiles(t, ws2, map[string]string{"keep.txt": "kept\n", "gone.txt": "only in the first checkpoint\n"})
	r2 := openTestRepo(t, ws2)
	if _, err := r2.AddRemote(ctx, RemoteConfig{Name: "origin", URL: url}); err != nil {
		t.Fatal(err)
	}
	if _, err := r2.Save(ctx, SaveOptions{}); err != nil {
		t.Fatal(err)
	}
	want := snapshot(t, ws2)
	pr, err := r2.Push(ctx, "", PushOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if pr.Objects == 0 {
		t.Fatal("the second store's push counted on marked packs")
	}
	// Before the grace period: nothing marked goes.
	now = now.Add(30 * time.Minute)
	if res, err = r.GCRemote(ctx, "origin", RemoteGCOptions{}); err != nil {
		t.Fatal(err)
	}
	if len(res.Deleted) != 0 {
		t.Fatalf("gc within the grace period deleted %v", res.Deleted)
	}
	now = now.Add(time.Hour)
	if res, err = r.GCRemote(ctx, "origin", RemoteGCOptions{}); err != nil {
		t.Fatal(err)
	}
	if len(res.Deleted) == 0 {
		t.Fatal("gc after the grace period deleted nothing")
	}
	if len(res.Orphans) != 1 || !strings.Contains(res.Orphans[0], "aaaa") {
		t.Errorf("gc after the grace period deleted unlisted packs %v, want the old one", res.Orphans)
	}
	if _, err := r2.FsckRemote(ctx, "origin", RemoteFsckOptions{}); err != nil {
		t.Fatal(err)
	}
	cloneEquals(t, url, want, CloneOptions{})
	// The first store pushes its old checkpoint again: it goes up whole.
	if _, err := r.Push(ctx, "", PushOptions{Revs: []string{"old"}}); err != nil {
		t.Fatal(err)
	}
	other := openTestRepo(t, t.TempDir())
	if _, err := other.AddRemote(ctx, RemoteConfig{Name: "origin", URL: url}); err != nil {
		t.Fatal(err)
	}
	if _, err := other.Pull(ctx, "origin"); err != nil {
		t.Fatal(err)
	}
	if got, err := other.Resolve(ctx, "old"); err != nil || got != first.Checkpoint.ID {
		t.Fatalf("old after the re-push: %s, %v", got.Short(), err)
	}
	if _, err := r.FsckRemote(ctx, "origin", RemoteFsckOptions{}); err != nil {
		t.Fatal(err)
	}
}
