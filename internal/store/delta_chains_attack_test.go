package store

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/seed1cedbf7c/ckpt/internal/object"
)

// A directory cycling through a few states, each version put with the
// one before as base (as a scan without a lookup does), sometimes two
// versions in one transaction, sometimes a rolled-back transaction, with
// the recent-base cache on: no delta chain may loop or grow past
// maxDeltaDepth, every row's depth must be at least its chain's length,
// and every tree must read back.
func TestAttackCyclingTreesKeepChainsBounded(t *testing.T) {
	ctx := context.Background()
	s := openTest(t)
	s.KeepRecent(1 << 20)
	rnd := rand.New(rand.NewPCG(3, 4))
	var es []object.Entry
	for i := 0; i < 200; i++ {
		es = append(es, object.Entry{Name: fmt.Sprintf("file%04d.go", i), Mode: object.ModeFile | 0o644, Size: int64(i), ID: object.Sum([]byte{byte(i), byte(i >> 8)})})
	}
	state := func(k int) ([]byte, object.ID) {
		e := append([]object.Entry(nil), es...)
		e[k%200].ID = object.Sum([]byte(fmt.Sprint("state ", k)))
		d := (&object.Tree{Entries: e}).Encode()
		return d, object.Sum(d)
	}
	prev := object.ZeroID
	all := map[object.ID]bool{}
	for step := 0; step < 120; step++ {
		n := 1 + rnd.IntN(2)
		rollback := rnd.IntN(8) == 0
		p := prev
		var put []object.ID
		err := s.Update(ctx, func(tx Tx) error {
			for j := 0; j < n; j++ {
				k := rnd.IntN(4)
				if step > 60 {
					k = step % 13 // longer cycles
				}
				d, id := state(k)
				if err := tx.PutTreeFrom(id, d, p); err != nil {
					return err
				}
				put = append(put, id)
				p = id
			}
			if rollback {
				return fmt.Errorf("roll back")
			}
			return nil
		})
		if rollback {
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		prev = p
		for _, id := range put {
			all[id] = true
		}
	}
	// Follow every chain from the rows themselves.
	rows, err := s.db.Query(`SELECT id, enc, data, depth FROM trees`)
	if err != nil {
		t.Fatal(err)
	}
	type row struct {
		enc, depth int
		base       object.ID
	}
	m := map[object.ID]row{}
	for rows.Next() {
		var idb, data []byte
		var r row
		if err := rows.Scan(&idb, &r.enc, &data, &r.depth); err != nil {
			t.Fatal(err)
		}
		if r.enc == encDelta {
			r.base = object.ID(data[:32])
		}
		m[object.ID(idb)] = r
	}
	rows.Close()
	deltas := 0
	for _, r := range m {
		if r.enc == encDelta {
			deltas++
		}
	}
	if deltas == 0 {
		t.Fatal("no tree was stored as a delta: the test did not test")
	}
	for id := range m {
		length := 0
		for cur := id; m[cur].enc == encDelta; cur = m[cur].base {
			length++
			if length > maxDeltaDepth {
				t.Fatalf("tree %s: delta chain longer than %d (a loop?)", id, maxDeltaDepth)
			}
			if _, ok := m[m[cur].base]; !ok {
				t.Fatalf("tree %s: delta base %s not stored", cur, m[cur].base)
			}
		}
		if m[id].depth < length {
			t.Fatalf("tree %s: depth %d recorded, chain of %d", id, m[id].depth, length)
		}
	}
	for id := range all {
		if _, err := s.ReadTree(ctx, id); err != nil {
			t.Fatalf("read %s: %v", id, err)
		}
	}
	// The trees name blobs never stored: fsck may say so, and nothing else.
	var problems []Problem
	_, err = s.Fsck(ctx, func(p Problem) {
		if !strings.Contains(fmt.Sprint(p), "missing blob") {
			problems = append(problems, p)
		}
	}, nil)
	if err != nil || len(problems) > 0 {
		t.Fatalf("fsck: %v %v", problems, err)
	}
}
