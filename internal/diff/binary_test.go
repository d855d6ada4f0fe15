package diff

import (
	"bytes"
	"math/rand/v2"
	"runtime"
	"strings"
	"testing"
)

func TestBase85RoundTrip(t *testing.T) {
	r := rand.New(rand.NewPCG(85, 85))
	for n := range 60 {
		data := make([]byte, n)
		for i := range data {
			data[i] = byte(r.IntN(256))
		}
		enc := encode85(nil, data)
		if len(enc) != (n+3)/4*5 {
			t.Fatalf("%d bytes encode to %d characters", n, len(enc))
		}
		got, err := decode85(nil, string(enc), n)
		if err != nil || !bytes.Equal(got, data) {
			t.Fatalf("round trip of %x: got %x, %v", data, got, err)
		}
	}
	// git's encoding of 0xffffffff is the largest valid group.
	if got, err := decode85(nil, string(encode85(nil, []byte{0xff, 0xff, 0xff, 0xff})), 4); err != nil || !bytes.Equal(got, []byte{0xff, 0xff, 0xff, 0xff}) {
		t.Errorf("0xffffffff: got %x, %v", got, err)
	}
}

// editBytes returns data with a few random insertions, deletions and
// replacements.
func editBytes(r *rand.Rand, data []byte) []byte {
	out := bytes.Clone(data)
	for range 1 + r.IntN(6) {
		i := r.IntN(len(out) + 1)
		n := r.IntN(200)
		switch r.IntN(3) {
		case 0:
			ins := make([]byte, n)
			for k := range ins {
				ins[k] = byte(r.IntN(256))
			}
			out = append(out[:i], append(ins, out[i:]...)...)
		case 1:
			out = append(out[:i], out[min(i+n, len(out)):]...)
		default:
			for k := i; k < min(i+n, len(out)); k++ {
				out[k] ^= 0x5a
			}
		}
	}
	return out
}

// makeDelta's deltas apply back to what they describe, for random pairs
// and edge cases.
func TestMakeDelta(t *testing.T) {
	r := rand.New(rand.NewPCG(4, 2))
	cases := [][2][]byte{
		{[]byte("a"), []byte("b")},
		{[]byte(strings.Repeat("x", 100)), []byte(strings.Repeat("x", 100000))},
		{[]byte(strings.Repeat("ab", 50000)), []byte(strings.Repeat("ba", 50000))},
		{[]byte(bigBinary(1, 70000)), []byte(bigBinary(1, 70000))[:69999]},
	}
	for range 200 {
		src := []byte(bigBinary(r.Uint64(), r.IntN(5000)+1))
		cases = append(cases, [2][]byte{src, editBytes(r, src)})
	}
	for i, c := range cases {
		d := makeDelta(c[0], c[1], 1<<30)
		if d == nil {
			if len(c[1]) > 0 {
				t.Fatalf("case %d: no delta", i)
			}
			continue
		}
		got, err := applyDelta(c[0], d)
		if err != nil || !bytes.Equal(got, c[1]) {
			t.Fatalf("case %d: the delta gives %d bytes (%v), want %d", i, len(got), err, len(c[1]))
		}
	}
	if d := makeDelta([]byte(bigBinary(2, 10000)), []byte(bigBinary(3, 10000)), 100); d != nil {
		t.Errorf("unrelated contents: got a %d-byte delta over the limit of 100", len(d))
	}
}

// A small change to a large binary file makes a small diff: both hunks
// are deltas.
func TestBinaryDeltaIsSmall(t *testing.T) {
	big := bigBinary(7, 1<<20)
	c := Change{Path: "big.bin", Old: reg(big), New: reg(big[:500000] + "a small insertion" + big[500010:])}
	var buf bytes.Buffer
	if err := WriteChange(&buf, c); err != nil {
		t.Fatal(err)
	}
	if buf.Len() > 4096 || strings.Count(buf.String(), "\ndelta ") != 2 {
		t.Fatalf("got a %d-byte diff:\n%.2000s", buf.Len(), buf.Bytes())
	}
	p, err := Parse(buf.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	checkApply(t, p, tree{"big.bin": c.Old}, tree{"big.bin": c.New})
}

func FuzzMakeDelta(f *testing.F) {
	f.Add([]byte(strings.Repeat("0123456789abcdef", 8)), []byte("inserted"), uint16(20), uint16(3))
	f.Add([]byte(bigBinary(5, 3000)), []byte{}, uint16(1500), uint16(100))
	f.Add([]byte("short"), []byte("x"), uint16(0), uint16(0))
	f.Fuzz(func(t *testing.T, src, ins []byte, at, cut uint16) {
		i := min(int(at), len(src))
		j := min(i+int(cut), len(src))
		dst := append(append(bytes.Clone(src[:i]), ins...), src[j:]...)
		d := makeDelta(src, dst, 1<<30)
		if d == nil {
			if len(src) > 0 {
				t.Fatal("no delta under a generous limit")
			}
			return
		}
		got, err := applyDelta(src, d)
		if err != nil || !bytes.Equal(got, dst) {
			t.Fatalf("delta gives %q, %v, want %q", got, err, dst)
		}
	})
}

func FuzzApplyDelta(f *testing.F) {
	f.Add([]byte("abc"), []byte{3, 4, 0x91, 1, 2, 1, 'x'})
	f.Add([]byte(""), []byte{0, 1, 1, 'a'})
	f.Fuzz(func(t *testing.T, src, delta []byte) {
		out, err := applyDelta(src, delta)
		if err == nil && len(out) > 1<<24 {
			t.Fatalf("%d-byte result from a %d-byte delta", len(out), len(delta))
		}
	})
}

// A delta that states a huge result but carries little makes applyDelta
// allocate little before it fails.
func TestApplyDeltaHugeHeader(t *testing.T) {
	var d bytes.Buffer
	putSize(&d, 3)
	putSize(&d, 1<<39)
	d.Write([]byte{0x91, 0, 3}) // copy 3 bytes from offset 0
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	_, err := applyDelta([]byte("abc"), d.Bytes())
	runtime.ReadMemStats(&after)
	if err == nil {
		t.Fatal("got no error")
	}
	if n := after.TotalAlloc - before.TotalAlloc; n > 1<<20 {
		t.Errorf("allocated %d bytes for a %d-byte delta", n, d.Len())
	}
}
