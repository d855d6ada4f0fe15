package ckpt

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"
)

// TestOpenNoCreate: with NoCreate, Open of a workspace without a store
// fails with a *NoStoreError and leaves no trace; once a store exists it
// opens it.
func TestOpenNoCreate(t *testing.T) {
	ctx := context.Background()
	ws := t.TempDir()
	state := t.TempDir()
	t.Setenv("XDG_STATE_HOME", state)
	if err := os.WriteFile(filepath.Join(ws, "a.txt"), []byte("a"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, backend := range []string{"", BackendSQLite, BackendGit} {
		_, err := Open(ctx, ws, Options{NoCreate: true, Backend: backend})
		var ns *NoStoreError
		if !errors.As(err, &ns) {
			t.Fatalf("backend %q: Open with NoCreate = %v, want a *NoStoreError", backend, err)
		}
		if Hint(err) == "" {
			t.Errorf("backend %q: %v has no hint", backend, err)
		}
	}
	if ents, _ := os.ReadDir(state); len(ents) != 0 {
		t.Fatalf("Open with NoCreate created %v under XDG_STATE_HOME", ents)
	}
	if _, err := os.Stat(filepath.Join(ws, ".git")); err == nil {
		t.Fatal("Open with NoCreate initialised a git repository")
	}
	r, err := Open(ctx, ws, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := r.Save(ctx, SaveOptions{}); err != nil {
		t.Fatal(err)
	}
	r.Close()
	r, err = Open(ctx, ws, Options{NoCreate: true})
	if err != nil {
		t.Fatalf("Open with NoCreate of an existing store: %v", err)
	}
	r.Close()
}
