package ckpt

import (
	"context"
	"strconv"
	"strings"
	"testing"

	"github.com/seed1cedbf7c/ckpt/internal/testutil"
)

// TestSessionStat: who changed what, turn by turn — the agent's lines in
// each turn, and the lines changed between turns — checked against git
// diff --numstat on the same two trees; a summary turn's parts count
// apart, and a turn in progress counts to the working tree.
func TestSessionStat(t *testing.T) {
	testutil.NeedGit(t)
	ctx := context.Background()
	ws := t.TempDir()
	testutil.WriteFiles(t, ws, map[string]string{"a.txt": "1\n2\n3\n", "gone.txt": "w\nx\ny\nz\n"})
	r, err := Open(ctx, ws, Options{Store: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	c := newCtl(t, r, "stat")
	var trees []string // the workspace at each turn's start and end
	// Turn 1: a new file of three lines, one line of a.txt changed.
	trees = append(trees, copyTree(t, ws))
	turn(t, c, "one", func() {
		testutil.WriteFiles(t, ws, map[string]string{"new.txt": "n1\nn2\nn3\n", "a.txt": "1\nTWO\n3\n"})
	})
	trees = append(trees, copyTree(t, ws))
	// Between turns: the user adds two lines and a binary file.
	testutil.WriteFiles(t, ws, map[string]string{"a.txt": "1\nTWO\n3\n4\n5\n", "img.bin": "\x00\x01\x02"})
	// Turn 2: a file of four lines deleted.
	trees = append(trees, copyTree(t, ws))
	turn(t, c, "two", func() { sh(t, ws, "rm gone.txt") })
	trees = append(trees, copyTree(t, ws))
	// Turn 3, in progress: one line added.
	if _, err := c.BeginTurn(ctx, "three"); err != nil {
		t.Fatal(err)
	}
	testutil.WriteFiles(t, ws, map[string]string{"new.txt": "n1\nn2\nn3\nn4\n"})

	s, err := c.Session(ctx)
	if err != nil {
		t.Fatal(err)
	}
	st, err := r.SessionStat(ctx, s)
	if err != nil {
		t.Fatal(err)
	}
	want := []TurnStat{
		{Turn: 1, Agent: LineCount{Files: 2, Insertions: 4, Deletions: 1}},
		{Turn: 2, Agent: LineCount{Files: 1, Deletions: 4}, UserBefore: LineCount{Files: 2, Insertions: 2, Binary: 1}},
		{Turn: 3, Agent: LineCount{Files: 1, Insertions: 1}, InProgress: true},
	}
	if len(st.Turns) != len(want) {
		t.Fatalf("turns %+v", st.Turns)
	}
	for i := range want {
		if st.Turns[i] != want[i] {
			t.Errorf("turn %d: %+v, want %+v", i+1, st.Turns[i], want[i])
		}
	}
	if (st.Agent != LineCount{Files: 4, Insertions: 5, Deletions: 5}) || (st.User != LineCount{Files: 2, Insertions: 2, Binary: 1}) {
		t.Errorf("totals: agent %+v, user %+v", st.Agent, st.User)
	}
	// The oracle: git's own count of the same two trees.
	for i := range 2 {
		if got, want := gitNumstat(t, trees[2*i], trees[2*i+1]), st.Turns[i].Agent; got != want {
			t.Errorf("turn %d: git counts %+v, ckpt %+v", i+1, got, want)
		}
	}
	if got, want := gitNumstat(t, trees[1], trees[2]), st.Turns[1].UserBefore; got != want {
		t.Errorf("between turns: git counts %+v, ckpt %+v", got, want)
	}

	// A summary turn: the edits between its original turns stay the
	// user's, counted apart from the agent's.
	if _, err := c.EndTurn(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Summarize(ctx, 3, SummarizeUpto); err != nil {
		t.Fatal(err)
	}
	if s, err = c.Session(ctx); err != nil {
		t.Fatal(err)
	}
	sum, err := r.SessionStat(ctx, s)
	if err != nil {
		t.Fatal(err)
	}
	if len(sum.Turns) != 1 || sum.Agent != st.Agent || sum.User != st.User {
		t.Errorf("after summarizing: %+v, want the same totals as %+v / %+v", sum, st.Agent, st.User)
	}
}

// copyTree copies the workspace into a new directory, for git to compare.
func copyTree(t *testing.T, ws string) string {
	t.Helper()
	dir := t.TempDir()
	sh(t, ws, "cp -a . "+dir)
	return dir
}

// gitNumstat counts the difference of two directories with git diff
// --no-index --numstat --no-renames (ckpt does not detect renames: a
// renamed file is one deleted and one added).
func gitNumstat(t *testing.T, from, to string) LineCount {
	t.Helper()
	out, _ := testutil.GitErr(t, t.TempDir(), "diff", "--no-index", "--numstat", "--no-renames", from, to)
	var c LineCount
	for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
		f := strings.Fields(l)
		if len(f) < 3 {
			continue
		}
		c.Files++
		if f[0] == "-" {
			c.Binary++
			continue
		}
		ins, _ := strconv.Atoi(f[0])
		del, _ := strconv.Atoi(f[1])
		c.Insertions += ins
		c.Deletions += del
	}
	return c
}

// TestLineCountOddChanges: the line counts of changes of every kind —
// mode only, symlinks, empty files, type changes, no final newline,
// CRLF — agree with git diff --no-index --numstat on the same trees.
func TestLineCountOddChanges(t *testing.T) {
	testutil.NeedGit(t)
	ctx := context.Background()
	cases := []struct{ name, before, after string }{
		{"mode only", "printf 'a\\nb\\n' > f", "chmod +x f"},
		{"empty added", ":", ": > e"},
		{"empty deleted", ": > e", "rm e"},
		{"empty to text", ": > e", "printf 'x\\ny\\n' > e"},
		{"symlink added", ":", "ln -s target l"},
		{"symlink retargeted", "ln -s t1 l", "rm l; ln -s t2 l"},
		{"file to symlink", "printf 'a\\nb\\nc\\n' > f", "rm f; ln -s f2 f"},
		{"symlink to file", "ln -s t f", "rm f; printf 'a\\nb\\n' > f"},
		{"file to dir", "printf 'a\\nb\\n' > f", "rm f; mkdir f; printf 'c\\n' > f/g"},
		{"no final newline", "printf 'a\\nb' > f", "printf 'a\\nb\\n' > f"},
		{"crlf", "printf 'a\\r\\nb\\r\\n' > f", "printf 'a\\nb\\n' > f"},
		{"rename", "printf 'a\\nb\\nc\\n' > f", "mv f g"},
		{"binary to text", "printf 'a\\000b' > f", "printf 'a\\nb\\n' > f"},
		{"text to binary", "printf 'a\\nb\\n' > f", "printf 'a\\000b' > f"},
		{"exec symlink dir", "mkdir d; printf 'x\\n' > d/x", "rm -r d; ln -s . d"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ws := t.TempDir()
			sh(t, ws, tc.before)
			r, err := Open(ctx, ws, Options{Store: t.TempDir()})
			if err != nil {
				t.Fatal(err)
			}
			defer r.Close()
			a, err := r.Save(ctx, SaveOptions{Message: "a", AllowEmpty: true})
			if err != nil {
				t.Fatal(err)
			}
			from := copyTree(t, ws)
			sh(t, ws, tc.after)
			b, err := r.Save(ctx, SaveOptions{Message: "b", AllowEmpty: true})
			if err != nil {
				t.Fatal(err)
			}
			to := copyTree(t, ws)
			got, err := r.lineCount(ctx, a.Checkpoint.ID.String(), b.Checkpoint.ID.String())
			if err != nil {
				t.Fatal(err)
			}
			if want := gitNumstat(t, from, to); got != want {
				t.Errorf("ckpt counts %+v, git %+v", got, want)
			}
			wt, err := r.lineCount(ctx, a.Checkpoint.ID.String(), "")
			if err != nil {
				t.Fatal(err)
			}
			if wt != got {
				t.Errorf("to the working tree %+v, to the checkpoint %+v", wt, got)
			}
		})
	}
}

// A turn a conversation rewind removed (its code kept) is still the
// agent's work: its lines count as the agent's, in Removed of the turn
// that follows it, not as changes made between turns.
func TestSessionStatRemovedTurns(t *testing.T) {
	ctx := context.Background()
	r, ws := openTest(t, map[string]string{"a.txt": "1\n2\n3\n"})
	c := newCtl(t, r, "removed")
	turn(t, c, "one", func() { writeFile(t, ws, "a.txt", "1\n2\n3\n4\n") })
	turn(t, c, "two", func() { writeFile(t, ws, "b.txt", "b1\nb2\n") })
	if _, err := c.Rewind(ctx, 2, ScopeConversation, RewindOptions{}); err != nil {
		t.Fatal(err)
	}
	writeFile(t, ws, "u.txt", "user\n") // the user, between turns
	turn(t, c, "three", func() { writeFile(t, ws, "c.txt", "c\n") })
	s, err := c.Session(ctx)
	if err != nil {
		t.Fatal(err)
	}
	st, err := r.SessionStat(ctx, s)
	if err != nil {
		t.Fatal(err)
	}
	want := []TurnStat{
		{Turn: 1, Agent: LineCount{Files: 1, Insertions: 1}},
		{Turn: 2, Agent: LineCount{Files: 1, Insertions: 1}, UserBefore: LineCount{Files: 1, Insertions: 1},
			Removed: LineCount{Files: 1, Insertions: 2}},
	}
	if len(st.Turns) != len(want) {
		t.Fatalf("turns %+v", st.Turns)
	}
	for i := range want {
		if st.Turns[i] != want[i] {
			t.Errorf("turn %d: %+v, want %+v", i+1, st.Turns[i], want[i])
		}
	}
	if want := (LineCount{Files: 3, Insertions: 4}); st.Agent != want {
		t.Errorf("agent total %+v, want %+v", st.Agent, want)
	}
	if want := (LineCount{Files: 1, Insertions: 1}); st.User != want {
		t.Errorf("user total %+v, want %+v", st.User, want)
	}
}
