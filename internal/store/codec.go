package store

import (
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"math/rand/v2"
	"runtime"
	"sync"

	"github.com/klauspost/compress/s2"
	"github.com/klauspost/compress/zstd"
	"github.com/seed1cedbf7c/ckpt/internal/object"
)

// Encodings of stored data.
const (
	encRaw     = 0 // data as is
	encZstd    = 1 // zstd frame
	encChunked = 2 // blobs only: concatenated chunk ids and sizes
	encDelta   = 3 // base object id [32] | encoding byte | delta instructions (see delta.go)
	encS2      = 4 // S2 block (a store's first blobs and chunks; see compressFast)
)

// maxS2Len bounds what an S2 block may claim to decode to: S2 is only
// written for whole blobs below ChunkThreshold and for chunks, never over
// chunkMax. A corrupt length is refused before anything is allocated.
const maxS2Len = 4 << 20

// maxDeltaDepth bounds delta chains: an object whose base is this deep is
// stored whole, so a read follows at most this many bases.
const maxDeltaDepth = 10

var (
	encOnce sync.Once
	encoder *zstd.Encoder
	decoder *zstd.Decoder
)

func codecs() (*zstd.Encoder, *zstd.Decoder) {
	encOnce.Do(func() {
		var err error
		// EncodeAll is called from every scan worker: one encoder per CPU
		// (with 1, concurrent calls queue for a single encoder).
		// A 256 KiB window: blobs are mostly a few KB and chunks at most
		// 4 MiB, and the encoders' history buffers dominate peak memory.
		encoder, err = zstd.NewWriter(nil, zstd.WithEncoderLevel(zstd.SpeedFastest),
			zstd.WithEncoderConcurrency(runtime.GOMAXPROCS(0)), zstd.WithLowerEncoderMem(true),
			zstd.WithWindowSize(256<<10))
		if err != nil {
			panic(err)
		}
		decoder, err = zstd.NewReader(nil, zstd.WithDecoderConcurrency(0), zstd.WithDecoderLowmem(true))
		if err != nil {
			panic(err)
		}
	})
	return encoder, decoder
}

// compress returns data's stored form: zstd when that saves at least 1/16,
// raw otherwise.
func compress(data []byte) (enc int, out []byte) {
	if len(data) < 64 {
		return encRaw, data
	}
	e, _ := codecs()
	c := e.EncodeAll(data, make([]byte, 0, len(data)/2))
	if len(c) >= len(data)-len(data)/16 {
		return encRaw, data
	}
	return encZstd, c
}

// compressFast is compress with S2 (from the same module as zstd) instead
// of zstd: about three times faster than zstd's fastest level on source
// code, and about a quarter larger. A store's first save takes it for its
// files: compressing every file of a large tree with zstd took longer than
// reading and hashing them, on two cores, by itself (docs/benchmarks.md).
func compressFast(data []byte) (enc int, out []byte) {
	if len(data) < 64 || len(data) > maxS2Len {
		return compress(data)
	}
	c := s2.Encode(make([]byte, s2.MaxEncodedLen(len(data))), data)
	if len(c) >= len(data)-len(data)/16 {
		return encRaw, data
	}
	return encS2, c
}

// compressOwned is compress (compressFast if fast) for data that is
// queued: the result never aliases data, which the caller may reuse at once.
func compressOwned(data []byte, fast bool) (int, []byte) {
	compress := compress
	if fast {
		compress = compressFast
	}
	enc, c := compress(data)
	if enc == encRaw {
		c = append(make([]byte, 0, len(c)), c...) // never nil: NULL would violate NOT NULL
	}
	return enc, c
}

// compressDelta returns the stored form of data as a delta against base:
// the instructions of makeDelta, zstd-compressed when that helps
// (first byte: encRaw or encZstd).
func compressDelta(data, base []byte) ([]byte, error) {
	enc, c := compress(makeDelta(base, data))
	return append([]byte{byte(enc)}, c...), nil
}

// decompressDelta inverts compressDelta.
func decompressDelta(stored, base []byte, size int64) ([]byte, error) {
	if len(stored) < 1 {
		return nil, errDelta
	}
	d, err := decompress(int(stored[0]), stored[1:], -1)
	if err != nil {
		return nil, err
	}
	out, err := applyDelta(base, d)
	if err != nil {
		return nil, err
	}
	return out, nil
}

// decompress inverts compress. size is the exact decoded length when the
// row records it (blobs, chunks), or -1. Stored data is untrusted: a frame
// or block that claims another length than the row, or more than its own
// blocks can hold, is refused before anything is allocated for it.
func decompress(enc int, data []byte, size int64) ([]byte, error) {
	switch enc {
	case encRaw:
		return data, nil
	case encZstd:
		bound, fcs, err := zstdBound(data)
		if err != nil {
			return nil, fmt.Errorf("zstd: %v", err)
		}
		if size >= 0 && fcs >= 0 && fcs != size {
			return nil, fmt.Errorf("zstd: the frame holds %d bytes, the row says %d", fcs, size)
		}
		// The buffer: the size the row records, else what the frame says
		// it holds (checked against its blocks), else a guess. Never the
		// bound itself, 128 KiB a block: the result keeps its buffer.
		hint := min(int64(len(data))*4, bound)
		if fcs >= 0 {
			hint = fcs
		}
		if size >= 0 {
			hint = min(size, bound)
		}
		_, d := codecs()
		out, err := d.DecodeAll(data, make([]byte, 0, min(hint, 16<<20)))
		if err != nil {
			return nil, fmt.Errorf("zstd: %v", err)
		}
		return out, nil
	case encS2:
		n, err := s2.DecodedLen(data)
		if err != nil {
			return nil, err // "s2: corrupt input" and the like
		}
		if n > maxS2Len {
			return nil, fmt.Errorf("s2: claims %d bytes, more than S2 is written for", n)
		}
		if size >= 0 && int64(n) != size {
			return nil, fmt.Errorf("s2: the block holds %d bytes, the row says %d", n, size)
		}
		return s2.Decode(make([]byte, n), data)
	}
	return nil, fmt.Errorf("unknown encoding %d", enc)
}

// zstdBlockMax is the most one zstd block decodes to (RFC 8878, 3.1.1.2.3).
const zstdBlockMax = 128 << 10

// zstdBound checks that data is one zstd frame, as compress writes, and
// returns the most it can decode to, from its block headers alone, and the
// content size its header claims (-1 if none). A frame whose header claims
// more than its blocks can hold is refused: the decoder allocates what the
// header claims before it finds the frame short, and a damaged row of 30
// bytes made it allocate 3.8 GiB.
//
// A compressed block holds a literals section and a sequences section, a
// byte each at least; with 3 bytes it can decode to at most 31 bytes (RLE
// literals under a one-byte header), and only from 4 bytes on to a whole
// block. A block of 4 bytes can decode to 128 KiB, and an RLE block too,
// so a frame may still decode to about 30,000 times its size: rows that
// record their size (blobs, chunks) are held to it by decompress.
func zstdBound(data []byte) (bound, fcs int64, err error) {
	var h zstd.Header
	if err := h.Decode(data); err != nil {
		return 0, 0, err
	}
	if h.Skippable {
		return 0, 0, errors.New("a skippable frame")
	}
	p := h.HeaderSize
	for last := false; !last; {
		if len(data)-p < 3 {
			return 0, 0, errors.New("truncated block header")
		}
		bh := int(data[p]) | int(data[p+1])<<8 | int(data[p+2])<<16
		p += 3
		last = bh&1 == 1
		size := bh >> 3
		if size > zstdBlockMax {
			return 0, 0, fmt.Errorf("a block of %d bytes", size)
		}
		switch (bh >> 1) & 3 {
		case 0: // raw
			bound += int64(size)
			p += size
		case 1: // one byte repeated
			bound += int64(size)
			p++
		case 2: // compressed
			switch {
			case size < 2:
				return 0, 0, fmt.Errorf("a compressed block of %d bytes", size)
			case size < 4:
				bound += 31
			default:
				bound += zstdBlockMax
			}
			p += size
		default:
			return 0, 0, errors.New("a block of the reserved type")
		}
		if p > len(data) {
			return 0, 0, errors.New("truncated block")
		}
	}
	if h.HasCheckSum {
		p += 4
	}
	if p != len(data) {
		return 0, 0, fmt.Errorf("%d bytes where the frame ends at %d", len(data), p)
	}
	fcs = -1
	if h.HasFCS {
		if h.FrameContentSize > uint64(bound) {
			return 0, 0, fmt.Errorf("the frame claims %d bytes; its blocks hold at most %d", h.FrameContentSize, bound)
		}
		fcs = int64(h.FrameContentSize)
	}
	return bound, fcs, nil
}

// Content-defined chunking (FastCDC-style gear hash). Boundaries depend only
// on content, so an edit in a large file changes only the chunks around it.
// The gear table is generated from a fixed seed and must never change
// (changing it would only lose deduplication, never correctness).
const (
	// ChunkThreshold: blobs at least this large are stored in chunks.
	ChunkThreshold = 4 << 20
	chunkMin       = 256 << 10
	chunkAvg       = 1 << 20
	chunkMax       = 4 << 20
	maskS          = (1 << 22) - 1 // harder to match below avg
	maskL          = (1 << 18) - 1 // easier to match above avg
)

var gear = func() (g [256]uint64) {
	r := rand.New(rand.NewPCG(0x636b7074, 0x63646331)) // "ckpt", "cdc1"
	for i := range g {
		g[i] = r.Uint64()
	}
	return
}()

// chunkBoundary returns the length of the first chunk of data. If data is
// shorter than chunkMax and no boundary is found, it returns -1 unless final.
func chunkBoundary(data []byte, final bool) int {
	n := len(data)
	if n <= chunkMin {
		if final {
			return n
		}
		return -1
	}
	limit := n
	if limit > chunkMax {
		limit = chunkMax
	}
	var h uint64
	i := chunkMin
	normal := chunkAvg
	if normal > limit {
		normal = limit
	}
	for ; i < normal; i++ {
		h = (h << 1) + gear[data[i]]
		if h&maskS == 0 {
			return i + 1
		}
	}
	for ; i < limit; i++ {
		h = (h << 1) + gear[data[i]]
		if h&maskL == 0 {
			return i + 1
		}
	}
	if limit == chunkMax || final {
		return limit
	}
	return -1
}

// chunkList encodes chunk ids and sizes of a chunked blob.
func encodeChunkList(ids []object.ID, sizes []int64) []byte {
	b := make([]byte, 0, len(ids)*40)
	for i, id := range ids {
		b = append(b, id[:]...)
		b = binary.BigEndian.AppendUint64(b, uint64(sizes[i]))
	}
	return b
}

func decodeChunkList(b []byte) ([]object.ID, []int64, error) {
	if len(b)%40 != 0 {
		return nil, nil, fmt.Errorf("chunk list length %d", len(b))
	}
	n := len(b) / 40
	ids := make([]object.ID, n)
	sizes := make([]int64, n)
	for i := range n {
		copy(ids[i][:], b[i*40:])
		sizes[i] = int64(binary.BigEndian.Uint64(b[i*40+32:]))
	}
	return ids, sizes, nil
}

func sum(b []byte) object.ID { return sha256.Sum256(b) }
