//go:build unix

package faults

import (
	"bytes"
	"context"
	"database/sql"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/seed1cedbf7c/ckpt"
	_ "modernc.org/sqlite"
)

// Class 17: a zero-byte or non-SQLite ckpt.db is corruption (exit 3, the
// file named), never a new empty store; only a missing ckpt.db in an empty
// or new directory creates one.

// badDB writes content as the store's ckpt.db (a store directory holding
// nothing else).
func (e *env) badDB(content []byte) string {
	e.T.Helper()
	if err := os.MkdirAll(e.Store, 0o700); err != nil {
		e.T.Fatal(err)
	}
	db := filepath.Join(e.Store, "ckpt.db")
	if err := os.WriteFile(db, content, 0o600); err != nil {
		e.T.Fatal(err)
	}
	return db
}

// sqliteWithoutMeta is a valid SQLite database that is not a ckpt store.
func sqliteWithoutMeta(t *testing.T) []byte {
	t.Helper()
	p := filepath.Join(t.TempDir(), "other.db")
	db, err := sql.Open("sqlite", "file:"+p)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec(`CREATE TABLE notes (body TEXT); INSERT INTO notes VALUES ('hello')`); err != nil {
		t.Fatal(err)
	}
	db.Close()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestBadDB(t *testing.T) {
	cases := []struct {
		name    string
		content func(t *testing.T) []byte
	}{
		{"zero-byte", func(*testing.T) []byte { return nil }},
		{"not-sqlite", func(*testing.T) []byte { return bytes.Repeat([]byte("not a database\n"), 300) }},
		{"short-garbage", func(*testing.T) []byte { return []byte("x") }},
		{"sqlite-not-ckpt", sqliteWithoutMeta},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t)
			e.Write(map[string]string{"a.txt": "a"})
			content := tc.content(t)
			db := e.badDB(content)
			for _, args := range [][]string{{"list"}, {"log"}, {"status"}, {"save", "-m", "x"}, {"fsck"}} {
				code, out, errs := e.Run(args...)
				if code != 3 {
					t.Errorf("ckpt %s: exit %d, want 3\nstdout: %s\nstderr: %s", strings.Join(args, " "), code, out, errs)
				}
				if !strings.Contains(errs, db) {
					t.Errorf("ckpt %s: stderr does not name %s:\n%s", strings.Join(args, " "), db, errs)
				}
				if strings.Contains(out, "ok") {
					t.Errorf("ckpt %s: stdout claims ok: %s", strings.Join(args, " "), out)
				}
			}
			// Nothing was written over the damaged file.
			got, err := os.ReadFile(db)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got, content) {
				t.Errorf("ckpt.db changed: %d bytes, want the original %d", len(got), len(content))
			}
			// The library says the same.
			_, err = ckpt.Open(context.Background(), e.WS, ckpt.Options{Store: e.Store})
			var ce *ckpt.CorruptError
			if !errors.As(err, &ce) || !errors.Is(err, ckpt.ErrCorrupt) || !strings.Contains(err.Error(), db) {
				t.Errorf("Open: got %v, want a CorruptError naming %s", err, db)
			}
		})
	}
}

// TestNewStoreOnlyWhereNoneIs: a missing ckpt.db in a new or empty
// directory makes a store, and a store whose creation was killed half-way
// leaves no ckpt.db behind to be mistaken for a store (or for corruption).
func TestNewStoreOnlyWhereNoneIs(t *testing.T) {
	e := newEnv(t)
	e.Write(map[string]string{"a.txt": "a"})
	if err := os.MkdirAll(e.Store, 0o700); err != nil {
		t.Fatal(err)
	}
	// Killed while creating the database.
	e.Extra = []string{"CKPT_FAILPOINT=store/create=kill"}
	if code, _, errs := e.Run("save", "-q"); code == 0 {
		t.Fatalf("save survived its kill: %s", errs)
	}
	if _, err := os.Stat(filepath.Join(e.Store, "ckpt.db")); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("a killed store creation left ckpt.db: %v", err)
	}
	e.Extra = nil
	e.Must("save", "-q", "-m", "first")
	if out := e.Must("fsck"); !strings.Contains(out, "ok") {
		t.Fatalf("fsck: %s", out)
	}
	if out := e.Must("list", "-q"); len(strings.Fields(out)) != 1 {
		t.Fatalf("list: %q, want one checkpoint", out)
	}
	// No temporary database is left behind.
	des, _ := os.ReadDir(e.Store)
	for _, de := range des {
		if strings.Contains(de.Name(), "tmp") {
			t.Errorf("leftover in the store: %s", de.Name())
		}
	}
}
