package gitmirror

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	gitobject "github.com/go-git/go-git/v5/plumbing/object"
	"github.com/seed1cedbf7c/ckpt/internal/object"
	"github.com/seed1cedbf7c/ckpt/internal/store"
	"github.com/seed1cedbf7c/ckpt/internal/testutil"
)

func TestGitOrder(t *testing.T) {
	es := []gitobject.TreeEntry{
		{Name: "a", Mode: filemode.Dir}, {Name: "a.b", Mode: filemode.Regular},
		{Name: "a-c", Mode: filemode.Regular}, {Name: "a0", Mode: filemode.Regular},
		{Name: "b", Mode: filemode.Submodule}, {Name: "b.c", Mode: filemode.Regular},
	}
	sortGit(es)
	var got []string
	for _, e := range es {
		got = append(got, e.Name)
	}
	// "a/" sorts after "a-c" and "a.b" ('/' is 0x2f) and before "a0"; a
	// gitlink sorts like a file.
	if want := "a-c a.b a a0 b b.c"; strings.Join(got, " ") != want {
		t.Errorf("got %q, want %q", strings.Join(got, " "), want)
	}
}

func TestModes(t *testing.T) {
	for mode, want := range map[uint32]filemode.FileMode{
		0o100644: filemode.Regular, 0o100600: filemode.Regular, 0o100755: filemode.Executable,
		0o100700: filemode.Executable, 0o100711: filemode.Executable, 0o100641: filemode.Executable,
		0o120000: filemode.Symlink, 0o040000: filemode.Dir,
	} {
		if got := gitMode(mode); got != want {
			t.Errorf("gitMode(%o) = %o, want %o", mode, got, want)
		}
	}
}

func TestCommitMessageAndTrailer(t *testing.T) {
	id := object.Sum([]byte("x"))
	rec := &store.Record{ID: id, Checkpoint: &object.Checkpoint{Kind: "turn", Message: "fix\x00 it\n\n"}}
	msg := CommitMessage(rec)
	if want := "fix it\n\nCkpt-Checkpoint: " + id.String() + "\n"; msg != want {
		t.Errorf("message %q, want %q", msg, want)
	}
	if got, ok := ParseTrailer(msg); !ok || got != id {
		t.Errorf("ParseTrailer = %v %v", got, ok)
	}
	rec.Message = ""
	if msg := CommitMessage(rec); !strings.HasPrefix(msg, "ckpt turn checkpoint "+id.Short()+"\n\n") {
		t.Errorf("empty message gives %q", msg)
	}
	if _, ok := ParseTrailer("subject\n\nbody\n"); ok {
		t.Error("trailer found in a message without one")
	}
}

func TestGitlinksRoundTrip(t *testing.T) {
	links := []Gitlink{{Path: "z/sub", Commit: plumbing.NewHash(strings.Repeat("ab", 20))},
		{Path: "a b/\"q\"\nn", Commit: plumbing.NewHash(strings.Repeat("01", 20))}}
	s := FormatGitlinks(links)
	got, err := ParseGitlinks(s)
	if err != nil || len(got) != 2 || got[0] != links[1] || got[1] != links[0] {
		t.Fatalf("round trip: %v %v (%q)", got, err, s)
	}
	for _, bad := range []string{"xyz \"a\"", strings.Repeat("0", 40) + " a", strings.Repeat("0", 40) + ` "../x"`} {
		if _, err := ParseGitlinks(bad); err == nil {
			t.Errorf("ParseGitlinks(%q) accepted", bad)
		}
	}
}

// TestRefUpdates checks the lock protocol against git: values git reads,
// compare-and-swap, deletion of loose and packed refs, a held lock.
func TestRefUpdates(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Fatal("git is needed (scripts/test installs it)")
	}
	dir := t.TempDir()
	lay, err := Init(dir, "main")
	if err != nil {
		t.Fatal(err)
	}
	c := lay.CommonDir
	h1 := plumbing.NewHash(strings.TrimSpace(testutil.Git(t, dir, "hash-object", "-w", "--stdin")))
	blob := filepath.Join(dir, "f")
	os.WriteFile(blob, []byte("2"), 0o644)
	h2 := plumbing.NewHash(strings.TrimSpace(testutil.Git(t, dir, "hash-object", "-w", "f")))
	name := "refs/ckpt/snapshots/a"
	if err := updateRef(c, name, plumbing.ZeroHash, h1); err != nil {
		t.Fatal(err)
	}
	if got := strings.TrimSpace(testutil.Git(t, dir, "rev-parse", name)); got != h1.String() {
		t.Errorf("git reads %s", got)
	}
	if err := updateRef(c, name, h2, h1); err == nil {
		t.Error("update from a wrong old value succeeded")
	}
	if err := updateRef(c, name, h1, h2); err != nil {
		t.Fatal(err)
	}
	testutil.Git(t, dir, "pack-refs", "--all")
	if _, err := os.Stat(filepath.Join(c, name)); err == nil {
		t.Fatal("ref still loose after pack-refs")
	}
	rr := &refReader{common: c}
	if got, found, err := rr.read(name); err != nil || !found || got != h2 {
		t.Fatalf("read packed: %v %v %v", got, found, err)
	}
	// A lock held by someone else stops the update, and is left alone.
	os.MkdirAll(filepath.Dir(filepath.Join(c, name)), 0o755)
	if err := os.WriteFile(filepath.Join(c, name)+".lock", nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := updateRef(c, name, h2, plumbing.ZeroHash); err == nil {
		t.Error("update while locked succeeded")
	}
	os.Remove(filepath.Join(c, name) + ".lock")
	if err := updateRef(c, name, h2, plumbing.ZeroHash); err != nil {
		t.Fatal(err)
	}
	if out := testutil.Git(t, dir, "for-each-ref", "refs/ckpt/"); out != "" {
		t.Errorf("deleted ref still listed: %q", out)
	}
	if data, _ := os.ReadFile(filepath.Join(c, "packed-refs")); strings.Contains(string(data), name) {
		t.Errorf("packed-refs still names it:\n%s", data)
	}
	if _, err := os.Stat(filepath.Join(c, "refs", "ckpt")); err == nil {
		t.Error("empty ref directories left behind")
	}
}
