//go:build unix

package faults

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/seed1cedbf7c/ckpt"
	"github.com/seed1cedbf7c/ckpt/internal/object"
	"github.com/seed1cedbf7c/ckpt/internal/restore"
	"github.com/seed1cedbf7c/ckpt/test/internal/ckptenv"
)

// Class 2: a file edited after a restore's scan is never overwritten or
// deleted unseen. Before its first change, the restore starts again (and
// checkpoints the edit); after, it stops and puts back what it changed,
// keeping the edit.
func TestEditDuringRestore(t *testing.T) {
	ctx := context.Background()
	setup := func(t *testing.T) (*env, *ckpt.Repo, string) {
		e := newEnv(t)
		e.Write(map[string]string{"a.txt": "a1\n", "b.txt": "b1\n", "c.txt": "c1\n", "gone.txt": "g1\n"})
		r := e.Open(ckpt.Options{})
		v1, err := r.Save(ctx, ckpt.SaveOptions{Message: "v1"})
		if err != nil {
			t.Fatal(err)
		}
		e.Write(map[string]string{"a.txt": "a2\n", "b.txt": "b2\n", "c.txt": "c2\n", "new.txt": "n2\n", "z-extra.txt": "z2\n"})
		os.Remove(filepath.Join(e.WS, "gone.txt"))
		if _, err := r.Save(ctx, ckpt.SaveOptions{Message: "v2"}); err != nil {
			t.Fatal(err)
		}
		return e, r, v1.Checkpoint.ID.String()
	}

	t.Run("before the first change: start again, the edit checkpointed", func(t *testing.T) {
		e, r, v1 := setup(t)
		defer ckptenv.Once("restore/staged", func(string) error {
			e.Write(map[string]string{"b.txt": "user's edit\n"})
			return nil
		})()
		res, err := r.Restore(ctx, v1, ckpt.RestoreOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if got := e.Read("b.txt"); got != "b1\n" {
			t.Fatalf("b.txt = %q", got)
		}
		if res.PreRestore == nil || !inCheckpoint(t, r, res.PreRestore.ID.String(), "b.txt", "user's edit\n") {
			t.Fatal("the edit made during the restore is in no checkpoint")
		}
	})

	for _, tc := range []struct{ name, at, edit string }{
		{"an updated file", "c.txt", "c.txt"},
		{"a deleted file", "new.txt", "new.txt"},
		{"a created file", "gone.txt", "gone.txt"},
	} {
		t.Run("mid-way: "+tc.name, func(t *testing.T) {
			e, r, v1 := setup(t)
			before := e.Snapshot()
			defer ckptenv.Once("restore/before-replace("+tc.at+")", func(string) error {
				e.Write(map[string]string{tc.edit: "user's edit\n"})
				return nil
			})()
			if tc.at == "gone.txt" {
				// A creation is not guarded by a failpoint of its own: the
				// edit lands when the restore replaces the file before it.
				defer ckptenv.Once("restore/before-replace(c.txt)", func(string) error {
					e.Write(map[string]string{"gone.txt": "user's edit\n"})
					return nil
				})()
			}
			_, err := r.Restore(ctx, v1, ckpt.RestoreOptions{})
			if !errors.Is(err, restore.ErrChanged) {
				t.Fatalf("restore over an edit made while it ran: %v, want ErrChanged", err)
			}
			if !strings.Contains(err.Error(), tc.edit) {
				t.Errorf("the error does not name %s: %v", tc.edit, err)
			}
			if got := e.Read(tc.edit); got != "user's edit\n" {
				t.Fatalf("%s = %q: the user's edit was destroyed", tc.edit, got)
			}
			// Everything else is as before the restore.
			after := e.Snapshot()
			delete(after, tc.edit)
			delete(before, tc.edit)
			if d := diffStates(before, after); d != "" {
				t.Fatalf("not rolled back:\n%s", d)
			}
			rec, err := r.Recover(ctx)
			if err != nil || rec.Op != "" {
				t.Fatalf("a journal was left behind: %+v, %v", rec, err)
			}
		})
	}
}

// Randomized: edits at random moments of random restores; every edit ends
// on disk or in a checkpoint.
func TestEditDuringRestoreRandom(t *testing.T) {
	ctx := context.Background()
	rounds := 40
	if testing.Short() {
		rounds = 8
	}
	rng := rand.New(rand.NewPCG(7, uint64(rounds)))
	for round := range rounds {
		e := newEnv(t)
		files := map[string]string{}
		for i := range 12 {
			files[fmt.Sprintf("d%d/f%d.txt", i%3, i)] = fmt.Sprintf("v1 %d\n", i)
		}
		e.Write(files)
		r := e.Open(ckpt.Options{})
		v1, err := r.Save(ctx, ckpt.SaveOptions{Message: "v1"})
		if err != nil {
			t.Fatal(err)
		}
		for p := range files {
			switch rng.IntN(3) {
			case 0:
				e.Write(map[string]string{p: "v2 " + p + "\n"})
			case 1:
				os.Remove(filepath.Join(e.WS, p))
			}
		}
		e.Write(map[string]string{"d9/extra.txt": "v2\n"})
		if _, err := r.Save(ctx, ckpt.SaveOptions{Message: "v2"}); err != nil {
			t.Fatal(err)
		}
		victim := fmt.Sprintf("d%d/f%d.txt", rng.IntN(3), rng.IntN(12))
		edit := fmt.Sprintf("edit %d\n", round)
		hit, at := 0, 1+rng.IntN(10)
		disarm := ckptenv.Once("restore/change", func(string) error { return nil })
		disarm()
		disarm = failpointEvery("restore/before-replace", func(string) {
			hit++
			if hit == at {
				e.Write(map[string]string{victim: edit})
			}
		})
		_, err = r.Restore(ctx, v1.Checkpoint.ID.String(), ckpt.RestoreOptions{})
		disarm()
		if err != nil && !errors.Is(err, restore.ErrChanged) {
			t.Fatalf("round %d: %v", round, err)
		}
		if hit < at {
			continue // the edit never happened
		}
		if e.Read(victim) == edit {
			continue
		}
		if !inAnyCheckpoint(t, r, victim, edit) {
			t.Fatalf("round %d: the edit of %s (at change %d) is neither on disk nor in a checkpoint (restore: %v)", round, victim, at, err)
		}
	}
}

func inCheckpoint(t *testing.T, r *ckpt.Repo, rev, p, content string) bool {
	t.Helper()
	m, err := r.Manifest(context.Background(), rev)
	if err != nil {
		t.Fatal(err)
	}
	f, ok := m.Files[p]
	return ok && f.SHA256 == object.Sum([]byte(content)).String()
}

func inAnyCheckpoint(t *testing.T, r *ckpt.Repo, p, content string) bool {
	t.Helper()
	cps, err := r.List(context.Background(), ckpt.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range cps {
		if inCheckpoint(t, r, c.ID.String(), p, content) {
			return true
		}
	}
	return false
}

// Class 2, the rollback: a restore stops half-way because someone replaced
// a directory with a file of theirs; putting back the files the restore
// had deleted in that directory must not remove the user's file (found by
// the chaos harness: the rollback's plan deleted it, and it was in no
// checkpoint).
func TestRollbackKeepsFileWhereDirectoryWas(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t)
	e.Write(map[string]string{"t": "t1\n"})
	r := e.Open(ckpt.Options{})
	v1, err := r.Save(ctx, ckpt.SaveOptions{Message: "target"})
	if err != nil {
		t.Fatal(err)
	}
	e.Write(map[string]string{"t": "t2\n", "d/x": "x\n", "d/y": "y\n"})
	if _, err := r.Save(ctx, ckpt.SaveOptions{Message: "now"}); err != nil {
		t.Fatal(err)
	}
	// After the restore's first change (d/y deleted), d becomes the
	// user's file.
	defer ckptenv.Once("restore/change", func(string) error {
		removeAll(t, e, "d")
		e.Write(map[string]string{"d": "mine\n"})
		return nil
	})()
	_, err = r.Restore(ctx, v1.Checkpoint.ID.String(), ckpt.RestoreOptions{})
	if !errors.Is(err, restore.ErrChanged) {
		t.Fatalf("restore: %v, want ErrChanged", err)
	}
	if got := e.Read("d"); got != "mine\n" && !inAnyCheckpoint(t, r, "d", "mine\n") {
		t.Fatalf("d = %q and in no checkpoint: the rollback removed the user's file (%v)", got, err)
	}
}
