package store

import (
	"context"
	"fmt"
	"testing"

	"github.com/seed1cedbf7c/ckpt/internal/object"
)

// HasTrees answers what a HasTree per id would, over more ids than one
// query takes, with duplicates, and inside a transaction that wrote some
// of them itself.
func TestHasTrees(t *testing.T) {
	s := openTest(t)
	ctx := context.Background()
	tree := func(i int) ([]byte, object.ID) {
		data := (&object.Tree{Entries: []object.Entry{{Name: fmt.Sprintf("f%d", i), Mode: object.ModeFile | 0o644, ID: object.Sum([]byte{byte(i)})}}}).Encode()
		return data, object.Sum(data)
	}
	var stored []object.ID
	err := s.Update(ctx, func(tx Tx) error {
		for i := range 2*hasBatch + 7 {
			data, id := tree(i)
			if err := tx.PutTreeFrom(id, data, object.ZeroID); err != nil {
				return err
			}
			stored = append(stored, id)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	_, missing := tree(-1)
	for _, c := range []struct {
		name string
		ids  []object.ID
		want bool
	}{
		{"none", nil, true},
		{"all", stored, true},
		{"all twice", append(append([]object.ID{}, stored...), stored...), true},
		{"one missing first", append([]object.ID{missing}, stored...), false},
		{"one missing last", append(append([]object.ID{}, stored...), missing), false},
		{"only the missing one", []object.ID{missing, missing}, false},
	} {
		got, err := s.HasTrees(ctx, c.ids)
		if err != nil || got != c.want {
			t.Errorf("%s: HasTrees = %v, %v; want %v", c.name, got, err, c.want)
		}
	}
	// In a transaction, its own uncommitted trees count as stored.
	err = s.Update(ctx, func(tx Tx) error {
		data, id := tree(-1)
		if err := tx.PutTreeFrom(id, data, object.ZeroID); err != nil {
			return err
		}
		got, err := tx.(*sqliteTx).HasTrees(append([]object.ID{id}, stored[:3]...))
		if err != nil || !got {
			return fmt.Errorf("in the transaction that put it: HasTrees = %v, %v", got, err)
		}
		_, other := tree(-2)
		if got, err := tx.(*sqliteTx).HasTrees([]object.ID{id, other}); err != nil || got {
			return fmt.Errorf("with a tree nobody put: HasTrees = %v, %v", got, err)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
