//go:build linux

package ckpt

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/seed1cedbf7c/ckpt/internal/object"
	"github.com/seed1cedbf7c/ckpt/internal/store"
	"github.com/seed1cedbf7c/ckpt/internal/testutil"
	"github.com/seed1cedbf7c/ckpt/internal/treegen"
)

// Random sessions, saves, rewinds, undo/redo and gc (explicit and automatic,
// with a small keep so both run often), with a watcher and files big enough
// to be stored as deltas: every save equals a full scan, undo/redo never
// fail, fsck stays clean, and every checkpoint still listed restores to the
// state it recorded.
func TestPropertyGCSessionsWatch(t *testing.T) {
	ctx := context.Background()
	for i := 0; i < testutil.Trials(4); i++ {
		seed := uint64(i + 500)
		t.Run(fmt.Sprint("seed", seed), func(t *testing.T) {
			rnd := rand.New(rand.NewPCG(seed, 3))
			ws, store := t.TempDir(), t.TempDir()
			keep := "2"
			if err := WriteConfig(store, "keep", &keep); err != nil {
				t.Fatal(err)
			}
			tree := treegen.Random(rnd, treegen.Options{Files: 15 + rnd.IntN(20), Weird: true})
			if err := treegen.Write(ws, tree); err != nil {
				t.Fatal(err)
			}
			big := func(v int) string {
				var b strings.Builder
				for l := 0; l < 400; l++ {
					if l == v%400 {
						fmt.Fprintf(&b, "line %d changed in version %d\n", l, v)
					} else {
						fmt.Fprintf(&b, "line %d of a file big enough for deltas\n", l)
					}
				}
				return b.String()
			}
			putBig := func(v int) {
				if fi, err := os.Lstat(filepath.Join(ws, "big")); err == nil && !fi.IsDir() {
					os.Remove(filepath.Join(ws, "big"))
				}
				os.RemoveAll(filepath.Join(ws, "big", "doc.txt"))
				writeFile(t, ws, "big/doc.txt", big(v))
			}
			putBig(0)
			r, err := Open(ctx, ws, Options{Store: store})
			if err != nil {
				t.Fatal(err)
			}
			defer r.Close()
			if WatchSupported {
				startWatcher(t, r)
			}
			known := map[ID]treegen.State{}
			c := newCtl(t, r, "s")
			var log []string
			check := func(cp *Checkpoint, st treegen.State) {
				if cp != nil && !cp.Partial() {
					known[cp.ID] = st
				}
			}
			for step := 0; step < 40; step++ {
				before := snapshot(t, ws)
				switch rnd.IntN(9) {
				case 0, 1:
					treegen.Mutate(rnd, ws, before, 1+rnd.IntN(4), true)
					putBig(step)
					log = append(log, "edit")
				case 2:
					res, err := r.Save(ctx, SaveOptions{AllowEmpty: rnd.IntN(2) == 0})
					if err != nil {
						t.Fatalf("%v: save: %v", log, err)
					}
					if want := fullScanTree(t, r); res.Checkpoint.Tree != want {
						t.Fatalf("%v: save differs from a full scan", log)
					}
					check(res.Checkpoint, before)
					log = append(log, "save")
				case 3:
					if _, err := c.BeginTurn(ctx, fmt.Sprint("p", step)); err != nil {
						t.Fatalf("%v: begin: %v", log, err)
					}
					treegen.Mutate(rnd, ws, before, 1+rnd.IntN(3), true)
					putBig(step + 1000)
					if _, err := c.EndTurn(ctx); err != nil {
						t.Fatalf("%v: end: %v", log, err)
					}
					log = append(log, "turn")
				case 4:
					s, _ := c.Session(ctx)
					if len(s.Turns) > 0 {
						n := 1 + rnd.IntN(len(s.Turns))
						scope := []Scope{ScopeCode, ScopeBoth}[rnd.IntN(2)]
						if _, err := c.Rewind(ctx, n, scope, RewindOptions{Exact: true}); err != nil {
							t.Fatalf("%v: rewind %d: %v", log, n, err)
						}
						log = append(log, fmt.Sprint("rewind ", n, scope))
					}
				case 5:
					if _, err := r.Undo(ctx); err != nil && !errors.Is(err, ErrNothingToUndo) {
						t.Fatalf("%v: undo: %v", log, err)
					}
					log = append(log, "undo")
				case 6:
					if _, err := r.Redo(ctx); err != nil && !errors.Is(err, ErrNothingToRedo) {
						t.Fatalf("%v: redo: %v", log, err)
					}
					log = append(log, "redo")
				case 7:
					if _, err := r.GC(ctx, GCOptions{Retention: &Retention{Keep: 1 + rnd.IntN(2)}, NoCompact: rnd.IntN(2) == 0}); err != nil {
						t.Fatalf("%v: gc: %v", log, err)
					}
					log = append(log, "gc")
				case 8:
					list, _ := r.List(ctx, ListOptions{})
					if len(list) > 0 {
						target := list[rnd.IntN(len(list))]
						res, err := r.Restore(ctx, target.ID.String(), RestoreOptions{})
						if err != nil {
							t.Fatalf("%v: restore: %v", log, err)
						}
						check(res.PreRestore, before)
						log = append(log, "restore")
					}
				}
			}
			if fr, err := r.Fsck(ctx); err != nil || len(fr.Problems) != 0 {
				t.Fatalf("%v: fsck: %+v %v", log, fr, err)
			}
			res, err := r.Save(ctx, SaveOptions{AllowEmpty: true})
			if err != nil || res.Checkpoint.Tree != fullScanTree(t, r) {
				t.Fatalf("%v: final save %v", log, err)
			}
			list, _ := r.List(ctx, ListOptions{})
			for _, cp := range list {
				if _, err := r.Restore(ctx, cp.ID.String(), RestoreOptions{}); err != nil {
					t.Fatalf("%v: restore kept %s: %v", log, cp.Short(), err)
				}
				if want, ok := known[cp.ID]; ok {
					if d := treegen.Diff(want, snapshot(t, ws)); d != "" {
						t.Fatalf("%v: %s restores to another state:\n%s", log, cp.Short(), d)
					}
				}
			}
			for k := 0; k < 5; k++ {
				if _, err := r.Undo(ctx); err != nil && !errors.Is(err, ErrNothingToUndo) {
					t.Fatalf("%v: final undo: %v", log, err)
				}
			}
		})
	}
}

// TestRetentionCandidates: the count and age limits apply per branch,
// newest first; protected checkpoints count toward a branch's limit but are
// never candidates (they stay anyway).
func TestRetentionCandidates(t *testing.T) {
	now := time.Date(2026, 11, 25, 12, 0, 0, 0, time.UTC)
	rec := func(b byte, branch string, age time.Duration) *store.Record {
		var id ID
		id[0] = b
		return &store.Record{ID: id, Checkpoint: &object.Checkpoint{Branch: branch, Time: now.Add(-age)}}
	}
	// Newest first.
	recs := []*store.Record{
		rec(1, "main", time.Minute), rec(2, "x", time.Minute), rec(3, "main", time.Hour),
		rec(4, "main", 2*time.Hour), rec(5, "x", 48*time.Hour), rec(6, "main", 72*time.Hour),
	}
	protected := map[ID]bool{recs[0].ID: true}
	ids := func(got []ID) string {
		var s []string
		for _, id := range got {
			s = append(s, fmt.Sprint(id[0]))
		}
		return strings.Join(s, " ")
	}
	for _, tc := range []struct {
		ret  Retention
		want string
	}{
		{Retention{Keep: 100}, "2 3 4 5 6"},
		{Retention{Keep: 2}, "2 3 5"},
		{Retention{Keep: 100, MaxAge: 24 * time.Hour}, "2 3 4"},
		{Retention{Keep: 1, MaxAge: 24 * time.Hour}, "2"},
		{Retention{Keep: 0}, ""},
	} {
		if got := ids(retentionCandidates(recs, retentionKeeps(recs, tc.ret, now, time.UTC), protected)); got != tc.want {
			t.Errorf("%+v: candidates %q, want %q", tc.ret, got, tc.want)
		}
	}
}
