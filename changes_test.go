package ckpt

import (
	"context"
	"fmt"
	"testing"

	"github.com/seed1cedbf7c/ckpt/internal/object"
	"github.com/seed1cedbf7c/ckpt/internal/store"
)

// A watcher's reply is a message: changes it carries are remembered only
// when well formed and for the checkpoint's parent; anything else is
// dropped (a diff then finds the turn's files).
func TestServedChangesValidated(t *testing.T) {
	r, _ := openTest(t, map[string]string{"a.txt": "a"})
	parent, id := object.Sum([]byte("p")), object.Sum([]byte("c"))
	rec := &store.Record{Checkpoint: &object.Checkpoint{Parents: []object.ID{parent}}, ID: id}
	ok := []servedChange{{Path: []byte("a.txt"), Status: "modified"}, {Path: []byte("b/c"), Status: "added"}}
	for name, rep := range map[string]servedReply{
		"another parent":   {Parent: object.Sum([]byte("x")).String(), Changes: ok},
		"no parent":        {Changes: ok},
		"unknown status":   {Parent: parent.String(), Changes: []servedChange{{Path: []byte("a.txt"), Status: "renamed"}}},
		"escaping path":    {Parent: parent.String(), Changes: []servedChange{{Path: []byte("../x"), Status: "added"}}},
		"absolute path":    {Parent: parent.String(), Changes: []servedChange{{Path: []byte("/etc/passwd"), Status: "added"}}},
		"unsorted":         {Parent: parent.String(), Changes: []servedChange{ok[1], ok[0]}},
		"twice":            {Parent: parent.String(), Changes: []servedChange{ok[0], ok[0]}},
		"too many changes": {Parent: parent.String(), Changes: make([]servedChange, maxSavedChanges+1)},
	} {
		r.saved = nil
		r.takeServedChanges(rec, rep)
		if _, got := r.lastChanges(parent, id); got {
			t.Errorf("%s: remembered", name)
		}
	}
	r.takeServedChanges(rec, servedReply{Parent: parent.String(), Changes: ok})
	files, got := r.lastChanges(parent, id)
	if !got || len(files) != 2 || files[1].Path != "b/c" || files[1].Status != "added" {
		t.Fatalf("a well-formed reply: %v %v", files, got)
	}
	if _, got := r.lastChanges(id, parent); got {
		t.Fatal("remembered for other checkpoints")
	}
}

// checkRememberedChanges checks that what the Repo remembers the save of
// cp changed (from the watcher's reply, or from its own save) is what a
// diff of cp against its parent finds, and that a session's turn takes
// it; it reports whether anything was remembered.
func checkRememberedChanges(t *testing.T, r *Repo, cp *Checkpoint, log []string) bool {
	t.Helper()
	ctx := context.Background()
	parent := cp.Parents[0]
	got, ok := r.lastChanges(parent, cp.ID)
	if !ok {
		return false
	}
	d, err := r.Diff(ctx, DiffOptions{From: parent.String(), To: cp.ID.String()})
	if err != nil {
		t.Fatal(err)
	}
	want := []TurnFile{}
	for _, f := range d.Files {
		want = append(want, TurnFile{Path: f.Path, Status: f.Status})
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("%v: remembered changes %v, a diff finds %v", log, got, want)
	}
	if files, err := r.sessionEngine().Changes(ctx, parent, cp.ID); err != nil || fmt.Sprint(files) != fmt.Sprint(want) {
		t.Fatalf("%v: a turn's changes %v (%v), a diff finds %v", log, files, err, want)
	}
	return true
}
