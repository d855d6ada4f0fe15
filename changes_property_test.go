package ckpt

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"

	"github.com/seed1cedbf7c/ckpt/internal/store"
	"github.com/seed1cedbf7c/ckpt/internal/testutil"
)

// Whatever made a checkpoint (a save, a save of some paths, a restore,
// an undo, a snapshot's restore), on either backend, what the Repo
// remembers it changed against its parent is what a diff finds.
func TestPropertyRememberedChangesMatchDiff(t *testing.T) {
	for _, backend := range []string{BackendSQLite, BackendGit} {
		t.Run(backend, func(t *testing.T) {
			if backend == BackendGit {
				testutil.NeedGit(t)
			}
			for seed := range 4 {
				rememberedChangesRun(t, backend, uint64(seed))
			}
		})
	}
}

func rememberedChangesRun(t *testing.T, backend string, seed uint64) {
	ctx := context.Background()
	ws := t.TempDir()
	writeFile(t, ws, "a.txt", "a")
	opts := Options{Store: t.TempDir(), Backend: backend}
	if backend == BackendGit {
		opts.Store, opts.GitRefPrefix = "", "refs/sandbox"
	}
	r, err := Open(ctx, ws, opts)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	rng := rand.New(rand.NewPCG(seed, 7))
	names := []string{"a.txt", "b", "d/x", "d/y", "d", "e/\xff\xfe", "f.txt", ".ckptignore"}
	var log []string
	checked := 0
	for step := range 40 {
		p := names[rng.IntN(len(names))]
		full := filepath.Join(ws, filepath.FromSlash(p))
		var op string
		switch k := rng.IntN(10); {
		case k < 3:
			os.RemoveAll(full)
			os.MkdirAll(filepath.Dir(full), 0o755)
			if p == ".ckptignore" {
				os.WriteFile(full, []byte([]string{"*.txt\n", "f.txt\n", "\n"}[rng.IntN(3)]), 0o644)
			} else {
				os.WriteFile(full, []byte(fmt.Sprint(step)), 0o644)
			}
			op = "write " + p
		case k < 4:
			os.RemoveAll(full)
			os.MkdirAll(filepath.Dir(full), 0o755)
			os.Symlink("a.txt", full)
			op = "symlink " + p
		case k < 5:
			os.RemoveAll(full)
			op = "rm " + p
		case k < 6:
			os.RemoveAll(full)
			os.MkdirAll(full, 0o755)
			os.WriteFile(filepath.Join(full, "in"), []byte("i"), 0o644)
			op = "dir " + p
		case k < 8:
			_, err = r.Save(ctx, SaveOptions{Message: "s", AllowEmpty: rng.IntN(4) == 0})
			op = "save"
		case k < 9:
			_, err = r.Save(ctx, SaveOptions{Message: "p", Paths: []string{p}})
			op = "save " + p
		default:
			recs, _ := r.st.Checkpoints(ctx, store.ListFilter{})
			if len(recs) > 0 {
				if rng.IntN(2) == 0 {
					_, err = r.Restore(ctx, recs[rng.IntN(len(recs))].ID.String(), RestoreOptions{})
					op = "restore"
				} else {
					_, err = r.Undo(ctx)
					op = "undo"
				}
			}
		}
		log = append(log, fmt.Sprintf("%s: %v", op, err))
		err = nil
		recs, err := r.st.Checkpoints(ctx, store.ListFilter{})
		if err != nil {
			t.Fatal(err)
		}
		for _, rec := range recs {
			if len(rec.Parents) == 1 {
				cp, err := r.describe(ctx, rec)
				if err != nil {
					t.Fatal(err)
				}
				if checkRememberedChanges(t, r, cp, log) {
					checked++
				}
			}
		}
	}
	if checked == 0 {
		t.Errorf("seed %d: nothing remembered", seed)
	}
}
