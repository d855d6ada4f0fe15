package attack

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// DEFECT. Class 18 the other way round: `ckpt restore REV -- f` where f is
// now a directory and REV has a file f. The workspace is right (the file
// f), but the checkpoint recorded as HEAD has no f at all: HEAD does not
// match the disk, and `ckpt diff` shows f as added. outcomeEdits
// (restore.go) gives tree.Overlay both f (the file) and f/inner (deleted);
// Overlay (internal/tree/tree.go, overlayDir: "Edits below the child: it
// becomes (or stays) a directory") turns f back into a directory to delete
// f/inner in it, and the empty directory vanishes. A deletion below a path
// the restore wrote as a file or symlink must be dropped (in outcomeEdits,
// or in Overlay when the child's own edit is not a directory).
func TestPartialRestoreDirectoryToFile(t *testing.T) {
	e := newEnv(t)
	e.Write(map[string]string{"f": "f is a file\n", "a.txt": "a\n"})
	e.Must("save", "-q", "-m", "one")
	os.Remove(filepath.Join(e.WS, "f"))
	e.Write(map[string]string{"f/inner.txt": "f is a directory\n"})
	e.Must("save", "-q", "-m", "two")
	e.Must("restore", "HEAD~1", "--", "f")
	if got := e.Read("f"); got != "f is a file\n" {
		t.Fatalf("f = %q", got)
	}
	if out := e.Must("diff", "--name-only"); strings.TrimSpace(out) != "" {
		t.Fatalf("HEAD does not match the disk after the partial restore; ckpt diff --name-only:\n%s", out)
	}
}

// DEFECT (pre-existing, not a regression: the revert before cb5638c fails
// the same way). A run whose command replaced a file with a directory
// cannot be reverted: `ckpt runs revert` exits 3 "apply f: f is a
// directory", and Decree's automatic revert of a failed run fails the same
// way, so a dead run leaves its failed attempt's changes in the workspace.
// diff.ApplyTree undoes "f/inner added" (revertTree.Remove records it) and
// then "f deleted", whose check reads f: revertTree.Read (revert.go) looks
// f up in the stored tree, where it is still the directory, and refuses.
// revertTree must see a directory whose every file its edits removed as
// gone (Read returns nil, Write may put a file there), and the overlay of
// the result must drop deletions below a path written as a file (see
// TestPartialRestoreDirectoryToFile).
func TestRunRevertFileToDirectory(t *testing.T) {
	t.Run("runs revert", func(t *testing.T) {
		e := newEnv(t)
		e.Write(map[string]string{"f": "f is a file\n", "a.txt": "a\n"})
		e.Must("run", "--id", "2026010100000000-0", "--", "sh", "-c", "rm f; mkdir f; echo in > f/inner")
		if code, out, errs := e.Run("runs", "revert", "2026010100000000-0"); code != 0 {
			t.Fatalf("runs revert: exit %d\n%s%s", code, out, errs)
		}
		if got := e.Read("f"); got != "f is a file\n" {
			t.Fatalf("after the revert f = %q", got)
		}
	})
	t.Run("a failed run's automatic revert", func(t *testing.T) {
		e := newEnv(t)
		e.Write(map[string]string{"f": "f is a file\n", "a.txt": "a\n"})
		code, out, errs := e.Run("run", "--id", "2026010100000001-0", "--", "sh", "-c",
			"if [ -f f ]; then rm f; mkdir f; echo in > f/inner; fi; exit 1")
		t.Logf("ckpt run: exit %d\n%s%s", code, out, errs)
		if fi, err := os.Lstat(filepath.Join(e.WS, "f")); err == nil && fi.IsDir() {
			t.Fatal("after the failed run f is still the directory the failed attempt made: never reverted")
		}
		if got := e.Read("f"); got != "f is a file\n" {
			t.Fatalf("after the failed run's revert f = %q (the failed attempt's changes stayed)", got)
		}
	})
}
