package remote

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/seed1cedbf7c/ckpt/internal/object"
)

// A remote is storage someone else controls: every decoder of what it
// holds must refuse garbage with an error, never panic or allocate what
// the bytes claim.

// FuzzDecodeCache: the local index cache, damaged in any way, is either
// refused (the indexes are read again) or holds only entries inside their
// packs.
func FuzzDecodeCache(f *testing.F) {
	var b bytes.Buffer
	b.Write([]byte{1})
	b.Write(bytes.Repeat([]byte{0xab}, 32))
	b.Write([]byte{100, 1, 'b'})
	b.Write(bytes.Repeat([]byte{0xcd}, 32))
	b.Write([]byte{0, 10, 9, 0})
	f.Add(b.Bytes())
	f.Add([]byte{})
	f.Add([]byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x7f})
	f.Fuzz(func(t *testing.T, data []byte) {
		out, ok := decodeCache(data)
		if !ok {
			return
		}
		for name, ix := range out {
			if ix.Pack != name || !validName(name) || !ix.valid() {
				t.Fatalf("accepted a damaged index for %s: %+v", name, ix)
			}
		}
	})
}

// FuzzReadIndex: an index file of any content is an index whose entries
// lie inside its pack, or a CorruptError.
func FuzzReadIndex(f *testing.F) {
	name := "ab" + string(bytes.Repeat([]byte("0"), 62))
	good, _ := json.Marshal(indexFile{Version: 1, Pack: name, Size: 100, Objects: []indexEntry{{Kind: "b", Off: 0, N: 10, Size: 9}}})
	f.Add(good)
	f.Add([]byte(`{"v":1,"pack":"` + name + `","size":10,"objects":[{"k":"b","o":1125899906842624,"n":1,"u":1}]}`))
	f.Add([]byte("not zstd"))
	dir := f.TempDir()
	r := fuzzRemoteIn(f, dir)
	ctx := context.Background()
	f.Fuzz(func(t *testing.T, data []byte) {
		stored := data
		if json.Valid(data) {
			stored = r.encode(data) // reach the JSON checks as well
		}
		p := filepath.Join(dir, "index", name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, stored, 0o644); err != nil {
			t.Fatal(err)
		}
		ix, err := r.readIndex(ctx, name)
		if err != nil {
			var ce *CorruptError
			if !errors.As(err, &ce) {
				t.Fatalf("a damaged index gave %T %v, want a CorruptError", err, err)
			}
			return
		}
		if ix.Pack != name || !ix.valid() {
			t.Fatalf("accepted %+v", ix)
		}
	})
}

// FuzzDecodeObject: stored bytes of any content give the object whose
// hash and size the index names, or a CorruptError.
func FuzzDecodeObject(f *testing.F) {
	r := fuzzRemote(f)
	content := []byte("hello\n")
	f.Add(r.encode(append([]byte{KindBlob}, content...)), int64(len(content)))
	f.Add([]byte("garbage"), int64(3))
	f.Add(r.encode(bytes.Repeat([]byte{KindBlob}, 1<<16)), int64(1))
	f.Fuzz(func(t *testing.T, stored []byte, size int64) {
		if size < 0 || size > 1<<20 {
			return
		}
		k := ObjKey{Kind: KindBlob, ID: object.Sum(content)}
		got, err := r.decodeObject("packs/x", k, stored, size)
		if err != nil {
			var ce *CorruptError
			if !errors.As(err, &ce) {
				t.Fatalf("gave %T %v, want a CorruptError", err, err)
			}
			return
		}
		if !bytes.Equal(got, content) {
			t.Fatalf("decoded %q, which does not match its id", got)
		}
	})
}

// FuzzDecodeRef: a ref object of any content is a ref or a CorruptError.
func FuzzDecodeRef(f *testing.F) {
	r := fuzzRemote(f)
	f.Add([]byte(`{"name":"branches/main","id":"` + object.Sum(nil).String() + `"}`))
	f.Add([]byte(`{"name":"","symbolic":"x"}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		ref, err := r.decodeRef("refs/x", data)
		if err != nil {
			var ce *CorruptError
			if !errors.As(err, &ce) {
				t.Fatalf("gave %T %v, want a CorruptError", err, err)
			}
			return
		}
		if ref.Name == "" || (ref.ID.IsZero() && ref.Symbolic == "") {
			t.Fatalf("accepted %+v", ref)
		}
	})
}

// fuzzRemote is a plain remote in a directory.
func fuzzRemote(f *testing.F) *Remote { return fuzzRemoteIn(f, f.TempDir()) }

func fuzzRemoteIn(f *testing.F, dir string) *Remote {
	be, err := NewFile(dir)
	if err != nil {
		f.Fatal(err)
	}
	r, err := Open(context.Background(), be, Options{Create: true})
	if err != nil {
		f.Fatal(err)
	}
	return r
}
