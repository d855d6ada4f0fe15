package store

import (
	"bytes"
	"container/list"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/seed1cedbf7c/ckpt/internal/object"
)

// With KeepRecent a new version's delta base comes from memory; whatever
// happened to the base in the store meanwhile (a rolled-back transaction
// never stored it, gc deleted it or rewrote it in full) the store stays
// whole: every committed object reads back, fsck is clean, and no delta
// chain grows past its limit.
func TestRecentBasesRandom(t *testing.T) {
	ctx := context.Background()
	for seed := uint64(1); seed <= 20; seed++ {
		t.Run(fmt.Sprint("seed", seed), func(t *testing.T) {
			r := rand.New(rand.NewPCG(seed, 77))
			s := openTest(t)
			s.KeepRecent(64 << 10)
			var lines []string
			for i := 0; i < 150; i++ {
				lines = append(lines, fmt.Sprintf("line %d: %x\n", i, r.Uint64()))
			}
			want := map[object.ID][]byte{} // committed and not deleted
			last := object.ZeroID          // the file's previous version
			var history []object.ID
			for step := 0; step < 80; step++ {
				switch k := r.IntN(10); {
				case k < 6: // a new version, committed
					lines[r.IntN(len(lines))] = fmt.Sprintf("edit %d %x\n", step, r.Uint64())
					data := []byte(strings.Join(lines, ""))
					id := object.Sum(data)
					if err := s.Update(ctx, func(tx Tx) error { return tx.PutBlobFrom(id, data, last) }); err != nil {
						t.Fatal(err)
					}
					want[id], last = data, id
					history = append(history, id)
				case k < 8: // a new version whose transaction rolls back
					lines[r.IntN(len(lines))] = fmt.Sprintf("lost %d %x\n", step, r.Uint64())
					data := []byte(strings.Join(lines, ""))
					id := object.Sum(data)
					errBack := errors.New("roll back")
					err := s.Update(ctx, func(tx Tx) error {
						if err := tx.PutBlobFrom(id, data, last); err != nil {
							return err
						}
						return errBack
					})
					if !errors.Is(err, errBack) {
						t.Fatal(err)
					}
					if _, ok := want[id]; !ok {
						last = id // the next version takes it as its base
					}
				default: // gc deletes an old version, rewriting its dependents
					if len(history) == 0 {
						continue
					}
					victim := history[r.IntN(len(history))]
					if _, ok := want[victim]; !ok {
						continue
					}
					var deps []object.ID
					for id := range want {
						var data []byte
						var enc int
						s.db.QueryRow(`SELECT enc, data FROM blobs WHERE id=?`, id[:]).Scan(&enc, &data)
						if enc == encDelta && len(data) >= 32 && object.ID(data[:32]) == victim {
							deps = append(deps, id)
						}
					}
					if _, err := s.Sweep(ctx, &SweepPlan{Blobs: []object.ID{victim}, ReencodeBlobs: deps}); err != nil {
						t.Fatal(err)
					}
					delete(want, victim)
				}
			}
			for id, data := range want {
				got, err := s.ReadBlob(ctx, id)
				if err != nil || !bytes.Equal(got, data) {
					t.Fatalf("blob %.12s: %v", id, err)
				}
			}
			var maxDepth, deltas int
			rows, err := s.db.Query(`SELECT enc, depth FROM blobs`)
			if err != nil {
				t.Fatal(err)
			}
			for rows.Next() {
				var enc, depth int
				rows.Scan(&enc, &depth)
				if enc == encDelta {
					deltas++
				}
				maxDepth = max(maxDepth, depth)
			}
			rows.Close()
			if maxDepth > maxDeltaDepth {
				t.Fatalf("delta depth %d", maxDepth)
			}
			if deltas == 0 || s.recent.hits == 0 {
				t.Fatalf("%d deltas stored, %d bases from memory", deltas, s.recent.hits)
			}
			if _, err := s.Fsck(ctx, func(p Problem) { t.Errorf("fsck: %v", p) }, nil); err != nil {
				t.Fatal(err)
			}
		})
	}
}

// A tree a transaction stored is read back from memory within it.
func TestRecentTreeReadInTransaction(t *testing.T) {
	ctx := context.Background()
	s := openTest(t)
	s.KeepRecent(1 << 20)
	var es []object.Entry
	for i := 0; i < 100; i++ {
		es = append(es, object.Entry{Name: fmt.Sprintf("f%03d", i), Mode: object.ModeFile | 0o644, ID: object.Sum([]byte{byte(i)})})
	}
	d1 := (&object.Tree{Entries: es}).Encode()
	id1 := object.Sum(d1)
	if err := s.Update(ctx, func(tx Tx) error { return tx.PutTree(id1, d1) }); err != nil {
		t.Fatal(err)
	}
	es[50].ID = object.Sum([]byte("changed"))
	d2 := (&object.Tree{Entries: es}).Encode()
	id2 := object.Sum(d2)
	err := s.Update(ctx, func(tx Tx) error {
		if err := tx.PutTreeFrom(id2, d2, id1); err != nil {
			return err
		}
		if s.recent.get("trees", id2) == nil {
			t.Errorf("a new version of a tree is not kept")
		}
		got, err := tx.ReadTree(id2)
		if err != nil {
			return err
		}
		if got.Entries[50].ID != es[50].ID {
			t.Errorf("read back %v", got.Entries[50])
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// The cache keeps at most its budget, the newest first.
func TestRecentCacheBudget(t *testing.T) {
	c := &recentCache{max: 1000, m: map[recentKey]*list.Element{}}
	var ids []object.ID
	for i := 0; i < 50; i++ {
		data := bytes.Repeat([]byte{byte(i)}, 100)
		id := object.Sum(data)
		c.put("blobs", id, data)
		ids = append(ids, id)
		if c.size > c.max {
			t.Fatalf("size %d over %d", c.size, c.max)
		}
	}
	if c.get("blobs", ids[49]) == nil || c.get("blobs", ids[0]) != nil || c.get("trees", ids[49]) != nil {
		t.Fatalf("kept the wrong entries")
	}
	c.put("blobs", object.Sum(make([]byte, 2000)), make([]byte, 2000))
	if c.size > c.max {
		t.Fatalf("an entry over the budget was kept")
	}
}
