package ckpt

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/seed1cedbf7c/ckpt/internal/store"
)

func TestSplitAncestry(t *testing.T) {
	for rev, want := range map[string]struct {
		base  string
		steps int
	}{
		"HEAD": {"HEAD", 0}, "HEAD~": {"HEAD", 1}, "HEAD~3": {"HEAD", 3}, "HEAD^^": {"HEAD", 2},
		"abc1~2^": {"abc1", 3}, "tags/v1~1": {"tags/v1", 1}, "name~x": {"name~x", 0},
	} {
		base, steps, err := splitAncestry(rev)
		if err != nil || base != want.base || steps != want.steps {
			t.Errorf("splitAncestry(%q) = %q, %d, %v; want %q, %d", rev, base, steps, err, want.base, want.steps)
		}
	}
	for _, bad := range []string{"", "~", "^"} {
		if _, _, err := splitAncestry(bad); err == nil {
			t.Errorf("splitAncestry(%q) accepted", bad)
		}
	}
}

func FuzzSplitAncestry(f *testing.F) {
	f.Add("HEAD~12^")
	f.Fuzz(func(t *testing.T, rev string) {
		splitAncestry(rev)
	})
}

// Paths in JSON round-trip, whatever their bytes.
func FuzzPathJSON(f *testing.F) {
	for _, s := range []string{"a/b", "caf\xe9", "\"quoted", "back\\slash", "tab\tnl\n", "日本"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, p string) {
		b, err := json.Marshal(Path(p))
		if err != nil {
			t.Fatal(err)
		}
		var back Path
		if err := json.Unmarshal(b, &back); err != nil || string(back) != p {
			t.Fatalf("%q -> %s -> %q (%v)", p, b, back, err)
		}
	})
}

func FuzzManifestJSON(f *testing.F) {
	f.Add([]byte(`{"files": {"a": {"sha256": "x", "size": 1, "mode": "644"}}}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		var m Manifest
		if m.UnmarshalJSON(data) != nil {
			return
		}
		out, err := m.MarshalJSON()
		if err != nil {
			t.Fatal(err)
		}
		var again Manifest
		if err := again.UnmarshalJSON(out); err != nil || len(again.Files) != len(m.Files) {
			t.Fatalf("manifest does not round-trip: %v", err)
		}
	})
}

// Snapshot, tag and branch names resolve, bare or qualified; a bare name in
// several namespaces with different targets is ambiguous.
func TestResolveNames(t *testing.T) {
	ctx := context.Background()
	ws := t.TempDir()
	os.WriteFile(filepath.Join(ws, "a"), []byte("a"), 0o644)
	r, err := Open(ctx, ws, Options{Backend: BackendMemory})
	if err != nil {
		t.Fatal(err)
	}
	a, _ := r.Save(ctx, SaveOptions{})
	os.WriteFile(filepath.Join(ws, "a"), []byte("b"), 0o644)
	b, _ := r.Save(ctx, SaveOptions{})
	idA, idB := a.Checkpoint.ID, b.Checkpoint.ID
	r.st.Update(ctx, func(tx store.Tx) error {
		tx.SetRef(store.Ref{Name: "snapshots/before", ID: idA})
		tx.SetRef(store.Ref{Name: "tags/v1", ID: idB})
		tx.SetRef(store.Ref{Name: "tags/both", ID: idA})
		tx.SetRef(store.Ref{Name: "branches/both", ID: idB})
		return nil
	})
	for rev, want := range map[string]ID{
		"before": idA, "snapshots/before": idA, "v1": idB, "tags/v1": idB, "v1~1": idA, "main": idB,
		"branches/main": idB, "HEAD": idB, "HEAD~1": idA, idA.String()[:4]: idA, idB.String(): idB, "tags/both": idA,
	} {
		got, err := r.Resolve(ctx, rev)
		if err != nil || got != want {
			t.Errorf("Resolve(%q) = %s, %v; want %s", rev, got.Short(), err, want.Short())
		}
	}
	var re *RevisionError
	if _, err := r.Resolve(ctx, "both"); !errors.As(err, &re) || !re.Ambiguous {
		t.Errorf("ambiguous name: %v", err)
	}
	if _, err := r.Resolve(ctx, "tags/nope"); !errors.Is(err, ErrNotFound) {
		t.Errorf("unknown tag: %v", err)
	}
	if _, err := r.Resolve(ctx, "nope"); !errors.Is(err, ErrNotFound) || Hint(err) == "" {
		t.Errorf("unknown name: %v, hint %q", err, Hint(err))
	}
}

// A ref whose name is also the start of a checkpoint id (the sandbox
// snapshot tools allow snapshot names like "cafe"; ckpt refuses new ones,
// but a store may hold one named before) is ambiguous, not silently the
// ref.
func TestResolveHexNamedRef(t *testing.T) {
	ctx := context.Background()
	r, ws := openTest(t, map[string]string{"a.txt": "1\n"})
	first := mustSave(t, r, "one")
	writeFile(t, ws, "a.txt", "2\n")
	second := mustSave(t, r, "two")
	prefix := first.ID.String()[:6]
	if _, err := r.SnapshotCreate(ctx, prefix, SnapshotOptions{}); !errors.Is(err, ErrInvalidSnapshotName) {
		t.Fatalf("snapshot create %s: got %v, want it refused", prefix, err)
	}
	ref := store.Ref{Name: "snapshots/" + prefix, ID: second.ID, Time: second.Time}
	if err := r.refOp(ctx, &ref, "", store.Op{Kind: "test"}); err != nil {
		t.Fatal(err)
	}
	_, err := r.Resolve(ctx, prefix)
	var re *RevisionError
	if !errors.As(err, &re) || !re.Ambiguous || !strings.Contains(err.Error(), "start of a checkpoint id") {
		t.Fatalf("resolve %s: %v", prefix, err)
	}
	if id, err := r.Resolve(ctx, "snapshots/"+prefix); err != nil || id == first.ID {
		t.Fatalf("snapshots/%s = %v, %v", prefix, id, err)
	}
	if id, err := r.Resolve(ctx, first.ID.String()[:12]); err != nil || id != first.ID {
		t.Fatalf("a longer prefix: %v %v", id, err)
	}
}

// A workspace whose path is not UTF-8 keeps its exact bytes in the JSON
// of status, stats and workspaces (encoded as Path encodes names), rather
// than turning into U+FFFD.
func TestNonUTF8WorkspaceJSON(t *testing.T) {
	ctx := context.Background()
	ws := filepath.Join(t.TempDir(), "caf\xe9")
	if err := os.Mkdir(ws, 0o755); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(ws, "a.txt"), []byte("a\n"), 0o644)
	t.Setenv("XDG_STATE_HOME", t.TempDir())
	r, err := Open(ctx, ws, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if _, err := r.Save(ctx, SaveOptions{}); err != nil {
		t.Fatal(err)
	}
	st, err := r.Status(ctx, true)
	if err != nil {
		t.Fatal(err)
	}
	stats, err := r.Stats(ctx)
	if err != nil {
		t.Fatal(err)
	}
	wss, err := Workspaces()
	if err != nil || len(wss) != 1 {
		t.Fatalf("workspaces: %v %v", wss, err)
	}
	for name, v := range map[string]any{"status": st, "stats": stats, "workspaces": wss[0]} {
		data, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		var got struct {
			Workspace Path `json:"workspace"`
			Store     Path `json:"store"`
		}
		if err := json.Unmarshal(data, &got); err != nil {
			t.Fatal(err)
		}
		if string(got.Workspace) != ws || string(got.Store) != r.StoreDir() {
			t.Errorf("%s JSON: workspace %q store %q, want %q %q\n%s", name, got.Workspace, got.Store, ws, r.StoreDir(), data)
		}
	}
	data, _ := json.Marshal(stats)
	if !strings.Contains(string(data), `"ratio":`) {
		t.Errorf("stats JSON lost its ratio: %s", data)
	}
}

// TestLabels: every face names a ref the way the user types it back as a
// revision (main, origin/main), not in its qualified form.
func TestLabels(t *testing.T) {
	for name, want := range map[string]string{
		"HEAD":                        "HEAD",
		"branches/main":               "main",
		"branches/fork/abc":           "fork/abc",
		"tags/v1":                     "tag: v1",
		"snapshots/before":            "snapshot: before",
		"remotes/origin/branches/dev": "origin/dev",
		"remotes/origin/tags/v1":      "",
		"remotes/origin":              "",
		"junk":                        "",
	} {
		if got := RefLabel(name); got != want {
			t.Errorf("RefLabel(%q) = %q, want %q", name, got, want)
		}
	}
	c := &Checkpoint{Names: []string{"branches/main", "tags/v1", "HEAD", "remotes/origin/branches/main"}}
	if got, want := strings.Join(c.Labels(), ", "), "HEAD, main, tag: v1, origin/main"; got != want {
		t.Errorf("Labels = %q, want %q", got, want)
	}
}
