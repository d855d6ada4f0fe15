package session

import (
	"context"
	"fmt"
	"reflect"
	"sort"
	"testing"

	"github.com/seed1cedbf7c/ckpt/internal/object"
	"github.com/seed1cedbf7c/ckpt/internal/tree"
)

// objects is an in-memory object store for plans: trees and blobs by id.
type objects struct{ trees, blobs map[ID][]byte }

func newObjects() *objects { return &objects{trees: map[ID][]byte{}, blobs: map[ID][]byte{}} }

func (o *objects) readTree(ctx context.Context, id ID) (*object.Tree, error) {
	data, ok := o.trees[id]
	if !ok {
		return nil, fmt.Errorf("no tree %s", id.Short())
	}
	return object.DecodeTree(data)
}

// tree stores files (path → content) as a tree and returns its id.
func (o *objects) tree(t *testing.T, files map[string]string) ID {
	t.Helper()
	edits := map[string]*object.Entry{}
	for p, c := range files {
		id := object.Sum([]byte(c))
		o.blobs[id] = []byte(c)
		edits[p] = &object.Entry{Mode: object.ModeFile | 0o644, ID: id, Size: int64(len(c))}
	}
	put := func(id ID, data []byte) error { o.trees[id] = data; return nil }
	root, err := tree.Overlay(context.Background(), o.readTree, put, object.ID{}, edits)
	if err != nil {
		t.Fatal(err)
	}
	return root
}

func (o *objects) workspace(root ID) *Workspace {
	return &Workspace{Tree: root, ReadTree: o.readTree,
		ReadFile: func(ctx context.Context, e *object.Entry, p string) ([]byte, error) {
			b, ok := o.blobs[e.ID]
			if !ok {
				return nil, fmt.Errorf("no blob for %s", p)
			}
			return b, nil
		}}
}

// contents names what each planned path becomes ("<absent>" for a removal).
func contents(t *testing.T, kp *keepEditsPlan, o *objects) map[string]string {
	out := map[string]string{}
	for p, e := range kp.cur {
		switch {
		case e == nil:
			out[p] = "<absent>"
		case kp.blobs[e.ID] != nil:
			out[p] = string(kp.blobs[e.ID])
		default:
			out[p] = string(o.blobs[e.ID])
		}
	}
	return out
}

func keys(m map[string]bool) []string {
	out := []string{}
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// TestPlanKeepsUserEdits: the three-way plan takes back what the turn
// did, merges what both changed, and keeps the user's side of a conflict.
func TestPlanKeepsUserEdits(t *testing.T) {
	o := newObjects()
	begin := o.tree(t, map[string]string{"a.txt": "1\n2\n3\n", "b.txt": "x\n", "d.txt": "d\n"})
	end := o.tree(t, map[string]string{"a.txt": "1\n2\n3\nturn\n", "b.txt": "y\n", "c.txt": "new\n", "d.txt": "turn\n"})
	now := o.tree(t, map[string]string{"a.txt": "user\n1\n2\n3\nturn\n", "b.txt": "y\n", "c.txt": "new\n", "d.txt": "user\n", "u.txt": "mine\n"})
	v := &mergeView{ctx: context.Background(), ws: o.workspace(now), pending: map[ID][]byte{}}
	kp, err := v.plan([]span{{begin: begin, end: end}})
	if err != nil {
		t.Fatal(err)
	}
	got := contents(t, kp, o)
	want := map[string]string{"a.txt": "user\n1\n2\n3\n", "b.txt": "x\n", "c.txt": "<absent>"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("plan = %q, want %q", got, want)
	}
	if got, want := keys(kp.conflicts), []string{"d.txt"}; !reflect.DeepEqual(got, want) {
		t.Errorf("conflicts = %q, want %q", got, want)
	}
	if got, want := keys(kp.kept), []string{"a.txt", "d.txt"}; !reflect.DeepEqual(got, want) {
		t.Errorf("kept = %q, want %q", got, want)
	}
}

// TestPlanTwoTurnsNewestFirst: spans are undone newest first, each seeing
// the state the later ones left.
func TestPlanTwoTurnsNewestFirst(t *testing.T) {
	o := newObjects()
	t0 := o.tree(t, map[string]string{"a.txt": "0\n"})
	t1 := o.tree(t, map[string]string{"a.txt": "1\n"})
	t2 := o.tree(t, map[string]string{"a.txt": "2\n", "b.txt": "b\n"})
	v := &mergeView{ctx: context.Background(), ws: o.workspace(t2), pending: map[ID][]byte{}}
	kp, err := v.plan([]span{{begin: t1, end: t2}, {begin: t0, end: t1}})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := contents(t, kp, o), map[string]string{"a.txt": "0\n", "b.txt": "<absent>"}; !reflect.DeepEqual(got, want) {
		t.Errorf("plan = %q, want %q", got, want)
	}
	if len(kp.conflicts) != 0 || len(kp.kept) != 0 {
		t.Errorf("conflicts %v, kept %v, want none", kp.conflicts, kp.kept)
	}
}

func TestCoveringEdits(t *testing.T) {
	dir := &object.Entry{Name: "x", Mode: object.ModeDir}
	file := &object.Entry{Name: "y", Mode: object.ModeFile | 0o644}
	got := coveringEdits(map[string]*object.Entry{"a": dir, "a/b": file, "c": nil, "c/d": file, "e/f": file})
	if len(got) != 4 || got["a"] == nil || got["a"].Name != "a" || got["e/f"].Name != "f" || got["c"] != nil || got["c/d"] == nil {
		t.Errorf("coveringEdits = %v, want a (named a), c removed, c/d, e/f (named f)", got)
	}
	if _, ok := got["a/b"]; ok {
		t.Error("a/b is covered by a, yet edited")
	}
	if file.Name != "y" {
		t.Error("coveringEdits changed its input's entries")
	}
}

func TestMerge3(t *testing.T) {
	blobs := map[ID][]byte{}
	ent := func(s string, mode uint32) *object.Entry {
		id := object.Sum([]byte(s))
		blobs[id] = []byte(s)
		return &object.Entry{Mode: mode, ID: id}
	}
	read := func(e *object.Entry, p string) ([]byte, error) { return blobs[e.ID], nil }
	const f = object.ModeFile | 0o644
	for _, tc := range []struct {
		name              string
		base, ours, their *object.Entry
		want              string
		ok                bool
	}{
		{"disjoint", ent("1\n2\n3\n4\n", f), ent("u\n1\n2\n3\n4\n", f), ent("1\n2\n3\n", f), "u\n1\n2\n3\n", true},
		{"conflict", ent("a\n", f), ent("b\n", f), ent("c\n", f), "", false},
		{"binary", ent("a\x00\n", f), ent("b\x00\n", f), ent("a\x00\n", f), "", false},
		{"deleted", ent("a\n", f), nil, ent("b\n", f), "", false},
		{"symlink", ent("a", object.ModeSymlink), ent("b", object.ModeSymlink), ent("c", object.ModeSymlink), "", false},
	} {
		got, ok, err := merge3("p", tc.base, tc.ours, tc.their, read)
		if err != nil || ok != tc.ok || string(got) != tc.want {
			t.Errorf("%s: merge3 = %q, %v, %v; want %q, %v", tc.name, got, ok, err, tc.want, tc.ok)
		}
	}
}
