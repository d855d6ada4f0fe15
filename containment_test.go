package ckpt

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/seed1cedbf7c/ckpt/internal/object"
	"github.com/seed1cedbf7c/ckpt/internal/store"
)

// A symlink in the workspace that points outside it is never written
// through: restoring a directory where it stands replaces the symlink, and
// an ignored one (no checkpoint has it) is left alone with the write kept.
func TestSymlinkOutsideNeverWrittenThrough(t *testing.T) {
	ctx := context.Background()
	ws, outside := t.TempDir(), t.TempDir()
	os.MkdirAll(filepath.Join(ws, "out"), 0o755)
	os.WriteFile(filepath.Join(ws, "out/x"), []byte("inside\n"), 0o644)
	os.MkdirAll(filepath.Join(ws, "logs"), 0o755)
	os.WriteFile(filepath.Join(ws, "logs/y"), []byte("inside\n"), 0o644)
	repo, err := Open(ctx, ws, Options{Store: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	defer repo.Close()
	a, err := repo.Save(ctx, SaveOptions{})
	if err != nil {
		t.Fatal(err)
	}
	// Replace both directories with symlinks to the outside; "logs" is
	// also ignored from now on, so no checkpoint will hold it.
	os.RemoveAll(filepath.Join(ws, "out"))
	os.RemoveAll(filepath.Join(ws, "logs"))
	os.Symlink(outside, filepath.Join(ws, "out"))
	os.Symlink(outside, filepath.Join(ws, "logs"))
	os.WriteFile(filepath.Join(ws, ".gitignore"), []byte("/logs\n"), 0o644)
	res, err := repo.Restore(ctx, a.Checkpoint.ID.String(), RestoreOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if des, _ := os.ReadDir(outside); len(des) != 0 {
		t.Fatalf("restore wrote outside the workspace: %v", des)
	}
	if fi, err := os.Lstat(filepath.Join(ws, "out")); err != nil || !fi.IsDir() {
		t.Fatalf("out should be a real directory again: %v %v", fi, err)
	}
	kept := false
	for _, a := range res.Actions {
		if a.Path == "logs/y" && a.Op == "keep" {
			kept = true
		}
	}
	if !kept {
		t.Fatalf("logs/y should be kept (an ignored symlink to outside stands there): %+v", res.Actions)
	}
	if fi, _ := os.Lstat(filepath.Join(ws, "logs")); fi.Mode()&os.ModeSymlink == 0 {
		t.Fatal("the ignored symlink was replaced")
	}
}

// Store data naming paths with "..", absolute paths, NUL or "/" inside a
// name is refused (as a corrupt object) before anything is written.
func TestHostileStoreDataRefused(t *testing.T) {
	ctx := context.Background()
	for _, name := range []string{"..", ".", "", "a/b", "nul\x00byte", "/abs"} {
		t.Run(strings.ReplaceAll(name, "\x00", "NUL"), func(t *testing.T) {
			ws := t.TempDir()
			os.WriteFile(filepath.Join(ws, "keep.txt"), []byte("keep\n"), 0o644)
			repo, err := Open(ctx, ws, Options{Backend: BackendMemory})
			if err != nil {
				t.Fatal(err)
			}
			defer repo.Close()
			if _, err := repo.Save(ctx, SaveOptions{}); err != nil {
				t.Fatal(err)
			}
			// Hand-craft a tree with a hostile name and a checkpoint on it:
			// both hash correctly, so only validation can stop them.
			blob := []byte("evil\n")
			data := object.AppendEntry(nil, object.Entry{Name: name, Mode: object.ModeFile | 0o644, Size: 5, ID: object.Sum(blob)})
			tid := object.Sum(data)
			var cid object.ID
			repo.st.Update(ctx, func(tx store.Tx) error {
				tx.PutBlob(object.Sum(blob), blob)
				tx.PutTree(tid, data)
				cid, err = tx.PutCheckpoint(&object.Checkpoint{Tree: tid, Time: time.Unix(1, 0), Kind: KindManual}, store.Stats{})
				return err
			})
			_, err = repo.Restore(ctx, cid.String(), RestoreOptions{})
			if !errors.Is(err, ErrCorrupt) {
				t.Fatalf("restore of a tree naming %q: got %v, want ErrCorrupt", name, err)
			}
			des, _ := os.ReadDir(ws)
			if len(des) != 1 || des[0].Name() != "keep.txt" {
				t.Fatalf("workspace changed: %v", des)
			}
		})
	}
	// Partial checkpoints' paths and manifests are validated too.
	for _, p := range []string{"../x", "/etc/passwd", "a/../b", "a//b", "x\x00y"} {
		cp := &object.Checkpoint{Tree: object.EmptyTree, Time: time.Unix(1, 0), Kind: KindEdit, Paths: []string{p}}
		if _, err := object.DecodeCheckpoint(cp.Encode()); err == nil {
			t.Errorf("checkpoint path %q accepted", p)
		}
		var m Manifest
		j := `{"files": {` + strings.ReplaceAll(string(mustJSON(p)), `\u0000`, `\u0000`) + `: {"sha256": "x", "size": 1, "mode": "644"}}}`
		if err := m.UnmarshalJSON([]byte(j)); err == nil {
			t.Errorf("manifest path %q accepted", p)
		}
	}
}

func mustJSON(s string) []byte {
	b, _ := (Path(s)).MarshalJSON()
	return b
}

// A directory that the target has as a file is replaced even when it holds
// empty directories (untracked, e.g. left by an interrupted restore), but
// never when it holds a file no checkpoint has.
func TestDirWithEmptyDirsBecomesFile(t *testing.T) {
	ctx := context.Background()
	ws := t.TempDir()
	os.WriteFile(filepath.Join(ws, "d"), []byte("a file\n"), 0o644)
	repo, err := Open(ctx, ws, Options{Store: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	defer repo.Close()
	a, _ := repo.Save(ctx, SaveOptions{})
	os.Remove(filepath.Join(ws, "d"))
	os.MkdirAll(filepath.Join(ws, "d/x/y/z"), 0o755)
	os.MkdirAll(filepath.Join(ws, "d/w"), 0o755)
	os.WriteFile(filepath.Join(ws, "d/x/f"), []byte("tracked\n"), 0o644)
	if _, err := repo.Save(ctx, SaveOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := repo.Restore(ctx, a.Checkpoint.ID.String(), RestoreOptions{}); err != nil {
		t.Fatalf("restore: %v", err)
	}
	if b, err := os.ReadFile(filepath.Join(ws, "d")); err != nil || string(b) != "a file\n" {
		t.Fatalf("d = %q, %v", b, err)
	}
}
