//go:build linux

package faults

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/seed1cedbf7c/ckpt"
	"github.com/seed1cedbf7c/ckpt/internal/testutil"
)

// Class 7: watch mode and hard links. A change made through one hard link
// of a file is an inotify event only in the directory of that link. A
// watch-mode save takes directories without events whole from the stat
// cache, so a link made inside the workspace after the watcher started,
// and an edit through it, must never leave the other link's directory
// stale in a checkpoint: every save with the watcher equals a full scan.

// startWatcherProcess runs `ckpt watch` (the real CLI, in the foreground)
// for the workspace until the test ends, and waits until it answers.
func (e *env) startWatcherProcess() {
	e.T.Helper()
	c := e.Cmd("watch", "--idle", "10m")
	if err := c.Start(); err != nil {
		e.T.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- c.Wait() }()
	e.T.Cleanup(func() {
		e.Run("watch", "--stop")
		select {
		case <-done:
		case <-time.After(5 * time.Second):
			c.Process.Kill()
			<-done
		}
	})
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); {
		if code, _, _ := e.Run("watch", "--status"); code == 0 {
			return
		}
		select {
		case err := <-done:
			e.T.Fatalf("ckpt watch exited at once: %v", err)
		case <-time.After(20 * time.Millisecond):
		}
	}
	e.T.Fatal("ckpt watch did not answer")
}

// saveMatchesFullCLI runs `ckpt save` (which asks the watcher) and fails
// unless `ckpt diff` (a full scan: diffs never use the watcher) finds the
// workspace equal to the checkpoint just made.
func (e *env) saveMatchesFullCLI(what string) {
	e.T.Helper()
	e.Must("save", "-q", "--allow-empty", "-m", what)
	if out := e.Must("diff", "--name-only"); strings.TrimSpace(out) != "" {
		e.T.Fatalf("%s: the watch-mode save differs from a full scan at:\n%s", what, out)
	}
}

// appendTo appends to a file through the given path (a hard link of it).
func appendTo(t *testing.T, path, s string) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteString(s); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
}

// The reported hole: a file f in A, the watcher running, `ln A/f B/g`,
// then an edit through B/g. The link raises an event in B only, so A
// stayed clean, was never seen holding a linked file, and every later
// save took it from the cache with f's old content.
func TestWatchHardLinkMadeAfterStart(t *testing.T) {
	e := newEnv(t)
	e.Write(map[string]string{"A/f": "v1\n", "A/other": "o\n", "B/x": "x\n", "top.txt": "t\n"})
	e.Must("save", "-q", "-m", "before the watcher")
	e.startWatcherProcess()
	e.saveMatchesFullCLI("first save with the watcher (reads everything)")
	e.saveMatchesFullCLI("second save (takes clean directories from the cache)")

	a, g := filepath.Join(e.WS, "A", "f"), filepath.Join(e.WS, "B", "g")
	if err := os.Link(a, g); err != nil {
		t.Fatal(err)
	}
	e.saveMatchesFullCLI("after ln A/f B/g")
	appendTo(t, g, "v2 written through B/g\n")
	e.saveMatchesFullCLI("after an edit through B/g")
	appendTo(t, g, "v3 written through B/g\n")
	e.saveMatchesFullCLI("after a second edit through B/g")
	appendTo(t, a, "v4 written through A/f\n")
	e.saveMatchesFullCLI("after an edit through A/f")

	// The link goes away again; edits through the remaining name are
	// events in its own directory.
	if err := os.Remove(g); err != nil {
		t.Fatal(err)
	}
	e.saveMatchesFullCLI("after rm B/g")
	appendTo(t, a, "v5\n")
	e.saveMatchesFullCLI("after an edit through A/f alone")
	if got := e.Read("A/f"); got != "v1\nv2 written through B/g\nv3 written through B/g\nv4 written through A/f\nv5\n" {
		t.Fatalf("A/f = %q", got)
	}
}

// watchRepo opens the workspace in this process and runs its watcher
// (in-process too) until the test ends.
func (e *env) watchRepo() *ckpt.Repo {
	e.T.Helper()
	r := e.Open(ckpt.Options{})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- r.Watch(ctx, ckpt.WatchOptions{}) }()
	e.T.Cleanup(func() { cancel(); <-done })
	for i := 0; i < 500; i++ {
		if _, err := r.WatchStatus(context.Background()); err == nil {
			return r
		}
		time.Sleep(10 * time.Millisecond)
	}
	e.T.Fatal("the watcher did not start")
	return nil
}

// saveMatchesFull saves with r (which asks the watcher) and fails unless
// a full scan (r.Diff never uses the watcher) finds the workspace equal to
// the checkpoint. It reports whether the save took directories from the
// cache.
func saveMatchesFull(t *testing.T, r *ckpt.Repo, what string) bool {
	t.Helper()
	ctx := context.Background()
	res, err := r.Save(ctx, ckpt.SaveOptions{AllowEmpty: true, Message: what})
	if err != nil {
		t.Fatalf("%s: save: %v", what, err)
	}
	d, err := r.Diff(ctx, ckpt.DiffOptions{From: res.Checkpoint.ID.String()})
	if err != nil {
		t.Fatalf("%s: diff: %v", what, err)
	}
	if len(d.Files) != 0 {
		var paths []string
		for _, f := range d.Files {
			paths = append(paths, string(f.Path))
		}
		t.Fatalf("%s: the watch-mode save (scanned %d) differs from a full scan at %v", what, res.Scanned, paths)
	}
	return res.Scanned < 0
}

// churn is a workspace's files as the randomized test knows them.
type churn struct {
	t     *testing.T
	ws    string
	rnd   *rand.Rand
	dirs  []string // workspace-relative
	files []string // regular files, workspace-relative
	seq   int
	// dead are descriptors opened through a link whose name was removed
	// since; their names are never given again (a write through such a
	// descriptor after its name went to another file is beyond inotify,
	// see docs/guarantees.md).
	dead []*os.File
	log  []string
}

func (c *churn) abs(rel string) string { return filepath.Join(c.ws, filepath.FromSlash(rel)) }

func (c *churn) newName(dir string) string {
	c.seq++
	return path.Join(dir, fmt.Sprintf("n%d", c.seq))
}

func (c *churn) pick() string { return c.files[c.rnd.IntN(len(c.files))] }

func (c *churn) pickDir() string { return c.dirs[c.rnd.IntN(len(c.dirs))] }

func (c *churn) drop(rel string) {
	c.files = slices.DeleteFunc(c.files, func(f string) bool { return f == rel })
}

func (c *churn) note(format string, a ...any) { c.log = append(c.log, fmt.Sprintf(format, a...)) }

func (c *churn) ok(err error) {
	c.t.Helper()
	if err != nil {
		c.t.Fatalf("%v\nops: %s", err, strings.Join(c.log, "; "))
	}
}

// step makes one random change; plain: no new link, directory or write
// through a removed link (changes the watcher vouches for).
func (c *churn) step(plain bool) {
	if len(c.files) < 3 {
		f := c.newName(c.pickDir())
		c.ok(os.WriteFile(c.abs(f), []byte("new "+f+"\n"), 0o644))
		c.files = append(c.files, f)
		c.note("create %s", f)
		return
	}
	op := c.rnd.IntN(12)
	if plain {
		op = 2 + c.rnd.IntN(5)
	}
	switch op {
	case 0, 1: // a hard link in another (or the same) directory
		src, dst := c.pick(), c.newName(c.pickDir())
		c.ok(os.Link(c.abs(src), c.abs(dst)))
		c.files = append(c.files, dst)
		c.note("ln %s %s", src, dst)
	case 2, 3: // an edit through some name of a file
		f := c.pick()
		if c.rnd.IntN(2) == 0 {
			appendTo(c.t, c.abs(f), fmt.Sprintf("edit %d through %s\n", c.seq, f))
		} else {
			// Truncate and rewrite in place, as editors without backup do.
			c.ok(os.WriteFile(c.abs(f), []byte(fmt.Sprintf("rewritten %d through %s\n", c.seq, f)), 0o644))
		}
		c.seq++
		c.note("edit %s", f)
	case 4: // chmod through some name
		f := c.pick()
		mode := os.FileMode(0o644)
		if c.rnd.IntN(2) == 0 {
			mode = 0o755
		}
		c.ok(os.Chmod(c.abs(f), mode))
		c.note("chmod %o %s", mode, f)
	case 5: // remove a name
		f := c.pick()
		c.ok(os.Remove(c.abs(f)))
		c.drop(f)
		c.note("rm %s", f)
	case 6: // rename, to a new name or over another file
		src := c.pick()
		dst := c.newName(c.pickDir())
		if c.rnd.IntN(3) == 0 {
			dst = c.pick()
		}
		if dst == src {
			return
		}
		c.ok(os.Rename(c.abs(src), c.abs(dst)))
		c.drop(src)
		if !slices.Contains(c.files, dst) {
			c.files = append(c.files, dst)
		}
		c.note("mv %s %s", src, dst)
	case 7: // a link made, written through and removed at once
		src, tmp := c.pick(), c.newName(c.pickDir())
		c.ok(os.Link(c.abs(src), c.abs(tmp)))
		appendTo(c.t, c.abs(tmp), fmt.Sprintf("through the short-lived %s\n", tmp))
		c.ok(os.Remove(c.abs(tmp)))
		c.note("ln %s %s, write, rm", src, tmp)
	case 8: // ... and a plain file put under the same name at once
		src, tmp := c.pick(), c.newName(c.pickDir())
		c.ok(os.Link(c.abs(src), c.abs(tmp)))
		appendTo(c.t, c.abs(tmp), fmt.Sprintf("through the short-lived %s\n", tmp))
		c.ok(os.Remove(c.abs(tmp)))
		c.ok(os.WriteFile(c.abs(tmp), []byte("plain\n"), 0o644))
		c.files = append(c.files, tmp)
		c.note("ln %s %s, write, rm, create", src, tmp)
	case 9: // a descriptor kept through a link whose name goes
		src, tmp := c.pick(), c.newName(c.pickDir())
		c.ok(os.Link(c.abs(src), c.abs(tmp)))
		f, err := os.OpenFile(c.abs(tmp), os.O_WRONLY|os.O_APPEND, 0)
		c.ok(err)
		c.ok(os.Remove(c.abs(tmp)))
		c.dead = append(c.dead, f)
		c.note("ln %s %s, open, rm", src, tmp)
	case 10: // a write through such a descriptor
		if len(c.dead) == 0 {
			return
		}
		f := c.dead[c.rnd.IntN(len(c.dead))]
		_, err := f.WriteString(fmt.Sprintf("through a removed link %d\n", c.seq))
		c.ok(err)
		c.seq++
		c.note("write through the removed %s", f.Name()[len(c.ws)+1:])
	case 11: // a new directory, maybe with a link in it
		d := c.newName(c.pickDir())
		c.ok(os.Mkdir(c.abs(d), 0o755))
		c.dirs = append(c.dirs, d)
		c.note("mkdir %s", d)
		if c.rnd.IntN(2) == 0 {
			src, dst := c.pick(), path.Join(d, "g")
			c.ok(os.Link(c.abs(src), c.abs(dst)))
			appendTo(c.t, c.abs(dst), "through a link in a new directory\n")
			if c.rnd.IntN(2) == 0 {
				c.ok(os.Remove(c.abs(dst)))
				c.note("ln %s %s, write, rm", src, dst)
			} else {
				c.files = append(c.files, dst)
				c.note("ln %s %s, write", src, dst)
			}
		}
	}
}

// Random churn with hard links made inside the workspace while the
// watcher runs: edits and chmods through either link, renames (also over
// other files), removals, links made and removed before the watcher can
// look, writes through descriptors whose link was removed, new
// directories. After every watch-mode save, the checkpoint equals a full
// scan of the workspace.
func TestWatchHardLinkChurn(t *testing.T) {
	seeds, rounds := 12, 60
	if testing.Short() {
		seeds, rounds = 3, 25
	}
	reused, saves := 0, 0
	for seed := range seeds {
		t.Run(fmt.Sprint("seed", seed), func(t *testing.T) {
			e := newEnv(t)
			c := &churn{t: t, ws: e.WS, rnd: rand.New(rand.NewPCG(uint64(seed), 7)), dirs: []string{"", "a", "a/b", "c", "d/e"}}
			for _, d := range c.dirs {
				for i := range 4 {
					f := path.Join(d, fmt.Sprintf("f%d", i))
					c.files = append(c.files, f)
					e.Write(map[string]string{f: "initial " + f + "\n"})
				}
			}
			e.Must("save", "-q", "-m", "before the watcher")
			r := e.watchRepo()
			defer func() {
				for _, f := range c.dead {
					f.Close()
				}
			}()
			saveMatchesFull(t, r, "first save with the watcher")
			for round := range rounds {
				plain := c.rnd.IntN(3) == 0
				for range 1 + c.rnd.IntN(4) {
					c.step(plain)
				}
				what := fmt.Sprintf("seed %d round %d after: %s", seed, round, strings.Join(c.log, "; "))
				if saveMatchesFull(t, r, what) {
					reused++
				}
				saves++
				if c.rnd.IntN(4) == 0 {
					c.log = c.log[:0]
				}
			}
		})
	}
	t.Logf("%d of %d watch-mode saves took directories from the cache", reused, saves)
	if reused == 0 {
		t.Fatal("no save took a directory from the cache: the watcher was not used")
	}
}

// Class 15 with watch mode: directories the watcher cannot watch (their
// path is longer than PATH_MAX) are never taken from the cache unseen.
func TestDeeperThanPathMaxWatched(t *testing.T) {
	testutil.Long(t, "builds trees deeper than PATH_MAX")
	e := newEnv(t)
	_, deep, writeAt, _ := deepTree(t, e)
	write := func(data string) { writeAt(deep+"/bottom.txt", data) }
	write("v1\n")
	r := e.watchRepo()
	saveMatchesFull(t, r, "first save with the watcher")
	for i := range 3 {
		write(fmt.Sprintf("v%d edited\n", i+2))
		saveMatchesFull(t, r, fmt.Sprintf("save after deep edit %d", i+1))
	}
}
