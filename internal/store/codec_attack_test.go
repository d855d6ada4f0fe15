package store

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"os"
	"testing"

	"github.com/klauspost/compress/zstd"
)

// Every zstd frame klauspost's encoder writes, with the store's options or
// any an earlier ckpt might have used, passes zstdBound and decodes to its
// input: a legitimate old row is never called corrupt.
func TestZstdBoundAcceptsEveryEncoderFrame(t *testing.T) {
	random := func(n int) []byte {
		b := make([]byte, n)
		r := rand.New(rand.NewPCG(uint64(n), 1))
		for i := range b {
			b[i] = byte(r.Uint32())
		}
		return b
	}
	const k128 = 128 << 10
	sizes := []int{0, 1, 63, 64, 65, 1000, k128 - 1, k128, k128 + 1, 3*k128 + 7}
	// The large inputs take ~20 s on two cores: CKPT_LONG_CODEC=1 adds them.
	long := os.Getenv("CKPT_LONG_CODEC") == "1"
	if long {
		sizes = append(sizes, 1<<20, 4<<20-1, 4<<20, 4<<20+1, 20<<20)
	}
	type input struct {
		name string
		data []byte
	}
	var inputs []input
	for _, n := range sizes {
		inputs = append(inputs,
			input{fmt.Sprintf("zero%d", n), make([]byte, n)},
			input{fmt.Sprintf("random%d", n), random(n)},
			input{fmt.Sprintf("text%d", n), sourceLike(uint64(n), n)})
	}
	// Half random, half zero: raw and RLE blocks in one frame.
	mixed := append(random(300<<10), make([]byte, 300<<10)...)
	if !long {
		mixed = append(random(130<<10), make([]byte, 260<<10)...)
	}
	inputs = append(inputs, input{"mixed", append(mixed, sourceLike(5, 300<<10)...)})

	store, _ := codecs()
	type encoder struct {
		name string
		enc  *zstd.Encoder
	}
	encs := []encoder{{"store", store}}
	opts := map[string][]zstd.EOption{
		"default":      nil,
		"fastest":      {zstd.WithEncoderLevel(zstd.SpeedFastest)},
		"fastest-low":  {zstd.WithEncoderLevel(zstd.SpeedFastest), zstd.WithEncoderConcurrency(1), zstd.WithLowerEncoderMem(true)},
		"better":       {zstd.WithEncoderLevel(zstd.SpeedBetterCompression)},
		"nocrc":        {zstd.WithEncoderCRC(false)},
		"single":       {zstd.WithSingleSegment(true)},
		"multi":        {zstd.WithSingleSegment(false)},
		"zeroframes":   {zstd.WithZeroFrames(true)},
		"allLit":       {zstd.WithAllLitEntropyCompression(true)},
		"noEntropy":    {zstd.WithNoEntropyCompression(true)},
		"window1k":     {zstd.WithWindowSize(1 << 10)},
		"window64k":    {zstd.WithWindowSize(64 << 10)},
		"window256k":   {zstd.WithWindowSize(256 << 10), zstd.WithEncoderLevel(zstd.SpeedFastest)},
		"window8m":     {zstd.WithWindowSize(8 << 20)},
		"nocrc-single": {zstd.WithEncoderCRC(false), zstd.WithSingleSegment(true), zstd.WithZeroFrames(true)},
	}
	if long {
		opts["best"] = []zstd.EOption{zstd.WithEncoderLevel(zstd.SpeedBestCompression)}
	}
	for name, o := range opts {
		e, err := zstd.NewWriter(nil, o...)
		if err != nil {
			t.Fatal(name, err)
		}
		defer e.Close()
		encs = append(encs, encoder{name, e})
	}
	check := func(ename, iname string, frame, want []byte) {
		t.Helper()
		if len(frame) == 0 {
			return // EncodeAll writes nothing for nothing (compress never stores it)
		}
		// The exact size, as blob and chunk rows record it, and none, as
		// for trees and deltas.
		for _, hint := range []int64{int64(len(want)), -1} {
			out, err := decompress(encZstd, frame, hint)
			if err != nil {
				t.Errorf("%s/%s (%d bytes, hint %d): %v", ename, iname, len(frame), hint, err)
				return
			}
			if !bytes.Equal(out, want) {
				t.Errorf("%s/%s: decoded %d bytes, want %d", ename, iname, len(out), len(want))
				return
			}
		}
	}
	for _, e := range encs {
		for _, in := range inputs {
			check(e.name, in.name+"/EncodeAll", e.enc.EncodeAll(in.data, nil), in.data)
		}
	}
	// The streaming writer, as one Write and as many small ones.
	for name, o := range opts {
		for _, in := range inputs {
			if len(in.data) > 1<<20 || !long && len(in.data) > k128+1 {
				continue
			}
			for _, step := range []int{len(in.data) + 1, 1000} {
				var buf bytes.Buffer
				w, err := zstd.NewWriter(&buf, o...)
				if err != nil {
					t.Fatal(err)
				}
				for i := 0; i < len(in.data); i += step {
					w.Write(in.data[i:min(i+step, len(in.data))])
				}
				if err := w.Close(); err != nil {
					t.Fatal(err)
				}
				check(name, fmt.Sprintf("%s/stream%d", in.name, step), buf.Bytes(), in.data)
			}
		}
	}
	// compress and compressFast round-trip every input.
	for _, in := range inputs {
		for _, fast := range []bool{false, true} {
			enc, c := compressOwned(in.data, fast)
			out, err := decompress(enc, c, int64(len(in.data)))
			if err != nil || !bytes.Equal(out, in.data) {
				t.Errorf("compressOwned(%s, fast=%v) enc %d: %v", in.name, fast, enc, err)
			}
		}
	}
}
