package store

import (
	"context"
	"encoding/binary"
	"errors"
	"strings"
	"testing"
)

// craftedZstd is a frame of n compressed blocks of no bytes whose header
// claims n*128 KiB: 3n+13 bytes.
func craftedZstd(n int) []byte { return craftedZstdOf(n, 0) }

// craftedZstdOf is a frame of n compressed blocks of size bytes each (of
// zeros: not valid content) whose header claims n*128 KiB.
func craftedZstdOf(n, size int) []byte {
	f := []byte{0x28, 0xb5, 0x2f, 0xfd, 0xe0} // single segment, 8-byte content size
	f = binary.LittleEndian.AppendUint64(f, uint64(n)*zstdBlockMax)
	for i := range n {
		bh := 2<<1 | size<<3 // compressed
		if i == n-1 {
			bh |= 1
		}
		f = append(f, byte(bh), byte(bh>>8), byte(bh>>16))
		f = append(f, make([]byte, size)...)
	}
	return f
}

// Blocks of 4 bytes may each hold 128 KiB, so a frame of them passes
// zstdBound; a blob or chunk row records its size, and a frame claiming
// another is refused before the decoder allocates what it claims.
func TestCraftedZstdAgainstTheRowsSize(t *testing.T) {
	frame := craftedZstdOf(1000, 4)
	if _, _, err := zstdBound(frame); err != nil {
		t.Fatalf("zstdBound refuses blocks of 4 bytes: %v", err)
	}
	ctx := context.Background()
	s := openTest(t)
	data := []byte(strings.Repeat("a line of a file in a workspace\n", 100))
	id := putBlob(t, s, data)
	if _, err := s.db.Exec(`UPDATE blobs SET enc=?, data=? WHERE id=?`, encZstd, frame, id[:]); err != nil {
		t.Fatal(err)
	}
	var err error
	n := allocated(func() { _, err = s.ReadBlob(ctx, id) })
	var ce *CorruptError
	if !errors.As(err, &ce) || !strings.Contains(err.Error(), "the row says") {
		t.Fatalf("read of the crafted blob: %v, want a CorruptError about its size", err)
	}
	if n > 16<<20 {
		t.Errorf("reading a blob row of %d bytes allocated %d MiB", len(frame), n>>20)
	}
}

// A row of 6 KB claims 256 MiB in compressed blocks of no bytes: the
// decoder allocated all of it before it found the first block empty, until
// zstdBound refused compressed blocks of fewer than 2 bytes. Through a tree row, ckpt fsck and
// ckpt restore peaked at 540 MB RSS (/usr/bin/time -f %M).
func TestCraftedZstdOfEmptyBlocksAllocatesLittle(t *testing.T) {
	frame := craftedZstd(2000)
	if _, _, err := zstdBound(frame); err != nil {
		t.Logf("zstdBound refuses it: %v", err)
	}
	for _, hint := range []int64{3000, int64(len(frame)) * 4, -1} {
		var err error
		n := allocated(func() { _, err = decompress(encZstd, frame, hint) })
		if err == nil {
			t.Fatalf("hint %d: the crafted frame decoded", hint)
		}
		if n > 64<<20 {
			t.Errorf("hint %d: decoding a frame of %d bytes allocated %d MiB", hint, len(frame), n>>20)
		}
	}

	ctx := context.Background()
	s := openTest(t)
	data := []byte(strings.Repeat("a line of a file in a workspace\n", 100))
	id := putBlob(t, s, data)
	if _, err := s.db.Exec(`UPDATE blobs SET enc=?, data=? WHERE id=?`, encZstd, frame, id[:]); err != nil {
		t.Fatal(err)
	}
	var err error
	n := allocated(func() { _, err = s.ReadBlob(ctx, id) })
	var ce *CorruptError
	if !errors.As(err, &ce) {
		t.Fatalf("read of the crafted blob: %v, want a CorruptError", err)
	}
	if n > 64<<20 {
		t.Errorf("reading a blob row of %d bytes allocated %d MiB", len(frame), n>>20)
	}
}
