package diff

import (
	"bytes"
	"errors"
	"fmt"
)

// Git deltas (the format of git's packs and of "delta" hunks in binary
// patches): the source size and the result size as little-endian base-128
// numbers, then instructions. An instruction byte with 0x80 set copies a
// range of the source: bits 0x01 to 0x08 say which bytes of the offset
// follow (least significant first), 0x10 to 0x40 which bytes of the size (0
// means 0x10000). Any other non-zero byte n inserts the n bytes that follow.

const (
	// deltaBlock is the length of the source blocks makeDelta indexes and
	// the shortest match it copies.
	deltaBlock = 16
	// maxDeltaIndex bounds the entries of makeDelta's index (64 MiB).
	maxDeltaIndex = 1 << 23
	// maxCopy is the most one copy instruction copies, as git writes them.
	maxCopy = 0x10000
	// maxInsert is the most one insert instruction carries.
	maxInsert = 0x7f
	// giveUpAfter is how far makeDelta searches before it may conclude
	// that the contents are unrelated.
	giveUpAfter = 1 << 20
)

// deltaSize reads one of the sizes that start a git delta.
func deltaSize(d []byte) (uint64, []byte, error) {
	var size uint64
	for shift := uint(0); ; shift += 7 {
		if len(d) == 0 || shift > 63 {
			return 0, nil, errors.New("bad delta header")
		}
		c := d[0]
		d = d[1:]
		size |= uint64(c&0x7f) << shift
		if c&0x80 == 0 {
			return size, d, nil
		}
	}
}

// applyDelta applies a git delta (as git's patch_delta does): the source
// and result sizes, then instructions that copy a range of the source
// (0x80 set: offset and size bytes follow as the low 7 bits say; size 0
// means 0x10000) or insert the next 1 to 127 bytes.
func applyDelta(src, delta []byte) ([]byte, error) {
	srcSize, d, err := deltaSize(delta)
	if err != nil {
		return nil, err
	}
	if srcSize != uint64(len(src)) {
		return nil, fmt.Errorf("delta applies to %d bytes, file has %d", srcSize, len(src))
	}
	dstSize, d, err := deltaSize(d)
	if err != nil {
		return nil, err
	}
	if dstSize > maxBinarySize {
		return nil, fmt.Errorf("delta result of %d bytes is too large", dstSize)
	}
	// Grow as the instructions produce, not by the size the header
	// states: a tiny delta may state anything.
	out := make([]byte, 0, min(dstSize, uint64(len(src)+len(d))))
	left := dstSize
	bad := errors.New("corrupt delta")
	for len(d) > 0 {
		cmd := d[0]
		d = d[1:]
		switch {
		case cmd&0x80 != 0:
			var off, size uint64
			for i := range 7 {
				if cmd&(1<<i) == 0 {
					continue
				}
				if len(d) == 0 {
					return nil, bad
				}
				if i < 4 {
					off |= uint64(d[0]) << (8 * i)
				} else {
					size |= uint64(d[0]) << (8 * (i - 4))
				}
				d = d[1:]
			}
			if size == 0 {
				size = 0x10000
			}
			if off+size > uint64(len(src)) || size > left {
				return nil, bad
			}
			out = append(out, src[off:off+size]...)
			left -= size
		case cmd != 0:
			if uint64(cmd) > left || int(cmd) > len(d) {
				return nil, bad
			}
			out = append(out, d[:cmd]...)
			d = d[cmd:]
			left -= uint64(cmd)
		default:
			return nil, errors.New("corrupt delta: opcode 0")
		}
	}
	if left != 0 {
		return nil, bad
	}
	return out, nil
}

// makeDelta returns a git delta turning src into dst, or nil when it would
// be longer than limit bytes (or src is too large to address). It finds
// blocks of dst in src as rsync-like tools do: a rolling hash over every
// 16-byte window, and, so that the cost stays linear and cache-friendly,
// only windows whose hash is an anchor (1 in 16, chosen by content, so the
// same on both sides) are indexed in src and looked up from dst. Each match
// is extended both ways, copied, and the bytes between matches inserted.
func makeDelta(src, dst []byte, limit int) []byte {
	if len(src) == 0 || len(src) > 0xffffffff {
		return nil
	}
	var out bytes.Buffer
	putSize(&out, len(src))
	putSize(&out, len(dst))
	idx := newDeltaIndex(src)
	insertFrom := 0 // start of dst bytes not yet emitted
	var h uint64
	if len(dst) >= deltaBlock {
		h = blockHash(dst[:deltaBlock])
	}
	for i := 0; i+deltaBlock <= len(dst); {
		if m := mix(h); m&anchorMask == 0 {
			if c, ok := idx.find(m, src, dst[i:i+deltaBlock]); ok {
				// Extend the match forward, then backward over bytes
				// not yet emitted.
				n := deltaBlock + commonPrefix(src[c+deltaBlock:], dst[i+deltaBlock:])
				for i > insertFrom && c > 0 && src[c-1] == dst[i-1] {
					i, c, n = i-1, c-1, n+1
				}
				putInsert(&out, dst[insertFrom:i])
				putCopy(&out, c, n)
				i += n
				insertFrom = i
				if out.Len() > limit {
					return nil
				}
				if i+deltaBlock <= len(dst) {
					h = blockHash(dst[i : i+deltaBlock])
				}
				continue
			}
		}
		if out.Len()+i-insertFrom > limit || insertFrom == 0 && i > giveUpAfter && i > len(dst)/4 {
			// Over the limit, or a quarter of dst (at least 1 MiB)
			// without a single match: the contents are unrelated, and
			// the literal will do.
			return nil
		}
		if i+deltaBlock < len(dst) {
			h = rollHash(h, dst[i], dst[i+deltaBlock])
		}
		i++
	}
	putInsert(&out, dst[insertFrom:])
	if out.Len() > limit {
		return nil
	}
	return out.Bytes()
}

// Rolling polynomial hash of a block: sum of b[k] * hashBase^(15-k),
// modulo 2^64.
const hashBase = 0x100000001b3

// anchorMask selects the windows that are indexed and looked up: those
// whose mixed hash has these bits clear.
const anchorMask = 0xf

// hashTop is hashBase^15, the weight of a block's first byte.
var hashTop = func() uint64 {
	p := uint64(1)
	for range deltaBlock - 1 {
		p *= hashBase
	}
	return p
}()

func blockHash(b []byte) uint64 {
	var h uint64
	for _, c := range b {
		h = h*hashBase + uint64(c)
	}
	return h
}

// rollHash moves a block's hash one byte on: out leaves, in enters.
func rollHash(h uint64, out, in byte) uint64 {
	return (h-uint64(out)*hashTop)*hashBase + uint64(in)
}

// mix spreads a hash's bits, for anchors and table slots.
func mix(h uint64) uint64 {
	h ^= h >> 33
	h *= 0xff51afd7ed558ccd
	h ^= h >> 33
	return h
}

// deltaIndex maps the anchor windows of a source to their offsets, by
// mixed hash. An entry is the offset plus one (0: empty) in its low 32
// bits and the hash's high 32 bits, so that a lookup rarely touches the
// source in vain. Colliding windows overwrite each other: a lost entry
// costs only a missed match.
type deltaIndex struct {
	table []uint64
	mask  uint64
}

func newDeltaIndex(src []byte) *deltaIndex {
	size := 1 << 10
	for size < len(src)/(anchorMask+1) && size < maxDeltaIndex {
		size <<= 1
	}
	x := &deltaIndex{table: make([]uint64, size), mask: uint64(size - 1)}
	if len(src) < deltaBlock {
		return x
	}
	h := blockHash(src[:deltaBlock])
	for off := 0; ; off++ {
		if m := mix(h); m&anchorMask == 0 {
			x.table[(m>>4)&x.mask] = m&^0xffffffff | uint64(off+1)
		}
		if off+deltaBlock >= len(src) {
			return x
		}
		h = rollHash(h, src[off], src[off+deltaBlock])
	}
}

// find returns where block, whose mixed hash is m, occurs in src, if the
// index knows.
func (x *deltaIndex) find(m uint64, src, block []byte) (int, bool) {
	v := x.table[(m>>4)&x.mask]
	if v&0xffffffff == 0 || v>>32 != m>>32 {
		return 0, false
	}
	off := int(v&0xffffffff - 1)
	return off, bytes.Equal(src[off:off+deltaBlock], block)
}

func commonPrefix(a, b []byte) int {
	n := min(len(a), len(b))
	for i := range n {
		if a[i] != b[i] {
			return i
		}
	}
	return n
}

func putSize(out *bytes.Buffer, n int) {
	for n >= 0x80 {
		out.WriteByte(byte(n) | 0x80)
		n >>= 7
	}
	out.WriteByte(byte(n))
}

func putInsert(out *bytes.Buffer, b []byte) {
	for len(b) > 0 {
		n := min(len(b), maxInsert)
		out.WriteByte(byte(n))
		out.Write(b[:n])
		b = b[n:]
	}
}

func putCopy(out *bytes.Buffer, off, n int) {
	for n > 0 {
		size := min(n, maxCopy)
		var buf [8]byte
		cmd, k := byte(0x80), 1
		for i := range 4 {
			if b := byte(off >> (8 * i)); b != 0 {
				cmd |= 1 << i
				buf[k] = b
				k++
			}
		}
		for i := range 3 {
			if b := byte(size >> (8 * i)); b != 0 {
				cmd |= 0x10 << i
				buf[k] = b
				k++
			}
		}
		buf[0] = cmd
		out.Write(buf[:k])
		off += size
		n -= size
	}
}
