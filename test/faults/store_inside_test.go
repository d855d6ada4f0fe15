//go:build unix

package faults

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/seed1cedbf7c/ckpt"
	"github.com/seed1cedbf7c/ckpt/internal/treegen"
)

// Class 1: the store inside the workspace. A store that is the workspace
// is refused; one inside it is never captured by any scan and never
// written by any restore; a directory that is neither empty nor a store is
// refused.

// TestStoreIsWorkspaceRefused: --store . (and the same directory by an
// absolute path or through a symlink) is refused, naming the path, with a
// hint, and nothing is created in the workspace.
func TestStoreIsWorkspaceRefused(t *testing.T) {
	e := newEnv(t)
	e.Write(map[string]string{"a.txt": "a"})
	link := filepath.Join(t.TempDir(), "link")
	if err := os.Symlink(e.WS, link); err != nil {
		t.Fatal(err)
	}
	before := e.Snapshot()
	for _, store := range []string{".", e.WS, link} {
		for _, args := range [][]string{{"save", "-q"}, {"status"}, {"list"}} {
			args = append([]string{"--store", store}, args...)
			code, out, errs := e.Run(args...)
			if code != 1 {
				t.Errorf("ckpt %s: exit %d, want 1\nstdout: %s\nstderr: %s", strings.Join(args, " "), code, out, errs)
			}
			if !strings.Contains(errs, e.WS) || !strings.Contains(errs, "is the workspace itself") || !strings.Contains(errs, "ckpt: hint: ") {
				t.Errorf("ckpt %s: stderr does not name the workspace and say what to do:\n%s", strings.Join(args, " "), errs)
			}
		}
	}
	if d := treegen.Diff(before, e.Snapshot()); d != "" {
		t.Fatalf("the workspace changed: %s", d)
	}
	if _, err := ckpt.Open(context.Background(), e.WS, ckpt.Options{Store: e.WS}); err == nil || !strings.Contains(err.Error(), e.WS) {
		t.Fatalf("Open with the workspace as store: %v, want an error naming it", err)
	}
}

// TestStoreNotEmptyRefused: a directory holding other files than ckpt's
// (a home directory, /) is not made into a store; nothing is written in it.
func TestStoreNotEmptyRefused(t *testing.T) {
	e := newEnv(t)
	e.Write(map[string]string{"a.txt": "a"})
	home := t.TempDir()
	if err := os.WriteFile(filepath.Join(home, ".bashrc"), []byte("# mine\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(home, "Documents"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{{"save", "-q"}, {"list"}, {"status"}, {"config", "keep", "5"}} {
		args = append([]string{"--store", home}, args...)
		code, out, errs := e.Run(args...)
		if code != 1 {
			t.Errorf("ckpt %s: exit %d, want 1\nstdout: %s\nstderr: %s", strings.Join(args, " "), code, out, errs)
		}
		if !strings.Contains(errs, home) || !strings.Contains(errs, "not empty and is not a ckpt store") || !strings.Contains(errs, "ckpt: hint: ") {
			t.Errorf("ckpt %s: stderr:\n%s", strings.Join(args, " "), errs)
		}
	}
	des, err := os.ReadDir(home)
	if err != nil {
		t.Fatal(err)
	}
	if len(des) != 2 {
		var names []string
		for _, de := range des {
			names = append(names, de.Name())
		}
		t.Fatalf("the directory now holds %v, want only .bashrc and Documents", names)
	}
	// A directory holding only ckpt's own settings becomes a store.
	fresh := t.TempDir()
	e.Must("--store", fresh, "config", "keep", "5")
	e.Must("--store", fresh, "save", "-q")
	// And an existing store opens, whatever else ckpt put there.
	e.Must("--store", fresh, "list")
}

// storeInside makes a workspace whose store is at <ws>/state/store.
func storeInside(t *testing.T) *env {
	e := newEnv(t)
	e.Store = filepath.Join(e.WS, "state", "store")
	return e
}

// TestStoreInsideNeverCaptured: a store inside the workspace is left out
// of whole-tree and partial saves, status and diff.
func TestStoreInsideNeverCaptured(t *testing.T) {
	e := storeInside(t)
	e.Write(map[string]string{"a.txt": "a", "state/notes.txt": "n"})
	e.Must("save", "-q", "-m", "one")
	e.Write(map[string]string{"a.txt": "a2"})
	e.Must("save", "-q", "-m", "two")
	out := e.Must("show", "--manifest", "HEAD")
	if strings.Contains(out, "state/store") || !strings.Contains(out, "state/notes.txt") {
		t.Fatalf("manifest:\n%s", out)
	}
	// The store changed with every save; status and diff do not see it.
	if out := e.Must("status"); strings.Contains(out, "state/store/") || !strings.Contains(out, "changes:   none") {
		t.Fatalf("status shows the store:\n%s", out)
	}
	if out := e.Must("diff", "--name-only"); strings.TrimSpace(out) != "" {
		t.Fatalf("diff: %q, want nothing", out)
	}
	// Partial saves: the store itself, a file in it, a directory above it.
	for _, p := range []string{"state/store", "state/store/ckpt.db"} {
		code, _, errs := e.Run("save", "-q", p)
		if code == 0 || !strings.Contains(errs, "store") {
			t.Errorf("save %s: exit %d, %s; want a refusal naming the store", p, code, errs)
		}
	}
	e.Must("save", "-q", "-m", "partial", "state")
	if out := e.Must("show", "--manifest", "HEAD~0"); strings.Contains(out, "state/store") {
		t.Fatalf("manifest after a partial save:\n%s", out)
	}
	r := e.Open(ckpt.Options{})
	res, err := r.Save(context.Background(), ckpt.SaveOptions{Paths: []string{"state"}})
	if err != nil {
		t.Fatal(err)
	}
	m, err := r.Manifest(context.Background(), res.Checkpoint.ID.String())
	if err != nil {
		t.Fatal(err)
	}
	for p := range m.Files {
		if strings.HasPrefix(p, "state/store") {
			t.Fatalf("a partial save of state captured %s", p)
		}
	}
	if _, err := r.Save(context.Background(), ckpt.SaveOptions{Paths: []string{"state/store/lock"}}); err == nil {
		t.Fatal("a partial save of a file in the store succeeded")
	}
	e.Must("fsck")
}

// craftStoreTree records, with the store still outside the workspace, a
// checkpoint whose tree holds files at the store's future place
// (state/store/...), then moves the store there: an old checkpoint (or a
// crafted one) that a restore must not write into the store.
func craftStoreTree(t *testing.T) (e *env, crafted string) {
	e = newEnv(t)
	e.Write(map[string]string{"a.txt": "a1", "state/store/ckpt.db": "NOT A DATABASE", "state/store/lock": "x",
		"state/store/sub/f": "f", "state/keep.txt": "k"})
	e.Must("save", "-q", "-m", "crafted")
	crafted = strings.TrimSpace(e.Must("list", "-q", "-n", "1"))
	if err := os.RemoveAll(filepath.Join(e.WS, "state", "store")); err != nil {
		t.Fatal(err)
	}
	e.Write(map[string]string{"a.txt": "a2"})
	e.Must("save", "-q", "-m", "before the move")
	inside := filepath.Join(e.WS, "state", "store")
	if err := os.Rename(e.Store, inside); err != nil {
		t.Fatal(err)
	}
	e.Store = inside
	return e, crafted
}

// TestRestoreNeverWritesStore: restoring a checkpoint whose tree holds
// entries at the store's place keeps the store as it is (reported as
// kept), in dry runs, whole and partial restores, undo and redo.
func TestRestoreNeverWritesStore(t *testing.T) {
	e, crafted := craftStoreTree(t)
	db := filepath.Join(e.Store, "ckpt.db")
	dbInfo, err := os.Stat(db)
	if err != nil {
		t.Fatal(err)
	}
	checkStore := func(when string) {
		t.Helper()
		b, err := os.ReadFile(db)
		if err != nil || !strings.HasPrefix(string(b), "SQLite format 3\x00") {
			t.Fatalf("%s: ckpt.db was overwritten (%v)", when, err)
		}
		fi, err := os.Stat(db)
		if err != nil || !os.SameFile(fi, dbInfo) {
			t.Fatalf("%s: ckpt.db was replaced (%v)", when, err)
		}
		if _, err := os.Stat(filepath.Join(e.Store, "sub")); !errors.Is(err, os.ErrNotExist) {
			t.Fatalf("%s: a restore wrote into the store: %v", when, err)
		}
		if out := e.Must("fsck"); !strings.Contains(out, "ok") {
			t.Fatalf("%s: fsck: %s", when, out)
		}
		if n := len(strings.Fields(e.Must("list", "-q"))); n < 2 {
			t.Fatalf("%s: history lost: %d checkpoints", when, n)
		}
	}
	// Dry run: the store's paths are kept, and reported so.
	out := e.Must("restore", "--dry-run", "--json", crafted)
	for _, p := range []string{"state/store/ckpt.db", "state/store/lock", "state/store/sub/f"} {
		if !strings.Contains(out, `"path": "`+p+`",
      "action": "keep"`) {
			t.Fatalf("dry run does not keep %s:\n%s", p, out)
		}
	}
	checkStore("dry run")
	r := e.Open(ckpt.Options{})
	res, err := r.Restore(context.Background(), crafted, ckpt.RestoreOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range res.Actions {
		if strings.HasPrefix(string(a.Path), "state/store") && a.Op != "keep" {
			t.Fatalf("restore action %s %s", a.Op, a.Path)
		}
	}
	r.Close()
	if got := e.Read("a.txt"); got != "a1" {
		t.Fatalf("a.txt = %q, want a1: the rest was not restored", got)
	}
	checkStore("restore")
	e.Must("undo")
	checkStore("undo")
	e.Must("redo")
	checkStore("redo")
	e.Must("restore", "HEAD~1")
	e.Must("restore", crafted, "state/store")
	checkStore("partial restore of the store's path")
	e.Must("restore", crafted, "state")
	checkStore("partial restore of its parent")
	if got := e.Read("state/keep.txt"); got != "k" {
		t.Fatalf("state/keep.txt = %q", got)
	}
}

// TestRewindNeverWritesStore: a session's turn began when the workspace
// held files at the store's later place; rewinding to it (plain, dry run,
// keeping user edits) keeps the store as it is.
func TestRewindNeverWritesStore(t *testing.T) {
	e := newEnv(t)
	e.Write(map[string]string{"a.txt": "a1", "state/store/ckpt.db": "NOT A DATABASE", "state/store/sub/f": "f"})
	e.Must("session", "new", "--id", "s1")
	e.Must("turn", "begin", "-m", "one")
	if err := os.RemoveAll(filepath.Join(e.WS, "state", "store")); err != nil {
		t.Fatal(err)
	}
	e.Write(map[string]string{"a.txt": "a2"})
	e.Must("turn", "end")
	inside := filepath.Join(e.WS, "state", "store")
	if err := os.Rename(e.Store, inside); err != nil {
		t.Fatal(err)
	}
	e.Store = inside
	check := func(when string) {
		t.Helper()
		b, err := os.ReadFile(filepath.Join(e.Store, "ckpt.db"))
		if err != nil || !strings.HasPrefix(string(b), "SQLite format 3\x00") {
			t.Fatalf("%s: ckpt.db was overwritten (%v)", when, err)
		}
		if _, err := os.Stat(filepath.Join(e.Store, "sub")); !errors.Is(err, os.ErrNotExist) {
			t.Fatalf("%s: a rewind wrote into the store: %v", when, err)
		}
		if out := e.Must("fsck"); !strings.Contains(out, "ok") {
			t.Fatalf("%s: fsck: %s", when, out)
		}
	}
	for _, args := range [][]string{{"rewind", "1", "--dry-run"}, {"rewind", "1", "--keep-user-edits", "--dry-run"}} {
		if out := e.Must(args...); strings.Contains(out, "state/store") && !strings.Contains(out, "keep") {
			t.Fatalf("ckpt %s:\n%s", strings.Join(args, " "), out)
		}
		check(strings.Join(args, " "))
	}
	e.Must("rewind", "1")
	check("rewind")
	if got := e.Read("a.txt"); got != "a1" {
		t.Fatalf("a.txt = %q after the rewind", got)
	}
	e.Must("undo")
	e.Write(map[string]string{"b.txt": "user edit"})
	e.Must("rewind", "1", "--keep-user-edits")
	check("rewind --keep-user-edits")
}
