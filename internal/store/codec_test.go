package store

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"runtime"
	"strings"
	"testing"

	"github.com/seed1cedbf7c/ckpt/internal/object"
)

// damagedZstd is a zstd frame whose header claims 3.8 GiB of content,
// followed by 20 bytes: what a damaged row of 30 bytes may hold.
var damagedZstd = append([]byte{0x28, 0xb5, 0x2f, 0xfd, 0x80, 0x7b, 0x13, 0x20, 0xe4, 0xf0}, make([]byte, 20)...)

// allocated returns the bytes fn allocated (no other test runs meanwhile:
// the package's tests that allocate much are not parallel).
func allocated(fn func()) uint64 {
	var m0, m1 runtime.MemStats
	runtime.ReadMemStats(&m0)
	fn()
	runtime.ReadMemStats(&m1)
	return m1.TotalAlloc - m0.TotalAlloc
}

// refusedWithLittle checks that decompress refuses frame with each of
// hints, allocating at most limit bytes.
func refusedWithLittle(t *testing.T, frame []byte, limit uint64, hints ...int64) {
	t.Helper()
	for _, hint := range hints {
		var err error
		n := allocated(func() { _, err = decompress(encZstd, frame, hint) })
		if err == nil {
			t.Fatalf("hint %d: a frame of %d bytes decoded", hint, len(frame))
		}
		if n > limit {
			t.Errorf("hint %d: decoding a frame of %d bytes allocated %d MiB", hint, len(frame), n>>20)
		}
	}
}

// storeWithRow returns a store and the id of a blob whose row was
// overwritten with enc and data.
func storeWithRow(t *testing.T, enc int, data []byte) (*SQLite, object.ID) {
	t.Helper()
	s := openTest(t)
	id := putBlob(t, s, []byte(strings.Repeat("a line of a file in a workspace\n", 100)))
	if _, err := s.db.Exec(`UPDATE blobs SET enc=?, data=? WHERE id=?`, enc, data, id[:]); err != nil {
		t.Fatal(err)
	}
	return s, id
}

// readCorrupt reads blob id, which must be reported corrupt with an
// error containing detail, allocating at most limit bytes.
func readCorrupt(t *testing.T, s *SQLite, id object.ID, detail string, limit uint64) {
	t.Helper()
	var err error
	n := allocated(func() { _, err = s.ReadBlob(context.Background(), id) })
	var ce *CorruptError
	if !errors.As(err, &ce) || !strings.Contains(err.Error(), detail) {
		t.Fatalf("read of the damaged blob: %v, want a CorruptError (%q)", err, detail)
	}
	if n > limit {
		t.Errorf("reading the damaged blob allocated %d MiB", n>>20)
	}
}

// A zstd frame's header is stored data too: a damaged one that claims
// gigabytes is corruption, found without allocating them (they would
// have killed ckpt on a small machine before it could report the object).
func TestDamagedZstdHeaderAllocatesLittle(t *testing.T) {
	refusedWithLittle(t, damagedZstd, 64<<20, 3000, -1)
	s, id := storeWithRow(t, encZstd, damagedZstd)
	readCorrupt(t, s, id, "", 64<<20)
	var err error
	var problems []Problem
	n := allocated(func() {
		_, err = s.Fsck(context.Background(), func(p Problem) { problems = append(problems, p) }, nil)
	})
	if err != nil || len(problems) != 1 || problems[0].ID != id {
		t.Fatalf("fsck: %v, %v; want the damaged blob", problems, err)
	}
	if n > 64<<20 {
		t.Errorf("fsck of the damaged blob allocated %d MiB", n>>20)
	}
}

// Stored data is untrusted: no encoding's decoder panics on it or
// allocates far more than the data could hold, and an S2 block never
// decodes to more than S2 is written for.
func FuzzDecompress(f *testing.F) {
	text := sourceLike(9, 3000)
	_, z := compress(text)
	_, s2b := compressFast(text)
	for _, enc := range []int{encRaw, encZstd, encChunked, encDelta, encS2, 99} {
		f.Add(enc, []byte{}, int64(0))
		f.Add(enc, z, int64(len(text)))
		f.Add(enc, s2b, int64(len(text)))
	}
	f.Add(encS2, append(binary.AppendUvarint(nil, 64<<20), 0), int64(64<<20))
	f.Add(encZstd, damagedZstd, int64(3000))
	f.Fuzz(func(t *testing.T, enc int, data []byte, size int64) {
		var out []byte
		var err error
		n := allocated(func() { out, err = decompress(enc, data, size) })
		if err == nil && enc == encS2 && len(out) > maxS2Len {
			t.Fatalf("an S2 block decoded to %d bytes", len(out))
		}
		// A zstd block of 3 bytes or more decodes to at most 128 KiB.
		if limit := uint64(64<<20) + uint64(len(data))*(zstdBlockMax/3)*2; n > limit {
			t.Fatalf("%d bytes of encoding %d allocated %d MiB", len(data), enc, n>>20)
		}
	})
}

// A decoded object is as large as its content, whether its row records
// its size or not: trees are kept in the recent cache, which counts their
// length, and a buffer sized by the frame's bound (128 KiB a block) held
// many times that.
func TestDecompressSizesItsBuffer(t *testing.T) {
	text := sourceLike(11, 3000)
	enc, c := compress(text)
	if enc != encZstd {
		t.Fatalf("encoding %d", enc)
	}
	for _, size := range []int64{int64(len(text)), -1} {
		out, err := decompress(encZstd, c, size)
		if err != nil || !bytes.Equal(out, text) {
			t.Fatalf("size %d: %v", size, err)
		}
		if cap(out) > 2*len(text) {
			t.Errorf("size %d: %d bytes decoded into a buffer of %d", size, len(out), cap(out))
		}
	}
}
