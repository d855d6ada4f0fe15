package scan

import (
	"bytes"
	"math/rand/v2"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/seed1cedbf7c/ckpt/internal/object"
)

// A cache in memory written with WriteFile loads back with the same
// header, and the same blocks, trees, devices, counts, flags and sizes.
func TestMemCacheWriteFileRoundTrip(t *testing.T) {
	for seed := range 50 {
		rng := rand.New(rand.NewPCG(uint64(seed), 1))
		inst := string(bytes.Repeat([]byte{'i'}, rng.IntN(40)))
		watch := string(bytes.Repeat([]byte{'w'}, rng.IntN(40)))
		cw, err := NewCacheWriterSeq("", rng.Int64(), rng.Int64(), rng.Int64(), inst, watch)
		if err != nil {
			t.Fatal(err)
		}
		ndirs := rng.IntN(30)
		for i := range ndirs {
			dir := ""
			if i > 0 {
				dir = "d" + strconv.Itoa(i) + string([]byte{0xff, byte(rng.IntN(256))})
			}
			var es []cachedEntry
			for j := range rng.IntN(6) {
				e := cachedEntry{name: "n" + strconv.Itoa(j), mode: object.ModeFile | 0o644, size: rng.Int64N(1 << 40),
					mtime: rng.Int64(), ctime: rng.Int64(), ino: rng.Uint64()}
				if rng.IntN(3) == 0 {
					e.mode = object.ModeDir
					e.id = object.Sum([]byte(e.name + dir))
				}
				es = append(es, e)
			}
			cw.Block(dir, object.Sum([]byte(dir)), rng.Uint64(), es, uint8(rng.IntN(256)), rng.Int64())
		}
		if err := cw.Commit(); err != nil {
			t.Fatal(err)
		}
		mc, err := cw.Cache()
		if err != nil {
			t.Fatal(err)
		}
		if err := mc.SetSeq(rng.Int64()); err != nil {
			t.Fatal(err)
		}
		p := filepath.Join(t.TempDir(), "c")
		if err := mc.WriteFile(p); err != nil {
			t.Fatal(err)
		}
		fc, err := LoadCache(p)
		if err != nil || fc == nil {
			t.Fatalf("seed %d: load: %v", seed, err)
		}
		if fc.Clock != mc.Clock || fc.Generation != mc.Generation || fc.Seq != mc.Seq || fc.Instance != mc.Instance || fc.Watch != mc.Watch {
			t.Fatalf("seed %d: header differs", seed)
		}
		if fc.Size() != mc.Size() || fc.Dirs() != mc.Dirs() || fc.Dirs() != ndirs {
			t.Fatalf("seed %d: size %d/%d dirs %d/%d/%d", seed, fc.Size(), mc.Size(), fc.Dirs(), mc.Dirs(), ndirs)
		}
		for d, m := range mc.dirs {
			f, ok := fc.dirs[d]
			if !ok {
				t.Fatalf("seed %d: %q missing", seed, d)
			}
			if f.tree != m.tree || f.dev != m.dev || f.count != m.count || f.flags != m.flags || f.size != m.size || f.length != m.length {
				t.Fatalf("seed %d: %q: ref %+v, want %+v", seed, d, f, m)
			}
			fb, _, _ := fc.blockBytes(d)
			if !bytes.Equal(fb, m.raw) {
				t.Fatalf("seed %d: %q: block bytes differ", seed, d)
			}
			ft, fe, ok1 := fc.block(d)
			mt, me, ok2 := mc.block(d)
			if !ok1 || !ok2 || ft != mt || len(fe) != len(me) {
				t.Fatalf("seed %d: %q: block decodes %v %v", seed, d, ok1, ok2)
			}
			for i := range fe {
				if fe[i] != me[i] {
					t.Fatalf("seed %d: %q: entry %d differs", seed, d, i)
				}
			}
		}
		fc.Close()
	}
}

// A writer in memory used again after its cache was taken fails, and
// does not panic (it has no file to write).
func TestMemWriterUsedAfterCache(t *testing.T) {
	cw, err := NewCacheWriter("", 1, 1, "i", "")
	if err != nil {
		t.Fatal(err)
	}
	cw.Block("", object.Sum(nil), 1, nil, 0, 0)
	if err := cw.Commit(); err != nil {
		t.Fatal(err)
	}
	if _, err := cw.Cache(); err != nil {
		t.Fatal(err)
	}
	if err := cw.Commit(); err == nil {
		t.Error("Commit after Cache: no error")
	}
	if _, err := cw.Cache(); err == nil {
		t.Error("Cache twice: no error")
	}
	cw.Block("x", object.Sum(nil), 1, nil, 0, 0) // ignored
	cw.Abort()
}
