//go:build unix

package faults

import (
	"database/sql"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Class 10: `ckpt workspaces --prune` deletes a store only when its
// workspace is provably gone: the workspace path does not exist (ENOENT),
// and its parent exists, can be read, and is on the file system the
// workspace was on. A workspace it cannot stat (EACCES), under a parent
// that is gone (an unmounted disk's mount point removed), or whose parent
// is now on another file system (an unmounted disk's mount point left
// empty) keeps its store, and the command says why.

// pruneEnv makes a workspace at <base>/parent/proj with a default store
// (under the env's own XDG_STATE_HOME) holding one checkpoint.
func pruneEnv(t *testing.T) (e *env, parent, store string) {
	t.Helper()
	e = newEnv(t)
	parent = filepath.Join(t.TempDir(), "parent")
	e.WS = filepath.Join(parent, "proj")
	e.Extra = []string{"CKPT_STORE="}
	e.Write(map[string]string{"a.txt": "a"})
	e.Must("save", "-q")
	e.WS = t.TempDir() // commands run from elsewhere from now on
	var list []struct {
		Workspace string `json:"workspace"`
		Store     string `json:"store"`
	}
	if err := json.Unmarshal([]byte(e.Must("workspaces", "--json")), &list); err != nil || len(list) != 1 {
		t.Fatalf("workspaces --json: %v %v", list, err)
	}
	return e, parent, list[0].Store
}

func storeExists(t *testing.T, store string) bool {
	t.Helper()
	_, err := os.Stat(filepath.Join(store, "ckpt.db"))
	return err == nil
}

func TestPruneRemovesGone(t *testing.T) {
	e, parent, store := pruneEnv(t)
	if err := os.RemoveAll(filepath.Join(parent, "proj")); err != nil {
		t.Fatal(err)
	}
	if out := e.Must("workspaces"); !strings.HasPrefix(out, "gone ") {
		t.Fatalf("workspaces: %q", out)
	}
	out := e.Must("workspaces", "--prune")
	if !strings.Contains(out, "removed store of "+filepath.Join(parent, "proj")) {
		t.Fatalf("prune: %q", out)
	}
	if storeExists(t, store) {
		t.Fatal("the store of a deleted workspace was kept")
	}
}

// keptBy checks that prune kept the store and said why (want in its
// output, stdout or stderr).
func keptBy(t *testing.T, e *env, store, want string, nodac bool) {
	t.Helper()
	run := e.Run
	if nodac {
		run = e.runNoDAC
	}
	code, out, errs := run("workspaces", "--prune")
	if code != 0 {
		t.Fatalf("prune: exit %d\n%s%s", code, out, errs)
	}
	if !storeExists(t, store) {
		t.Fatalf("prune deleted the store of a workspace it could not prove gone\n%s%s", out, errs)
	}
	if !strings.Contains(out+errs, "kept the store of") || !strings.Contains(out+errs, want) {
		t.Fatalf("prune does not say why it kept the store (want %q):\nstdout: %s\nstderr: %s", want, out, errs)
	}
	code, out, errs = run("workspaces")
	if code != 0 || !strings.Contains(out, "unknown") || !strings.Contains(out+errs, want) {
		t.Fatalf("workspaces: exit %d\nstdout: %s\nstderr: %s\nwant state unknown and %q", code, out, errs, want)
	}
}

// TestPruneKeepsUnreadable: the workspace cannot be looked up (EACCES on
// its parent): not provably gone.
func TestPruneKeepsUnreadable(t *testing.T) {
	e, parent, store := pruneEnv(t)
	if err := os.Chmod(parent, 0); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.Chmod(parent, 0o755) })
	keptBy(t, e, store, "permission denied", true)
}

// TestPruneKeepsParentGone: the workspace's parent does not exist either
// (a disk's mount point removed when it was unmounted).
func TestPruneKeepsParentGone(t *testing.T) {
	e, parent, store := pruneEnv(t)
	if err := os.RemoveAll(parent); err != nil {
		t.Fatal(err)
	}
	keptBy(t, e, store, "does not exist either", false)
}

// TestPruneKeepsOtherFileSystem: the workspace is absent from a parent
// that is now on another file system than the workspace was (the empty
// mount point of an unmounted disk). The store records the workspace's
// device; here a device no file system has stands for the unmounted disk.
func TestPruneKeepsOtherFileSystem(t *testing.T) {
	e, parent, store := pruneEnv(t)
	db, err := sql.Open("sqlite", "file:"+filepath.Join(store, "ckpt.db"))
	if err != nil {
		t.Fatal(err)
	}
	var dev string
	if err := db.QueryRow(`SELECT value FROM meta WHERE key='workspace_dev'`).Scan(&dev); err != nil || dev == "" || dev == "0" {
		t.Fatalf("the store does not record the workspace's device: %q, %v", dev, err)
	}
	if _, err := db.Exec(`UPDATE meta SET value='4294967295' WHERE key='workspace_dev'`); err != nil {
		t.Fatal(err)
	}
	db.Close()
	if err := os.RemoveAll(filepath.Join(parent, "proj")); err != nil {
		t.Fatal(err)
	}
	keptBy(t, e, store, "another file system", false)
}

// TestPruneKeepsReplaced: a file where the workspace directory was.
func TestPruneKeepsReplaced(t *testing.T) {
	e, parent, store := pruneEnv(t)
	ws := filepath.Join(parent, "proj")
	if err := os.RemoveAll(ws); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(ws, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	keptBy(t, e, store, "not a directory", false)
}
