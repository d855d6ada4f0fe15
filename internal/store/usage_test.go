package store

import (
	"context"
	"crypto/rand"
	"sync"
	"testing"

	"github.com/seed1cedbf7c/ckpt/internal/object"
)

// Usage read while a gc compacts the store never counts the pages the
// gc freed: the pages in use and the free pages are read at one moment.
// (Read apart, a compaction committed between them gave the whole file,
// free pages included, as in use: the web UI then drew another process's
// gc as freeing nothing.)
func TestUsageDuringCompaction(t *testing.T) {
	s := openTest(t)
	ctx := context.Background()
	for round := range 15 {
		var ids []object.ID
		err := s.Update(ctx, func(tx Tx) error {
			for range 20 {
				b := make([]byte, 100<<10)
				rand.Read(b)
				id := object.Sum(b)
				if err := tx.PutBlob(id, b); err != nil {
					return err
				}
				ids = append(ids, id)
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := s.Sweep(ctx, &SweepPlan{Blobs: ids}); err != nil {
			t.Fatal(err)
		}
		u, err := s.Usage(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if u.Used*4 > u.File {
			t.Fatalf("round %d: after the sweep %d of %d bytes in use; the test wants most of the file free", round, u.Used, u.File)
		}
		var (
			wg    sync.WaitGroup
			done  = make(chan struct{})
			worst int64
		)
		wg.Go(func() {
			for {
				select {
				case <-done:
					return
				default:
				}
				if v, err := s.Usage(ctx); err == nil {
					worst = max(worst, v.Used)
				}
			}
		})
		err = s.Vacuum(ctx)
		close(done)
		wg.Wait()
		if err != nil {
			t.Fatal(err)
		}
		if worst > 2*u.Used+64<<10 {
			t.Fatalf("round %d: Usage during the compaction said %d bytes in use; %d before it", round, worst, u.Used)
		}
	}
}
