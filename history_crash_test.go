package ckpt

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/seed1cedbf7c/ckpt/internal/failpoint"
	"github.com/seed1cedbf7c/ckpt/internal/testutil"
	"github.com/seed1cedbf7c/ckpt/internal/treegen"
)

// Review tests for history: undo/redo, switch, recovery.

// Redo over unsaved changes: the changes are checkpointed (pre-restore),
// but the timeline's redo step keeps the original op's Before, so `undo`
// right after the redo does not take the redo back — it skips the unsaved
// edits and lands on the state before the redone save. Undo, in the same
// situation, first saves the edits on the timeline (so redo brings them
// back); redo does not, so the edits drop off the timeline.
func TestRedoOverUnsavedEditsIsUndoable(t *testing.T) {
	ctx := context.Background()
	r, ws := openTest(t, map[string]string{"f.txt": "A\n"})
	mustSave(t, r, "A")
	writeFile(t, ws, "f.txt", "B\n")
	mustSave(t, r, "B")
	if _, err := r.Undo(ctx); err != nil { // back to A
		t.Fatal(err)
	}
	writeFile(t, ws, "f.txt", "unsaved edit\n")
	res, err := r.Redo(ctx) // to B; the edit goes to a pre-restore checkpoint
	if err != nil {
		t.Fatal(err)
	}
	if res.PreRestore == nil {
		t.Fatal("redo did not keep the unsaved edit")
	}
	if got := testutil.ReadFile(t, ws, "f.txt"); got != "B\n" {
		t.Fatalf("after redo f.txt = %q", got)
	}
	if _, err := r.Undo(ctx); err != nil {
		t.Fatal(err)
	}
	if got := testutil.ReadFile(t, ws, "f.txt"); got != "unsaved edit\n" {
		t.Fatalf("undo after a redo over unsaved edits gives f.txt = %q, not the state before the redo (%q, kept only in pre-restore checkpoint %s)",
			got, "unsaved edit\n", res.PreRestore.Short())
	}
}

// reviewHelper runs fn in a child process (this test binary), with env.
func reviewHelper(t *testing.T, name string, env ...string) error {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^"+name+"$", "-test.count=1")
	cmd.Env = append(os.Environ(), append([]string{"REVIEW_HELPER=1"}, env...)...)
	out, err := cmd.CombinedOutput()
	if err != nil && !strings.Contains(err.Error(), "killed") {
		t.Logf("helper output:\n%s", out)
	}
	return err
}

// TestHelperSwitch switches to branch "feature" (in a child process
// that a failpoint kills).
func TestHelperSwitch(t *testing.T) {
	if os.Getenv("REVIEW_HELPER") == "" {
		return // a helper: it runs only in the child process below
	}
	ctx := context.Background()
	r, err := Open(ctx, os.Getenv("REVIEW_WS"), Options{Store: os.Getenv("REVIEW_STORE")})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if _, err := r.Switch(ctx, "feature", SwitchOptions{}); err != nil {
		t.Fatal(err)
	}
}

// A switch killed at any point is finished by the next command: the
// workspace is the branch's tip, HEAD is on the branch, and undo takes the
// switch back to the old branch with its unsaved changes.
func TestCrashDuringSwitch(t *testing.T) {
	ctx := context.Background()
	for n := 0; n <= 7; n++ {
		t.Run(fmt.Sprint("kill", n), func(t *testing.T) {
			ws, store := t.TempDir(), t.TempDir()
			testutil.WriteFiles(t, ws, map[string]string{"a.txt": "main a\n", "b.txt": "main b\n", "d/c.txt": "main c\n", "keep.txt": "k\n"})
			r, err := Open(ctx, ws, Options{Store: store})
			if err != nil {
				t.Fatal(err)
			}
			mustSave(t, r, "main 1")
			if _, err := r.Switch(ctx, "feature", SwitchOptions{Create: true}); err != nil {
				t.Fatal(err)
			}
			writeFile(t, ws, "a.txt", "feature a\n")
			os.Remove(filepath.Join(ws, "b.txt"))
			os.RemoveAll(filepath.Join(ws, "d"))
			writeFile(t, ws, "d", "d is a file on feature\n")
			writeFile(t, ws, "e/new.txt", "feature new\n")
			feat := mustSave(t, r, "feature 1")
			featState := snapshot(t, ws)
			if _, err := r.Switch(ctx, "main", SwitchOptions{}); err != nil {
				t.Fatal(err)
			}
			writeFile(t, ws, "keep.txt", "unsaved on main\n")
			mainState := snapshot(t, ws)
			r.Close()

			err = reviewHelper(t, "TestHelperSwitch", "REVIEW_WS="+ws, "REVIEW_STORE="+store, fmt.Sprintf("CKPT_FAILPOINT=restore-kill:%d", n))
			killed := err != nil
			t.Logf("helper killed: %v (%v)", killed, err)
			r, err = Open(ctx, ws, Options{Store: store})
			if err != nil {
				t.Fatal(err)
			}
			defer r.Close()
			if _, err := r.Recover(ctx); err != nil {
				t.Fatalf("recover: %v", err)
			}
			if d := treegen.Diff(featState, snapshot(t, ws)); d != "" {
				t.Fatalf("killed=%v: after recovery the workspace is not feature's tip:\n%s", killed, d)
			}
			ref, head, err := r.head(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if ref.Symbolic != "feature" || head.ID != feat.ID {
				t.Fatalf("killed=%v: HEAD on %q at %s, want feature at %s", killed, ref.Symbolic, head.ID.Short(), feat.Short())
			}
			if _, err := r.Undo(ctx); err != nil {
				t.Fatalf("undo: %v", err)
			}
			if d := treegen.Diff(mainState, snapshot(t, ws)); d != "" {
				t.Fatalf("killed=%v: undo of the recovered switch:\n%s", killed, d)
			}
			if ref, _, _ := r.head(ctx); ref.Symbolic != "main" {
				t.Fatalf("killed=%v: after undo HEAD on %q", killed, ref.Symbolic)
			}
			if fr, err := r.Fsck(ctx); err != nil || len(fr.Problems) > 0 {
				t.Fatalf("fsck %v %v", fr, err)
			}
		})
	}
}

// A switch that fails part-way is rolled back exactly, and HEAD stays.
func TestSwitchFailureRollbackAtEveryStep(t *testing.T) {
	ctx := context.Background()
	for n := 0; n <= 7; n++ {
		t.Run(fmt.Sprint("fail", n), func(t *testing.T) {
			r, ws := openTest(t, map[string]string{"a.txt": "main a\n", "b.txt": "main b\n", "d/c.txt": "main c\n", "keep.txt": "k\n"})
			mustSave(t, r, "main 1")
			if _, err := r.Switch(ctx, "feature", SwitchOptions{Create: true}); err != nil {
				t.Fatal(err)
			}
			writeFile(t, ws, "a.txt", "feature a\n")
			os.Remove(filepath.Join(ws, "b.txt"))
			os.RemoveAll(filepath.Join(ws, "d"))
			writeFile(t, ws, "d", "d is a file on feature\n")
			writeFile(t, ws, "e/new.txt", "feature new\n")
			mustSave(t, r, "feature 1")
			if _, err := r.Switch(ctx, "main", SwitchOptions{}); err != nil {
				t.Fatal(err)
			}
			writeFile(t, ws, "keep.txt", "unsaved on main\n")
			writeFile(t, ws, "d/c.txt", "unsaved c\n")
			mainState := snapshot(t, ws)
			disarm := failpoint.Set("restore/change", func(arg string) error {
				if arg == fmt.Sprint(n) {
					return fmt.Errorf("failpoint restore/change %d", n)
				}
				return nil
			})
			if n == 0 {
				disarm()
				disarm = failpoint.Set("restore/before-change", func(string) error { return errors.New("failpoint restore/before-change") })
			}
			_, err := r.Switch(ctx, "feature", SwitchOptions{})
			disarm()
			if err == nil {
				t.Logf("the switch makes fewer than %d changes: failpoint %d not reached", n, n)
				return
			}
			if d := treegen.Diff(mainState, snapshot(t, ws)); d != "" {
				t.Fatalf("after a failed switch (%v) the workspace was not rolled back:\n%s", err, d)
			}
			if ref, _, _ := r.head(ctx); ref.Symbolic != "main" {
				t.Fatalf("after a failed switch HEAD on %q", ref.Symbolic)
			}
			tl, _ := r.Timeline(ctx)
			if _, err := r.Undo(ctx); err != nil {
				t.Fatalf("undo: %v (timeline %+v)", err, tl)
			}
		})
	}
}
