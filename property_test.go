package ckpt

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/seed1cedbf7c/ckpt/internal/testutil"
	"github.com/seed1cedbf7c/ckpt/internal/treegen"
)

func snapshot(t *testing.T, dir string) treegen.State {
	t.Helper()
	st, err := treegen.Snapshot(dir, func(rel string) bool { return strings.HasPrefix(rel, ".ckpt-tmp-") })
	if err != nil {
		t.Fatal(err)
	}
	return st
}

// TestPropertyRestoreUndo: on random trees (symlinks, exec bits, binary and
// empty files, non-UTF-8 names), save -> mutate (including file <-> dir <->
// symlink changes) -> restore gives the original exactly, and undo after
// that restore gives the mutated tree exactly.
func TestPropertyRestoreUndo(t *testing.T) {
	ctx := context.Background()
	for i := 0; i < testutil.Trials(40); i++ {
		seed := uint64(i + 1)
		backend := []string{BackendSQLite, BackendMemory}[i%2]
		t.Run(fmt.Sprintf("seed%d-%s", seed, backend), func(t *testing.T) {
			r := rand.New(rand.NewPCG(seed, 42))
			ws := t.TempDir()
			orig := treegen.Random(r, treegen.Options{Files: 10 + r.IntN(60), Weird: true})
			if err := treegen.Write(ws, orig); err != nil {
				t.Fatal(err)
			}
			repo, err := Open(ctx, ws, Options{Store: t.TempDir(), Backend: backend})
			if err != nil {
				t.Fatal(err)
			}
			defer repo.Close()
			a, err := repo.Save(ctx, SaveOptions{Message: "A"})
			if err != nil {
				t.Fatal(err)
			}
			want := snapshot(t, ws)
			// A mutation can undo itself (a file changed back): mutate
			// until the tree differs, or there is nothing to undo.
			var wantMutated treegen.State
			cur := orig
			for try := 0; ; try++ {
				mutated, err := treegen.Mutate(r, ws, cur, 1+r.IntN(25), true)
				if err != nil {
					t.Fatal(err)
				}
				cur = mutated
				if wantMutated = snapshot(t, ws); treegen.Diff(want, wantMutated) != "" {
					break
				}
				if try == 10 {
					t.Fatalf("seed %d: ten mutations left the tree as it was", seed)
				}
			}
			if _, err := repo.Restore(ctx, a.Checkpoint.ID.String(), RestoreOptions{}); err != nil {
				t.Fatalf("restore: %v", err)
			}
			if d := treegen.Diff(want, snapshot(t, ws)); d != "" {
				t.Fatalf("after restore (seed %d):\n%s", seed, d)
			}
			if _, err := repo.Undo(ctx); err != nil {
				t.Fatalf("undo: %v", err)
			}
			if d := treegen.Diff(wantMutated, snapshot(t, ws)); d != "" {
				t.Fatalf("after undo (seed %d):\n%s", seed, d)
			}
			if _, err := repo.Redo(ctx); err != nil {
				t.Fatalf("redo: %v", err)
			}
			if d := treegen.Diff(want, snapshot(t, ws)); d != "" {
				t.Fatalf("after redo (seed %d):\n%s", seed, d)
			}
			if _, err := repo.Fsck(ctx); err != nil {
				t.Fatal(err)
			}
		})
	}
}

// TestPropertyDiffRoundTrip: the patch of two random states, parsed and
// applied by ckpt's own diff package, gives the second state from the first
// and back (binary files included).
func TestPropertySaveSeesEverything(t *testing.T) {
	ctx := context.Background()
	for i := 0; i < testutil.Trials(20); i++ {
		seed := uint64(1000 + i)
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			r := rand.New(rand.NewPCG(seed, 7))
			ws := t.TempDir()
			st := treegen.Random(r, treegen.Options{Files: 40, Weird: true})
			if err := treegen.Write(ws, st); err != nil {
				t.Fatal(err)
			}
			repo, err := Open(ctx, ws, Options{Store: t.TempDir()})
			if err != nil {
				t.Fatal(err)
			}
			defer repo.Close()
			for round := 0; round < 5; round++ {
				res, err := repo.Save(ctx, SaveOptions{AllowEmpty: true})
				if err != nil {
					t.Fatal(err)
				}
				m, err := repo.Manifest(ctx, res.Checkpoint.ID.String())
				if err != nil {
					t.Fatal(err)
				}
				disk := snapshot(t, ws)
				if len(m.Files) != len(disk) {
					t.Fatalf("round %d: manifest has %d files, disk %d", round, len(m.Files), len(disk))
				}
				for p, e := range disk {
					f, ok := m.Files[p]
					if !ok {
						t.Fatalf("round %d: %q missing from manifest", round, p)
					}
					if f.SHA256 != Sum([]byte(e.Data)).String() {
						t.Fatalf("round %d: %q hash differs", round, p)
					}
				}
				if st, err = treegen.Mutate(r, ws, st, 1+r.IntN(10), true); err != nil {
					t.Fatal(err)
				}
			}
		})
	}
}
