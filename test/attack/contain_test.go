package attack

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/seed1cedbf7c/ckpt/internal/testutil"
)

// Symlink loops, links to /proc/self/root and out of the workspace, a hard
// link to a file outside, and a FIFO where a tracked file was: saves
// record the links as links and never open the FIFO; restores and undo
// replace or delete the names only — the file outside, reached by the hard
// link, is never written — and a FIFO in the way of a write is kept.
// This attack held.
func TestContainmentOddEntries(t *testing.T) {
	e := newEnv(t)
	outside := t.TempDir()
	secret := filepath.Join(outside, "secret.txt")
	if err := os.WriteFile(secret, []byte("outside\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	e.Write(map[string]string{"a.txt": "a1\n", "was-file": "a tracked file\n", "d/f": "f1\n"})
	for name, target := range map[string]string{"loop1": "loop2", "loop2": "loop1", "self": "self", "root": "/proc/self/root", "cwd": "/proc/self/cwd/a.txt", "out": outside} {
		if err := os.Symlink(target, filepath.Join(e.WS, name)); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Link(secret, filepath.Join(e.WS, "hard.txt")); err != nil {
		t.Fatal(err)
	}
	e.Must("save", "-q", "-m", "one")
	m := e.Must("show", "--manifest", "HEAD")
	for _, p := range []string{`"loop1"`, `"self"`, `"root"`, `"hard.txt"`} {
		if !strings.Contains(m, p) {
			t.Fatalf("%s not recorded:\n%s", p, m)
		}
	}
	if strings.Contains(m, "secret.txt") || strings.Contains(m, "root/") {
		t.Fatalf("a link was followed:\n%s", m)
	}
	// Change everything, the hard link's name included (a rename over it,
	// as editors save), and put a FIFO where a tracked file was.
	e.Write(map[string]string{"a.txt": "a2\n", "d/f": "f2\n"})
	tmp := filepath.Join(e.WS, "hard.txt.new")
	os.WriteFile(tmp, []byte("edited in the workspace\n"), 0o644)
	os.Rename(tmp, filepath.Join(e.WS, "hard.txt"))
	os.Remove(filepath.Join(e.WS, "was-file"))
	if err := testutil.Mkfifo(filepath.Join(e.WS, "was-file"), 0o644); err != nil {
		t.Fatal(err)
	}
	os.Remove(filepath.Join(e.WS, "root"))
	os.Symlink("/", filepath.Join(e.WS, "root"))
	e.Must("save", "-q", "-m", "two")
	code, out, errs := e.Run("restore", "HEAD~1")
	t.Logf("restore: exit %d\n%s%s", code, out, errs)
	if code != 0 {
		t.Fatalf("restore: exit %d", code)
	}
	if !strings.Contains(out+errs, "was-file") {
		t.Errorf("the FIFO in the way was not reported")
	}
	if fi, err := os.Lstat(filepath.Join(e.WS, "was-file")); err != nil || fi.Mode()&os.ModeNamedPipe == 0 {
		t.Fatalf("the FIFO was replaced: %v %v", fi, err)
	}
	if got := e.Read("hard.txt"); got != "outside\n" {
		t.Fatalf("hard.txt = %q", got)
	}
	e.Must("undo")
	e.Must("redo")
	if b, _ := os.ReadFile(secret); string(b) != "outside\n" {
		t.Fatalf("the file outside, once hard-linked, was written: %q", b)
	}
	if des, _ := os.ReadDir(outside); len(des) != 1 {
		t.Fatalf("the directory outside holds %d entries", len(des))
	}
	if tgt, _ := os.Readlink(filepath.Join(e.WS, "root")); tgt != "/proc/self/root" {
		t.Fatalf("root -> %q", tgt)
	}
	e.Must("fsck")
}
