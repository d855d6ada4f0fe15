package store

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/seed1cedbf7c/ckpt/internal/object"
)

// A transaction that begins on a table with no rows answers lookups of
// that table from what it put itself (no row can be committed while it
// holds the write lock); one that begins on rows asks SQLite. Either way
// the answers are the truth.
func TestTxLookupsAnswerTrueFromEmptyAndFull(t *testing.T) {
	ctx := context.Background()
	blob := []byte("a blob\n")
	tree := []byte("a tree\n")
	bid, tid, other := object.Sum(blob), object.Sum(tree), object.Sum([]byte("never stored\n"))
	type want struct{ blob, tree, trees, other bool }
	check := func(t *testing.T, tx Tx, step string, w want) {
		t.Helper()
		b, err1 := tx.HasBlob(bid)
		tr, err2 := tx.HasTree(tid)
		trs, err3 := tx.(*sqliteTx).HasTrees([]object.ID{tid})
		o, err4 := tx.HasBlob(other)
		for _, err := range []error{err1, err2, err3, err4} {
			if err != nil {
				t.Fatalf("%s: %v", step, err)
			}
		}
		if got := (want{b, tr, trs, o}); got != w {
			t.Fatalf("%s: lookups %+v, want %+v", step, got, w)
		}
		if ok, err := tx.(*sqliteTx).HasTrees(nil); err != nil || !ok {
			t.Fatalf("%s: no trees at all are not all stored: %v, %v", step, ok, err)
		}
	}
	update := func(t *testing.T, s *SQLite, fn func(tx Tx) error) {
		t.Helper()
		if err := s.Update(ctx, fn); err != nil {
			t.Fatal(err)
		}
	}

	t.Run("empty", func(t *testing.T) {
		s := openTest(t)
		update(t, s, func(tx Tx) error {
			check(t, tx, "empty store", want{})
			if err := tx.PutBlob(bid, blob); err != nil {
				return err
			}
			if err := tx.PutTree(tid, tree); err != nil {
				return err
			}
			check(t, tx, "after putting", want{blob: true, tree: true, trees: true})
			return nil
		})
		update(t, s, func(tx Tx) error {
			check(t, tx, "committed", want{blob: true, tree: true, trees: true})
			return nil
		})
	})
	t.Run("blobs but no trees", func(t *testing.T) {
		s := openTest(t)
		update(t, s, func(tx Tx) error { return tx.PutBlob(bid, blob) })
		update(t, s, func(tx Tx) error {
			check(t, tx, "a committed blob", want{blob: true})
			return nil
		})
	})
	t.Run("trees but no blobs", func(t *testing.T) {
		s := openTest(t)
		update(t, s, func(tx Tx) error { return tx.PutTree(tid, tree) })
		update(t, s, func(tx Tx) error {
			check(t, tx, "a committed tree", want{tree: true, trees: true})
			return nil
		})
	})
	t.Run("rolled back", func(t *testing.T) {
		s := openTest(t)
		s.Update(ctx, func(tx Tx) error {
			tx.PutBlob(bid, blob)
			tx.PutTree(tid, tree)
			return context.Canceled
		})
		update(t, s, func(tx Tx) error {
			check(t, tx, "after a rollback", want{})
			return nil
		})
	})
}

// Another handle (as another process) that puts a blob while a
// transaction that began on an empty store runs waits for the write lock:
// the transaction's lookups were right to take the table for empty, and
// after both commit, both blobs are there.
func TestTxOnEmptyStoreHoldsOffOtherWriters(t *testing.T) {
	ctx := context.Background()
	s := openTest(t)
	other := openAgain(t, s)
	mine, theirs := []byte("mine\n"), []byte("theirs\n")
	mid, tid := object.Sum(mine), object.Sum(theirs)
	began, done := make(chan struct{}), make(chan error, 1)
	err := s.Update(ctx, func(tx Tx) error {
		go func() {
			close(began)
			done <- other.Update(ctx, func(tx Tx) error { return tx.PutBlob(tid, theirs) })
		}()
		<-began
		for i := 0; i < 50; i++ {
			if ok, err := tx.HasBlob(tid); err != nil || ok {
				return fmt.Errorf("lookup %d of the other handle's blob: %v, %v", i, ok, err)
			}
			select {
			case err := <-done:
				return fmt.Errorf("the other handle committed inside this transaction: %v", err)
			default:
			}
			time.Sleep(time.Millisecond) // let the other handle try to write
		}
		return tx.PutBlob(mid, mine)
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	for _, id := range []object.ID{mid, tid} {
		if ok, err := s.HasBlob(ctx, id); err != nil || !ok {
			t.Fatalf("blob %s after both commits: %v, %v", id.Short(), ok, err)
		}
	}
}
