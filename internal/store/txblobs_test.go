package store

import (
	"bytes"
	"context"
	"fmt"
	"testing"

	"github.com/seed1cedbf7c/ckpt/internal/object"
)

// A transaction remembers at most maxTxBlobs of the blobs it put; past
// that, putting the same content again (HasBlob says no: it cannot see
// the transaction's own rows) stores nothing twice and loses nothing,
// small blobs, deltas and chunked ones alike.
func TestTxForgetsBlobsItPut(t *testing.T) {
	m := maxTxBlobs
	t.Cleanup(func() { maxTxBlobs = m })
	maxTxBlobs = 4
	s := openTest(t)
	ctx := context.Background()
	var ids []object.ID
	var datas [][]byte
	big := bytes.Repeat([]byte("chunked content "), ChunkThreshold/8)
	err := s.Update(ctx, func(tx Tx) error {
		put := func(data []byte, base object.ID) error {
			id := object.Sum(data)
			if ok, err := tx.HasBlob(id); err != nil || ok {
				return err
			}
			if len(data) >= ChunkThreshold {
				w := tx.NewBlobWriter()
				w.Write(data)
				return w.Commit(id)
			}
			return tx.PutBlobFrom(id, data, base)
		}
		for round := 0; round < 3; round++ { // the same content three times
			prev := object.ZeroID
			for i := 0; i < 12; i++ {
				data := []byte(fmt.Sprintf("file %d\n%s", i, bytes.Repeat([]byte("line of text\n"), 50)))
				if i == 5 {
					data = big
				}
				if err := put(data, prev); err != nil {
					return err
				}
				if round == 0 {
					ids, datas = append(ids, object.Sum(data)), append(datas, data)
				}
				prev = object.Sum(data)
			}
		}
		if n := len(tx.(*sqliteTx).blobs); n > maxTxBlobs {
			return fmt.Errorf("the transaction remembers %d blobs, more than %d", n, maxTxBlobs)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for i, id := range ids {
		got, err := s.ReadBlob(ctx, id)
		if err != nil || !bytes.Equal(got, datas[i]) {
			t.Fatalf("blob %d: %v", i, err)
		}
	}
	var rows int
	if err := s.db.QueryRowContext(ctx, `SELECT count(*) FROM blobs`).Scan(&rows); err != nil || rows != len(ids) {
		t.Fatalf("%d blob rows (%v), want %d", rows, err, len(ids))
	}
	var problems []Problem
	if _, err := s.Fsck(ctx, func(p Problem) { problems = append(problems, p) }, nil); err != nil || len(problems) > 0 {
		t.Fatalf("fsck: %v %v", err, problems)
	}
}
