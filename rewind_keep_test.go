package ckpt

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/seed1cedbf7c/ckpt/internal/testutil"
	"github.com/seed1cedbf7c/ckpt/internal/treegen"
)

// rewind --keep-user-edits: edits the user made after the
// agent's turns must survive (merged, or kept as conflicts), never be lost.

// A user edit made after the last turn ended (not yet in any checkpoint)
// to a file the turn also changed, in another region: the three-way merge
// must combine both.
func TestKeepUserEditsUnsavedMerge(t *testing.T) {
	ctx := context.Background()
	r, ws := openTest(t, map[string]string{"shared.txt": "1\n2\n3\n4\n5\n6\n7\n8\n9\n"})
	c := newCtl(t, r, "keep")
	turn(t, c, "agent edits", func() {
		writeFile(t, ws, "shared.txt", "1\nAGENT\n3\n4\n5\n6\n7\n8\n9\n")
	})
	// The user edits another region; no checkpoint holds this yet.
	writeFile(t, ws, "shared.txt", "1\nAGENT\n3\n4\n5\n6\n7\n8\nUSER\n")
	res, err := c.Rewind(ctx, 1, ScopeCode, RewindOptions{})
	if err != nil {
		t.Fatalf("rewind: %v", err)
	}
	if got, want := testutil.ReadFile(t, ws, "shared.txt"), "1\n2\n3\n4\n5\n6\n7\n8\nUSER\n"; got != want {
		t.Fatalf("shared.txt = %q, want %q (conflicts %v)", got, want, res.Conflicts)
	}
}

// A Latin-1 file is text, as git and ckpt diff see it: the user's edit
// and the taken-back turn are merged line by line, not kept whole as if
// the file were binary.
func TestKeepUserEditsMergesLatin1(t *testing.T) {
	ctx := context.Background()
	r, ws := openTest(t, map[string]string{"latin1.txt": "caf\xe9\n2\n3\n4\n5\n6\n7\n8\n9\n"})
	c := newCtl(t, r, "keep")
	turn(t, c, "agent edits", func() {
		writeFile(t, ws, "latin1.txt", "caf\xe9\nAGENT\n3\n4\n5\n6\n7\n8\n9\n")
	})
	writeFile(t, ws, "latin1.txt", "caf\xe9\nAGENT\n3\n4\n5\n6\n7\n8\ncr\xe8me\n")
	res, err := c.Rewind(ctx, 1, ScopeCode, RewindOptions{})
	if err != nil {
		t.Fatalf("rewind: %v", err)
	}
	if got, want := testutil.ReadFile(t, ws, "latin1.txt"), "caf\xe9\n2\n3\n4\n5\n6\n7\n8\ncr\xe8me\n"; got != want || len(res.Conflicts) != 0 {
		t.Fatalf("latin1.txt = %q, want %q (conflicts %v)", got, want, res.Conflicts)
	}
}

// The turn deleted a file; afterwards the user made a directory of the same
// name and put files in it. Taking the turn back must not delete the
// user's files (at most it is a conflict that keeps the user's side).
func TestKeepUserEditsDirWhereTurnDeletedFile(t *testing.T) {
	ctx := context.Background()
	r, ws := openTest(t, map[string]string{"x": "old file\n", "other.txt": "o\n"})
	c := newCtl(t, r, "keep")
	turn(t, c, "agent deletes x", func() {
		if err := os.Remove(filepath.Join(ws, "x")); err != nil {
			t.Fatal(err)
		}
	})
	writeFile(t, ws, "x/mine.txt", "user's work\n")
	res, err := c.Rewind(ctx, 1, ScopeCode, RewindOptions{})
	if err != nil {
		t.Fatalf("rewind: %v", err)
	}
	if got := readAny(ws, "x/mine.txt"); got != "user's work\n" {
		t.Fatalf("the user's x/mine.txt = %q after a rewind that keeps user edits (conflicts %v, kept %v)",
			got, res.Conflicts, res.Kept)
	}
}

// The turn deleted a directory; afterwards the user made a file of the same
// name. The user's file must survive.
func TestKeepUserEditsFileWhereTurnDeletedDir(t *testing.T) {
	ctx := context.Background()
	r, ws := openTest(t, map[string]string{"d/a.txt": "a\n", "d/b.txt": "b\n", "other.txt": "o\n"})
	c := newCtl(t, r, "keep")
	turn(t, c, "agent deletes d", func() {
		if err := os.RemoveAll(filepath.Join(ws, "d")); err != nil {
			t.Fatal(err)
		}
	})
	writeFile(t, ws, "d", "user's notes\n")
	res, err := c.Rewind(ctx, 1, ScopeCode, RewindOptions{})
	if err != nil {
		t.Fatalf("rewind: %v", err)
	}
	if got := readAny(ws, "d"); got != "user's notes\n" {
		t.Fatalf("the user's file d = %q after a rewind that keeps user edits (conflicts %v, kept %v)",
			got, res.Conflicts, res.Kept)
	}
}

// The turn replaced a directory with a file; afterwards the user edited
// that file. The path conflicts (the user's file stays), so the
// directory's files under it must not come back: creating them would
// replace the user's file with the directory.
func TestKeepUserEditsFileWhereTurnReplacedDir(t *testing.T) {
	ctx := context.Background()
	r, ws := openTest(t, map[string]string{"d/x": "x\n", "d/sub/y": "y\n", "other.txt": "o\n"})
	c := newCtl(t, r, "keep")
	turn(t, c, "agent turns d into a file", func() {
		if err := os.RemoveAll(filepath.Join(ws, "d")); err != nil {
			t.Fatal(err)
		}
		writeFile(t, ws, "d", "agent's d\n")
	})
	writeFile(t, ws, "d", "agent's d\nand the user's line\n")
	res, err := c.Rewind(ctx, 1, ScopeCode, RewindOptions{})
	if err != nil {
		t.Fatalf("rewind: %v", err)
	}
	if got := readAny(ws, "d"); got != "agent's d\nand the user's line\n" {
		t.Fatalf("the user's file d = %q after a rewind that keeps user edits (conflicts %v, kept %v)",
			got, res.Conflicts, res.Kept)
	}
	if len(res.Conflicts) == 0 || res.Conflicts[0] != "d" {
		t.Errorf("conflicts %v, want d among them", res.Conflicts)
	}
}

// readAny reads a file, describing a failure instead of failing the test.
func readAny(ws, p string) string {
	b, err := os.ReadFile(filepath.Join(ws, p))
	if err != nil {
		return "<" + err.Error() + ">"
	}
	return string(b)
}

// Without any user edit, a keep-user-edits rewind must give the turn's
// starting state. A turn that replaced a file (or a symlink) by a directory
// is not taken back: the directory's files are deleted, but the file is
// not put back — it is simply gone.
func TestKeepUserEditsTurnReplacedFileWithDir(t *testing.T) {
	ctx := context.Background()
	r, ws := openTest(t, map[string]string{"x": "old file\n", "other.txt": "o\n"})
	if err := os.Symlink("other.txt", filepath.Join(ws, "l")); err != nil {
		t.Fatal(err)
	}
	c := newCtl(t, r, "keep")
	before := snapshot(t, ws)
	turn(t, c, "agent turns x and l into directories", func() {
		os.Remove(filepath.Join(ws, "x"))
		writeFile(t, ws, "x/y", "y\n")
		os.Remove(filepath.Join(ws, "l"))
		writeFile(t, ws, "l/z", "z\n")
	})
	res, err := c.Rewind(ctx, 1, ScopeCode, RewindOptions{})
	if err != nil {
		t.Fatalf("rewind: %v", err)
	}
	if d := treegen.Diff(before, snapshot(t, ws)); d != "" {
		t.Fatalf("with no user edits, the rewind did not return to the turn's start (conflicts %v):\n%s", res.Conflicts, d)
	}
}

// Summarizing turns folds the user's edits made between them into the
// summary turn (it spans the first turn's begin to the last turn's end), so
// a later keep-user-edits rewind takes those edits back as if the agent
// had made them. Before the summary the same rewind keeps them.
func TestSummarizeThenKeepUserEditsRewind(t *testing.T) {
	ctx := context.Background()
	r, ws := openTest(t, map[string]string{"a.txt": "a0\n", "b.txt": "b0\n"})
	c := newCtl(t, r, "sum")
	turn(t, c, "one", func() { writeFile(t, ws, "a.txt", "a1\n") })
	writeFile(t, ws, "mine.txt", "the user's own file, written between turns\n")
	turn(t, c, "two", func() { writeFile(t, ws, "b.txt", "b1\n") })
	if _, err := c.Summarize(ctx, 1, SummarizeFrom); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Rewind(ctx, 1, ScopeCode, RewindOptions{}); err != nil {
		t.Fatal(err)
	}
	if got := readAny(ws, "mine.txt"); got != "the user's own file, written between turns\n" {
		t.Fatalf("mine.txt = %q: the user's edit between the summarized turns was rewound", got)
	}
	if readAny(ws, "a.txt") != "a0\n" || readAny(ws, "b.txt") != "b0\n" {
		t.Fatalf("agent's changes not taken back: a=%q b=%q", readAny(ws, "a.txt"), readAny(ws, "b.txt"))
	}
}

// A rewind undid turn 2; the user then, by hand, makes a file exactly
// what turn 2 had made it. A later rewind to turn 1 must not take that
// edit back as if it were still turn 2's: a turn's changes are undone
// once. Both with the conversation rewound too (the turn moves to the
// removed ones) and with the code only (it stays in the conversation).
func TestKeepUserEditsAfterRewoundTurnIsRedoneByHand(t *testing.T) {
	for _, scope := range []Scope{ScopeBoth, ScopeCode} {
		t.Run(string(scope), func(t *testing.T) {
			ctx := context.Background()
			r, ws := openTest(t, map[string]string{"f.txt": "base\n", "g.txt": "g\n"})
			c := newCtl(t, r, "redo")
			turn(t, c, "one", func() { writeFile(t, ws, "g.txt", "g1\n") })
			turn(t, c, "two", func() { writeFile(t, ws, "f.txt", "agent\n") })
			if _, err := c.Rewind(ctx, 2, scope, RewindOptions{}); err != nil {
				t.Fatal(err)
			}
			if got := testutil.ReadFile(t, ws, "f.txt"); got != "base\n" {
				t.Fatalf("after rewind 2: f.txt = %q", got)
			}
			writeFile(t, ws, "f.txt", "agent\n") // the user's own decision
			res, err := c.Rewind(ctx, 1, ScopeCode, RewindOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if got := testutil.ReadFile(t, ws, "f.txt"); got != "agent\n" {
				t.Errorf("rewind 1 took the user's f.txt back: %q (kept %v)", got, res.Kept)
			}
			if got := testutil.ReadFile(t, ws, "g.txt"); got != "g\n" {
				t.Errorf("rewind 1 left turn 1's g.txt: %q", got)
			}
		})
	}
}

// A rewind taken back by 'ckpt undo' no longer counts: the turns it
// undid are the agent's again, and rewinding once more takes them back.
func TestKeepUserEditsRewindAgainAfterUndo(t *testing.T) {
	ctx := context.Background()
	r, ws := openTest(t, map[string]string{"f.txt": "base\n"})
	c := newCtl(t, r, "again")
	turn(t, c, "one", func() { writeFile(t, ws, "f.txt", "agent\n") })
	for i := range 3 {
		if _, err := c.Rewind(ctx, 1, ScopeCode, RewindOptions{}); err != nil {
			t.Fatal(err)
		}
		if got := testutil.ReadFile(t, ws, "f.txt"); got != "base\n" {
			t.Fatalf("rewind %d: f.txt = %q", i+1, got)
		}
		if _, err := r.Undo(ctx); err != nil {
			t.Fatal(err)
		}
		if got := testutil.ReadFile(t, ws, "f.txt"); got != "agent\n" {
			t.Fatalf("undo %d: f.txt = %q", i+1, got)
		}
	}
}

// A fork starts from the workspace as a turn began, with the turns before
// it in place: a rewind of the parent that had undone them is not in
// effect there, and rewinding the fork takes them back.
func TestKeepUserEditsForkAfterRewind(t *testing.T) {
	ctx := context.Background()
	r, ws := openTest(t, map[string]string{"f.txt": "base\n", "g.txt": "g\n"})
	c := newCtl(t, r, "parent")
	turn(t, c, "one", func() { writeFile(t, ws, "g.txt", "g1\n") })
	turn(t, c, "two", func() { writeFile(t, ws, "f.txt", "agent\n") })
	turn(t, c, "three", func() { writeFile(t, ws, "g.txt", "g3\n") })
	if _, err := c.Rewind(ctx, 2, ScopeCode, RewindOptions{}); err != nil {
		t.Fatal(err)
	}
	fr, err := c.Fork(ctx, 3)
	if err != nil {
		t.Fatal(err)
	}
	if got := testutil.ReadFile(t, ws, "f.txt"); got != "agent\n" {
		t.Fatalf("fork at turn 3: f.txt = %q", got)
	}
	f, _, err := r.Controller(ctx, ControllerOptions{ID: fr.Session.ID})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.Rewind(ctx, 2, ScopeCode, RewindOptions{}); err != nil {
		t.Fatal(err)
	}
	if got := testutil.ReadFile(t, ws, "f.txt"); got != "base\n" {
		t.Errorf("fork rewound to turn 2: f.txt = %q, want %q", got, "base\n")
	}
}

// The operation log entry of a rewind goes once gc removes a checkpoint it
// names (undo no longer reaches it). The rewind is then in effect for
// good: the user's redo by hand of a turn it undid still stays.
func TestKeepUserEditsRewoundTurnAfterGC(t *testing.T) {
	ctx := context.Background()
	r, ws := openTest(t, map[string]string{"f.txt": "base\n", "g.txt": "g\n"})
	c := newCtl(t, r, "gc")
	turn(t, c, "one", func() { writeFile(t, ws, "g.txt", "g1\n") })
	turn(t, c, "two", func() { writeFile(t, ws, "f.txt", "agent\n") })
	if _, err := c.Rewind(ctx, 2, ScopeCode, RewindOptions{}); err != nil {
		t.Fatal(err)
	}
	writeFile(t, ws, "f.txt", "agent\n") // the user's own decision
	for i := range 4 {
		writeFile(t, ws, "h.txt", string(rune('a'+i))+"\n")
		if _, err := r.Save(ctx, SaveOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	res, err := r.GC(ctx, GCOptions{Retention: &Retention{Keep: 2}})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("gc removed %d checkpoints, %d ops", len(res.Removed), res.Ops)
	if _, err := c.Rewind(ctx, 1, ScopeCode, RewindOptions{}); err != nil {
		t.Fatal(err)
	}
	if got := testutil.ReadFile(t, ws, "f.txt"); got != "agent\n" {
		t.Errorf("rewind 1 after gc took the user's f.txt back: %q", got)
	}
}

// A summary keeps what a rewind took back: the turns it stands for that a
// rewind in effect undid stay taken back, and the user's redo by hand of
// one of them survives a later rewind.
func TestKeepUserEditsRewoundTurnInSummary(t *testing.T) {
	ctx := context.Background()
	r, ws := openTest(t, map[string]string{"f.txt": "base\n", "g.txt": "g\n"})
	c := newCtl(t, r, "sum")
	turn(t, c, "one", func() { writeFile(t, ws, "g.txt", "g1\n") })
	turn(t, c, "two", func() { writeFile(t, ws, "f.txt", "agent\n") })
	if _, err := c.Rewind(ctx, 2, ScopeCode, RewindOptions{}); err != nil {
		t.Fatal(err)
	}
	writeFile(t, ws, "f.txt", "agent\n") // the user's own decision
	if _, err := c.Summarize(ctx, 2, SummarizeUpto); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Rewind(ctx, 1, ScopeCode, RewindOptions{}); err != nil {
		t.Fatal(err)
	}
	if got := testutil.ReadFile(t, ws, "f.txt"); got != "agent\n" {
		t.Errorf("rewind of the summary took the user's f.txt back: %q", got)
	}
	if got := testutil.ReadFile(t, ws, "g.txt"); got != "g\n" {
		t.Errorf("rewind of the summary left turn 1's g.txt: %q", got)
	}
}

// A rewind of the turn in progress (the agent, through MCP, taking back
// its own first try) does not make the turn taken back for good: the
// agent goes on, and what the turn has at its end is its work, which a
// later rewind takes back.
func TestKeepUserEditsRewindOfTheOpenTurn(t *testing.T) {
	ctx := context.Background()
	r, ws := openTest(t, map[string]string{"f.txt": "base\n", "g.txt": "g\n"})
	c := newCtl(t, r, "open")
	turn(t, c, "one", func() { writeFile(t, ws, "g.txt", "g1\n") })
	if _, err := c.BeginTurn(ctx, "two"); err != nil {
		t.Fatal(err)
	}
	writeFile(t, ws, "f.txt", "first try\n")
	if _, err := c.Rewind(ctx, 2, ScopeCode, RewindOptions{}); err != nil {
		t.Fatal(err)
	}
	if got := testutil.ReadFile(t, ws, "f.txt"); got != "base\n" {
		t.Fatalf("rewind of the open turn: f.txt = %q", got)
	}
	writeFile(t, ws, "f.txt", "second try\n")
	if _, err := c.EndTurn(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Rewind(ctx, 1, ScopeCode, RewindOptions{}); err != nil {
		t.Fatal(err)
	}
	if got := testutil.ReadFile(t, ws, "f.txt"); got != "base\n" {
		t.Errorf("rewind 1 left turn 2's second try: f.txt = %q", got)
	}
	if got := testutil.ReadFile(t, ws, "g.txt"); got != "g\n" {
		t.Errorf("rewind 1 left turn 1's g.txt: %q", got)
	}
}

// Turn 1 adds files and turn 2 deletes them: rewinding to turn 1 leaves
// them absent, with no conflict (undoing turn 2 puts them back, undoing
// turn 1 takes them away again) — also one in a directory turn 2 left
// empty, which is then not in the workspace's tree: putting its file back
// makes it a directory again, not a change of its type by the user.
func TestKeepUserEditsAddedThenDeleted(t *testing.T) {
	ctx := context.Background()
	r, ws := openTest(t, map[string]string{"keep.txt": "k\n"})
	c := newCtl(t, r, "add-del")
	turn(t, c, "one", func() {
		writeFile(t, ws, "x.txt", "x\n")
		writeFile(t, ws, "lib/deep/y.bin", "bin\x00ary")
	})
	turn(t, c, "two", func() {
		os.Remove(filepath.Join(ws, "x.txt"))
		os.Remove(filepath.Join(ws, "lib/deep/y.bin")) // lib/ is left empty: no longer in the tree
	})
	res, err := c.Rewind(ctx, 1, ScopeCode, RewindOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{"x.txt", "lib/deep/y.bin"} {
		if got := testutil.ReadFile(t, ws, p); got != testutil.Absent {
			t.Errorf("%s = %q", p, got)
		}
	}
	if len(res.Conflicts) != 0 || len(res.Kept) != 0 {
		t.Errorf("conflicts %v, kept %v", res.Conflicts, res.Kept)
	}
}

// A rewind with nothing left to take back (the user already undid the
// turn by hand) while the user has edits no checkpoint holds: undo must
// leave the workspace as it was before the rewind, not go back to HEAD
// (which lacks those edits).
func TestKeepUserEditsNoOpRewindThenUndo(t *testing.T) {
	ctx := context.Background()
	r, ws := openTest(t, map[string]string{"a.txt": "a\n", "b.txt": "b\n"})
	c := newCtl(t, r, "keep")
	turn(t, c, "agent edits a", func() { writeFile(t, ws, "a.txt", "agent\n") })
	writeFile(t, ws, "a.txt", "a\n")    // the user takes the turn back by hand
	writeFile(t, ws, "b.txt", "mine\n") // and edits b
	if _, err := c.Rewind(ctx, 1, ScopeCode, RewindOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := r.Undo(ctx); err != nil {
		t.Fatal(err)
	}
	for p, want := range map[string]string{"a.txt": "a\n", "b.txt": "mine\n"} {
		if got := testutil.ReadFile(t, ws, p); got != want {
			t.Errorf("after the rewind and its undo %s = %q, want %q", p, got, want)
		}
	}
}
