package ckpt

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/seed1cedbf7c/ckpt/internal/gitmirror"
	"github.com/seed1cedbf7c/ckpt/internal/store"
	"github.com/seed1cedbf7c/ckpt/internal/testutil"
)

// These tests use the real git binary as the oracle: everything the git
// backend writes must read back with git exactly, and nothing of the
// user's repository (HEAD, branch, index, stash, work tree status) may
// change.

func writeModeFile(t *testing.T, path, data string, mode os.FileMode) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(data), mode); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(path, mode); err != nil {
		t.Fatal(err)
	}
}

func openGitRepo(t *testing.T, dir string, opts Options) *Repo {
	t.Helper()
	opts.Backend = BackendGit
	if opts.Store == "" {
		opts.Store = t.TempDir() // the sqlite store location; unused by the git backend
	}
	r, err := Open(context.Background(), dir, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close() })
	return r
}

// setSnapshot names a checkpoint the way the snapshot commands do (store
// ref "snapshots/NAME"), through a mutating operation so the git refs
// follow.
func (r *Repo) setSnapshot(ctx context.Context, name string, id ID) error {
	unlock, err := r.begin(ctx)
	if err != nil {
		return err
	}
	defer unlock()
	return r.st.Update(ctx, func(tx store.Tx) error {
		return tx.SetRef(store.Ref{Name: "snapshots/" + name, ID: id, Time: r.now()})
	})
}

func (r *Repo) deleteSnapshot(ctx context.Context, name string) error {
	unlock, err := r.begin(ctx)
	if err != nil {
		return err
	}
	defer unlock()
	return r.st.Update(ctx, func(tx store.Tx) error { return tx.DeleteRef("snapshots/" + name) })
}

// userState is what the git backend must never change.
type userState struct {
	head, symref, index, stash, branches, tags, log string
}

func captureUserState(t *testing.T, dir string) userState {
	t.Helper()
	var s userState
	s.head, _ = testutil.GitErr(t, dir, "rev-parse", "HEAD")
	s.symref, _ = testutil.GitErr(t, dir, "symbolic-ref", "HEAD")
	gd := strings.TrimSpace(testutil.Git(t, dir, "rev-parse", "--git-dir"))
	if !filepath.IsAbs(gd) {
		gd = filepath.Join(dir, gd)
	}
	idx, err := os.ReadFile(filepath.Join(gd, "index"))
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		t.Fatal(err)
	}
	s.index = string(idx)
	s.stash = testutil.Git(t, dir, "stash", "list")
	s.branches = testutil.Git(t, dir, "branch", "-a")
	s.tags = testutil.Git(t, dir, "tag")
	// git log (HEAD) and every branch and tag: snapshots never show there
	// (git log --all lists every ref, refs/ckpt included, by design).
	s.log, _ = testutil.GitErr(t, dir, "log", "--oneline", "--branches", "--tags", "--remotes", "HEAD")
	return s
}

func (s userState) check(t *testing.T, now userState, what string) {
	t.Helper()
	if s.head != now.head || s.symref != now.symref {
		t.Errorf("%s: HEAD changed: %q %q -> %q %q", what, s.head, s.symref, now.head, now.symref)
	}
	if s.index != now.index {
		t.Errorf("%s: .git/index changed", what)
	}
	if s.stash != now.stash {
		t.Errorf("%s: stash changed: %q -> %q", what, s.stash, now.stash)
	}
	if s.branches != now.branches || s.tags != now.tags {
		t.Errorf("%s: branches or tags changed: %q %q -> %q %q", what, s.branches, s.tags, now.branches, now.tags)
	}
	if s.log != now.log {
		t.Errorf("%s: git log changed:\n%s\n->\n%s", what, s.log, now.log)
	}
}

func fsck(t *testing.T, dir string) {
	t.Helper()
	out, err := testutil.GitErr(t, dir, "fsck", "--strict", "--no-progress", "--no-dangling")
	if err != nil || strings.TrimSpace(out) != "" {
		t.Fatalf("git fsck --strict: %v\n%s", err, out)
	}
}

// newUserRepo makes a repository with a commit, a staged change, an
// unstaged change and a stash entry, like a user's repository mid-work.
func newUserRepo(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	testutil.Git(t, dir, "init", "-q", "-b", "main")
	writeModeFile(t, filepath.Join(dir, "README"), "hello\n", 0o644)
	writeModeFile(t, filepath.Join(dir, ".gitignore"), "*.log\nbuild/\n", 0o644)
	testutil.Git(t, dir, "add", "-A")
	testutil.Git(t, dir, "commit", "-q", "-m", "initial")
	writeModeFile(t, filepath.Join(dir, "README"), "stashed\n", 0o644)
	testutil.Git(t, dir, "stash", "-q")
	writeModeFile(t, filepath.Join(dir, "staged.txt"), "staged\n", 0o644)
	testutil.Git(t, dir, "add", "staged.txt")
	writeModeFile(t, filepath.Join(dir, "README"), "hello, unstaged\n", 0o644)
	return dir
}

func TestGitBackendLeavesUserStateAlone(t *testing.T) {
	testutil.NeedGit(t)
	ctx := context.Background()
	dir := newUserRepo(t)
	// Every kind of entry.
	writeModeFile(t, filepath.Join(dir, "bin", "tool"), "#!/bin/sh\necho hi\n", 0o755)
	writeModeFile(t, filepath.Join(dir, "data.bin"), "\x00\x01\x02\xff binary", 0o644)
	writeModeFile(t, filepath.Join(dir, "empty"), "", 0o644)
	writeModeFile(t, filepath.Join(dir, "caf\xe9", "na\xefve.txt"), "latin-1 names\n", 0o600)
	if err := os.Symlink("README", filepath.Join(dir, "link")); err != nil {
		t.Fatal(err)
	}
	writeModeFile(t, filepath.Join(dir, "debug.log"), "ignored\n", 0o644)
	writeModeFile(t, filepath.Join(dir, "build", "out.o"), "ignored dir\n", 0o644)

	before := captureUserState(t, dir)
	status := testutil.Git(t, dir, "status", "--porcelain")

	r := openGitRepo(t, dir, Options{})
	res, err := r.Save(ctx, SaveOptions{Message: "first turn"})
	if err != nil {
		t.Fatal(err)
	}
	if err := r.GitSyncError(); err != nil {
		t.Fatal(err)
	}
	if err := r.setSnapshot(ctx, "s1", res.Checkpoint.ID); err != nil {
		t.Fatal(err)
	}
	if err := r.GitSyncError(); err != nil {
		t.Fatal(err)
	}
	before.check(t, captureUserState(t, dir), "after save and snapshot")
	if got := testutil.Git(t, dir, "status", "--porcelain"); got != status {
		t.Errorf("git status changed after snapshot create:\n%s\n->\n%s", status, got)
	}
	fsck(t, dir)

	// git reads the snapshot back exactly.
	for path, want := range map[string]string{
		"bin/tool": "#!/bin/sh\necho hi\n", "data.bin": "\x00\x01\x02\xff binary", "empty": "",
		"caf\xe9/na\xefve.txt": "latin-1 names\n", "link": "README", "README": "hello, unstaged\n",
		"staged.txt": "staged\n", ".gitignore": "*.log\nbuild/\n",
	} {
		if got := testutil.Git(t, dir, "show", "refs/ckpt/snapshots/s1:"+path); got != want {
			t.Errorf("git show s1:%q = %q, want %q", path, got, want)
		}
	}
	tree := testutil.Git(t, dir, "ls-tree", "-r", "-z", "refs/ckpt/snapshots/s1")
	for _, want := range []string{"100755 blob ", "120000 blob "} {
		if !strings.Contains(tree, want) {
			t.Errorf("ls-tree lacks %q:\n%s", want, tree)
		}
	}
	if strings.Contains(tree, "debug.log") || strings.Contains(tree, "build/") {
		t.Errorf("ignored files entered the commit:\n%s", tree)
	}
	refs := testutil.Git(t, dir, "for-each-ref", "--format=%(refname)", "refs/ckpt/")
	wantRefs := "refs/ckpt/snapshots/s1\nrefs/ckpt/timeline/" + res.Checkpoint.ID.Short() + "\n"
	if refs != wantRefs {
		t.Errorf("for-each-ref refs/ckpt/ = %q, want %q", refs, wantRefs)
	}
	sha, err := r.GitCommit(ctx, res.Checkpoint.ID)
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.TrimSpace(testutil.Git(t, dir, "rev-parse", "refs/ckpt/snapshots/s1")); got != sha {
		t.Errorf("GitCommit = %s, ref = %s", sha, got)
	}
	commit := testutil.Git(t, dir, "cat-file", "-p", sha)
	for _, want := range []string{"author ckpt <ckpt@localhost> ", "committer ckpt <ckpt@localhost> ",
		"\n\nfirst turn\n\nCkpt-Checkpoint: " + res.Checkpoint.ID.String() + "\n"} {
		if !strings.Contains(commit, want) {
			t.Errorf("commit lacks %q:\n%s", want, commit)
		}
	}
	if strings.Contains(commit, "\nparent ") {
		t.Errorf("snapshot commit has a parent:\n%s", commit)
	}
	if ts := fmt.Sprint(res.Checkpoint.Time.Unix()); !strings.Contains(commit, "> "+ts+" +0000") {
		t.Errorf("commit time is not the checkpoint's (%s):\n%s", ts, commit)
	}

	// Restore: the workspace changes, the user's git state does not.
	writeModeFile(t, filepath.Join(dir, "README"), "agent broke it\n", 0o644)
	os.Remove(filepath.Join(dir, "empty"))
	writeModeFile(t, filepath.Join(dir, "new.txt"), "new\n", 0o644)
	if _, err := r.Restore(ctx, "s1", RestoreOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := r.GitSyncError(); err != nil {
		t.Fatal(err)
	}
	before.check(t, captureUserState(t, dir), "after restore")
	if got := testutil.Git(t, dir, "status", "--porcelain"); got != status {
		t.Errorf("git status after restore differs from before:\n%s\n->\n%s", status, got)
	}
	if data, _ := os.ReadFile(filepath.Join(dir, "debug.log")); string(data) != "ignored\n" {
		t.Errorf("restore touched an ignored file: %q", data)
	}
	fsck(t, dir)

	// Delete: the ref goes, nothing else changes.
	if err := r.deleteSnapshot(ctx, "s1"); err != nil {
		t.Fatal(err)
	}
	if err := r.GitSyncError(); err != nil {
		t.Fatal(err)
	}
	if _, err := testutil.GitErr(t, dir, "rev-parse", "--verify", "-q", "refs/ckpt/snapshots/s1"); err == nil {
		t.Error("refs/ckpt/snapshots/s1 still exists after delete")
	}
	before.check(t, captureUserState(t, dir), "after delete")
	if got := testutil.Git(t, dir, "status", "--porcelain"); got != status {
		t.Errorf("git status changed after snapshot delete:\n%s\n->\n%s", status, got)
	}
	fsck(t, dir)
}

func TestGitBackendNoCommits(t *testing.T) {
	testutil.NeedGit(t)
	ctx := context.Background()
	dir := t.TempDir()
	testutil.Git(t, dir, "init", "-q", "-b", "trunk")
	writeModeFile(t, filepath.Join(dir, "a.txt"), "a\n", 0o644)
	before := captureUserState(t, dir)
	r := openGitRepo(t, dir, Options{})
	res, err := r.Save(ctx, SaveOptions{Message: "m"})
	if err != nil {
		t.Fatal(err)
	}
	if err := r.setSnapshot(ctx, "first", res.Checkpoint.ID); err != nil {
		t.Fatal(err)
	}
	if err := r.GitSyncError(); err != nil {
		t.Fatal(err)
	}
	before.check(t, captureUserState(t, dir), "after save")
	if _, err := testutil.GitErr(t, dir, "rev-parse", "--verify", "-q", "HEAD"); err == nil {
		t.Error("HEAD now resolves: the backend committed to the user's branch")
	}
	if got := testutil.Git(t, dir, "show", "refs/ckpt/snapshots/first:a.txt"); got != "a\n" {
		t.Errorf("show = %q", got)
	}
	if len(r.Notes()) != 0 {
		t.Errorf("notes for an existing repository: %q", r.Notes())
	}
	fsck(t, dir)
}

func TestGitBackendLazyInit(t *testing.T) {
	testutil.NeedGit(t)
	ctx := context.Background()
	dir := t.TempDir()
	writeModeFile(t, filepath.Join(dir, "a.txt"), "a\n", 0o644)
	r := openGitRepo(t, dir, Options{})
	if n := r.Notes(); len(n) != 1 || !strings.Contains(n[0], "initialised one (branch main)") {
		t.Fatalf("notes = %q", n)
	}
	if got := strings.TrimSpace(testutil.Git(t, dir, "symbolic-ref", "HEAD")); got != "refs/heads/main" {
		t.Errorf("HEAD = %q, want refs/heads/main", got)
	}
	if _, err := r.Save(ctx, SaveOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := r.GitSyncError(); err != nil {
		t.Fatal(err)
	}
	r.Close()
	if got := testutil.Git(t, dir, "status", "--porcelain", "--untracked-files=all"); got != "?? a.txt\n" {
		t.Errorf("git status = %q", got)
	}
	fsck(t, dir)
	// Told once: the next open has nothing to say, and finds the git
	// backend by itself.
	r2, err := Open(ctx, dir, Options{Store: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	defer r2.Close()
	if r2.Config().Backend != BackendGit || len(r2.Notes()) != 0 {
		t.Errorf("reopen: backend %q, notes %q", r2.Config().Backend, r2.Notes())
	}
}

func TestGitBackendLinkedWorktree(t *testing.T) {
	testutil.NeedGit(t)
	ctx := context.Background()
	main := newUserRepo(t)
	testutil.Git(t, main, "commit", "-q", "-m", "staged")
	wt := filepath.Join(t.TempDir(), "wt")
	testutil.Git(t, main, "worktree", "add", "-q", "-b", "feature", wt)
	writeModeFile(t, filepath.Join(wt, "feature.txt"), "in the worktree\n", 0o644)
	beforeMain, beforeWT := captureUserState(t, main), captureUserState(t, wt)

	r := openGitRepo(t, wt, Options{})
	res, err := r.Save(ctx, SaveOptions{Message: "wt"})
	if err != nil {
		t.Fatal(err)
	}
	if err := r.setSnapshot(ctx, "wt1", res.Checkpoint.ID); err != nil {
		t.Fatal(err)
	}
	if err := r.GitSyncError(); err != nil {
		t.Fatal(err)
	}
	// The store is in the worktree's own git dir; refs and objects in the
	// common dir, visible from both work trees.
	if _, err := os.Stat(filepath.Join(main, ".git", "worktrees", "wt", "ckpt", "ckpt.db")); err != nil {
		t.Errorf("store not in the worktree's git dir: %v", err)
	}
	for _, d := range []string{main, wt} {
		if got := testutil.Git(t, d, "show", "refs/ckpt/snapshots/wt1:feature.txt"); got != "in the worktree\n" {
			t.Errorf("%s: show = %q", d, got)
		}
	}
	writeModeFile(t, filepath.Join(wt, "feature.txt"), "changed\n", 0o644)
	if _, err := r.Restore(ctx, "wt1", RestoreOptions{}); err != nil {
		t.Fatal(err)
	}
	beforeMain.check(t, captureUserState(t, main), "main worktree")
	beforeWT.check(t, captureUserState(t, wt), "linked worktree")
	fsck(t, main)
}

func TestGitBackendSubmodule(t *testing.T) {
	testutil.NeedGit(t)
	ctx := context.Background()
	sub := t.TempDir()
	testutil.Git(t, sub, "init", "-q", "-b", "main")
	writeModeFile(t, filepath.Join(sub, "lib.txt"), "lib v1\n", 0o644)
	testutil.Git(t, sub, "add", "-A")
	testutil.Git(t, sub, "commit", "-q", "-m", "lib")
	dir := t.TempDir()
	testutil.Git(t, dir, "init", "-q", "-b", "main")
	writeModeFile(t, filepath.Join(dir, "app.txt"), "app v1\n", 0o644)
	testutil.Git(t, dir, "-c", "protocol.file.allow=always", "submodule", "add", "-q", sub, "deps/lib")
	testutil.Git(t, dir, "commit", "-q", "-m", "with submodule")
	subHead := strings.TrimSpace(testutil.Git(t, filepath.Join(dir, "deps", "lib"), "rev-parse", "HEAD"))
	// A nested repository that is not a submodule, with no commits: skipped,
	// not recorded (git cannot record it either).
	os.MkdirAll(filepath.Join(dir, "scratch"), 0o755)
	testutil.Git(t, filepath.Join(dir, "scratch"), "init", "-q")
	writeModeFile(t, filepath.Join(dir, "scratch", "x"), "x\n", 0o644)

	r := openGitRepo(t, dir, Options{})
	res, err := r.Save(ctx, SaveOptions{Message: "s"})
	if err != nil {
		t.Fatal(err)
	}
	var skipped []string
	for _, s := range res.Skipped {
		skipped = append(skipped, s.Path)
	}
	if strings.Join(skipped, ",") != "deps/lib,scratch" {
		t.Errorf("skipped = %q", skipped)
	}
	if err := r.setSnapshot(ctx, "s1", res.Checkpoint.ID); err != nil {
		t.Fatal(err)
	}
	if err := r.GitSyncError(); err != nil {
		t.Fatal(err)
	}
	if got, want := testutil.Git(t, dir, "ls-tree", "refs/ckpt/snapshots/s1", "deps/lib"), "160000 commit "+subHead+"\tdeps/lib\n"; got != want {
		t.Errorf("ls-tree = %q, want %q", got, want)
	}
	if got := testutil.Git(t, dir, "ls-tree", "-r", "--name-only", "refs/ckpt/snapshots/s1"); got != ".gitmodules\napp.txt\ndeps/lib\n" {
		t.Errorf("files = %q", got)
	}
	fsck(t, dir)
	// Same as what git itself records for the submodule.
	if got, want := testutil.Git(t, dir, "rev-parse", "refs/ckpt/snapshots/s1:deps"), testutil.Git(t, dir, "rev-parse", "HEAD:deps"); got != want {
		t.Errorf("deps tree %s, git's %s", got, want)
	}

	// A restore never touches the submodule, even with files changed in it.
	writeModeFile(t, filepath.Join(dir, "app.txt"), "app v2\n", 0o644)
	writeModeFile(t, filepath.Join(dir, "deps", "lib", "lib.txt"), "edited in the submodule\n", 0o644)
	writeModeFile(t, filepath.Join(dir, "deps", "lib", "new.txt"), "new in the submodule\n", 0o644)
	subStatus := testutil.Git(t, filepath.Join(dir, "deps", "lib"), "status", "--porcelain")
	rr, err := r.Restore(ctx, "s1", RestoreOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got := rr.Changed(); len(got) != 1 || got[0] != "app.txt" {
		t.Errorf("restore changed %q", got)
	}
	if data, _ := os.ReadFile(filepath.Join(dir, "app.txt")); string(data) != "app v1\n" {
		t.Errorf("app.txt = %q", data)
	}
	if data, _ := os.ReadFile(filepath.Join(dir, "deps", "lib", "lib.txt")); string(data) != "edited in the submodule\n" {
		t.Errorf("submodule file touched: %q", data)
	}
	if got := testutil.Git(t, filepath.Join(dir, "deps", "lib"), "status", "--porcelain"); got != subStatus {
		t.Errorf("submodule status %q -> %q", subStatus, got)
	}
	// A partial save inside the submodule is refused.
	if _, err := r.Save(ctx, SaveOptions{Paths: []string{"deps/lib/lib.txt"}}); err == nil || !strings.Contains(err.Error(), "nested git repository deps/lib") {
		t.Errorf("partial save inside a submodule: %v", err)
	}
}

func TestGitBackendTimelinePruning(t *testing.T) {
	testutil.NeedGit(t)
	ctx := context.Background()
	dir := newUserRepo(t)
	cfg := DefaultConfig()
	cfg.TimelineMax = 3
	r := openGitRepo(t, dir, Options{Config: &cfg})
	var ids []ID
	for i := 0; i < 6; i++ {
		writeModeFile(t, filepath.Join(dir, "n.txt"), fmt.Sprint(i), 0o644)
		res, err := r.Save(ctx, SaveOptions{Message: fmt.Sprint("turn ", i)})
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, res.Checkpoint.ID)
	}
	if err := r.GitSyncError(); err != nil {
		t.Fatal(err)
	}
	timeline := func() []string {
		out := strings.Fields(testutil.Git(t, dir, "for-each-ref", "--format=%(refname:lstrip=3)", "refs/ckpt/timeline/"))
		sort.Strings(out)
		return out
	}
	want := []string{ids[3].Short(), ids[4].Short(), ids[5].Short()}
	sort.Strings(want)
	if got := timeline(); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("timeline refs %q, want the newest 3 %q", got, want)
	}
	// Undo moves HEAD back to turn 4 (already there) and keeps turn 5.
	if _, err := r.Undo(ctx); err != nil {
		t.Fatal(err)
	}
	if got := timeline(); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("after undo: %q, want %q", got, want)
	}
	// The map is a cache: without it, the next sync adopts the refs it
	// finds and still prunes them.
	r.Close()
	os.Remove(filepath.Join(dir, ".git", "ckpt", "gitmap.db"))
	r = openGitRepo(t, dir, Options{Config: &cfg})
	writeModeFile(t, filepath.Join(dir, "n.txt"), "after", 0o644)
	res, err := r.Save(ctx, SaveOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if err := r.GitSyncError(); err != nil {
		t.Fatal(err)
	}
	got := timeline()
	if len(got) != 3 || !strings.Contains(strings.Join(got, " "), res.Checkpoint.ID.Short()) {
		t.Errorf("after losing the map: %q", got)
	}
	fsck(t, dir)
}

func TestGitBackendRefPrefix(t *testing.T) {
	testutil.NeedGit(t)
	ctx := context.Background()
	dir := newUserRepo(t)
	r := openGitRepo(t, dir, Options{GitRefPrefix: "refs/sandbox"})
	res, err := r.Save(ctx, SaveOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if err := r.setSnapshot(ctx, "s1", res.Checkpoint.ID); err != nil {
		t.Fatal(err)
	}
	if got := testutil.Git(t, dir, "for-each-ref", "--format=%(refname)", "refs/sandbox/snapshots/*"); got != "refs/sandbox/snapshots/s1\n" {
		t.Errorf("the sandbox snapshot tools' refs: %q", got)
	}
	r.Close()
	// Remembered in config.toml; changing it moves the refs.
	r = openGitRepo(t, dir, Options{})
	if r.Config().GitRefPrefix != "refs/sandbox" {
		t.Fatalf("prefix not remembered: %q", r.Config().GitRefPrefix)
	}
	r.Close()
	r = openGitRepo(t, dir, Options{GitRefPrefix: "refs/other"})
	if _, err := r.Save(ctx, SaveOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := r.GitSyncError(); err != nil {
		t.Fatal(err)
	}
	if got := testutil.Git(t, dir, "for-each-ref", "--format=%(refname)", "refs/sandbox/", "refs/other/snapshots/"); got != "refs/other/snapshots/s1\n" {
		t.Errorf("after changing the prefix: %q", got)
	}
	for _, bad := range []string{"refs/heads/ckpt", "refs/tags", "heads/x", "refs/ckpt/"} {
		if _, err := Open(ctx, dir, Options{Backend: BackendGit, GitRefPrefix: bad}); err == nil {
			t.Errorf("prefix %q accepted", bad)
		}
	}
}

func TestGitBackendForeignRefAndPackedRefs(t *testing.T) {
	testutil.NeedGit(t)
	ctx := context.Background()
	dir := newUserRepo(t)
	userHead := strings.TrimSpace(testutil.Git(t, dir, "rev-parse", "HEAD"))
	testutil.Git(t, dir, "update-ref", "refs/ckpt/snapshots/taken", userHead)
	r := openGitRepo(t, dir, Options{})
	var events []Event
	r.Subscribe(func(e Event) { events = append(events, e) })
	res, err := r.Save(ctx, SaveOptions{})
	if err != nil {
		t.Fatal(err)
	}
	// A ref the store did not write is never moved.
	if err := r.setSnapshot(ctx, "taken", res.Checkpoint.ID); err != nil {
		t.Fatal(err)
	}
	var fe *gitmirror.ForeignRefError
	if err := r.GitSyncError(); !errors.As(err, &fe) || Hint(err) == "" {
		t.Fatalf("sync error = %v (hint %q)", err, Hint(err))
	}
	if got := strings.TrimSpace(testutil.Git(t, dir, "rev-parse", "refs/ckpt/snapshots/taken")); got != userHead {
		t.Errorf("foreign ref moved to %s", got)
	}
	if n := len(events); n == 0 || events[n-1].Kind != EventGitSync {
		t.Errorf("no %s event: %v", EventGitSync, events)
	}
	st, err := r.Status(ctx, false)
	if err != nil || st.Git == nil || !strings.Contains(st.Git.LastError, "refs/ckpt/snapshots/taken") {
		t.Errorf("status does not report the failure: %+v %v", st.Git, err)
	}
	if err := r.deleteSnapshot(ctx, "taken"); err != nil {
		t.Fatal(err)
	}
	if err := r.GitSyncError(); err != nil {
		t.Fatalf("sync after removing the conflict: %v", err)
	}
	if got := strings.TrimSpace(testutil.Git(t, dir, "rev-parse", "refs/ckpt/snapshots/taken")); got != userHead {
		t.Errorf("foreign ref deleted or moved: %s", got)
	}
	// Packed refs are updated and deleted like loose ones.
	if err := r.setSnapshot(ctx, "p", res.Checkpoint.ID); err != nil {
		t.Fatal(err)
	}
	testutil.Git(t, dir, "pack-refs", "--all")
	if err := r.deleteSnapshot(ctx, "p"); err != nil {
		t.Fatal(err)
	}
	if err := r.GitSyncError(); err != nil {
		t.Fatal(err)
	}
	if out := testutil.Git(t, dir, "for-each-ref", "--format=%(refname)", "refs/ckpt/snapshots/"); out != "refs/ckpt/snapshots/taken\n" {
		t.Errorf("after deleting a packed snapshot ref: %q", out)
	}
	// git gc prunes the objects of deleted refs; the map notices.
	testutil.Git(t, dir, "update-ref", "-d", "refs/ckpt/snapshots/taken")
	for _, ref := range strings.Fields(testutil.Git(t, dir, "for-each-ref", "--format=%(refname)", "refs/ckpt/")) {
		testutil.Git(t, dir, "update-ref", "-d", ref)
	}
	testutil.Git(t, dir, "-c", "gc.reflogExpire=now", "-c", "gc.reflogExpireUnreachable=now", "gc", "-q", "--prune=now")
	r.Close()
	os.Remove(filepath.Join(dir, ".git", "ckpt", "gitmap.db-wal"))
	r = openGitRepo(t, dir, Options{})
	if err := r.setSnapshot(ctx, "again", res.Checkpoint.ID); err != nil {
		t.Fatal(err)
	}
	if err := r.GitSyncError(); err != nil {
		t.Fatal(err)
	}
	fsck(t, dir)
	if got := testutil.Git(t, dir, "show", "refs/ckpt/snapshots/again:README"); got != "hello, unstaged\n" {
		t.Errorf("after gc: %q", got)
	}
}

func TestGitBackendTwoStoresAreAmbiguous(t *testing.T) {
	testutil.NeedGit(t)
	ctx := context.Background()
	dir := newUserRepo(t)
	sd := t.TempDir()
	for _, b := range []string{BackendSQLite, BackendGit} {
		r, err := Open(ctx, dir, Options{Store: sd, Backend: b})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := r.Save(ctx, SaveOptions{}); err != nil {
			t.Fatal(err)
		}
		r.Close()
	}
	if _, err := Open(ctx, dir, Options{Store: sd}); err == nil || !strings.Contains(Hint(err), "ckpt config backend") {
		t.Fatalf("two stores, no setting: %v", err)
	}
	if err := WriteConfig(sd, "backend", ptr(BackendGit)); err != nil {
		t.Fatal(err)
	}
	r, err := Open(ctx, dir, Options{Store: sd})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if r.Config().Backend != BackendGit {
		t.Errorf("backend %q", r.Config().Backend)
	}
}

func ptr[T any](v T) *T { return &v }
