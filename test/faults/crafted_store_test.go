//go:build unix

package faults

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/seed1cedbf7c/ckpt/internal/object"
	"github.com/seed1cedbf7c/ckpt/internal/store"
	"github.com/seed1cedbf7c/ckpt/internal/testutil"
)

// Class 4: a crafted checkpoint holding .git/hooks/pre-commit (or .GIT,
// .ckpt, .decree in any case) is invalid store content: fsck reports it,
// and a restore refuses it without writing anything.
func TestCraftedReservedPaths(t *testing.T) {
	for _, dir := range []string{".git", ".GIT", ".Git", ".ckpt", ".DECREE"} {
		t.Run(dir, func(t *testing.T) {
			e := newEnv(t)
			e.Write(map[string]string{"a.txt": "a\n"})
			testutil.GitInit(t, e.WS)
			e.Must("save", "-q", "-m", "honest")
			id := craft(t, e, dir)

			code, out, errs := e.Run("fsck")
			if code != 3 || !strings.Contains(out+errs, dir) {
				t.Errorf("fsck on a store holding %s/hooks/pre-commit: exit %d\n%s%s", dir, code, out, errs)
			}
			code, out, errs = e.Run("restore", id.String())
			if code != 3 {
				t.Errorf("restore of the crafted checkpoint: exit %d, want 3\n%s%s", code, out, errs)
			}
			for _, p := range []string{".git/hooks/pre-commit", dir + "/hooks/pre-commit"} {
				if _, err := os.Lstat(filepath.Join(e.WS, p)); err == nil {
					t.Fatalf("%s was written", p)
				}
			}
			if got := e.Read("a.txt"); got != "a\n" {
				t.Fatalf("a.txt = %q", got)
			}
		})
	}
}

// craft adds to the store a checkpoint whose tree holds
// dir/hooks/pre-commit next to a.txt, named snapshots/evil.
func craft(t *testing.T, e *env, dir string) object.ID {
	t.Helper()
	ctx := context.Background()
	st, err := store.OpenSQLite(ctx, e.Store, e.WS)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	hook := []byte("#!/bin/sh\necho owned > /tmp/ckpt-owned\n")
	a := []byte("a\n")
	var cpID object.ID
	err = st.Update(ctx, func(tx store.Tx) error {
		put := func(t object.Tree) object.ID {
			data := t.Encode()
			id := object.Sum(data)
			if err := tx.PutTree(id, data); err != nil {
				panic(err)
			}
			return id
		}
		if err := tx.PutBlob(object.Sum(hook), hook); err != nil {
			return err
		}
		if err := tx.PutBlob(object.Sum(a), a); err != nil {
			return err
		}
		hooks := put(object.Tree{Entries: []object.Entry{{Name: "pre-commit", Mode: object.ModeFile | 0o755, Size: int64(len(hook)), ID: object.Sum(hook)}}})
		gitDir := put(object.Tree{Entries: []object.Entry{{Name: "hooks", Mode: object.ModeDir, Size: int64(len(hook)), ID: hooks}}})
		root := put(object.Tree{Entries: []object.Entry{
			{Name: dir, Mode: object.ModeDir, Size: int64(len(hook)), ID: gitDir},
			{Name: "a.txt", Mode: object.ModeFile | 0o644, Size: 2, ID: object.Sum(a)},
		}})
		cp := &object.Checkpoint{Tree: root, Time: time.Now(), Kind: object.KindManual, Message: "crafted"}
		id, err := tx.PutCheckpoint(cp, store.Stats{Files: 2})
		if err != nil {
			return err
		}
		cpID = id
		return tx.SetRef(store.Ref{Name: "snapshots/evil", ID: id})
	})
	if err != nil {
		t.Fatal(err)
	}
	return cpID
}
