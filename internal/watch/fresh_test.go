//go:build linux

package watch

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// A watcher asked after every few directories made keeps answering for
// them: what it keeps of directories made (Daemon.fresh) is what answers
// for tokens still in use need, not everything since it last lost track.
// Otherwise a long-running watcher that sees many distinct directory
// names (build output with unique names) holds up to maxFresh of them and
// then answers "full" for a turn that made a handful.
func TestFreshForgottenOnceAnswered(t *testing.T) {
	m := maxFresh
	t.Cleanup(func() { maxFresh = m }) // after the daemon stops
	maxFresh = 1000
	root, sock := setup(t)
	a := query(t, sock, "")
	first := a.Token
	const batch = 200
	for i := 0; i*batch <= maxFresh+batch; i++ {
		for j := 0; j < batch; j++ {
			p := filepath.Join(root, "c", fmt.Sprintf("tmp-%d-%d", i, j))
			if err := os.Mkdir(p, 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.Remove(p); err != nil {
				t.Fatal(err)
			}
		}
		prev := a.Token
		if a = query(t, sock, prev); a.Full {
			t.Fatalf("after %d directories made in all, %d since the last answer: full (%s)", (i+1)*batch, batch, a.Reason)
		}
		if len(a.Unvouched) != batch {
			t.Fatalf("batch %d: %d unvouched, want %d", i, len(a.Unvouched), batch)
		}
	}
	// A token from before what the watcher forgot: it cannot name what
	// was made since.
	if a := query(t, sock, first); !a.Full {
		t.Fatalf("asked with the first token: %d unvouched, not full", len(a.Unvouched))
	}
}

// What a watcher keeps of changed directories (Daemon.dirty) stays
// bounded while it answers: a long-running watcher that sees build
// output with unique directory names made and removed turn after turn
// does not grow without end, and still answers for every token in use.
func TestDirtyForgottenOnceAnswered(t *testing.T) {
	m := maxDirty
	t.Cleanup(func() { maxDirty = m })
	maxDirty = 300
	root, sock := setup(t)
	a := query(t, sock, "")
	first := a.Token
	const batch = 100
	for i := 0; i < 10; i++ {
		for j := 0; j < batch; j++ {
			p := filepath.Join(root, "c", fmt.Sprintf("out-%d-%d", i, j))
			if err := os.MkdirAll(filepath.Join(p, "obj"), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.RemoveAll(p); err != nil {
				t.Fatal(err)
			}
		}
		if err := os.WriteFile(filepath.Join(root, "a/b/f.txt"), []byte(fmt.Sprint(i)), 0o644); err != nil {
			t.Fatal(err)
		}
		if a = query(t, sock, a.Token); a.Full {
			t.Fatalf("batch %d: full (%s)", i, a.Reason)
		}
		if !slices.Contains(a.Dirty, "a/b") || !slices.Contains(a.Dirty, "c") {
			t.Fatalf("batch %d: dirty %v does not name a/b and c", i, a.Dirty)
		}
		st, err := GetStatus(context.Background(), sock)
		if err != nil {
			t.Fatal(err)
		}
		// At most maxDirty kept from before, and this batch's.
		if limit := maxDirty + 4*batch + 10; st.Remembered > limit {
			t.Fatalf("batch %d: the watcher remembers %d directories, more than %d", i, st.Remembered, limit)
		}
	}
	if a := query(t, sock, first); !a.Full {
		t.Fatalf("asked with the first token: %d dirty, not full", len(a.Dirty))
	}
}
