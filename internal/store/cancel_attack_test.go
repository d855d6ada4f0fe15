package store

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"runtime"
	"testing"
	"time"

	"github.com/seed1cedbf7c/ckpt/internal/object"
)

// A transaction cancelled while its last inserts are queued (or just
// after its function returned) must fail with an error wrapping
// context.Canceled, and store nothing. The writer now runs its inserts
// without the context, so the rollback database/sql makes on
// cancellation can land after the last insert and before Commit, which
// then reports sql.ErrTxDone.
func TestAttackCancelNearCommitWrapsCanceled(t *testing.T) {
	s := openTest(t)
	iters := 300
	if testing.Short() {
		iters = 150
	}
	bad := 0
	var first error
	for it := 0; it < iters; it++ {
		ctx, cancel := context.WithCancel(context.Background())
		var ids []object.ID
		err := s.Update(ctx, func(tx Tx) error {
			var err error
			if ids, err = putBlobs(tx, 20, fmt.Sprintf("iteration %d, cancelled at its end", it)); err != nil {
				return err
			}
			cancel()
			// Let database/sql's watcher of the context run (on two
			// busy cores it may or may not before the commit).
			if it%2 == 0 {
				runtime.Gosched()
			}
			return nil
		})
		if err == nil {
			t.Fatalf("iteration %d: a transaction cancelled before its commit committed", it)
		}
		if !errors.Is(err, context.Canceled) {
			bad++
			if first == nil {
				first = err
			}
		}
		checkBlobs(t, s, ids, false, fmt.Sprint("iteration ", it))
	}
	if bad > 0 {
		t.Fatalf("%d of %d cancelled transactions failed without context.Canceled; first: %v", bad, iters, first)
	}
}

// A transaction cancelled from elsewhere at any moment either commits
// whole or fails with an error wrapping context.Canceled, whichever
// statement or step the cancellation found it at (the commit included:
// database/sql may have rolled back before it, and its Commit then says
// only sql.ErrTxDone).
func TestAttackCancelAtRandomWrapsCanceled(t *testing.T) {
	s := openTest(t)
	iters := 400
	if testing.Short() {
		iters = 200
	}
	r := rand.New(rand.NewPCG(11, 11))
	bad, cancelled := 0, 0
	var first error
	for it := 0; it < iters; it++ {
		ctx, cancel := context.WithCancel(context.Background())
		delay := time.Duration(r.IntN(3000)) * time.Microsecond
		timer := time.AfterFunc(delay, cancel)
		var ids []object.ID
		err := s.Update(ctx, func(tx Tx) error {
			var err error
			ids, err = putBlobs(tx, 200, fmt.Sprintf("iteration %d, cancelled at random", it))
			return err
		})
		timer.Stop()
		cancel()
		if err == nil {
			// Committed whole before the cancellation.
			checkBlobs(t, s, ids, true, fmt.Sprint("iteration ", it))
			continue
		}
		cancelled++
		if !errors.Is(err, context.Canceled) {
			bad++
			if first == nil {
				first = err
			}
		}
		checkBlobs(t, s, ids, false, fmt.Sprint("iteration ", it))
	}
	if bad > 0 {
		t.Fatalf("%d of %d cancelled transactions failed without context.Canceled; first: %v", bad, cancelled, first)
	}
	if cancelled == 0 {
		t.Fatal("no transaction was cancelled: the test tests nothing")
	}
}

// putBlobs puts n blobs, their contents named by what, and returns their
// ids: those put before an error too.
func putBlobs(tx Tx, n int, what string) ([]object.ID, error) {
	var ids []object.ID
	for i := 0; i < n; i++ {
		b := []byte(fmt.Sprintf("%s: blob %d\n", what, i))
		id := object.Sum(b)
		ids = append(ids, id)
		if err := tx.PutBlob(id, b); err != nil {
			return ids, err
		}
	}
	return ids, nil
}

// checkBlobs checks that every blob of ids is stored (want) or none is:
// a transaction committed whole or not at all.
func checkBlobs(t *testing.T, s Store, ids []object.ID, want bool, what string) {
	t.Helper()
	for _, id := range ids {
		if ok, err := s.HasBlob(context.Background(), id); err != nil || ok != want {
			t.Fatalf("%s: blob %s: stored %v (want %v), %v", what, id.Short(), ok, want, err)
		}
	}
}
