package fsroot

import (
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// tree makes a workspace with a real directory d, an "ignored" directory
// ign, and a symlink s -> ign (inside) and out -> a directory outside.
func tree(t *testing.T) (*Root, string, string) {
	t.Helper()
	ws := t.TempDir()
	outside := t.TempDir()
	for _, d := range []string{"d", "ign"} {
		if err := os.Mkdir(filepath.Join(ws, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for _, f := range []string{"d/f", "ign/f", filepath.Join(outside, "f")} {
		p := f
		if !filepath.IsAbs(p) {
			p = filepath.Join(ws, f)
		}
		if err := os.WriteFile(p, []byte("orig "+f), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink("ign", filepath.Join(ws, "s")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, filepath.Join(ws, "out")); err != nil {
		t.Fatal(err)
	}
	r, err := Open(ws)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close() })
	return r, ws, outside
}

func isSymlinkRefusal(err error) bool {
	return errors.Is(err, syscall.ELOOP) || errors.Is(err, syscall.ENOTDIR)
}

// Both resolutions: openat2 where the kernel has it, and the walk.
func bothWays(t *testing.T, fn func(t *testing.T)) {
	t.Run("openat2", fn)
	t.Run("walk", func(t *testing.T) {
		old := forceWalk()
		defer old()
		fn(t)
	})
}

func TestNoSymlinkIsTraversed(t *testing.T) {
	bothWays(t, func(t *testing.T) {
		r, ws, outside := tree(t)
		for _, via := range []string{"s", "out"} {
			p := via + "/f"
			if _, err := r.OpenFile(p, os.O_WRONLY|os.O_TRUNC, 0); !isSymlinkRefusal(err) {
				t.Errorf("OpenFile(%s): %v, want ELOOP/ENOTDIR", p, err)
			}
			if err := r.Remove(p); !isSymlinkRefusal(err) {
				t.Errorf("Remove(%s): %v", p, err)
			}
			if err := r.RemoveAll(p); !isSymlinkRefusal(err) {
				t.Errorf("RemoveAll(%s): %v", p, err)
			}
			if err := r.MkdirAll(via+"/x/y", 0o755); !isSymlinkRefusal(err) {
				t.Errorf("MkdirAll(%s/x/y): %v", via, err)
			}
			if err := r.Symlink("t", via+"/new"); !isSymlinkRefusal(err) {
				t.Errorf("Symlink(%s/new): %v", via, err)
			}
			if err := r.Rename("d/f", via+"/moved"); !isSymlinkRefusal(err) {
				t.Errorf("Rename into %s: %v", via, err)
			}
			if _, err := r.Lstat(p); !isSymlinkRefusal(err) {
				t.Errorf("Lstat(%s): %v", p, err)
			}
			if _, err := r.OpenDirFD(via); !isSymlinkRefusal(err) {
				t.Errorf("OpenDirFD(%s): %v", via, err)
			}
		}
		// The last component: a symlink is acted on itself, never followed.
		if _, err := r.OpenFile("s", os.O_RDONLY, 0); !isSymlinkRefusal(err) {
			t.Errorf("OpenFile(s): %v", err)
		}
		if fi, err := r.Lstat("s"); err != nil || fi.Mode()&fs.ModeSymlink == 0 {
			t.Errorf("Lstat(s) = %v, %v", fi, err)
		}
		if target, err := r.Readlink("s"); err != nil || target != "ign" {
			t.Errorf("Readlink(s) = %q, %v", target, err)
		}
		for _, f := range []string{filepath.Join(ws, "ign/f"), filepath.Join(outside, "f")} {
			b, err := os.ReadFile(f)
			if err != nil || !strings.HasPrefix(string(b), "orig ") {
				t.Errorf("%s changed: %q, %v", f, b, err)
			}
		}
		if _, err := os.Lstat(filepath.Join(ws, "ign/x")); err == nil {
			t.Error("MkdirAll created a directory through the symlink")
		}
		// Removing the symlink itself is fine.
		if err := r.Remove("s"); err != nil {
			t.Fatal(err)
		}
		if _, err := os.Stat(filepath.Join(ws, "ign/f")); err != nil {
			t.Fatalf("removing the symlink removed its target: %v", err)
		}
	})
}

func TestInvalidPaths(t *testing.T) {
	r, _, _ := tree(t)
	for _, p := range []string{"/etc/passwd", "../x", "d/../d/f", "d//f", "./d", "d/."} {
		if _, err := r.Lstat(p); !errors.Is(err, ErrInvalidPath) {
			t.Errorf("Lstat(%q): %v, want ErrInvalidPath", p, err)
		}
	}
}

func TestRenameNoReplace(t *testing.T) {
	r, ws, _ := tree(t)
	if err := os.WriteFile(filepath.Join(ws, "a"), []byte("a"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := r.RenameNoReplace("a", "d/f"); !errors.Is(err, fs.ErrExist) {
		t.Fatalf("RenameNoReplace onto an existing file: %v", err)
	}
	if err := r.RenameNoReplace("a", "d/g"); err != nil {
		t.Fatal(err)
	}
	if err := r.Rename("d/g", "d/f"); err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(filepath.Join(ws, "d/f"))
	if string(b) != "a" {
		t.Fatalf("d/f = %q", b)
	}
}

// A path far deeper than PATH_MAX: made, written, read, listed, removed.
func TestDeeperThanPathMax(t *testing.T) {
	bothWays(t, func(t *testing.T) {
		r, ws, _ := tree(t)
		deep := strings.Repeat("deep-dir/", 600) + "leaf" // 5.4 KB
		if err := r.MkdirAll(deep, 0o755); err != nil {
			t.Fatal(err)
		}
		f, err := r.OpenFile(deep+"/file", os.O_CREATE|os.O_WRONLY|os.O_EXCL, 0o644)
		if err != nil {
			t.Fatal(err)
		}
		f.WriteString("bottom")
		f.Close()
		if fi, err := r.Lstat(deep + "/file"); err != nil || fi.Size() != 6 {
			t.Fatalf("Lstat = %v, %v", fi, err)
		}
		g, err := r.Open(deep + "/file")
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(g)
		g.Close()
		if string(b) != "bottom" {
			t.Fatalf("read %q", b)
		}
		des, err := r.ReadDir(deep)
		if err != nil || len(des) != 1 {
			t.Fatalf("ReadDir = %v, %v", des, err)
		}
		if err := r.RemoveAll("deep-dir"); err != nil {
			t.Fatal(err)
		}
		if _, err := os.Lstat(filepath.Join(ws, "deep-dir")); !errors.Is(err, fs.ErrNotExist) {
			t.Fatalf("deep-dir still there: %v", err)
		}
	})
}
