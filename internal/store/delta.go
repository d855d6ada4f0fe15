package store

import (
	"encoding/binary"
	"errors"
	"fmt"
)

// A delta encodes a target as instructions against a base, the way git's
// pack deltas do:
//
//	varint(len(base)) varint(len(target)) op*
//	op: 0 varint(n) <n literal bytes>     insert
//	    1 varint(offset) varint(n)        copy n bytes of base from offset
//
// makeDelta finds copies by indexing the base's 16-byte blocks (at 16-byte
// steps) and extending every verified match both ways; the literals are
// what zstd then compresses. Memory: one index entry per 16 bytes of base.

const deltaBlock = 16

// makeDelta returns a delta from base to target.
func makeDelta(base, target []byte) []byte {
	out := binary.AppendUvarint(nil, uint64(len(base)))
	out = binary.AppendUvarint(out, uint64(len(target)))
	if len(base) < deltaBlock || len(target) < deltaBlock {
		return appendInsert(out, target)
	}
	index := make(map[uint64]int32, len(base)/deltaBlock)
	for off := 0; off+deltaBlock <= len(base); off += deltaBlock {
		h := blockHash(base[off:])
		if _, dup := index[h]; !dup {
			index[h] = int32(off)
		}
	}
	lit := 0 // start of pending literal bytes
	for i := 0; i+deltaBlock <= len(target); {
		off, ok := index[blockHash(target[i:])]
		if !ok || !equal16(base[off:], target[i:]) {
			i++
			continue
		}
		// Extend the match backwards into pending literals, then forwards.
		start, bstart := i, int(off)
		for start > lit && bstart > 0 && target[start-1] == base[bstart-1] {
			start--
			bstart--
		}
		end, bend := i+deltaBlock, int(off)+deltaBlock
		for end < len(target) && bend < len(base) && target[end] == base[bend] {
			end++
			bend++
		}
		if start > lit {
			out = appendInsert(out, target[lit:start])
		}
		out = append(out, 1)
		out = binary.AppendUvarint(out, uint64(bstart))
		out = binary.AppendUvarint(out, uint64(end-start))
		i, lit = end, end
	}
	if lit < len(target) {
		out = appendInsert(out, target[lit:])
	}
	return out
}

func appendInsert(out, b []byte) []byte {
	out = append(out, 0)
	out = binary.AppendUvarint(out, uint64(len(b)))
	return append(out, b...)
}

func blockHash(b []byte) uint64 {
	x := binary.LittleEndian.Uint64(b)
	y := binary.LittleEndian.Uint64(b[8:])
	h := x*0x9e3779b97f4a7c15 ^ y*0xc2b2ae3d27d4eb4f
	return h ^ h>>29
}

func equal16(a, b []byte) bool {
	return binary.LittleEndian.Uint64(a) == binary.LittleEndian.Uint64(b) &&
		binary.LittleEndian.Uint64(a[8:]) == binary.LittleEndian.Uint64(b[8:])
}

var errDelta = errors.New("malformed delta")

// applyDelta rebuilds the target from base and a delta, checking every
// offset and length.
func applyDelta(base, delta []byte) ([]byte, error) {
	p := 0
	uv := func() (uint64, error) {
		v, n := binary.Uvarint(delta[p:])
		if n <= 0 {
			return 0, errDelta
		}
		p += n
		return v, nil
	}
	blen, err := uv()
	if err != nil {
		return nil, err
	}
	if blen != uint64(len(base)) {
		return nil, fmt.Errorf("%w: base is %d bytes, delta expects %d", errDelta, len(base), blen)
	}
	tlen, err := uv()
	if err != nil || tlen > 1<<34 {
		return nil, errDelta
	}
	// Never trust a stored length for an allocation: grow as data arrives.
	out := make([]byte, 0, min(tlen, 4<<20))
	for p < len(delta) {
		op := delta[p]
		p++
		switch op {
		case 0:
			n, err := uv()
			if err != nil || n > uint64(len(delta)-p) {
				return nil, errDelta
			}
			out = append(out, delta[p:p+int(n)]...)
			p += int(n)
		case 1:
			off, err := uv()
			if err != nil {
				return nil, err
			}
			n, err := uv()
			if err != nil || off > uint64(len(base)) || n > uint64(len(base))-off {
				return nil, errDelta
			}
			out = append(out, base[off:off+n]...)
		default:
			return nil, errDelta
		}
		if uint64(len(out)) > tlen {
			return nil, errDelta
		}
	}
	if uint64(len(out)) != tlen {
		return nil, errDelta
	}
	return out, nil
}
