package attack

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/seed1cedbf7c/ckpt"
	"github.com/seed1cedbf7c/ckpt/internal/testutil"
	"github.com/seed1cedbf7c/ckpt/test/internal/ckptenv"
)

// DEFECT. A FIFO where a directory the restore changed was makes the
// restore hang for ever, holding the store's lock (every later ckpt
// command waits, then fails after CKPT_LOCK_TIMEOUT). After its changes,
// a small restore fsyncs the directories it changed: syncDirs
// (internal/restore/restore.go) opens each with Root.Open, a plain
// O_RDONLY open — no O_DIRECTORY, no O_NONBLOCK — and open(2) of a FIFO
// blocks until a writer comes. An agent only has to make a FIFO named like
// a directory the restore just pruned. (Scans open nothing that is not a
// regular file; docs/guarantees.md: FIFOs are "never opened".) Fix: open
// with O_DIRECTORY (Root.OpenDirFD), which fails at once on anything else.
func TestFIFOWhereRestoreSyncsDirectory(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t)
	e.Write(map[string]string{"a.txt": "a\n"})
	r := e.Open(ckpt.Options{})
	v1, err := r.Save(ctx, ckpt.SaveOptions{Message: "v1"})
	if err != nil {
		t.Fatal(err)
	}
	e.Write(map[string]string{"d/x.txt": "x\n"})
	if _, err := r.Save(ctx, ckpt.SaveOptions{Message: "v2"}); err != nil {
		t.Fatal(err)
	}
	fifo := filepath.Join(e.WS, "d")
	// Change 1 deletes d/x.txt, change 2 prunes d: then d is a FIFO.
	defer ckptenv.Once("restore/change(2)", func(string) error {
		if err := testutil.Mkfifo(fifo, 0o644); err != nil {
			t.Error(err)
		}
		return nil
	})()
	done := make(chan error, 1)
	go func() {
		_, err := r.Restore(ctx, v1.Checkpoint.ID.String(), ckpt.RestoreOptions{})
		done <- err
	}()
	select {
	case err := <-done:
		t.Logf("restore: %v", err)
	case <-time.After(3 * time.Second):
		// Let it go: a writer opens the FIFO, and the restore's open returns.
		if f, err := os.OpenFile(fifo, os.O_WRONLY, 0); err == nil {
			f.Close()
		}
		<-done
		t.Fatal("the restore hung opening a FIFO where a directory it changed was")
	}
}

// DEFECT. The same blocking open, deterministically reachable: a restore
// creating a file where the workspace has a tree of empty directories
// (not recorded, so nothing to lose) removes them first, with
// removeEmptyDirs (internal/restore/restore.go), which opens the path
// with Root.Open — O_RDONLY, no O_DIRECTORY. A FIFO made there after the
// restore checked the path (restore/before-change) hangs it for ever with
// the store locked. onlyEmptyDirs opens the same way. Both should list
// the directory with Root.ReadDir (O_DIRECTORY).
func TestFIFOWhereEmptyDirectoryWas(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t)
	e.Write(map[string]string{"a.txt": "a\n", "p": "p is a file\n"})
	r := e.Open(ckpt.Options{})
	v1, err := r.Save(ctx, ckpt.SaveOptions{Message: "v1"})
	if err != nil {
		t.Fatal(err)
	}
	os.Remove(filepath.Join(e.WS, "p"))
	if _, err := r.Save(ctx, ckpt.SaveOptions{Message: "v2"}); err != nil {
		t.Fatal(err)
	}
	// Empty directories where the restore will create the file p.
	if err := os.MkdirAll(filepath.Join(e.WS, "p", "q"), 0o755); err != nil {
		t.Fatal(err)
	}
	fifo := filepath.Join(e.WS, "p")
	defer ckptenv.Once("restore/before-change", func(string) error {
		os.Remove(filepath.Join(fifo, "q"))
		os.Remove(fifo)
		if err := testutil.Mkfifo(fifo, 0o644); err != nil {
			t.Error(err)
		}
		return nil
	})()
	done := make(chan error, 1)
	go func() {
		_, err := r.Restore(ctx, v1.Checkpoint.ID.String(), ckpt.RestoreOptions{})
		done <- err
	}()
	select {
	case err := <-done:
		t.Logf("restore: %v", err)
	case <-time.After(3 * time.Second):
		if f, err := os.OpenFile(fifo, os.O_WRONLY, 0); err == nil {
			f.Close()
		}
		<-done
		t.Fatal("the restore hung opening a FIFO where a tree of empty directories was")
	}
	if fi, err := os.Lstat(fifo); err != nil || fi.Mode()&os.ModeNamedPipe == 0 {
		t.Fatalf("the FIFO made during the restore was replaced: %v %v", fi, err)
	}
}

// DEFECT. A diff against the working tree reads each changed file's
// content after its scan (DiffResult.WritePatch → readWorking, diff.go)
// with a plain O_RDONLY open. A FIFO put where the scan saw the file —
// here between Repo.Diff and WritePatch, the two calls `ckpt diff` and the
// MCP server make in a row — makes the diff hang for ever. The scan itself
// opens with O_NONBLOCK and checks the type of what it opened; readWorking
// should too (and fail "changed while read").
func TestFIFOWhereDiffReadsAFile(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t)
	e.Write(map[string]string{"f.txt": "one\n"})
	r := e.Open(ckpt.Options{})
	if _, err := r.Save(ctx, ckpt.SaveOptions{Message: "v1"}); err != nil {
		t.Fatal(err)
	}
	e.Write(map[string]string{"f.txt": "two\n"})
	d, err := r.Diff(ctx, ckpt.DiffOptions{})
	if err != nil {
		t.Fatal(err)
	}
	fifo := filepath.Join(e.WS, "f.txt")
	os.Remove(fifo)
	if err := testutil.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- d.WritePatch(ctx, io.Discard) }()
	select {
	case err := <-done:
		t.Logf("WritePatch: %v", err)
	case <-time.After(3 * time.Second):
		if f, err := os.OpenFile(fifo, os.O_WRONLY, 0); err == nil {
			f.Close()
		}
		<-done
		t.Fatal("the diff hung opening a FIFO where its scan saw a file")
	}
}
