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
	d, err := decompress(int(stored[0]), stored[1:], size/8+64)
	if err != nil {
		return nil, err
	}
	out, err := applyDelta(base, d)
	if err != nil {
		return nil, err
	}
	return out, nil
}

// decompress inverts compress. size is the expected decoded length.
func decompress(enc int, data []byte, size int64) ([]byte, error) {
	switch enc {
	case encRaw:
		return data, nil
	case encZstd:
		bound, err := zstdBound(data)
		if err != nil {
			return nil, fmt.Errorf("zstd: %v", err)
		}
		_, d := codecs()
		// The stored size is a hint, never trusted for an allocation.
		out, err := d.DecodeAll(data, make([]byte, 0, min(max(size, 0), bound, 16<<20)))
		if err != nil {
			return nil, fmt.Errorf("zstd: %v", err)
		}
		return out, nil
	case encS2:
		n, err := s2.DecodedLen(data)
		if err != nil {
			return nil, fmt.Errorf("s2: %v", err)
		}
		if n > maxS2Len {
			return nil, fmt.Errorf("s2: claims %d bytes, more than S2 is written for", n)
		}
		out, err := s2.Decode(make([]byte, n), data)
		if err != nil {
			return nil, fmt.Errorf("s2: %v", err)
		}
		return out, nil
	}
	return nil, fmt.Errorf("unknown encoding %d", enc)
}

// zstdBlockMax is the most one zstd block decodes to (RFC 8878, 3.1.1.2.3).
const zstdBlockMax = 128 << 10

// zstdBound checks that data is one zstd frame, as compress writes, and
// returns the most it can decode to, from its block headers alone. A
// frame whose header claims more is refused: the decoder allocates what
// the header claims before it finds the frame short, and a damaged row of
// 30 bytes made it allocate 3.8 GiB.
func zstdBound(data []byte) (int64, error) {
	var h zstd.Header
	if err := h.Decode(data); err != nil {
		return 0, err
	}
	if h.Skippable {
		return 0, errors.New("a skippable frame")
	}
	p, bound := h.HeaderSize, int64(0)
	for last := false; !last; {
		if len(data)-p < 3 {
			return 0, errors.New("truncated block header")
		}
		bh := int(data[p]) | int(data[p+1])<<8 | int(data[p+2])<<16
		p += 3
		last = bh&1 == 1
		size := bh >> 3
		if size > zstdBlockMax {
			return 0, fmt.Errorf("a block of %d bytes", size)
		}
		switch (bh >> 1) & 3 {
		case 0: // raw
			bound += int64(size)
			p += size
		case 1: // one byte repeated
			bound += int64(size)
			p++
		case 2: // compressed
			bound += zstdBlockMax
			p += size
		default:
			return 0, errors.New("a block of the reserved type")
		}
		if p > len(data) {
			return 0, errors.New("truncated block")
		}
	}
	if h.HasCheckSum {
		p += 4
	}
	if p != len(data) {
		return 0, fmt.Errorf("%d bytes where the frame ends at %d", len(data), p)
	}
	if h.HasFCS && h.FrameContentSize > uint64(bound) {
		return 0, fmt.Errorf("the frame claims %d bytes; its blocks hold at most %d", h.FrameContentSize, bound)
	}
	return bound, nil
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
