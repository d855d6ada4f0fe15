package object

import (
	"bytes"
	"strings"
	"testing"
	"time"
)

func TestTreeRoundTrip(t *testing.T) {
	tr := &Tree{Entries: []Entry{
		{Name: "a", Mode: ModeFile | 0o644, Size: 3, ID: Sum([]byte("a"))},
		{Name: "caf\xe9", Mode: ModeSymlink, Size: 5, ID: Sum([]byte("x"))},
		{Name: "dir", Mode: ModeDir, Size: 100, ID: Sum([]byte("d"))},
		{Name: "exe", Mode: ModeFile | 0o755, Size: 0, ID: Sum(nil)},
	}}
	got, err := DecodeTree(tr.Encode())
	if err != nil {
		t.Fatal(err)
	}
	if len(got.Entries) != 4 || got.Entries[1] != tr.Entries[1] {
		t.Fatalf("round trip: %+v", got.Entries)
	}
	if e, ok := got.Find("dir"); !ok || e.Mode != ModeDir {
		t.Fatal("Find")
	}
}

func TestDecodeTreeRejects(t *testing.T) {
	id := Sum(nil)
	enc := func(es ...Entry) []byte {
		var b []byte
		for _, e := range es {
			b = AppendEntry(b, e)
		}
		return b
	}
	for name, data := range map[string][]byte{
		"dot-dot":       enc(Entry{Name: "..", Mode: ModeFile | 0o644, ID: id}),
		"dot":           enc(Entry{Name: ".", Mode: ModeFile | 0o644, ID: id}),
		"empty name":    enc(Entry{Name: "", Mode: ModeFile | 0o644, ID: id}),
		"slash":         enc(Entry{Name: "a/b", Mode: ModeFile | 0o644, ID: id}),
		"unsorted":      enc(Entry{Name: "b", Mode: ModeFile | 0o644, ID: id}, Entry{Name: "a", Mode: ModeFile | 0o644, ID: id}),
		"duplicate":     enc(Entry{Name: "a", Mode: ModeFile | 0o644, ID: id}, Entry{Name: "a", Mode: ModeFile | 0o644, ID: id}),
		"bad mode":      enc(Entry{Name: "a", Mode: 0o160000, ID: id}),
		"setuid":        enc(Entry{Name: "a", Mode: ModeFile | 0o4755, ID: id}),
		"negative size": []byte("100644 -1 a\x00" + string(id[:])),
		"truncated":     enc(Entry{Name: "a", Mode: ModeFile | 0o644, ID: id})[:20],
	} {
		if _, err := DecodeTree(data); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}

func TestCheckpointRoundTrip(t *testing.T) {
	c := &Checkpoint{Tree: Sum([]byte("t")), Parents: []ID{Sum([]byte("p"))}, Time: time.Unix(1700000000, 123).UTC(),
		Kind: KindEdit, Branch: "main", Author: "agent \"x\"", Message: "multi\nline\xff",
		Paths: []string{"a/b", "caf\xe9"}, Meta: map[string]string{"k": "v", "z": "\x00"}}
	got, err := DecodeCheckpoint(c.Encode())
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got.Encode(), c.Encode()) || got.ID() != c.ID() {
		t.Fatalf("round trip differs:\n%s\n%s", got.Encode(), c.Encode())
	}
	for _, bad := range []string{
		"", "ckpt-checkpoint 2\n", strings.Replace(string(c.Encode()), "kind edit", "kind nope", 1),
		strings.Replace(string(c.Encode()), `path "a/b"`, `path "../x"`, 1),
		strings.Replace(string(c.Encode()), "tree ", "tree x", 1),
	} {
		if _, err := DecodeCheckpoint([]byte(bad)); err == nil {
			t.Errorf("accepted %q", bad)
		}
	}
}

func TestValidPath(t *testing.T) {
	for p, want := range map[string]bool{"a": true, "a/b": true, "caf\xe9/x": true, "": false, "/a": false, "a/": false,
		"a//b": false, "a/./b": false, "a/../b": false, "..": false, "a\x00b": false} {
		if ValidPath(p) != want {
			t.Errorf("ValidPath(%q) = %v", p, !want)
		}
	}
}

func FuzzDecodeTree(f *testing.F) {
	f.Add((&Tree{Entries: []Entry{{Name: "a", Mode: ModeFile | 0o644, ID: Sum(nil)}}}).Encode())
	f.Fuzz(func(t *testing.T, data []byte) {
		tr, err := DecodeTree(data)
		if err != nil {
			return
		}
		// What decodes re-encodes to the same bytes (the encoding is canonical).
		if !bytes.Equal(tr.Encode(), data) {
			t.Fatalf("non-canonical tree accepted")
		}
	})
}

func FuzzDecodeCheckpoint(f *testing.F) {
	f.Add((&Checkpoint{Tree: Sum(nil), Time: time.Unix(1, 0), Kind: KindManual, Paths: []string{"a"}}).Encode())
	f.Fuzz(func(t *testing.T, data []byte) {
		c, err := DecodeCheckpoint(data)
		if err != nil {
			return
		}
		if !bytes.Equal(c.Encode(), data) {
			t.Fatalf("non-canonical checkpoint accepted")
		}
		for _, p := range c.Paths {
			if !ValidPath(p) {
				t.Fatalf("invalid path %q accepted", p)
			}
		}
	})
}
