//go:build unix

package faults

import (
	"context"
	"io"
	"os"
	"strings"
	"testing"

	"github.com/seed1cedbf7c/ckpt"
	"github.com/seed1cedbf7c/ckpt/internal/fsroot"
	"github.com/seed1cedbf7c/ckpt/internal/testutil"
)

// Class 15: a tree deeper than PATH_MAX (2,100 levels) is saved, shown in
// status and restored like any other.
func TestDeeperThanPathMax(t *testing.T) {
	testutil.Long(t, "builds trees deeper than PATH_MAX")
	ctx := context.Background()
	e := newEnv(t)
	root, deep, writeAt, readAt := deepTree(t, e)
	writeAt(deep+"/bottom.txt", "v1\n")
	writeAt("d/d/shallow.txt", "s1\n")

	r := e.Open(ckpt.Options{})
	v1, err := r.Save(ctx, ckpt.SaveOptions{Message: "deep v1"})
	if err != nil {
		t.Fatalf("save: %v", err)
	}
	m, err := r.Manifest(ctx, v1.Checkpoint.ID.String())
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := m.Files[deep+"/bottom.txt"]; !ok || len(m.Files) != 3 {
		t.Fatalf("manifest has %d files, the deep one: %v", len(m.Files), ok)
	}

	writeAt(deep+"/bottom.txt", "v2\n")
	writeAt(deep+"/new.txt", "new\n")
	st, err := r.Status(ctx, true)
	if err != nil {
		t.Fatalf("status: %v", err)
	}
	if len(st.Changes) != 2 {
		t.Fatalf("status: %d changes, want 2: %+v", len(st.Changes), st.Changes)
	}
	if _, err := r.Restore(ctx, v1.Checkpoint.ID.String(), ckpt.RestoreOptions{}); err != nil {
		t.Fatalf("restore: %v", err)
	}
	if got := readAt(deep + "/bottom.txt"); got != "v1\n" {
		t.Fatalf("after restore bottom.txt = %q", got)
	}
	if _, err := root.Lstat(deep + "/new.txt"); err == nil {
		t.Fatal("after restore new.txt is still there")
	}
	// The whole deep tree removed, then brought back.
	if err := root.RemoveAll("d"); err != nil {
		t.Fatal(err)
	}
	if _, err := r.Restore(ctx, v1.Checkpoint.ID.String(), ckpt.RestoreOptions{}); err != nil {
		t.Fatalf("restore of the removed tree: %v", err)
	}
	if got := readAt(deep + "/bottom.txt"); got != "v1\n" {
		t.Fatalf("after restoring the removed tree bottom.txt = %q", got)
	}
	if _, err := r.Undo(ctx); err != nil {
		t.Fatalf("undo: %v", err)
	}
	if _, err := root.Lstat("d"); err == nil {
		t.Fatal("undo did not remove the deep tree again")
	}
	if _, err := r.Fsck(ctx); err != nil {
		t.Fatal(err)
	}
}

// deepTree makes a workspace holding top.txt and a chain of 2,100
// directories d/d/…/d (4,200 bytes, past PATH_MAX), and returns the
// workspace opened as an fsroot, the chain's path, and a writer and a
// reader of files by workspace-relative path (os's own calls fail there).
func deepTree(t *testing.T, e *env) (*fsroot.Root, string, func(p, data string), func(p string) string) {
	t.Helper()
	e.Write(map[string]string{"top.txt": "top\n"})
	root, err := fsroot.Open(e.WS)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { root.Close() })
	deep := strings.TrimSuffix(strings.Repeat("d/", 2100), "/")
	if err := root.MkdirAll(deep, 0o755); err != nil {
		t.Fatal(err)
	}
	write := func(p, data string) {
		t.Helper()
		f, err := root.OpenFile(p, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o644)
		if err != nil {
			t.Fatal(err)
		}
		f.WriteString(data)
		f.Close()
	}
	read := func(p string) string {
		t.Helper()
		f, err := root.Open(p)
		if err != nil {
			return "<" + err.Error() + ">"
		}
		defer f.Close()
		b, _ := io.ReadAll(f)
		return string(b)
	}
	return root, deep, write, read
}
