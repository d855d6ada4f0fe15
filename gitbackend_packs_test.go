package ckpt

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/seed1cedbf7c/ckpt/internal/failpoint"
	"github.com/seed1cedbf7c/ckpt/internal/testutil"
	"github.com/seed1cedbf7c/ckpt/internal/treegen"
)

// These tests check that the git backend does not burden the user's git
// over a long life: its objects go into packs (never loose objects, which
// make git run `git gc --auto` in the middle of the user's work), its packs
// stay few, and the user's own gc, even racing a sync, loses nothing the
// refs need for longer than until the next sync.

// git's defaults for `git gc --auto`: it runs when objects/17 holds more
// than gc.auto/256 loose objects, or there are more than gc.autoPackLimit
// packs without a .keep file.
const (
	gcAuto          = 6700
	gcAutoPackLimit = 50
)

// commonDir is the repository's common git directory.
func commonDir(t *testing.T, dir string) string {
	t.Helper()
	cd := strings.TrimSpace(testutil.Git(t, dir, "rev-parse", "--git-common-dir"))
	if !filepath.IsAbs(cd) {
		cd = filepath.Join(dir, cd)
	}
	return cd
}

// gitCountObjects parses `git count-objects -v`.
func gitCountObjects(t *testing.T, dir string) map[string]int {
	t.Helper()
	out := map[string]int{}
	for _, line := range strings.Split(strings.TrimSpace(testutil.Git(t, dir, "count-objects", "-v")), "\n") {
		k, v, _ := strings.Cut(line, ": ")
		n, err := strconv.Atoi(v)
		if err != nil {
			t.Fatalf("count-objects line %q", line)
		}
		out[k] = n
	}
	return out
}

// packFiles lists the repository's packs.
func packFiles(t *testing.T, dir string) []string {
	t.Helper()
	ps, err := filepath.Glob(filepath.Join(commonDir(t, dir), "objects", "pack", "pack-*.pack"))
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(ps)
	return ps
}

// checkNoAutoGC checks git's two conditions for `git gc --auto`, then runs
// it and checks that it did nothing.
func checkNoAutoGC(t *testing.T, dir string) {
	t.Helper()
	des, _ := os.ReadDir(filepath.Join(commonDir(t, dir), "objects", "17"))
	if n := len(des); n > (gcAuto+255)/256 {
		t.Errorf("objects/17 holds %d loose objects: git gc --auto would run", n)
	}
	var packs int
	for _, p := range packFiles(t, dir) {
		if _, err := os.Stat(strings.TrimSuffix(p, ".pack") + ".keep"); err != nil {
			packs++
		}
	}
	if packs > gcAutoPackLimit {
		t.Errorf("%d packs: git gc --auto would run", packs)
	}
	before, countBefore := packFiles(t, dir), gitCountObjects(t, dir)
	testutil.Git(t, dir, "-c", "gc.autoDetach=false", "gc", "--auto", "--quiet")
	if after := packFiles(t, dir); strings.Join(after, " ") != strings.Join(before, " ") {
		t.Errorf("git gc --auto repacked: %d packs -> %d", len(before), len(after))
	}
	if c := gitCountObjects(t, dir); c["count"] != countBefore["count"] {
		t.Errorf("git gc --auto changed the loose objects: %d -> %d", countBefore["count"], c["count"])
	}
}

// fsckFull runs git fsck --full --strict and fails on any complaint but
// dangling objects (ckpt's deleted timeline refs leave some).
func fsckFull(t *testing.T, dir string) {
	t.Helper()
	out, err := testutil.GitErr(t, dir, "fsck", "--full", "--strict", "--no-progress", "--no-dangling")
	if err != nil || strings.TrimSpace(out) != "" {
		t.Fatalf("git fsck --full: %v\n%s", err, out)
	}
}

// timeGit returns the median wall time of a git command over n runs.
func timeGit(t *testing.T, dir string, n int, args ...string) time.Duration {
	t.Helper()
	ds := make([]time.Duration, n)
	for i := range ds {
		start := time.Now()
		testutil.Git(t, dir, args...)
		ds[i] = time.Since(start)
	}
	sort.Slice(ds, func(i, j int) bool { return ds[i] < ds[j] })
	return ds[n/2]
}

// checkSnapshots checks every snapshot: its ref resolves to a commit whose
// tree git reads as the state recorded, and restoring it gives exactly
// that state.
func checkSnapshots(t *testing.T, r *Repo, dir string, snaps map[string]treegen.State) {
	t.Helper()
	ctx := context.Background()
	names := make([]string, 0, len(snaps))
	for n := range snaps {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, name := range names {
		ref := "refs/ckpt/snapshots/" + name
		commit := strings.TrimSpace(testutil.Git(t, dir, "rev-parse", "--verify", ref+"^{commit}"))
		if d := treegen.Diff(snaps[name], gitCommitState(t, dir, commit)); d != "" {
			t.Errorf("git's %s differs from the workspace it was taken of:\n%s", ref, d)
		}
		if _, err := r.Restore(ctx, name, RestoreOptions{}); err != nil {
			t.Fatal(err)
		}
		if err := r.GitSyncError(); err != nil {
			t.Fatal(err)
		}
		if d := treegen.Diff(snaps[name], wsState(t, dir)); d != "" {
			t.Errorf("restore %s:\n%s", name, d)
		}
	}
}

// checkRefsResolve checks that every ref under refs/ckpt/ names a commit
// git has, and returns how many there are.
func checkRefsResolve(t *testing.T, dir string) int {
	t.Helper()
	refs := strings.Fields(testutil.Git(t, dir, "for-each-ref", "--format=%(refname)", "refs/ckpt/"))
	for _, ref := range refs {
		if _, err := testutil.GitErr(t, dir, "rev-parse", "--verify", "-q", ref+"^{commit}"); err != nil {
			t.Errorf("%s does not resolve to a commit: %v", ref, err)
		}
	}
	return len(refs)
}

// TestGitBackendLongLife: 10,000 checkpoints (200 with -short), a turn of
// one to three changed files each and a snapshot every tenth of the way,
// leave no loose object and few packs: git gc --auto would not run, and
// does nothing when run. git fsck --full is clean, and every snapshot reads
// back through git and restores exactly. The time of git status before and
// after is logged (docs/benchmarks.md).
func TestGitBackendLongLife(t *testing.T) {
	testutil.NeedGit(t)
	n := 10000
	switch {
	case testing.Short():
		n = 50
	case raceEnabled:
		// scripts/test runs the 10,000 without the race detector.
		n = 300
	}
	ctx := context.Background()
	dir := newUserRepo(t)
	const files = 40
	content := func(f, turn int) string {
		return strings.Repeat(fmt.Sprintf("file %d, turn %d\n", f, turn), 1+f%7)
	}
	for f := range files {
		writeModeFile(t, filepath.Join(dir, fmt.Sprint("dir", f%4), fmt.Sprintf("f%02d.txt", f)), content(f, 0), 0o644)
	}
	before := gitCountObjects(t, dir)
	statusBefore := timeGit(t, dir, 9, "status", "--porcelain")

	r := openGitRepo(t, dir, Options{})
	rng := rand.New(rand.NewPCG(10000, 1))
	snaps := map[string]treegen.State{}
	mostPacks := 0
	start := time.Now()
	for i := 1; i <= n; i++ {
		for range 1 + rng.IntN(3) {
			f := rng.IntN(files)
			writeModeFile(t, filepath.Join(dir, fmt.Sprint("dir", f%4), fmt.Sprintf("f%02d.txt", f)), content(f, i), 0o644)
		}
		res, err := r.Save(ctx, SaveOptions{Message: fmt.Sprint("turn ", i)})
		if err != nil {
			t.Fatal(err)
		}
		if err := r.GitSyncError(); err != nil {
			t.Fatalf("turn %d: %v", i, err)
		}
		if i%(n/10) == 0 {
			name := fmt.Sprint("s", len(snaps)+1)
			if err := r.setSnapshot(ctx, name, res.Checkpoint.ID); err != nil {
				t.Fatal(err)
			}
			if err := r.GitSyncError(); err != nil {
				t.Fatal(err)
			}
			snaps[name] = wsState(t, dir)
		}
		des, _ := os.ReadDir(filepath.Join(dir, ".git", "objects", "pack"))
		mostPacks = max(mostPacks, len(des)/2)
	}
	elapsed := time.Since(start)

	after := gitCountObjects(t, dir)
	if after["count"] != before["count"] {
		t.Errorf("loose objects: %d before, %d after %d checkpoints", before["count"], after["count"], n)
	}
	if before["packs"] != 0 || after["packs"] > 11 || mostPacks > 11 {
		t.Errorf("packs: %d before, %d after, at most %d during (want at most 11 of ckpt's)", before["packs"], after["packs"], mostPacks)
	}
	if after["garbage"] != 0 {
		t.Errorf("count-objects reports garbage: %v", after)
	}
	checkNoAutoGC(t, dir)
	fsckFull(t, dir)
	if got := checkRefsResolve(t, dir); got < len(snaps)+2 {
		t.Errorf("%d refs under refs/ckpt", got)
	}
	statusAfter := timeGit(t, dir, 9, "status", "--porcelain")
	t.Logf("%d checkpoints in %v (%v each); loose objects %d -> %d; packs %d -> %d (at most %d), %d objects, %d KiB; git status %v -> %v",
		n, elapsed.Round(time.Millisecond), (elapsed / time.Duration(n)).Round(time.Microsecond),
		before["count"], after["count"], before["packs"], after["packs"], mostPacks, after["in-pack"], after["size-pack"],
		statusBefore.Round(time.Microsecond), statusAfter.Round(time.Microsecond))
	checkSnapshots(t, r, dir, snaps)
	fsckFull(t, dir)
}

// TestGitBackendLinkedWorktreePacks: ckpt in a linked worktree (git
// worktree add) and in the main work tree at once write their packs into
// the common directory, never loose objects and nothing into the
// worktree's own git directory; each consolidates its own packs only, and
// git reads every ref from both work trees.
func TestGitBackendLinkedWorktreePacks(t *testing.T) {
	testutil.NeedGit(t)
	ctx := context.Background()
	main := newUserRepo(t)
	testutil.Git(t, main, "commit", "-q", "-m", "staged")
	wt := filepath.Join(t.TempDir(), "wt")
	testutil.Git(t, main, "worktree", "add", "-q", "-b", "feature", wt)
	before := gitCountObjects(t, main)
	rMain := openGitRepo(t, main, Options{})
	rWT := openGitRepo(t, wt, Options{})
	snaps := map[string]map[string]treegen.State{main: {}, wt: {}}
	for i := 1; i <= 40; i++ {
		for _, w := range []struct {
			r   *Repo
			dir string
		}{{rWT, wt}, {rMain, main}} {
			writeModeFile(t, filepath.Join(w.dir, "work.txt"), fmt.Sprintf("%s turn %d\n", filepath.Base(w.dir), i), 0o644)
			res, err := w.r.Save(ctx, SaveOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if i%10 == 0 {
				name := fmt.Sprintf("%s-%d", filepath.Base(w.dir), i)
				if err := w.r.setSnapshot(ctx, name, res.Checkpoint.ID); err != nil {
					t.Fatal(err)
				}
				snaps[w.dir][name] = wsState(t, w.dir)
			}
			if err := w.r.GitSyncError(); err != nil {
				t.Fatal(err)
			}
		}
	}
	after := gitCountObjects(t, main)
	if after["count"] != before["count"] {
		t.Errorf("loose objects: %d -> %d", before["count"], after["count"])
	}
	if after["packs"] > 22 {
		t.Errorf("%d packs for two stores", after["packs"])
	}
	wtGitDir := filepath.Join(main, ".git", "worktrees", "wt")
	if _, err := os.Stat(filepath.Join(wtGitDir, "objects")); !os.IsNotExist(err) {
		t.Errorf("the worktree's git dir has an objects directory: %v", err)
	}
	if _, err := os.Stat(filepath.Join(wtGitDir, "ckpt", "ckpt.db")); err != nil {
		t.Errorf("the worktree's store: %v", err)
	}
	checkNoAutoGC(t, main)
	for _, d := range []string{main, wt} {
		fsckFull(t, d)
		if got := checkRefsResolve(t, d); got < 8 {
			t.Errorf("%s: %d refs", d, got)
		}
		for name, st := range snaps[wt] {
			commit := strings.TrimSpace(testutil.Git(t, d, "rev-parse", "refs/ckpt/snapshots/"+name))
			if diff := treegen.Diff(st, gitCommitState(t, d, commit)); diff != "" {
				t.Errorf("%s reads %s differently:\n%s", d, name, diff)
			}
		}
	}
	checkSnapshots(t, rWT, wt, snaps[wt])
	checkSnapshots(t, rMain, main, snaps[main])
}

// TestGitBackendAfterUserGC: after the user's git gc --aggressive
// --prune=now every ckpt ref still resolves, git fsck --full is clean, ckpt
// restores every snapshot exactly, and the next checkpoints (whose sync
// re-checks everything, the packs it relied on being gone) do too.
func TestGitBackendAfterUserGC(t *testing.T) {
	testutil.NeedGit(t)
	ctx := context.Background()
	dir := newUserRepo(t)
	r := openGitRepo(t, dir, Options{})
	snaps := map[string]treegen.State{}
	for i := 1; i <= 60; i++ {
		writeModeFile(t, filepath.Join(dir, "src", fmt.Sprintf("m%d.go", i%5)), fmt.Sprintf("package m // %d\n", i), 0o644)
		if i%7 == 0 {
			os.Remove(filepath.Join(dir, "src", fmt.Sprintf("m%d.go", (i+1)%5)))
		}
		res, err := r.Save(ctx, SaveOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if i%12 == 0 {
			name := fmt.Sprint("s", i)
			if err := r.setSnapshot(ctx, name, res.Checkpoint.ID); err != nil {
				t.Fatal(err)
			}
			snaps[name] = wsState(t, dir)
		}
		if err := r.GitSyncError(); err != nil {
			t.Fatal(err)
		}
	}
	refs := checkRefsResolve(t, dir)
	testutil.Git(t, dir, "gc", "-q", "--aggressive", "--prune=now")
	if got := checkRefsResolve(t, dir); got != refs {
		t.Errorf("%d refs before git gc, %d after", refs, got)
	}
	fsckFull(t, dir)
	if c := gitCountObjects(t, dir); c["count"] != 0 || c["packs"] != 1 {
		t.Errorf("after git gc: %v", c)
	}
	checkSnapshots(t, r, dir, snaps)
	for i := range 15 {
		writeModeFile(t, filepath.Join(dir, "after-gc.txt"), fmt.Sprint(i), 0o644)
		res, err := r.Save(ctx, SaveOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if i == 14 {
			if err := r.setSnapshot(ctx, "after", res.Checkpoint.ID); err != nil {
				t.Fatal(err)
			}
			snaps["after"] = wsState(t, dir)
		}
		if err := r.GitSyncError(); err != nil {
			t.Fatal(err)
		}
	}
	fsckFull(t, dir)
	checkRefsResolve(t, dir)
	checkSnapshots(t, r, dir, snaps)
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
	testutil.NeedGit(t)
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
			testutil.Git(t, dir, "gc", "-q", "--prune=now")
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
	if _, err := testutil.GitErr(t, dir, "cat-file", "-e", commit); err == nil {
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
	testutil.NeedGit(t)
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
		testutil.Git(t, dir, "gc", "-q", "--prune=now")
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
	if _, err := testutil.GitErr(t, dir, "cat-file", "-e", commit); err != nil {
		t.Fatalf("the new commit is gone too (%v): not the case this test is for", err)
	}
	if _, err := testutil.GitErr(t, dir, "fsck", "--full", "--no-dangling"); err == nil {
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
