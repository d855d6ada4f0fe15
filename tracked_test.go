package ckpt

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/seed1cedbf7c/ckpt/internal/testutil"
)

// Ignored files an agent's edit tool changes (.env): the turn holds them,
// a rewind puts them back, undo and redo follow, and status stays clean.

// trackTurn runs a turn whose edit tool changes the ignored files named
// (TrackIgnored first, as the PreToolUse hook does), then work.
func trackTurn(t *testing.T, c *Controller, prompt string, ignored []string, work func()) *Turn {
	t.Helper()
	ctx := context.Background()
	if _, err := c.BeginTurn(ctx, prompt); err != nil {
		t.Fatal(err)
	}
	var ps []Path
	for _, p := range ignored {
		ps = append(ps, Path(p))
	}
	if _, err := c.TrackIgnored(ctx, ps); err != nil {
		t.Fatal(err)
	}
	work()
	tt, err := c.EndTurn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	return tt
}

func wantClean(t *testing.T, r *Repo) {
	t.Helper()
	st, err := r.Status(context.Background(), true)
	if err != nil {
		t.Fatal(err)
	}
	if len(st.Changes) != 0 {
		t.Fatalf("status shows changes: %+v", st.Changes)
	}
}

func TestRewindPutsBackIgnoredFileAnEditToolChanged(t *testing.T) {
	ctx := context.Background()
	r, ws := openTest(t, map[string]string{".gitignore": ".env\nsecrets/\n", ".env": "KEY=old\n", "a.txt": "a\n", "secrets/k": "k1\n"})
	if got := r.IgnoredFiles([]string{".env", "a.txt", "secrets/k", ".git/config", "secrets", "../x", "new.env"}); !slices.Equal(got, []string{".env", "secrets/k"}) {
		t.Fatalf("IgnoredFiles = %q", got)
	}
	c := newCtl(t, r, "env")
	tt := trackTurn(t, c, "edit env", []string{".env", "secrets/k", "made.env"}, func() {
		writeFile(t, ws, ".env", "KEY=new\n")
		writeFile(t, ws, "secrets/k", "k2\n")
		writeFile(t, ws, "made.env", "made\n")
		writeFile(t, ws, "a.txt", "a2\n")
	})
	if !slices.Equal(tt.Ignored, []Path{".env", "made.env", "secrets/k"}) {
		t.Fatalf("turn.Ignored = %q", tt.Ignored)
	}
	files := map[Path]string{}
	for _, f := range tt.Files {
		files[f.Path] = f.Status
	}
	if files[".env"] != "modified" || files["secrets/k"] != "modified" || files["made.env"] != "added" || files["a.txt"] != "modified" {
		t.Fatalf("turn files = %+v", tt.Files)
	}
	wantClean(t, r) // HEAD is a plain checkpoint: ignored files stay out of status
	if _, err := c.Rewind(ctx, 1, ScopeCode, RewindOptions{}); err != nil {
		t.Fatalf("rewind: %v", err)
	}
	for p, want := range map[string]string{".env": "KEY=old\n", "secrets/k": "k1\n", "a.txt": "a\n"} {
		if got := testutil.ReadFile(t, ws, p); got != want {
			t.Fatalf("after rewind %s = %q, want %q", p, got, want)
		}
	}
	if _, err := os.Lstat(filepath.Join(ws, "made.env")); !os.IsNotExist(err) {
		t.Fatalf("made.env, which the turn's edit tool created, is still there (%v)", err)
	}
	wantClean(t, r)
	if _, err := r.Undo(ctx); err != nil {
		t.Fatalf("undo: %v", err)
	}
	for p, want := range map[string]string{".env": "KEY=new\n", "secrets/k": "k2\n", "made.env": "made\n", "a.txt": "a2\n"} {
		if got := testutil.ReadFile(t, ws, p); got != want {
			t.Fatalf("after undo %s = %q, want %q", p, got, want)
		}
	}
	wantClean(t, r)
	if _, err := r.Redo(ctx); err != nil {
		t.Fatalf("redo: %v", err)
	}
	if got := testutil.ReadFile(t, ws, ".env"); got != "KEY=old\n" {
		t.Fatalf("after redo .env = %q", got)
	}
	wantClean(t, r)
	// HEAD now holds .env: it is tracked, like a file `git add -f` added.
	writeFile(t, ws, ".env", "KEY=mine\n")
	st, err := r.Status(ctx, true)
	if err != nil {
		t.Fatal(err)
	}
	if len(st.Changes) != 1 || st.Changes[0].Path != ".env" {
		t.Fatalf("status after editing the tracked .env: %+v", st.Changes)
	}
	res, err := r.Save(ctx, SaveOptions{Message: "mine"})
	if err != nil || !res.Created {
		t.Fatalf("save: %v %+v", err, res)
	}
	wantClean(t, r)
}

// The user changed the ignored file after the turn: a rewind keeping the
// user's edits keeps it (merged, or the user's side); --exact puts back
// the turn's start.
func TestRewindKeepsUserEditToIgnoredFile(t *testing.T) {
	ctx := context.Background()
	r, ws := openTest(t, map[string]string{".gitignore": "*.env\n", "x.env": "1\n2\n3\n4\n5\n6\n7\n8\n"})
	c := newCtl(t, r, "env")
	trackTurn(t, c, "edit", []string{"x.env"}, func() {
		writeFile(t, ws, "x.env", "1\nAGENT\n3\n4\n5\n6\n7\n8\n")
	})
	writeFile(t, ws, "x.env", "1\nAGENT\n3\n4\n5\n6\n7\nUSER\n")
	res, err := c.Rewind(ctx, 1, ScopeCode, RewindOptions{DryRun: true})
	if err != nil {
		t.Fatal(err)
	}
	if got := testutil.ReadFile(t, ws, "x.env"); got != "1\nAGENT\n3\n4\n5\n6\n7\nUSER\n" {
		t.Fatalf("a dry run changed x.env: %q", got)
	}
	if !slices.Contains(res.Kept, "x.env") {
		t.Fatalf("dry run: x.env not reported as kept user edit: %+v", res)
	}
	if _, err := c.Rewind(ctx, 1, ScopeCode, RewindOptions{}); err != nil {
		t.Fatal(err)
	}
	if got := testutil.ReadFile(t, ws, "x.env"); got != "1\n2\n3\n4\n5\n6\n7\nUSER\n" {
		t.Fatalf("x.env = %q, want the agent's line taken back and the user's kept", got)
	}
	if _, err := r.Undo(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Rewind(ctx, 1, ScopeCode, RewindOptions{Exact: true}); err != nil {
		t.Fatal(err)
	}
	if got := testutil.ReadFile(t, ws, "x.env"); got != "1\n2\n3\n4\n5\n6\n7\n8\n" {
		t.Fatalf("exact rewind: x.env = %q", got)
	}
	if _, err := r.Undo(ctx); err != nil {
		t.Fatal(err)
	}
	if got := testutil.ReadFile(t, ws, "x.env"); got != "1\nAGENT\n3\n4\n5\n6\n7\nUSER\n" {
		t.Fatalf("undo of the exact rewind: x.env = %q", got)
	}
}

// A restore to a checkpoint from before an ignored file was tracked leaves
// the file alone (that checkpoint never held it), and an ignored file
// nobody tracked is never touched by a rewind.
func TestRestoreBeforeTrackingLeavesIgnoredFileAlone(t *testing.T) {
	ctx := context.Background()
	r, ws := openTest(t, map[string]string{".gitignore": ".env\nbuild/\n", ".env": "old\n", "a.txt": "a\n"})
	first, err := r.Save(ctx, SaveOptions{Message: "first"})
	if err != nil {
		t.Fatal(err)
	}
	c := newCtl(t, r, "env")
	trackTurn(t, c, "edit", []string{".env"}, func() {
		writeFile(t, ws, ".env", "new\n")
		writeFile(t, ws, "build/out", "built\n") // ignored, not an edit tool's
	})
	if _, err := c.Rewind(ctx, 1, ScopeCode, RewindOptions{}); err != nil {
		t.Fatal(err)
	}
	if got := testutil.ReadFile(t, ws, "build/out"); got != "built\n" {
		t.Fatalf("build/out = %q: a rewind touched an ignored file no edit tool changed", got)
	}
	writeFile(t, ws, ".env", "later\n")
	if _, err := r.Restore(ctx, first.Checkpoint.ID.String(), RestoreOptions{}); err != nil {
		t.Fatal(err)
	}
	if got := testutil.ReadFile(t, ws, ".env"); got != "later\n" {
		t.Fatalf(".env = %q after restoring a checkpoint that never held it", got)
	}
	wantClean(t, r)
}

// --exact to a turn before the one whose edit tool changed the ignored
// file: that turn's start never held it, yet the exact rewind puts it back
// as the later turn found it.
func TestExactRewindPutsBackLaterTurnsIgnoredFiles(t *testing.T) {
	ctx := context.Background()
	r, ws := openTest(t, map[string]string{".gitignore": ".env\n", ".env": "old\n", "a.txt": "a\n"})
	c := newCtl(t, r, "env")
	t1 := turn(t, c, "one", func() { writeFile(t, ws, "a.txt", "a1\n") })
	trackTurn(t, c, "two", []string{".env"}, func() { writeFile(t, ws, ".env", "new\n") })
	res, err := c.Rewind(ctx, 1, ScopeCode, RewindOptions{Exact: true})
	if err != nil {
		t.Fatal(err)
	}
	if got := testutil.ReadFile(t, ws, ".env"); got != "old\n" {
		t.Fatalf(".env = %q after an exact rewind to turn 1", got)
	}
	if got := testutil.ReadFile(t, ws, "a.txt"); got != "a\n" {
		t.Fatalf("a.txt = %q", got)
	}
	d, err := r.Diff(ctx, DiffOptions{From: t1.Begin.String(), To: res.Restore.Target.ID.String()})
	if err != nil {
		t.Fatal(err)
	}
	if len(d.Files) != 1 || d.Files[0].Path != ".env" {
		t.Fatalf("the exact rewind's checkpoint differs from turn 1's start by %+v, want .env only", d.Files)
	}
	if _, err := r.Undo(ctx); err != nil {
		t.Fatal(err)
	}
	if got := testutil.ReadFile(t, ws, ".env"); got != "new\n" {
		t.Fatalf("undo: .env = %q", got)
	}
}

// Who changed what: the ignored file a turn's edit tool changed counts as
// the agent's, and nothing counts as the user's between turns for it
// (the next turn's start does not hold it; that is not a deletion).
func TestSessionStatWithTrackedIgnoredFile(t *testing.T) {
	ctx := context.Background()
	r, ws := openTest(t, map[string]string{".gitignore": ".env\n", ".env": "old\n", "a.txt": "a\n"})
	c := newCtl(t, r, "env")
	trackTurn(t, c, "one", []string{".env"}, func() { writeFile(t, ws, ".env", "new\nmore\n") })
	turn(t, c, "two", func() { writeFile(t, ws, "a.txt", "a2\n") })
	s, err := c.Session(ctx)
	if err != nil {
		t.Fatal(err)
	}
	st, err := r.SessionStat(ctx, s)
	if err != nil {
		t.Fatal(err)
	}
	if st.User.Files != 0 || st.Turns[0].Agent.Files != 1 || st.Turns[0].Agent.Insertions != 2 {
		t.Fatalf("stat = %+v", st)
	}
}

// Summarized turns keep the ignored files their edit tools changed: a
// rewind of the summary turn puts them back (keeping user edits, and
// exact).
func TestRewindSummarizedTurnsPutsBackIgnoredFile(t *testing.T) {
	for _, exact := range []bool{false, true} {
		ctx := context.Background()
		r, ws := openTest(t, map[string]string{".gitignore": ".env\n", ".env": "old\n", "a.txt": "a\n"})
		c := newCtl(t, r, "env")
		trackTurn(t, c, "one", []string{".env"}, func() { writeFile(t, ws, ".env", "new\n") })
		turn(t, c, "two", func() { writeFile(t, ws, "a.txt", "a2\n") })
		if _, err := c.Summarize(ctx, 1, SummarizeFrom); err != nil {
			t.Fatal(err)
		}
		if _, err := c.Rewind(ctx, 1, ScopeCode, RewindOptions{Exact: exact}); err != nil {
			t.Fatal(err)
		}
		if got := testutil.ReadFile(t, ws, ".env"); got != "old\n" {
			t.Errorf("exact=%v: .env = %q after rewinding the summarized turns", exact, got)
		}
	}
}

// An exact rewind puts back what a later summarized part's edit tool
// changed, read from that part's start, and leaves alone an ignored file
// HEAD tracks (another session's rewind put it back) that the turn's
// start never held, as a plain restore to that start does.
func TestExactRewindIgnoredFilesOfPartsAndOthers(t *testing.T) {
	ctx := context.Background()
	t.Run("summarized part", func(t *testing.T) {
		r, ws := openTest(t, map[string]string{".gitignore": ".env\n", ".env": "old\n", "a.txt": "a\n"})
		c := newCtl(t, r, "env")
		turn(t, c, "one", func() { writeFile(t, ws, "a.txt", "a2\n") })
		trackTurn(t, c, "two", []string{".env"}, func() { writeFile(t, ws, ".env", "new\n") })
		if _, err := c.Summarize(ctx, 1, SummarizeFrom); err != nil {
			t.Fatal(err)
		}
		if _, err := c.Rewind(ctx, 1, ScopeCode, RewindOptions{Exact: true}); err != nil {
			t.Fatal(err)
		}
		if got := testutil.ReadFile(t, ws, ".env"); got != "old\n" {
			t.Errorf(".env = %q", got)
		}
	})
	t.Run("tracked by another session", func(t *testing.T) {
		r, ws := openTest(t, map[string]string{".gitignore": "*.env\n", "x.env": "x0\n", "z.env": "z0\n", "a.txt": "a\n"})
		a, b := newCtl(t, r, "a"), newCtl(t, r, "b")
		turn(t, a, "a1", func() { writeFile(t, ws, "a.txt", "a1\n") })
		trackTurn(t, b, "b1", []string{"z.env"}, func() { writeFile(t, ws, "z.env", "z1\n") })
		if _, err := b.Rewind(ctx, 1, ScopeCode, RewindOptions{}); err != nil {
			t.Fatal(err)
		}
		writeFile(t, ws, "z.env", "z-user\n")
		trackTurn(t, a, "a2", []string{"x.env"}, func() { writeFile(t, ws, "x.env", "x1\n") })
		if _, err := a.Rewind(ctx, 1, ScopeCode, RewindOptions{Exact: true}); err != nil {
			t.Fatal(err)
		}
		if got, want := readAny(ws, "x.env"), "x0\n"; got != want {
			t.Errorf("x.env = %q, want %q", got, want)
		}
		if got, want := readAny(ws, "z.env"), "z-user\n"; got != want {
			t.Errorf("z.env = %q, want %q: the exact rewind's turn start never held it", got, want)
		}
	})
}

// The user replaces an ignored directory holding a tracked file by a
// symlink out of the workspace: a rewind writes nothing through it and
// keeps the symlink (it is in the way of the file to put back).
func TestRewindKeepsSymlinkInPlaceOfIgnoredDirectory(t *testing.T) {
	for _, exact := range []bool{false, true} {
		ctx := context.Background()
		out := t.TempDir()
		writeFile(t, out, "passwd", "outside\n")
		r, ws := openTest(t, map[string]string{".gitignore": "cfg\n", "cfg/passwd": "orig\n", "a.txt": "a\n"})
		c := newCtl(t, r, "s")
		trackTurn(t, c, "one", []string{"cfg/passwd"}, func() { writeFile(t, ws, "cfg/passwd", "agent\n") })
		if err := os.RemoveAll(filepath.Join(ws, "cfg")); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(out, filepath.Join(ws, "cfg")); err != nil {
			t.Fatal(err)
		}
		if _, err := c.Rewind(ctx, 1, ScopeCode, RewindOptions{Exact: exact}); err != nil {
			t.Fatalf("exact=%v: %v", exact, err)
		}
		if got := readAny(out, "passwd"); got != "outside\n" {
			t.Errorf("exact=%v: the file outside the workspace = %q", exact, got)
		}
		if l, err := os.Readlink(filepath.Join(ws, "cfg")); err != nil || l != out {
			t.Errorf("exact=%v: the user's symlink cfg is gone (%q, %v)", exact, l, err)
		}
	}
}

// A workspace's key ends its default store's name, so ckpt serve --all's
// /w/KEY/ and the store directory name the workspace alike.
func TestWorkspaceKeyEndsDefaultStore(t *testing.T) {
	t.Setenv("XDG_STATE_HOME", t.TempDir())
	for _, ws := range []string{"/home/me/src/app", "/", "/tmp/a b"} {
		dir, err := DefaultStoreDir(ws)
		if err != nil {
			t.Fatal(err)
		}
		if k := WorkspaceKey(ws); len(k) != 16 || !strings.HasSuffix(dir, "-"+k) {
			t.Errorf("WorkspaceKey(%q) = %q; default store %s", ws, k, dir)
		}
	}
}
