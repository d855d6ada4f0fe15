package ckpt

import (
	"context"
	"errors"
	"fmt"
	"math/rand"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/seed1cedbf7c/ckpt/internal/testutil"
)

// opSummary is an entry as the tests compare it: kind, branch, marks.
func opSummary(e OpEntry) string {
	s := fmt.Sprintf("%d %s %s", e.Seq, e.Kind, e.Branch)
	if e.Change != nil {
		s += " " + FormatCounts(e.Change.Added, e.Change.Modified, e.Change.Deleted)
	}
	if e.Target != 0 {
		s += fmt.Sprintf(" #%d", e.Target)
	}
	if e.Undo {
		s += " undo"
	}
	if e.Redo {
		s += " redo"
	}
	if !e.Restorable {
		s += " -"
	}
	return s
}

func opLog(t *testing.T, r *Repo, opts OpLogOptions) []string {
	t.Helper()
	es, err := r.OpLog(context.Background(), opts)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range es {
		out = append(out, opSummary(e))
	}
	return out
}

// sameAs fails unless the workspace is exactly checkpoint id.
func sameAs(t *testing.T, r *Repo, id ID) {
	t.Helper()
	d, err := r.Diff(context.Background(), DiffOptions{From: id.String()})
	if err != nil {
		t.Fatal(err)
	}
	if len(d.Files) > 0 {
		t.Fatalf("workspace differs from %s: %v", id.Short(), d.Files)
	}
}

func TestOpLogSequence(t *testing.T) {
	ctx := context.Background()
	r, ws := openTest(t, map[string]string{"a.txt": "1\n"})
	if got := opLog(t, r, OpLogOptions{}); len(got) != 0 {
		t.Fatalf("empty store: %v", got)
	}
	// The numbers are the ops' seqs.
	a := mustSave(t, r, "A") // 1
	writeFile(t, ws, "a.txt", "2\n")
	writeFile(t, ws, "b.txt", "new\n")
	mustSave(t, r, "B")                                                        // 2
	if _, err := r.Restore(ctx, a.ID.String(), RestoreOptions{}); err != nil { // 3
		t.Fatal(err)
	}
	if _, err := r.Undo(ctx); err != nil { // 4
		t.Fatal(err)
	}
	if _, err := r.Redo(ctx); err != nil { // 5
		t.Fatal(err)
	}
	if _, err := r.Undo(ctx); err != nil { // 6: back at B
		t.Fatal(err)
	}
	if _, err := r.Switch(ctx, "feature", SwitchOptions{Create: true}); err != nil { // 7 branch, 8 switch
		t.Fatal(err)
	}
	writeFile(t, ws, "c.txt", "c\n")
	mustSave(t, r, "C")                                              // 9
	if _, err := r.CreateTag(ctx, "v1", "HEAD", false); err != nil { // 10
		t.Fatal(err)
	}
	c := newCtl(t, r, "s")
	turn(t, c, "edit", func() { writeFile(t, ws, "a.txt", "agent\n") })                // 11 save (turn end)
	if _, err := c.Rewind(ctx, 1, ScopeCode, RewindOptions{Exact: true}); err != nil { // 12 rewind
		t.Fatal(err)
	}
	got := opLog(t, r, OpLogOptions{})
	want := []string{
		"12 rewind feature +0 ~1 -0 undo",
		"11 save feature +0 ~1 -0",
		"10 tag feature -",
		"9 save feature +1 ~0 -0",
		"8 switch feature +0 ~0 -0",
		"7 branch main -",
		"6 undo main +1 ~1 -0 #3",
		"5 redo main +0 ~1 -1 #3",
		"4 undo main +1 ~1 -0 #3",
		"3 restore main +0 ~1 -1",
		"2 save main +1 ~1 -0",
		"1 save main +1 ~0 -0",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("op log:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	// The marks are the Timeline's.
	tl, err := r.Timeline(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if tl.Undo == nil || tl.Undo.Op != 12 || tl.Redo != nil {
		t.Fatalf("timeline %+v", tl)
	}
	if got := opLog(t, r, OpLogOptions{Limit: 2, Kinds: []OpKind{OpSave, OpUndo}}); strings.Join(got, "|") != "11 save feature +0 ~1 -0|9 save feature +1 ~0 -0" {
		t.Fatalf("limit 2, saves and undos: %v", got)
	}
	// After an undo, redo's mark is on the op it would do again.
	if _, err := r.Undo(ctx); err != nil {
		t.Fatal(err)
	}
	got = opLog(t, r, OpLogOptions{Limit: 3})
	if got[0] != "13 undo feature +0 ~1 -0 #12" || got[1] != "12 rewind feature +0 ~1 -0 redo" || got[2] != "11 save feature +0 ~1 -0 undo" {
		t.Fatalf("after undo: %v", got)
	}
	// Undoing the switch puts HEAD back on main; the log says so.
	for range 3 { // 14 takes back 11, 15 9, 16 the switch
		if _, err := r.Undo(ctx); err != nil {
			t.Fatal(err)
		}
	}
	if _, br, _ := r.Head(ctx); br != "main" {
		t.Fatalf("after undoing the switch: on %q", br)
	}
	got = opLog(t, r, OpLogOptions{Limit: 3})
	if !strings.HasPrefix(got[0], "16 undo main +0 ~0 -0 #8") || !strings.HasPrefix(got[1], "15 undo feature ") {
		t.Fatalf("undo of switch: %v", got)
	}
}

func TestOpRestoreAndUndo(t *testing.T) {
	ctx := context.Background()
	r, ws := openTest(t, map[string]string{"a.txt": "1\n"})
	a := mustSave(t, r, "A") // 1
	writeFile(t, ws, "a.txt", "2\n")
	b := mustSave(t, r, "B") // 2
	writeFile(t, ws, "b.txt", "3\n")
	c := mustSave(t, r, "C") // 3

	res, err := r.OpRestore(ctx, 1, OpRestoreOptions{DryRun: true})
	if err != nil {
		t.Fatal(err)
	}
	if !res.DryRun || len(res.Changed()) != 2 {
		t.Fatalf("dry run: %+v", res)
	}
	sameAs(t, r, c.ID)

	res, err = r.OpRestore(ctx, 1, OpRestoreOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if res.Head != a.ID || res.PreRestore != nil {
		t.Fatalf("op restore 1: head %s, pre %v", res.Head.Short(), res.PreRestore)
	}
	sameAs(t, r, a.ID)
	es, err := r.OpLog(ctx, OpLogOptions{Limit: 1})
	if err != nil {
		t.Fatal(err)
	}
	if e := es[0]; e.Kind != OpRestore || e.Target != 1 || e.After != a.ID || e.Before != c.ID || !e.Undo {
		t.Fatalf("recorded as %+v", e)
	}
	if _, err := r.Undo(ctx); err != nil {
		t.Fatal(err)
	}
	sameAs(t, r, c.ID)
	if _, err := r.Redo(ctx); err != nil {
		t.Fatal(err)
	}
	sameAs(t, r, a.ID)
	if _, err := r.OpRestore(ctx, 2, OpRestoreOptions{}); err != nil {
		t.Fatal(err)
	}
	sameAs(t, r, b.ID)
}

func TestOpRestoreKeepsUnsavedChanges(t *testing.T) {
	ctx := context.Background()
	r, ws := openTest(t, map[string]string{"a.txt": "1\n"})
	a := mustSave(t, r, "A")
	writeFile(t, ws, "a.txt", "2\n")
	mustSave(t, r, "B")
	writeFile(t, ws, "a.txt", "unsaved\n")
	writeFile(t, ws, "new.txt", "unsaved too\n")
	res, err := r.OpRestore(ctx, 1, OpRestoreOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if res.PreRestore == nil {
		t.Fatal("unsaved changes were not checkpointed")
	}
	sameAs(t, r, a.ID)
	if _, err := r.Undo(ctx); err != nil {
		t.Fatal(err)
	}
	sameAs(t, r, res.PreRestore.ID)
	if got := testutil.ReadFile(t, ws, "a.txt") + testutil.ReadFile(t, ws, "new.txt"); got != "unsaved\nunsaved too\n" {
		t.Fatalf("after undo: %q", got)
	}
}

func TestOpRestoreAcrossBranches(t *testing.T) {
	ctx := context.Background()
	r, ws := openTest(t, map[string]string{"a.txt": "1\n"})
	mustSave(t, r, "A")
	if _, err := r.Switch(ctx, "feature", SwitchOptions{Create: true}); err != nil {
		t.Fatal(err)
	}
	writeFile(t, ws, "f.txt", "feature\n")
	f := mustSave(t, r, "F") // on feature
	if _, err := r.Switch(ctx, "main", SwitchOptions{}); err != nil {
		t.Fatal(err)
	}
	writeFile(t, ws, "m.txt", "main\n")
	m := mustSave(t, r, "M")
	es, err := r.OpLog(ctx, OpLogOptions{Kinds: []OpKind{OpSave}})
	if err != nil {
		t.Fatal(err)
	}
	var fSeq int64
	for _, e := range es {
		if e.After == f.ID {
			fSeq = e.Seq
			if e.Branch != "feature" {
				t.Fatalf("save F on %q", e.Branch)
			}
		}
	}
	if _, err := r.OpRestore(ctx, fSeq, OpRestoreOptions{}); err != nil {
		t.Fatal(err)
	}
	sameAs(t, r, f.ID)
	if head, br, _ := r.Head(ctx); br != "feature" || head.ID != f.ID {
		t.Fatalf("HEAD %s on %q, want F on feature", head.Short(), br)
	}
	if _, err := r.Undo(ctx); err != nil {
		t.Fatal(err)
	}
	sameAs(t, r, m.ID)
	if head, br, _ := r.Head(ctx); br != "main" || head.ID != m.ID {
		t.Fatalf("after undo HEAD %s on %q, want M on main", head.Short(), br)
	}
}

func TestOpRestoreRefusals(t *testing.T) {
	ctx := context.Background()
	r, ws := openTest(t, map[string]string{"a.txt": "1\n"})
	mustSave(t, r, "A")                                              // 1
	if _, err := r.CreateTag(ctx, "v1", "HEAD", false); err != nil { // 2
		t.Fatal(err)
	}
	if _, err := r.CreateBranch(ctx, "x", ""); err != nil { // 3
		t.Fatal(err)
	}
	if err := r.DeleteBranch(ctx, "x"); err != nil { // 4
		t.Fatal(err)
	}
	writeFile(t, ws, "a.txt", "edit\n")
	for _, seq := range []int64{2, 3, 4} {
		_, err := r.OpRestore(ctx, seq, OpRestoreOptions{})
		if !errors.Is(err, ErrNoOpState) {
			t.Fatalf("op %d: %v", seq, err)
		}
		if !strings.Contains(Hint(err), "ckpt op restore 1") {
			t.Fatalf("op %d: hint %q", seq, Hint(err))
		}
	}
	_, err := r.OpRestore(ctx, 2, OpRestoreOptions{})
	if got := err.Error(); got != "op restore: operation 2 (tag v1) records no workspace state" {
		t.Fatalf("error %q", got)
	}
	for _, seq := range []int64{0, -1, 99} {
		if _, err := r.OpRestore(ctx, seq, OpRestoreOptions{}); !errors.Is(err, ErrNotFound) || !strings.Contains(err.Error(), fmt.Sprint("no operation ", seq)) {
			t.Fatalf("op %d: %v", seq, err)
		}
	}
	// Nothing was written, nothing recorded.
	if got := testutil.ReadFile(t, ws, "a.txt"); got != "edit\n" {
		t.Fatalf("a.txt %q", got)
	}
	if got := opLog(t, r, OpLogOptions{}); len(got) != 4 {
		t.Fatalf("log %v", got)
	}
}

// gc drops the log's oldest operations with the checkpoints they name;
// op restore of one says so.
func TestOpRestoreAfterGC(t *testing.T) {
	ctx := context.Background()
	r, ws := openTest(t, map[string]string{"a.txt": "0\n"})
	for i := 1; i <= 5; i++ {
		writeFile(t, ws, "a.txt", fmt.Sprint(i, "\n"))
		mustSave(t, r, fmt.Sprint(i))
	}
	if _, err := r.GC(ctx, GCOptions{Retention: &Retention{Keep: 2}}); err != nil {
		t.Fatal(err)
	}
	es, err := r.OpLog(ctx, OpLogOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(es) == 0 || es[len(es)-1].Seq == 1 {
		t.Fatalf("gc kept the whole log: %v", opLog(t, r, OpLogOptions{}))
	}
	_, err = r.OpRestore(ctx, 1, OpRestoreOptions{})
	if !errors.Is(err, ErrNotFound) || !strings.Contains(err.Error(), "operation 1 is no longer in the operation log") || !strings.Contains(Hint(err), "gc") {
		t.Fatalf("op restore 1 after gc: %v (hint %q)", err, Hint(err))
	}
	oldest := es[len(es)-1]
	if _, err := r.OpRestore(ctx, oldest.Seq, OpRestoreOptions{}); err != nil {
		t.Fatalf("op restore %d, kept: %v", oldest.Seq, err)
	}
}

// Every operation that left a state restores to exactly that state,
// whatever came after it.
func TestPropertyOpRestoreEveryOp(t *testing.T) {
	ctx := context.Background()
	rng := rand.New(rand.NewSource(1))
	r, ws := openTest(t, map[string]string{"a.txt": "0\n"})
	mustSave(t, r, "start")
	files := []string{"a.txt", "b.txt", "d/c.txt", "d/e/f.txt"}
	steps := 40
	if testing.Short() {
		steps = 15
	}
	for i := range steps {
		switch k := rng.Intn(10); {
		case k < 4:
			f := files[rng.Intn(len(files))]
			writeFile(t, ws, f, fmt.Sprint(i, "\n"))
			mustSave(t, r, fmt.Sprint(i))
		case k == 4:
			testutilRemove(t, ws, files[rng.Intn(len(files))])
			mustSave(t, r, fmt.Sprint(i))
		case k == 5:
			r.Undo(ctx) // nothing to undo is fine
		case k == 6:
			r.Redo(ctx)
		case k == 7:
			name := fmt.Sprint("b", rng.Intn(2))
			if _, err := r.Switch(ctx, name, SwitchOptions{Create: true}); err != nil {
				r.Switch(ctx, name, SwitchOptions{}) // exists, or already on it
			}
		case k == 8:
			es, err := r.OpLog(ctx, OpLogOptions{})
			if err != nil {
				t.Fatal(err)
			}
			e := es[rng.Intn(len(es))]
			if e.Restorable {
				if _, err := r.OpRestore(ctx, e.Seq, OpRestoreOptions{}); err != nil {
					t.Fatal(err)
				}
			}
		default:
			writeFile(t, ws, "unsaved.txt", fmt.Sprint(i, "\n"))
		}
	}
	es, err := r.OpLog(ctx, OpLogOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range es {
		_, err := r.OpRestore(ctx, e.Seq, OpRestoreOptions{})
		if !e.Kind.HasState() {
			if !errors.Is(err, ErrNoOpState) {
				t.Fatalf("op %d (%s): %v", e.Seq, e.Kind, err)
			}
			continue
		}
		if err != nil {
			t.Fatalf("op %d (%s): %v", e.Seq, e.Kind, err)
		}
		sameAs(t, r, e.After)
		head, br, err := r.Head(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if head.ID != e.After || br != e.Branch {
			t.Fatalf("op %d (%s): HEAD %s on %q, want %s on %q", e.Seq, e.Kind, head.Short(), br, e.After.Short(), e.Branch)
		}
	}
}

func testutilRemove(t *testing.T, ws, p string) {
	t.Helper()
	if err := os.RemoveAll(filepath.Join(ws, filepath.FromSlash(p))); err != nil {
		t.Fatal(err)
	}
}
