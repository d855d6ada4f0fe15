package restore

import (
	"context"
	"os"
	"path/filepath"
	"reflect"
	"testing"
	"time"

	"github.com/seed1cedbf7c/ckpt/internal/treegen"
)

// verifyCase applies a restore that writes ok, corrupt, chmod, symlink and
// removed, and deletes gone and dir/gone; then it damages what the restore
// did: corrupt gets other content of the same size, chmod gains the exec
// bit, symlink becomes a symlink, removed is removed, gone and dir/gone are
// created again. It returns the workspace, the applier, the plan and the
// outcome.
func verifyCase(t *testing.T) (string, *Applier, *Plan, *Outcome) {
	t.Helper()
	current := treegen.State{
		"ok": file("o"), "corrupt": file("c"), "chmod": file("m"), "symlink": file("s"),
		"removed": file("r"), "gone": file("gone"), "dir/gone": file("gone too"),
	}
	target := treegen.State{
		"ok": file("o2"), "corrupt": file("content"), "chmod": file("m2"), "symlink": file("s2"),
		"removed": file("r2"), "dir/new": file("new"),
	}
	o := newObjects()
	dir, a := workspace(t, o, current)
	p := plan(t, o, current, target, nil, nil)
	out, err := a.Apply(context.Background(), p)
	if err != nil {
		t.Fatal(err)
	}
	checkDisk(t, dir, target)
	if bad := Verify(a.Root, out, p); len(bad) != 0 {
		t.Fatalf("Verify right after Apply: %q", bad)
	}
	at := func(rel string) string { return filepath.Join(dir, filepath.FromSlash(rel)) }
	// Set an mtime no restore gives, so the stat data surely changes even
	// within one clock tick of Apply.
	old := time.Date(2001, 2, 3, 4, 5, 6, 0, time.UTC)
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(os.WriteFile(at("corrupt"), []byte("CONTENT"), 0o644))
	must(os.Chtimes(at("corrupt"), old, old))
	must(os.Chmod(at("chmod"), 0o755))
	must(os.Remove(at("symlink")))
	must(os.Symlink("s2", at("symlink")))
	must(os.Remove(at("removed")))
	for _, p := range []string{"gone", "dir/gone"} {
		must(os.WriteFile(at(p), []byte(current[p].Data), 0o644))
		must(os.Chtimes(at(p), old, old))
	}
	return dir, a, p, out
}

// TestVerifyLeavesLaterEdits checks that Verify does not report paths
// changed after Apply wrote or deleted them (their stat data differs from
// what Apply left): those changes are someone else's, not a corruption.
func TestVerifyLeavesLaterEdits(t *testing.T) {
	_, a, p, out := verifyCase(t)
	if bad := Verify(a.Root, out, p); len(bad) != 0 {
		t.Errorf("Verify reported %q, want nothing (every change came after Apply)", bad)
	}
}

// TestVerifyReportsMismatches checks that Verify reports exactly the
// written paths that do not hold their target entry (other content of the
// same size, another mode, a symlink for a file) and the deleted paths
// that exist again, when their stat data is still what Apply left.
//
// Stat data that looks unchanged after a real edit (bit rot, or a write in
// the same clock tick that restores the size and mtime) cannot be made
// from a test (the ctime moves), so the test sets the outcome's
// unexported record of what Apply left (wrote, gone) to the stat data the
// paths have after the damage, as if Apply had left that.
func TestVerifyReportsMismatches(t *testing.T) {
	dir, a, p, out := verifyCase(t)
	for _, q := range []string{"ok", "corrupt", "chmod", "symlink"} {
		out.wrote[q] = lstat(t, dir, q)
	}
	for _, q := range []string{"gone", "dir/gone"} {
		out.gone[q] = lstat(t, dir, q)
	}
	got := Verify(a.Root, out, p)
	want := []string{"chmod", "corrupt", "dir/gone", "gone", "symlink"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("Verify = %q, want %q", got, want)
	}
	// A path of which Apply left no record is checked as well.
	delete(out.wrote, "corrupt")
	delete(out.gone, "gone")
	if got := Verify(a.Root, out, p); !reflect.DeepEqual(got, want) {
		t.Errorf("without records: Verify = %q, want %q", got, want)
	}
}

// TestVerifyTargetDirectory checks that a deleted file whose path the
// target has as a directory is not reported: the directory is what the
// restore made there.
func TestVerifyTargetDirectory(t *testing.T) {
	current := treegen.State{"d": file("a file"), "l": link("x")}
	target := treegen.State{"d/f": file("f"), "l/g/h": file("h")}
	o := newObjects()
	dir, a := workspace(t, o, current)
	p := plan(t, o, current, target, nil, nil)
	out, err := a.Apply(context.Background(), p)
	if err != nil {
		t.Fatal(err)
	}
	checkDisk(t, dir, target)
	if want := []string{"l", "d"}; !reflect.DeepEqual(out.Deleted, want) { // deepest, then last first
		t.Errorf("deleted %q, want %q", out.Deleted, want)
	}
	if bad := Verify(a.Root, out, p); len(bad) != 0 {
		t.Errorf("Verify = %q, want nothing", bad)
	}
}
