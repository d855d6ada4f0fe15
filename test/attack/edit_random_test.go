package attack

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"testing"

	"github.com/seed1cedbf7c/ckpt"
	"github.com/seed1cedbf7c/ckpt/internal/failpoint"
	"github.com/seed1cedbf7c/ckpt/internal/restore"
	"github.com/seed1cedbf7c/ckpt/internal/treegen"
)

// Edits of every kind — content, chmod, deletion, a file created where the
// restore creates one, a file turned into a directory or a symlink, a file
// put into a directory the restore empties — made at a random failpoint of
// a random restore (its scan, staging, confirmation, before each replace,
// after each change): every edit ends on disk or in a checkpoint, the
// restore either finishes or stops (its error wraps ErrChanged) leaving no
// journal, the paths nobody else touched are all the target's or all as
// before, and fsck is clean. This attack held.
func TestEditAtRandomFailpoints(t *testing.T) {
	ctx := context.Background()
	rounds := 60
	if testing.Short() {
		rounds = 15
	}
	points := []string{"scan/read-dir", "restore/staged", "restore/before-change", "restore/before-replace", "restore/change"}
	seed := uint64(3)
	if s, err := strconv.ParseUint(os.Getenv("ATTACK_SEED"), 10, 64); err == nil {
		seed = s // more rounds by hand: ATTACK_SEED=N
	}
	rng := rand.New(rand.NewPCG(seed, 4))
	for round := range rounds {
		e := newEnv(t)
		files := map[string]string{}
		for i := range 10 {
			files[fmt.Sprintf("d%d/f%d.txt", i%3, i)] = fmt.Sprintf("v1 %d\n", i)
		}
		e.Write(files)
		r := e.Open(ckpt.Options{})
		v1, err := r.Save(ctx, ckpt.SaveOptions{Message: "v1"})
		if err != nil {
			t.Fatal(err)
		}
		before1 := e.Snapshot()
		for p := range files {
			switch rng.IntN(3) {
			case 0:
				e.Write(map[string]string{p: "v2 " + p + "\n"})
			case 1:
				os.Remove(filepath.Join(e.WS, p))
			}
		}
		e.Write(map[string]string{"d9/x/extra.txt": "v2\n"})
		if _, err := r.Save(ctx, ckpt.SaveOptions{Message: "v2"}); err != nil {
			t.Fatal(err)
		}
		before := e.Snapshot()
		point := points[rng.IntN(len(points))]
		at := 1 + rng.IntN(6)
		kind := rng.IntN(6)
		victim := fmt.Sprintf("d%d/f%d.txt", rng.IntN(3), rng.IntN(10))
		mark := fmt.Sprintf("edit %d\n", round)
		touched := map[string]bool{victim: true}
		var made []string // files the edit made, with mark as content
		hit := 0
		edit := func() {
			full := filepath.Join(e.WS, victim)
			switch kind {
			case 0: // content
				os.MkdirAll(filepath.Dir(full), 0o755)
				os.WriteFile(full, []byte(mark), 0o644)
				made = append(made, victim)
			case 1: // chmod
				os.Chmod(full, 0o700)
			case 2: // delete
				os.Remove(full)
			case 3: // a file becomes a directory holding the edit
				os.Remove(full)
				os.MkdirAll(full, 0o755)
				os.WriteFile(filepath.Join(full, "in"), []byte(mark), 0o644)
				touched[victim+"/in"] = true
				made = append(made, victim+"/in")
			case 4: // a file becomes a symlink
				os.Remove(full)
				os.Symlink("elsewhere", full)
			case 5: // a file put where the restore prunes or creates
				p := "d9/x/mine.txt"
				if rng.IntN(2) == 0 {
					p = victim
				}
				touched[p] = true
				os.MkdirAll(filepath.Dir(filepath.Join(e.WS, p)), 0o755)
				os.WriteFile(filepath.Join(e.WS, p), []byte(mark), 0o644)
				made = append(made, p)
			}
		}
		var mu sync.Mutex // scan/read-dir fires from the scan's parallel workers
		disarm := failpoint.Set(point, func(string) error {
			mu.Lock()
			defer mu.Unlock()
			hit++
			if hit == at {
				edit()
			}
			return nil
		})
		_, err = r.Restore(ctx, v1.Checkpoint.ID.String(), ckpt.RestoreOptions{})
		disarm()
		what := fmt.Sprintf("round %d (%s@%d, edit %d of %s)", round, point, at, kind, victim)
		if err != nil && !errors.Is(err, restore.ErrChanged) {
			t.Fatalf("%s: %v", what, err)
		}
		for _, p := range made {
			if e.Read(p) != mark && !inAnyCheckpoint(t, e, p, mark) {
				t.Fatalf("%s: the edit of %s is neither on disk nor in a checkpoint (restore: %v)", what, p, err)
			}
		}
		if rec, rerr := r.Recover(ctx); rerr != nil || rec.Op != "" {
			t.Fatalf("%s: a journal was left: %+v %v", what, rec, rerr)
		}
		// Paths nobody else touched: all the target's, or all as before.
		after := e.Snapshot()
		for _, st := range []treegen.State{after, before, before1} {
			for p := range st {
				for q := range touched {
					if p == q || len(p) > len(q) && p[:len(q)+1] == q+"/" {
						delete(st, p)
					}
				}
			}
		}
		if treegen.Diff(before1, after) != "" && treegen.Diff(before, after) != "" {
			t.Fatalf("%s: half-way (restore: %v):\nvs target:\n%s\nvs before:\n%s", what, err, treegen.Diff(before1, after), treegen.Diff(before, after))
		}
		if res, ferr := r.Fsck(ctx); ferr != nil || len(res.Problems) > 0 {
			t.Fatalf("%s: fsck: %+v %v", what, res, ferr)
		}
	}
}
