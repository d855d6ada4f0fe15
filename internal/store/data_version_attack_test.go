package store

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/seed1cedbf7c/ckpt/internal/object"
)

// A watcher polling DataVersion while the store is closed (a server whose
// watcher is still running when its repository is closed) must not leave
// a connection open: once Close has returned the store answers with an
// error, and no SQLite connection of it is left. Close releases verMu
// before it closes the pool, so a poll in between pins a new connection
// that nothing ever closes.
func TestAttackDataVersionRacingCloseLeavesNoConnection(t *testing.T) {
	ctx := context.Background()
	dir := openTest(t).Dir()
	rounds := 2000
	if testing.Short() || raceEnabled {
		rounds = 300
	}
	for i := 0; i < rounds; i++ {
		s, err := OpenSQLite(ctx, dir, "/ws")
		if err != nil {
			t.Fatal(err)
		}
		var closed atomic.Bool
		var stale atomic.Int64
		var wg sync.WaitGroup
		start := make(chan struct{})
		for g := 0; g < 32; g++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				<-start
				for n := 0; n < 2000; n++ {
					was := closed.Load()
					_, err := s.DataVersion(ctx)
					if was && err == nil {
						stale.Add(1)
					}
					if was && n > 20 {
						return
					}
				}
			}()
		}
		close(start)
		s.Close()
		closed.Store(true)
		wg.Wait()
		_, err = s.DataVersion(ctx)
		s.verMu.Lock()
		leaked := s.ver != nil
		s.verMu.Unlock()
		if leaked || err == nil || stale.Load() > 0 {
			t.Fatalf("round %d: after Close the store still holds its data version connection (%v), "+
				"DataVersion after Close: err %v, %d answers after Close without an error", i, leaked, err, stale.Load())
		}
	}
}

// The connection DataVersion holds is idle between polls: gc's
// checkpoints still empty the WAL, and the data version sees gc's
// rewrite of the database.
func TestAttackVacuumTruncatesWALWithDataVersionConnection(t *testing.T) {
	ctx := context.Background()
	s := openTest(t)
	data := make([]byte, 1<<16)
	for i := range data {
		data[i] = byte(i * 7)
	}
	if err := s.Update(ctx, func(tx Tx) error { return tx.PutBlob(object.Sum(data), data) }); err != nil {
		t.Fatal(err)
	}
	v0, err := s.DataVersion(ctx)
	if err != nil {
		t.Fatal(err)
	}
	other := openAgain(t, s)
	if err := other.Vacuum(ctx); err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(filepath.Join(s.Dir(), DBName+"-wal"))
	if err != nil {
		t.Fatal(err)
	}
	if fi.Size() != 0 {
		t.Errorf("the WAL is %d bytes after gc's checkpoint, with DataVersion's connection open", fi.Size())
	}
	v1, err := s.DataVersion(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if v1 == v0 {
		t.Errorf("data version %d unchanged by another handle's VACUUM", v1)
	}
	// This store's own gc, its pinned connection included.
	if err := s.Vacuum(ctx); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Stat(filepath.Join(s.Dir(), DBName+"-wal")); err != nil || fi.Size() != 0 {
		t.Errorf("the WAL after this store's gc: %v, %v", fi.Size(), err)
	}
}

// A store opened read-only (a store this user cannot write, served while
// its owner saves) still tells every commit of the writer by its data
// version, and answers without an error.
func TestAttackDataVersionOfReadOnlyStoreSeesWriterCommits(t *testing.T) {
	ctx := context.Background()
	w := openTest(t)
	ro, err := openReadOnly(ctx, w.Dir(), "/ws", errors.New("not writable"))
	if err != nil {
		t.Fatal(err)
	}
	defer ro.Close()
	last, err := ro.DataVersion(ctx)
	if err != nil {
		t.Fatalf("data version of a read-only store: %v", err)
	}
	for i := 0; i < 5; i++ {
		if err := w.Update(ctx, func(tx Tx) error { return tx.SetMeta("k", fmt.Sprint(i)) }); err != nil {
			t.Fatal(err)
		}
		v, err := ro.DataVersion(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if v == last {
			t.Fatalf("commit %d: the read-only store's data version stays %d", i, v)
		}
		last = v
	}
	if v, err := ro.DataVersion(ctx); err != nil || v != last {
		t.Errorf("no commit: data version %d (%v), was %d", v, err, last)
	}
}
