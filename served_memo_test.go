package ckpt

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/seed1cedbf7c/ckpt/internal/failpoint"
	"github.com/seed1cedbf7c/ckpt/internal/object"
)

// A watcher's saves keep the trees their scans store, decoded, for the
// listing of what changed and the next saves' reads. Those trees join the
// memo only once the save commits: after a save whose transaction failed,
// the memo holds none of its trees (they are in no store), and a load of
// one goes to the store.
func TestBuiltTreesJoinTheMemoOnCommit(t *testing.T) {
	ctx := context.Background()
	r, ws := openTest(t, map[string]string{"a/b/c.txt": "one\n", "a/d.txt": "two\n", "e.txt": "three\n"})
	if _, err := r.Save(ctx, SaveOptions{}); err != nil {
		t.Fatal(err)
	}
	r.trees = &treeMemo{m: map[object.ID]*object.Tree{}}
	if err := os.WriteFile(filepath.Join(ws, "a/b/c.txt"), []byte("changed\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	injected := errors.New("injected")
	disarm := failpoint.Set("store/before-commit", func(string) error { return injected })
	_, err := r.Save(ctx, SaveOptions{})
	disarm()
	if !errors.Is(err, injected) {
		t.Fatalf("save with a failing commit: %v", err)
	}
	if r.trees.built != nil {
		t.Fatal("the memo still keeps trees for a save that failed")
	}
	for id := range r.trees.m { // read from the store, not built
		if ok, err := r.st.HasTree(ctx, id); err != nil || !ok {
			t.Fatalf("after a failed save the memo holds tree %s, which is in no store", id)
		}
	}
	res, err := r.Save(ctx, SaveOptions{})
	if err != nil || !res.Created {
		t.Fatalf("save: %v, %+v", err, res)
	}
	root := res.Checkpoint.Tree
	got, ok := r.trees.m[root]
	if !ok {
		t.Fatalf("the committed save's root tree %s is not in the memo (%d trees)", root, len(r.trees.m))
	}
	stored, err := r.st.ReadTree(ctx, root)
	if err != nil {
		t.Fatal(err)
	}
	if object.Sum(got.Encode()) != root || object.Sum(stored.Encode()) != root {
		t.Fatalf("the memo's root tree is not the stored one")
	}
	for _, dir := range []string{"a", "a/b"} {
		e, ok := findPath(t, r, root, dir)
		if !ok {
			t.Fatalf("%s not in the tree", dir)
		}
		if _, ok := r.trees.m[e]; !ok {
			t.Errorf("the tree of %s, stored by the save, is not in the memo", dir)
		}
	}
	if r.trees.built != nil {
		t.Fatal("the memo still keeps trees for a save that ended")
	}
}

// findPath returns the id of the entry at rel below tree root.
func findPath(t *testing.T, r *Repo, root object.ID, rel string) (object.ID, bool) {
	t.Helper()
	id := root
	for name := range strings.SplitSeq(rel, "/") {
		tr, err := r.st.ReadTree(context.Background(), id)
		if err != nil {
			t.Fatal(err)
		}
		e, ok := tr.Find(name)
		if !ok {
			return object.ID{}, false
		}
		id = e.ID
	}
	return id, true
}
