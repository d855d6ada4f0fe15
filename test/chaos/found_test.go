//go:build linux

package chaos

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/seed1cedbf7c/ckpt"
	"github.com/seed1cedbf7c/ckpt/internal/failpoint"
	"github.com/seed1cedbf7c/ckpt/internal/testutil"
)

// Defects TestChaos found, each as a minimal deterministic reproduction
// (failpoints open the race the harness hit by chance).

// Found by TestChaos (-chaos.seed=8, round 67: `ckpt rewind 2 --code`
// exited 3, "1 path(s) do not match after writing: aside350/c10"): a
// restore put d/f in place, and before it looked at what it had left the
// user moved d away (a directory swapped for a symlink and back). The
// restore then had no record of what it wrote there, so verification
// judged the user's change a corruption and the restore failed with an
// integrity error, though every write was right and the change after it
// is the user's (docs/guarantees.md: "An edit made after the restore
// wrote a path is the user's, not a corruption").
func TestFoundParentMovedRightAfterWrite(t *testing.T) {
	ctx := context.Background()
	ws := testutil.TempDir(t)
	write := func(p, c string) { t.Helper(); testutil.WriteFile(t, filepath.Join(ws, p), c) }
	r, err := ckpt.Open(ctx, ws, ckpt.Options{Store: filepath.Join(t.TempDir(), "store")})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	write("keep.txt", "keep\n")
	before, err := r.Save(ctx, ckpt.SaveOptions{Message: "without d"})
	if err != nil {
		t.Fatal(err)
	}
	write("d/f", "f\n")
	target, err := r.Save(ctx, ckpt.SaveOptions{Message: "with d/f"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := r.Restore(ctx, before.Checkpoint.ID.String(), ckpt.RestoreOptions{}); err != nil {
		t.Fatal(err)
	}

	// Right after the restore puts d/f in place, the user moves d away
	// and makes a directory d of their own.
	done := false
	disarm := failpoint.Set("restore/placed", func(arg string) error {
		if arg != "d/f" || done {
			return nil
		}
		done = true
		if err := os.Rename(filepath.Join(ws, "d"), filepath.Join(ws, "moved")); err != nil {
			t.Error(err)
		}
		write("d/mine.txt", "the user's\n")
		return nil
	})
	defer disarm()
	_, err = r.Restore(ctx, target.Checkpoint.ID.String(), ckpt.RestoreOptions{})
	if !done {
		t.Fatal("the failpoint was not reached")
	}
	var ie *ckpt.IntegrityError
	if errors.As(err, &ie) {
		t.Fatalf("the user's change after the restore wrote d/f made it an integrity failure: %v", err)
	}
	if err != nil {
		t.Fatal(err)
	}
	for p, want := range map[string]string{"moved/f": "f\n", "d/mine.txt": "the user's\n", "keep.txt": "keep\n"} {
		if b, err := os.ReadFile(filepath.Join(ws, p)); err != nil || string(b) != want {
			t.Errorf("%s = %q, %v; want %q", p, b, err, want)
		}
	}
}
