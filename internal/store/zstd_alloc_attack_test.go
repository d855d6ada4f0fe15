package store

import (
	"encoding/binary"
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
	s, id := storeWithRow(t, encZstd, frame)
	readCorrupt(t, s, id, "the row says", 16<<20)
}

// A row of 6 KB claims 256 MiB in compressed blocks of no bytes: the
// decoder allocated all of it before it found the first block empty, until
// zstdBound refused compressed blocks of fewer than 2 bytes. Through a
// tree row, ckpt fsck and ckpt restore peaked at 540 MB RSS.
func TestCraftedZstdOfEmptyBlocksAllocatesLittle(t *testing.T) {
	frame := craftedZstd(2000)
	if _, _, err := zstdBound(frame); err == nil {
		t.Error("zstdBound takes compressed blocks of no bytes")
	}
	refusedWithLittle(t, frame, 64<<20, 3000, -1)
	s, id := storeWithRow(t, encZstd, frame)
	readCorrupt(t, s, id, "", 64<<20)
}
