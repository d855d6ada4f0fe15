package ckpt

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/seed1cedbf7c/ckpt/internal/failpoint"
	"github.com/seed1cedbf7c/ckpt/internal/treegen"
)

// These tests check that the user's own gc, even racing a sync, loses
// nothing the git backend's refs need for longer than until the next sync.

// commonDir is the repository's common git directory.
func commonDir(t *testing.T, dir string) string {
	t.Helper()
	cd := strings.TrimSpace(git(t, dir, "rev-parse", "--git-common-dir"))
	if !filepath.IsAbs(cd) {
		cd = filepath.Join(dir, cd)
	}
	return cd
}

// fsckFull runs git fsck --full --strict and fails on any complaint but
// dangling objects (ckpt's deleted timeline refs leave some).
func fsckFull(t *testing.T, dir string) {
	t.Helper()
	out, err := gitErr(t, dir, "fsck", "--full", "--strict", "--no-progress", "--no-dangling")
	if err != nil || strings.TrimSpace(out) != "" {
		t.Fatalf("git fsck --full: %v\n%s", err, out)
	}
}

// readRef reads a loose or packed ref without asking git, which would
// refuse a ref naming a missing object.
func readRef(t *testing.T, dir, ref string) string {
	t.Helper()
	cd := commonDir(t, dir)
	if data, err := os.ReadFile(filepath.Join(cd, filepath.FromSlash(ref))); err == nil {
		return strings.TrimSpace(string(data))
	}
	data, _ := os.ReadFile(filepath.Join(cd, "packed-refs"))
	for _, line := range strings.Split(string(data), "\n") {
		if h, name, ok := strings.Cut(line, " "); ok && name == ref {
			return h
		}
	}
	t.Fatalf("no ref %s", ref)
	return ""
}

// TestGitBackendGCBetweenPackAndRefs: a git gc --prune=now that runs after
// a sync wrote its pack and before it set the refs prunes the new objects
// (nothing named them yet): the refs then name a commit git does not have,
// until the next sync, which notices and writes it again.
func TestGitBackendGCBetweenPackAndRefs(t *testing.T) {
	needGit(t)
	ctx := context.Background()
	dir := newUserRepo(t)
	r := openGitRepo(t, dir, Options{})
	if _, err := r.Save(ctx, SaveOptions{}); err != nil {
		t.Fatal(err)
	}
	fired := false
	disarm := failpoint.Set("git/before-refs", func(pack string) error {
		if pack != "" && !fired {
			fired = true
			git(t, dir, "gc", "-q", "--prune=now")
		}
		return nil
	})
	writeModeFile(t, filepath.Join(dir, "new.txt"), "written while git gc ran\n", 0o644)
	res, err := r.Save(ctx, SaveOptions{})
	disarm()
	if err != nil {
		t.Fatal(err)
	}
	if !fired {
		t.Fatal("the sync wrote no pack")
	}
	want := wsState(t, dir)
	ref := "refs/ckpt/timeline/" + res.Checkpoint.ID.Short()
	commit := readRef(t, dir, ref)
	if _, err := gitErr(t, dir, "cat-file", "-e", commit); err == nil {
		t.Fatal("git gc did not prune the new commit: the race was not reproduced")
	}
	// The next sync (any operation that changes something; here a save
	// with nothing to save) writes it again.
	if _, err := r.Save(ctx, SaveOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := r.GitSyncError(); err != nil {
		t.Fatal(err)
	}
	if got := readRef(t, dir, ref); got != commit {
		t.Errorf("%s moved: %s -> %s", ref, commit, got)
	}
	if d := treegen.Diff(want, gitCommitState(t, dir, commit)); d != "" {
		t.Errorf("the commit written again differs:\n%s", d)
	}
	fsckFull(t, dir)
}

// TestGitBackendGCPrunesReusedObjects: the harder half of that race. A
// sync reuses objects that are in a pack but unreachable (a checkpoint
// that fell off the timeline had the same tree), writing only the commit;
// a git gc --prune=now that lists packs before the new pack exists prunes
// the reused tree and keeps the commit. The next sync sees that packs it
// relied on are gone, rebuilds every tree the refs need, and writes the
// missing ones.
func TestGitBackendGCPrunesReusedObjects(t *testing.T) {
	needGit(t)
	ctx := context.Background()
	dir := newUserRepo(t)
	cfg := DefaultConfig()
	cfg.TimelineMax = 2
	r := openGitRepo(t, dir, Options{Config: &cfg})
	for _, v := range []string{"first\n", "second\n", "third\n"} {
		writeModeFile(t, filepath.Join(dir, "f.txt"), v, 0o644)
		if _, err := r.Save(ctx, SaveOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	// The first state's tree is now unreachable; back to it.
	writeModeFile(t, filepath.Join(dir, "f.txt"), "first\n", 0o644)
	fired := false
	disarm := failpoint.Set("git/before-refs", func(pack string) error {
		if pack == "" || fired {
			return nil
		}
		fired = true
		// As if gc had listed the packs a moment before this one was
		// written: it neither repacks nor removes it.
		keep := filepath.Join(dir, ".git", "objects", "pack", pack+".keep")
		if err := os.WriteFile(keep, nil, 0o644); err != nil {
			return err
		}
		git(t, dir, "gc", "-q", "--prune=now")
		return os.Remove(keep)
	})
	res, err := r.Save(ctx, SaveOptions{})
	disarm()
	if err != nil {
		t.Fatal(err)
	}
	if !fired {
		t.Fatal("the sync wrote no pack")
	}
	want := wsState(t, dir)
	commit := readRef(t, dir, "refs/ckpt/timeline/"+res.Checkpoint.ID.Short())
	if _, err := gitErr(t, dir, "cat-file", "-e", commit); err != nil {
		t.Fatalf("the new commit is gone too (%v): not the case this test is for", err)
	}
	if _, err := gitErr(t, dir, "fsck", "--full", "--no-dangling"); err == nil {
		t.Fatal("git fsck is clean: the reused tree was not pruned")
	}
	if _, err := r.Save(ctx, SaveOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := r.GitSyncError(); err != nil {
		t.Fatal(err)
	}
	fsckFull(t, dir)
	if d := treegen.Diff(want, gitCommitState(t, dir, commit)); d != "" {
		t.Errorf("the commit's tree written again differs:\n%s", d)
	}
}
