//go:build unix

package faults

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/seed1cedbf7c/ckpt"
	"github.com/seed1cedbf7c/ckpt/internal/failpoint"
	"github.com/seed1cedbf7c/ckpt/internal/treegen"
	"github.com/seed1cedbf7c/ckpt/test/internal/ckptenv"
)

// Class 3: a directory replaced by a symlink while a restore runs is never
// written or deleted through: not into an ignored directory of the
// workspace, not outside it.
func TestSymlinkSwapDuringRestore(t *testing.T) {
	for _, to := range []string{"inside", "outside"} {
		t.Run(to, func(t *testing.T) {
			ctx := context.Background()
			e := newEnv(t)
			e.Write(map[string]string{".gitignore": "ign/\n", "d/f": "v1\n", "d/g": "v1\n", "top": "v1\n",
				"ign/f": "ignored f\n", "ign/g": "ignored g\n", "ign/keep": "ignored keep\n"})
			outside := t.TempDir()
			os.WriteFile(filepath.Join(outside, "f"), []byte("outside f\n"), 0o644)
			os.WriteFile(filepath.Join(outside, "g"), []byte("outside g\n"), 0o644)
			target := "ign"
			if to == "outside" {
				target = outside
			}
			r := e.Open(ckpt.Options{})
			v1, err := r.Save(ctx, ckpt.SaveOptions{Message: "v1"})
			if err != nil {
				t.Fatal(err)
			}
			e.Write(map[string]string{"d/f": "v2\n", "d/g": "v2\n", "d/new": "v2\n", "top": "v2\n"})
			if _, err := r.Save(ctx, ckpt.SaveOptions{Message: "v2"}); err != nil {
				t.Fatal(err)
			}
			ignBefore := snapshotDir(t, filepath.Join(e.WS, "ign"))
			outBefore := snapshotDir(t, outside)
			// After staging, before the first change: d becomes a symlink.
			defer ckptenv.Once("restore/before-change", func(string) error {
				if err := os.Rename(filepath.Join(e.WS, "d"), filepath.Join(e.WS, "d.moved")); err != nil {
					t.Error(err)
				}
				if err := os.Symlink(target, filepath.Join(e.WS, "d")); err != nil {
					t.Error(err)
				}
				return nil
			})()
			_, err = r.Restore(ctx, v1.Checkpoint.ID.String(), ckpt.RestoreOptions{})
			t.Logf("restore: %v", err)
			if d := treegen.Diff(ignBefore, snapshotDir(t, filepath.Join(e.WS, "ign"))); d != "" {
				t.Errorf("the restore wrote through the symlink into the ignored directory:\n%s", d)
			}
			if d := treegen.Diff(outBefore, snapshotDir(t, outside)); d != "" {
				t.Errorf("the restore wrote through the symlink outside the workspace:\n%s", d)
			}
			if fi, err := os.Lstat(filepath.Join(e.WS, "d")); err == nil && fi.Mode()&os.ModeSymlink != 0 && err == nil {
				// The user's symlink is still there: the restore stopped.
				if err == nil && e.Read("d.moved/f") != "v2\n" {
					t.Errorf("d.moved/f = %q", e.Read("d.moved/f"))
				}
			}
		})
	}
}

// Class 3, save side: a directory swapped for a symlink while a save
// runs is never followed; no file from where the link points is recorded.
func TestSymlinkSwapDuringSave(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t)
	e.Write(map[string]string{"a/b/c/f": "mine\n", "top": "t\n"})
	// Outside, a tree shaped like the workspace's, full of secrets.
	outside := t.TempDir()
	for _, p := range []string{"secret", "b/secret", "b/c/secret", "c/secret", "c/f"} {
		os.MkdirAll(filepath.Dir(filepath.Join(outside, p)), 0o755)
		os.WriteFile(filepath.Join(outside, p), []byte("not yours\n"), 0o600)
	}
	r := e.Open(ckpt.Options{})
	for _, at := range []string{"a", "a/b", "a/b/c"} {
		t.Run(strings.ReplaceAll(at, "/", "_"), func(t *testing.T) {
			// When the scan is about to open a directory (at itself, or
			// its child, which the scan reaches through at), swap at for
			// a symlink to the outside directory.
			for _, when := range []string{at, at + "/" + map[string]string{"a": "b", "a/b": "c", "a/b/c": "x"}[at]} {
				saveWithSwap(t, ctx, e, r, at, when, outside)
			}
		})
	}
}

func saveWithSwap(t *testing.T, ctx context.Context, e *env, r *ckpt.Repo, at, when, outside string) {
	t.Run("when_"+strings.ReplaceAll(when, "/", "_"), func(t *testing.T) {
		defer failpoint.Set("scan/read-dir", func(rel string) error {
			if rel != when {
				return nil
			}
			full := filepath.Join(e.WS, at)
			os.RemoveAll(full + ".moved")
			if err := os.Rename(full, full+".moved"); err != nil {
				t.Error(err)
			}
			if err := os.Symlink(outside, full); err != nil {
				t.Error(err)
			}
			return nil
		})()
		res, err := r.Save(ctx, ckpt.SaveOptions{Message: "swap " + at + " reading " + when, AllowEmpty: true})
		if err != nil {
			t.Fatal(err)
		}
		m, err := r.Manifest(ctx, res.Checkpoint.ID.String())
		if err != nil {
			t.Fatal(err)
		}
		for p := range m.Files {
			if strings.Contains(p, "secret") {
				t.Errorf("the save recorded %s from outside the workspace", p)
			}
		}
		// Put the tree back for the next case.
		full := filepath.Join(e.WS, at)
		os.Remove(full)
		os.Rename(full+".moved", full)
	})
}

// snapshotDir is the state of any directory (not only the workspace).
func snapshotDir(t *testing.T, dir string) treegen.State {
	t.Helper()
	st, err := treegen.Snapshot(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	return st
}

// Class 3, the command line: a path named through a symlink inside the
// workspace is that path, not where the link points. `restore REV -- a/e`
// where a now links to b restores a/e (the symlink a, kept by the
// pre-restore checkpoint, makes way) and never touches b/e; where a links
// outside, it is not refused as outside.
func TestRestorePathNamedThroughSymlink(t *testing.T) {
	for _, to := range []string{"b", "outside"} {
		t.Run(to, func(t *testing.T) {
			e := newEnv(t)
			e.Write(map[string]string{"a/e": "a/e in REV\n", "b/keep": "keep\n"})
			e.Must("save", "-q", "-m", "rev")
			removeAll(t, e, "a")
			target := "b"
			if to == "outside" {
				target = t.TempDir()
			}
			if err := os.Symlink(target, filepath.Join(e.WS, "a")); err != nil {
				t.Fatal(err)
			}
			e.Write(map[string]string{"b/e": "mine\n"})
			e.Must("save", "-q", "-m", "now")
			e.Must("restore", "HEAD~1", "--", "a/e")
			if got := e.Read("b/e"); got != "mine\n" {
				t.Fatalf("b/e, which was not named, = %q", got)
			}
			if fi, err := os.Lstat(filepath.Join(e.WS, "a")); err != nil || !fi.IsDir() {
				t.Fatalf("a is %v, %v; want the directory of REV", fi, err)
			}
			if got := e.Read("a/e"); got != "a/e in REV\n" {
				t.Fatalf("a/e = %q", got)
			}
			if out := e.Must("diff", "--name-only"); strings.TrimSpace(out) != "" {
				t.Fatalf("HEAD does not match the disk: %s", out)
			}
		})
	}
}
