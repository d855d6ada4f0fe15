//go:build linux

package ckpt

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/seed1cedbf7c/ckpt/internal/testutil"
)

// Watch mode: with a watcher running, every save's tree
// must be the tree a full scan (no cache, no watcher) finds.

// watchReady opens a repo on files, starts its watcher and makes two saves,
// so that the next save may take unchanged directories from the cache.
func watchReady(t *testing.T, files map[string]string) (*Repo, string) {
	t.Helper()
	r, ws := openTest(t, files)
	startWatcher(t, r)
	ctx := context.Background()
	for i := 0; i < 2; i++ {
		if _, err := r.Save(ctx, SaveOptions{AllowEmpty: true}); err != nil {
			t.Fatal(err)
		}
	}
	return r, ws
}

// saveMatchesFull saves and fails the test if the checkpoint's tree is not
// the one a full scan finds.
func saveMatchesFull(t *testing.T, r *Repo, what string) {
	t.Helper()
	ctx := context.Background()
	res, err := r.Save(ctx, SaveOptions{AllowEmpty: true})
	if err != nil {
		t.Fatal(err)
	}
	if want := fullScanTree(t, r); res.Checkpoint.Tree != want {
		d, _ := r.Diff(ctx, DiffOptions{From: res.Checkpoint.ID.String()})
		var files []string
		if d != nil {
			for _, f := range d.Files {
				files = append(files, string(f.Path))
			}
		}
		t.Fatalf("%s: the save (scanned %d) differs from a full scan; the workspace differs from the checkpoint at %v",
			what, res.Scanned, files)
	}
}

// .git/info/exclude is an ignore file, but the watcher only watches
// <root>/.git/info if it exists when the watcher starts. A `git init`
// after that (or a .git/info recreated, or a worktree whose .git is a
// file) makes exclude edits invisible: unchanged subdirectories are taken
// from the cache with files a full scan now ignores.
func TestWatchInfoExcludeCreatedLater(t *testing.T) {
	r, ws := watchReady(t, map[string]string{"sub/keep.txt": "k\n", "sub/build.log": "log\n"})
	// git init (what matters: .git/info/exclude appears), excluding *.log.
	if err := os.MkdirAll(filepath.Join(ws, ".git", "info"), 0o755); err != nil {
		t.Fatal(err)
	}
	writeFile(t, ws, ".git/info/exclude", "*.log\n")
	saveMatchesFull(t, r, "after git init with an exclude file")
}

// Same root cause: the exclude file of a git worktree (.git is a file
// pointing elsewhere) is never watched.
func TestWatchInfoExcludeOfWorktree(t *testing.T) {
	gitdir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(gitdir, "info"), 0o755); err != nil {
		t.Fatal(err)
	}
	r, _ := watchReady(t, map[string]string{"sub/keep.txt": "k\n", "sub/build.log": "log\n",
		".git": "gitdir: " + gitdir + "\n"})
	if err := os.WriteFile(filepath.Join(gitdir, "info", "exclude"), []byte("*.log\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	saveMatchesFull(t, r, "after editing the worktree's info/exclude")
}

// inotify reports a change to a directory's entry only when it is made
// through a path in that directory. A directory whose scan saw a file with
// other hard links is never taken from the cache, nor any of its entries,
// so a change made through the other link (inside or outside the
// workspace) is seen. A scan sees the link when it stats the file: after
// an event of the file (a save stats only the entries of a directory the
// watcher saw an event for, see docs/guarantees.md).
func TestWatchHardLinkEditedElsewhere(t *testing.T) {
	r, ws := watchReady(t, map[string]string{"sub/notes.txt": "v1\n", "sub/other.txt": "x\n", "other.txt": "o\n"})
	outside := filepath.Join(t.TempDir(), "notes.txt")
	if err := os.Link(filepath.Join(ws, "sub/notes.txt"), outside); err != nil {
		t.Fatal(err)
	}
	// The link itself is not an event in sub (a limit of inotify); the
	// next event of sub/notes.txt makes the scan stat it and see the link.
	writeFile(t, ws, "sub/other.txt", "y\n")
	later := time.Now().Add(time.Second)
	if err := os.Chtimes(filepath.Join(ws, "sub/notes.txt"), later, later); err != nil {
		t.Fatal(err)
	}
	saveMatchesFull(t, r, "after linking")
	saveMatchesFull(t, r, "again")
	f, err := os.OpenFile(outside, os.O_WRONLY|os.O_TRUNC, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString("v2 written through the other link\n")
	f.Close()
	saveMatchesFull(t, r, "after editing through the other hard link")
}

// A directory renamed onto an empty directory that is still open (a shell
// whose cwd it is): the watch of the replaced directory stays registered
// under the name, so the directory now there is never watched, and later
// edits in it are missed for good.
func TestWatchRenameOntoOpenDir(t *testing.T) {
	r, ws := watchReady(t, map[string]string{"a/f.txt": "one\n", "b/g.txt": "g\n", "top.txt": "t\n"})
	if err := os.Remove(filepath.Join(ws, "b/g.txt")); err != nil {
		t.Fatal(err)
	}
	saveMatchesFull(t, r, "after emptying b")
	hold, err := os.Open(filepath.Join(ws, "b")) // e.g. a shell cd'd into b
	if err != nil {
		t.Fatal(err)
	}
	defer hold.Close()
	// rename(2) itself: os.Rename refuses an existing directory as target.
	if err := syscall.Rename(filepath.Join(ws, "a"), filepath.Join(ws, "b")); err != nil {
		t.Fatal(err)
	}
	saveMatchesFull(t, r, "after mv a b") // full: a directory was moved
	saveMatchesFull(t, r, "nothing changed")
	writeFile(t, ws, "b/f.txt", "two: edited after the move\n")
	saveMatchesFull(t, r, "after editing b/f.txt")
}

// --max-file-size is a per-command option. A directory the watcher saw
// unchanged is taken whole from the cache, with whatever the previous
// save's limit let in: a save with a larger limit does not capture the
// big file a full scan now captures (and a smaller limit keeps files it
// should skip).
func TestWatchMaxFileSizeChanged(t *testing.T) {
	ctx := context.Background()
	ws, store := t.TempDir(), t.TempDir()
	writeFile(t, ws, "sub/big.bin", string(make([]byte, 4096)))
	writeFile(t, ws, "sub/small.txt", "s\n")
	writeFile(t, ws, "top.txt", "t\n")
	small, err := Open(ctx, ws, Options{Store: store, MaxFileSize: 1024})
	if err != nil {
		t.Fatal(err)
	}
	startWatcher(t, small)
	for i := 0; i < 2; i++ {
		res, err := small.Save(ctx, SaveOptions{AllowEmpty: true})
		if err != nil {
			t.Fatal(err)
		}
		if i == 0 && len(res.Skipped) != 1 {
			t.Fatalf("skipped %v", res.Skipped)
		}
	}
	small.Close()
	// The same workspace and store, with the default limit (100 MiB).
	r, err := Open(ctx, ws, Options{Store: store})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	writeFile(t, ws, "top.txt", "t2\n") // something to save
	saveMatchesFull(t, r, "a save with a larger --max-file-size")
}

// Git backend: watchAccelOK allows taking directories from the cache when
// HEAD records no nested repository. After a restore to a checkpoint taken
// before a nested repository appeared, HEAD has none while the workspace
// does; a save then reuses the directory holding it, never sees it, and
// records the checkpoint without its gitlink (a full scan records it, and
// a save without the watcher does too).
func TestWatchGitNestedRepoLostAfterRestore(t *testing.T) {
	testutil.NeedGit(t)
	ctx := context.Background()
	dir := t.TempDir()
	testutil.Git(t, dir, "init", "-q", "-b", "main")
	writeFile(t, dir, "app.txt", "app\n")
	writeFile(t, dir, "other/x.txt", "x0\n")
	writeFile(t, dir, "sub/keep.txt", "k\n")
	r := openGitRepo(t, dir, Options{})
	startWatcher(t, r)
	c0 := mustSave(t, r, "before the nested repository")
	lib := filepath.Join(dir, "sub", "lib")
	writeFile(t, dir, "sub/lib/lib.txt", "lib\n")
	testutil.Git(t, lib, "init", "-q", "-b", "main")
	testutil.Git(t, lib, "add", "-A")
	testutil.Git(t, lib, "commit", "-q", "-m", "lib")
	writeFile(t, dir, "other/x.txt", "x1\n")
	c1 := mustSave(t, r, "with the nested repository")
	if c1.Meta["gitlinks"] == "" {
		t.Fatalf("c1 has no gitlinks: %v", c1.Meta)
	}
	if _, err := r.Restore(ctx, c0.ID.String(), RestoreOptions{}); err != nil {
		t.Fatal(err)
	}
	writeFile(t, dir, "app.txt", "app 2\n")
	c2 := mustSave(t, r, "after the restore")
	if c2.Meta["gitlinks"] == "" {
		t.Fatalf("the save after the restore lost the nested repository sub/lib (gitlinks %q; c1 had %q)", c2.Meta["gitlinks"], c1.Meta["gitlinks"])
	}
}

// Writes during saves: once the writer stops, the next save equals a full
// scan (changes made while a save ran are never lost for good).
func TestWatchWritesDuringSaves(t *testing.T) {
	files := map[string]string{}
	for i := 0; i < 30; i++ {
		files[fmt.Sprintf("d%d/e%d/f%d.txt", i%5, i%3, i)] = fmt.Sprint(i)
	}
	r, ws := watchReady(t, files)
	ctx := context.Background()
	for round := 0; round < 5; round++ {
		stop := make(chan struct{})
		done := make(chan struct{})
		go func() {
			defer close(done)
			rnd := rand.New(rand.NewPCG(uint64(round), 1))
			for k := 0; ; k++ {
				select {
				case <-stop:
					return
				default:
				}
				d := fmt.Sprintf("d%d/e%d", rnd.IntN(5), rnd.IntN(4))
				switch rnd.IntN(4) {
				case 0:
					os.MkdirAll(filepath.Join(ws, d, fmt.Sprint("n", k%7)), 0o755)
					os.WriteFile(filepath.Join(ws, d, fmt.Sprint("n", k%7), "g.txt"), []byte(fmt.Sprint(k)), 0o644)
				case 1:
					os.MkdirAll(filepath.Join(ws, d), 0o755)
					os.WriteFile(filepath.Join(ws, d, fmt.Sprint("f", k%11, ".txt")), []byte(fmt.Sprint(k)), 0o644)
				case 2:
					os.Remove(filepath.Join(ws, d, fmt.Sprint("f", k%11, ".txt")))
				case 3:
					os.Rename(filepath.Join(ws, d, fmt.Sprint("f", k%11, ".txt")), filepath.Join(ws, d, fmt.Sprint("f", (k+1)%11, ".txt")))
				}
			}
		}()
		for s := 0; s < 4; s++ {
			if _, err := r.Save(ctx, SaveOptions{AllowEmpty: true}); err != nil {
				close(stop)
				<-done
				t.Fatal(err)
			}
		}
		close(stop)
		<-done
		saveMatchesFull(t, r, fmt.Sprint("round ", round, " after the writer stopped"))
		saveMatchesFull(t, r, fmt.Sprint("round ", round, " again"))
	}
}

// The watcher watches the directories the stat cache holds and those
// created since it started. A directory that existed before, but holds no
// captured entry (empty, or only ignored files), has no cache block, so it
// is never watched: a file created in it later raises no event, its parent
// stays clean, and the parent is taken whole from the cache without the
// new file.
func TestWatchFileInPreexistingEmptyDir(t *testing.T) {
	ctx := context.Background()
	r, ws := openTest(t, map[string]string{"a/keep.txt": "k\n", "top.txt": "t\n",
		".gitignore": "*.log\n", "a/logs/old.log": "ignored\n"})
	if err := os.MkdirAll(filepath.Join(ws, "a", "empty"), 0o755); err != nil {
		t.Fatal(err)
	}
	startWatcher(t, r)
	for i := 0; i < 2; i++ {
		if _, err := r.Save(ctx, SaveOptions{AllowEmpty: true}); err != nil {
			t.Fatal(err)
		}
	}
	writeFile(t, ws, "a/empty/new.txt", "work in a directory that was empty\n")
	writeFile(t, ws, "a/logs/notes.txt", "not ignored\n")
	saveMatchesFull(t, r, "after writing into directories that held nothing captured")
}

// An ignore file with another hard link, written through that link: no
// event in its directory. The scan reads that directory (it holds a file
// with other links), but its subdirectories, unchanged, were taken from
// the cache under the old rules.
func TestWatchIgnoreFileWrittenThroughLink(t *testing.T) {
	r, ws := openTest(t, map[string]string{"sub/.gitignore": "*.tmp\n", "sub/deep/x.txt": "x\n", "sub/deep/y.txt": "y\n", "other/z.txt": "z\n"})
	outside := filepath.Join(t.TempDir(), "gitignore")
	if err := os.Link(filepath.Join(ws, "sub/.gitignore"), outside); err != nil {
		t.Fatal(err)
	}
	startWatcher(t, r)
	saveMatchesFull(t, r, "first save")
	saveMatchesFull(t, r, "second save")
	f, err := os.OpenFile(outside, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString("x.txt\n")
	f.Close()
	saveMatchesFull(t, r, "after adding a rule through the other link")
}
