package store

import (
	"bytes"
	"math/rand/v2"
	"testing"
)

func TestDeltaRoundTrip(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 5))
	for i := 0; i < 2000; i++ {
		base := randBytes(r, r.IntN(5000))
		if i%2 == 0 {
			base = bytes.Repeat([]byte("abcdefgh"), r.IntN(600))
		}
		target := mutate(r, base)
		d := makeDelta(base, target)
		got, err := applyDelta(base, d)
		if err != nil || !bytes.Equal(got, target) {
			t.Fatalf("trial %d: %v", i, err)
		}
		// Through the stored form too.
		c, _ := compressDelta(target, base)
		got, err = decompressDelta(c, base, int64(len(target)))
		if err != nil || !bytes.Equal(got, target) {
			t.Fatalf("trial %d stored: %v", i, err)
		}
	}
}

// mutate makes a few random edits: replace, insert, delete, append.
func mutate(r *rand.Rand, b []byte) []byte {
	out := bytes.Clone(b)
	for k := r.IntN(5); k >= 0; k-- {
		pos := 0
		if len(out) > 0 {
			pos = r.IntN(len(out) + 1)
		}
		switch r.IntN(4) {
		case 0:
			if pos < len(out) {
				out[pos] ^= 0x55
			}
		case 1:
			ins := randBytes(r, r.IntN(40))
			out = append(out[:pos], append(ins, out[pos:]...)...)
		case 2:
			end := min(len(out), pos+r.IntN(60))
			out = append(out[:pos], out[end:]...)
		case 3:
			out = append(out, randBytes(r, r.IntN(100))...)
		}
	}
	return out
}

func TestDeltaSmallForEdits(t *testing.T) {
	r := rand.New(rand.NewPCG(6, 6))
	base := randBytes(r, 8000)
	target := bytes.Clone(base)
	copy(target[4000:], "an edit in the middle")
	target = append(target, "and an appended line\n"...)
	if d := makeDelta(base, target); len(d) > 120 {
		t.Fatalf("delta of a small edit is %d bytes", len(d))
	}
}

func TestApplyDeltaRejectsGarbage(t *testing.T) {
	base := []byte("0123456789abcdefghijklmnopqrstuvwxyz")
	for _, d := range [][]byte{
		{}, {36}, {35, 4, 1, 0, 4}, {36, 4, 1, 40, 4}, {36, 4, 1, 30, 10}, {36, 4, 0, 10, 'a'}, {36, 2, 7}, {36, 3, 0, 4, 'a', 'b', 'c', 'd'},
	} {
		if _, err := applyDelta(base, d); err == nil {
			t.Errorf("delta %v accepted", d)
		}
	}
}

func FuzzApplyDelta(f *testing.F) {
	f.Add([]byte("base content here"), []byte{17, 4, 1, 0, 4})
	f.Fuzz(func(t *testing.T, base, d []byte) {
		applyDelta(base, d) // must not panic
	})
}

func FuzzDeltaRoundTrip(f *testing.F) {
	f.Add([]byte("hello world, hello delta"), []byte("hello world! hello again, delta"))
	f.Fuzz(func(t *testing.T, base, target []byte) {
		got, err := applyDelta(base, makeDelta(base, target))
		if err != nil || !bytes.Equal(got, target) {
			t.Fatalf("round trip failed: %v", err)
		}
	})
}
