package tree

import (
	"context"
	"fmt"
	"math/rand/v2"
	"sort"
	"strings"
	"testing"

	"github.com/seed1cedbf7c/ckpt/internal/object"
)

// mem is an in-memory tree store.
type mem map[object.ID][]byte

func (m mem) load(ctx context.Context, id object.ID) (*object.Tree, error) {
	d, ok := m[id]
	if !ok {
		return nil, fmt.Errorf("no tree %s", id)
	}
	return object.DecodeTree(d)
}

func (m mem) put(id object.ID, data []byte) error { m[id] = data; return nil }

// build makes a tree from flat path -> content.
func (m mem) build(files map[string]string) object.ID {
	edits := map[string]*object.Entry{}
	for p, c := range files {
		edits[p] = &object.Entry{Mode: object.ModeFile | 0o644, Size: int64(len(c)), ID: object.Sum([]byte(c))}
	}
	id, err := Overlay(context.Background(), m.load, m.put, object.EmptyTree, edits)
	if err != nil {
		panic(err)
	}
	return id
}

func (m mem) flat(root object.ID) map[string]object.ID {
	out := map[string]object.ID{}
	Walk(context.Background(), m.load, root, nil, func(p string, e object.Entry) error {
		out[p] = e.ID
		return nil
	})
	return out
}

func randFiles(r *rand.Rand) map[string]string {
	names := []string{"a", "b", "c", "d.txt", "e.go"}
	files := map[string]string{}
	for i := 0; i < 30; i++ {
		depth := 1 + r.IntN(3)
		var parts []string
		for j := 0; j < depth; j++ {
			parts = append(parts, names[r.IntN(len(names))])
		}
		p := strings.Join(parts, "/")
		ok := true
		for q := range files {
			if strings.HasPrefix(q, p+"/") || strings.HasPrefix(p, q+"/") {
				ok = false
			}
		}
		if ok {
			files[p] = fmt.Sprint(r.IntN(3))
		}
	}
	return files
}

// Diff against a brute-force comparison of the flattened trees.
func TestDiffMatchesFlatComparison(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 1))
	for i := 0; i < 300; i++ {
		m := mem{}
		fa, fb := randFiles(r), randFiles(r)
		a, b := m.build(fa), m.build(fb)
		var got []string
		err := Diff(context.Background(), m.load, a, b, nil, func(c Change) error {
			got = append(got, c.Path)
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		var want []string
		for p, c := range fa {
			if fb[p] != c {
				want = append(want, p)
			}
		}
		for p := range fb {
			if _, ok := fa[p]; !ok {
				want = append(want, p)
			}
		}
		sort.Strings(got)
		sort.Strings(want)
		if strings.Join(got, ",") != strings.Join(want, ",") {
			t.Fatalf("trial %d: diff %v, want %v", i, got, want)
		}
	}
}

func TestOverlay(t *testing.T) {
	r := rand.New(rand.NewPCG(2, 2))
	for i := 0; i < 300; i++ {
		m := mem{}
		base := randFiles(r)
		root := m.build(base)
		other := randFiles(r)
		oroot := m.build(other)
		// Overlay some paths of other onto base.
		var paths []string
		for p := range other {
			if r.IntN(2) == 0 {
				paths = append(paths, strings.Split(p, "/")[0])
			}
		}
		paths = append(paths, "nonexistent")
		edits := map[string]*object.Entry{}
		for _, p := range paths {
			e, ok, err := Lookup(context.Background(), m.load, oroot, p)
			if err != nil {
				t.Fatal(err)
			}
			if ok {
				e := e
				edits[p] = &e
			} else {
				edits[p] = nil
			}
		}
		got, err := Overlay(context.Background(), m.load, m.put, root, edits)
		if err != nil {
			t.Fatal(err)
		}
		f := NewFilter(paths)
		want := map[string]string{}
		for p, c := range base {
			if !f.Match(p) {
				want[p] = c
			}
		}
		for p, c := range other {
			if f.Match(p) {
				want[p] = c
			}
		}
		if wid := m.build(want); wid != got {
			t.Fatalf("trial %d: overlay of %v gives %v, want %v", i, paths, m.flat(got), m.flat(wid))
		}
	}
}

// A directory that became a file: the file's edit and the removals of the
// directory's old entries together give the file (in either order of the
// edits' paths), as a restore's outcome lists them.
func TestOverlayDirectoryToFile(t *testing.T) {
	m := mem{}
	root := m.build(map[string]string{"f/inner": "in", "f/sub/deep": "deep", "g": "g"})
	file := m.build(map[string]string{"f": "now a file"})
	e, _, err := Lookup(context.Background(), m.load, file, "f")
	if err != nil {
		t.Fatal(err)
	}
	for _, edits := range []map[string]*object.Entry{
		{"f": &e, "f/inner": nil, "f/sub/deep": nil},
		{"f": nil, "f/inner": nil},
	} {
		got, err := Overlay(context.Background(), m.load, m.put, root, edits)
		if err != nil {
			t.Fatal(err)
		}
		want := map[string]string{"g": "g"}
		if edits["f"] != nil {
			want["f"] = "now a file"
		}
		if wid := m.build(want); wid != got {
			t.Fatalf("overlay %v gives %v, want %v", edits, m.flat(got), m.flat(wid))
		}
	}
}

func TestFilter(t *testing.T) {
	f := NewFilter([]string{"a/b", "c"})
	for p, want := range map[string]bool{"a/b": true, "a/b/x": true, "a/bc": false, "c": true, "c/d/e": true, "a": false, "b": false} {
		if f.Match(p) != want {
			t.Errorf("Match(%q) = %v", p, !want)
		}
	}
	for d, want := range map[string]bool{"a": true, "a/b": true, "a/c": false, "c/x": true, "x": false} {
		if f.Descend(d) != want {
			t.Errorf("Descend(%q) = %v", d, !want)
		}
	}
	var nf *Filter
	if !nf.Match("anything") || !nf.Descend("x") {
		t.Error("nil filter must match everything")
	}
}
