package store

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/seed1cedbf7c/ckpt/internal/object"
)

// sourceLike returns n bytes of text that compresses as source code does.
func sourceLike(seed uint64, n int) []byte {
	r := rand.New(rand.NewPCG(seed, 7))
	words := []string{"func", "return", "err", "nil", "if", "for", "range", "ctx", "data", "id", "len", "append"}
	var b strings.Builder
	for b.Len() < n {
		fmt.Fprintf(&b, "\t%s %s(%d) %s\n", words[r.IntN(len(words))], words[r.IntN(len(words))], r.IntN(1000), words[r.IntN(len(words))])
	}
	return []byte(b.String()[:n])
}

// encOf returns how table's row id is stored.
func encOf(t *testing.T, s *SQLite, table string, id object.ID) int {
	t.Helper()
	var enc int
	if err := s.db.QueryRow(`SELECT enc FROM `+table+` WHERE id=?`, id[:]).Scan(&enc); err != nil {
		t.Fatalf("%s %s: %v", table, id, err)
	}
	return enc
}

func schemaOf(t *testing.T, s *SQLite) string {
	t.Helper()
	var v string
	if err := s.db.QueryRow(`SELECT value FROM meta WHERE key='schema'`).Scan(&v); err != nil {
		t.Fatal(err)
	}
	return v
}

// A store's first save compresses its files (whole and chunked) with S2,
// every later one with zstd; trees always with zstd. Each reads back
// exactly, and fsck finds nothing.
func TestFirstSaveStoresS2ThenZstd(t *testing.T) {
	ctx := context.Background()
	s := openTest(t)
	first, later := sourceLike(1, 20000), sourceLike(2, 20000)
	big := sourceLike(3, ChunkThreshold+1<<20)
	fid, lid, bid := object.Sum(first), object.Sum(later), object.Sum(big)
	var es []object.Entry
	for i := range 100 {
		es = append(es, object.Entry{Name: fmt.Sprintf("f%03d", i), Mode: object.ModeFile | 0o644, Size: int64(len(first)), ID: fid})
	}
	tree := (&object.Tree{Entries: es}).Encode()
	tid := object.Sum(tree)
	if err := s.Update(ctx, func(tx Tx) error {
		if err := tx.PutBlob(fid, first); err != nil {
			return err
		}
		w := tx.NewBlobWriter()
		w.Write(big)
		if err := w.Commit(bid); err != nil {
			return err
		}
		return tx.PutTree(tid, tree)
	}); err != nil {
		t.Fatal(err)
	}
	if err := s.Update(ctx, func(tx Tx) error { return tx.PutBlob(lid, later) }); err != nil {
		t.Fatal(err)
	}
	if e := encOf(t, s, "blobs", fid); e != encS2 {
		t.Errorf("the first save's blob has encoding %d, want S2 (%d)", e, encS2)
	}
	if e := encOf(t, s, "blobs", lid); e != encZstd {
		t.Errorf("a later save's blob has encoding %d, want zstd (%d)", e, encZstd)
	}
	if e := encOf(t, s, "trees", tid); e != encZstd {
		t.Errorf("the first save's tree has encoding %d, want zstd (%d)", e, encZstd)
	}
	rows, err := s.db.Query(`SELECT enc, COUNT(*) FROM chunks GROUP BY enc`)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var enc, n int
		if err := rows.Scan(&enc, &n); err != nil {
			t.Fatal(err)
		}
		if enc != encS2 {
			t.Errorf("%d chunks of the first save have encoding %d, want S2 (%d)", n, enc, encS2)
		}
	}
	rows.Close()
	for id, want := range map[object.ID][]byte{fid: first, lid: later, bid: big} {
		got, err := s.ReadBlob(ctx, id)
		if err != nil || string(got) != string(want) {
			t.Fatalf("blob %s reads back %d bytes, %v", id, len(got), err)
		}
	}
	var problems []Problem
	if _, err := s.Fsck(ctx, func(p Problem) { problems = append(problems, p) }, nil); err != nil || len(problems) > 0 {
		t.Fatalf("fsck: %v, %v", problems, err)
	}
}

// A damaged S2 blob is corruption, found by a read and by fsck; one whose
// header claims a huge size is refused before that much is allocated.
func TestS2CorruptionIsDetected(t *testing.T) {
	ctx := context.Background()
	data := sourceLike(5, 30000)
	id := object.Sum(data)
	for _, c := range []struct {
		name   string
		damage func(stored []byte) []byte
	}{
		{"a flipped byte", func(b []byte) []byte { b[len(b)/2] ^= 0x20; return b }},
		{"truncated", func(b []byte) []byte { return b[:len(b)-10] }},
		{"a length of 64 MiB", func(b []byte) []byte {
			_, n := binary.Uvarint(b)
			return append(binary.AppendUvarint(nil, 64<<20), b[n:]...)
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			s := openTest(t)
			putBlob(t, s, data)
			if e := encOf(t, s, "blobs", id); e != encS2 {
				t.Fatalf("encoding %d, want S2", e)
			}
			var stored []byte
			if err := s.db.QueryRow(`SELECT data FROM blobs WHERE id=?`, id[:]).Scan(&stored); err != nil {
				t.Fatal(err)
			}
			if _, err := s.db.Exec(`UPDATE blobs SET data=? WHERE id=?`, c.damage(stored), id[:]); err != nil {
				t.Fatal(err)
			}
			_, err := s.ReadBlob(ctx, id)
			var ce *CorruptError
			if !errors.As(err, &ce) {
				t.Fatalf("read of a damaged S2 blob: %v, want a CorruptError", err)
			}
			var problems []Problem
			if _, err := s.Fsck(ctx, func(p Problem) { problems = append(problems, p) }, nil); err != nil {
				t.Fatal(err)
			}
			if len(problems) != 1 || problems[0].ID != id {
				t.Fatalf("fsck found %v, want the damaged blob", problems)
			}
		})
	}
	if _, err := decompress(encS2, append(binary.AppendUvarint(nil, 64<<20), 0), 64<<20); err == nil || !strings.Contains(err.Error(), "claims") {
		t.Fatalf("a block claiming 64 MiB: %v", err)
	}
}

// Stores are created at schema version 3. A version 2 store is read and
// written as it is while it has blobs (no S2 goes into it), and becomes
// version 3 when its first blobs are stored; a ckpt that reads only
// version 2 then refuses it by its version. An unknown version is refused.
func TestSchemaVersions(t *testing.T) {
	ctx := context.Background()
	setSchema := func(t *testing.T, s *SQLite, v string) {
		t.Helper()
		if _, err := s.db.Exec(`UPDATE meta SET value=? WHERE key='schema'`, v); err != nil {
			t.Fatal(err)
		}
	}
	t.Run("new", func(t *testing.T) {
		s := openTest(t)
		if v := schemaOf(t, s); v != "3" {
			t.Fatalf("a new store has schema %q, want 3", v)
		}
	})
	t.Run("version 2 with blobs", func(t *testing.T) {
		s := openTest(t)
		putBlob(t, s, sourceLike(6, 1000))
		setSchema(t, s, "2")
		s2 := openAgain(t, s)
		data := sourceLike(7, 1000)
		putBlob(t, s2, data)
		if v := schemaOf(t, s2); v != "2" {
			t.Fatalf("schema %q after a save into a version 2 store with blobs, want 2", v)
		}
		if e := encOf(t, s2, "blobs", object.Sum(data)); e != encZstd {
			t.Fatalf("a version 2 store got a blob of encoding %d", e)
		}
	})
	t.Run("version 2 without blobs", func(t *testing.T) {
		s := openTest(t)
		setSchema(t, s, "2")
		s2 := openAgain(t, s)
		if err := s2.Update(ctx, func(tx Tx) error { return errors.New("rolled back") }); err == nil {
			t.Fatal("no error")
		}
		if v := schemaOf(t, s2); v != "2" {
			t.Fatalf("schema %q after a rolled-back update, want 2", v)
		}
		data := sourceLike(8, 1000)
		putBlob(t, s2, data)
		if v := schemaOf(t, s2); v != "3" {
			t.Fatalf("schema %q after the first blobs went in, want 3", v)
		}
		if e := encOf(t, s2, "blobs", object.Sum(data)); e != encS2 {
			t.Fatalf("encoding %d, want S2", e)
		}
	})
	t.Run("unknown", func(t *testing.T) {
		s := openTest(t)
		setSchema(t, s, "4")
		_, err := OpenSQLite(ctx, s.Dir(), "/ws")
		var se *SchemaError
		if !errors.As(err, &se) || se.Version != "4" || !strings.Contains(err.Error(), "versions 2 and 3") {
			t.Fatalf("open of a version 4 store: %v", err)
		}
		_, err = openReadOnly(ctx, s.Dir(), "/ws", errors.New("read-only for the test"))
		if !errors.As(err, &se) {
			t.Fatalf("read-only open of a version 4 store: %v", err)
		}
	})
}
