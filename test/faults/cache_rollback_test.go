//go:build unix

package faults

import (
	"database/sql"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/seed1cedbf7c/ckpt/internal/treegen"
)

// Class 14: a database rolled back under a newer stat cache (an older copy
// of ckpt.db put back, the statcache kept). The cache names trees the
// database never had; it must be detected and rebuilt, never make every
// command fail with "tree ... not found".

// copyFile copies src to dst.
func copyFile(t *testing.T, src, dst string) {
	t.Helper()
	b, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(dst, b, 0o600); err != nil {
		t.Fatal(err)
	}
}

// rolledBack makes a store whose ckpt.db is put back to a copy taken after
// the first save, while the stat cache is from two saves later.
func rolledBack(t *testing.T) *env {
	t.Helper()
	e := newEnv(t)
	e.Write(map[string]string{"a.txt": "a1", "d/b.txt": "b1", "d/e/c.txt": "c1"})
	e.Must("save", "-q", "-m", "one")
	db := filepath.Join(e.Store, "ckpt.db")
	backup := filepath.Join(t.TempDir(), "ckpt.db")
	copyFile(t, db, backup) // the command exited: everything is in ckpt.db
	e.Write(map[string]string{"a.txt": "a2", "d/b.txt": "b2", "d/new/x.txt": "x"})
	e.Must("save", "-q", "-m", "two")
	e.Write(map[string]string{"d/e/c.txt": "c3"})
	e.Must("save", "-q", "-m", "three")
	if _, err := os.Stat(filepath.Join(e.Store, "statcache")); err != nil {
		t.Fatalf("the test needs a stat cache: %v", err)
	}
	copyFile(t, backup, db)
	return e
}

// roundTrip restores the first checkpoint, then saved (the workspace's
// state now), and checks the workspace comes back exactly.
func roundTrip(t *testing.T, e *env, saved string) {
	t.Helper()
	want := e.Snapshot()
	log := strings.Fields(e.Must("list", "-q"))
	e.Must("restore", log[len(log)-1])
	if got := e.Read("a.txt"); got != "a1" {
		t.Fatalf("restore of the first checkpoint: a.txt = %q", got)
	}
	e.Must("restore", saved)
	if d := treegen.Diff(want, e.Snapshot()); d != "" {
		t.Fatalf("restore %s: %s", saved, d)
	}
}

// TestCacheNewerThanDatabase: after the rollback, status, diff, save and
// restore work and are right, and the new checkpoints restore exactly.
func TestCacheNewerThanDatabase(t *testing.T) {
	e := rolledBack(t)
	// The workspace is "three"; HEAD is "one".
	out := e.Must("status")
	for _, want := range []string{"M a.txt", "M d/b.txt", "M d/e/c.txt", "A d/new/x.txt"} {
		if !strings.Contains(out, want) {
			t.Fatalf("status after the rollback lacks %q:\n%s", want, out)
		}
	}
	e.Must("diff")
	e.Must("save", "-q", "-m", "after the rollback")
	saved := strings.TrimSpace(e.Must("list", "-q", "-n", "1"))
	if out := e.Must("diff", "--name-only"); strings.TrimSpace(out) != "" {
		t.Fatalf("diff after saving: %q", out)
	}
	roundTrip(t, e, saved)
	if out := e.Must("fsck"); !strings.Contains(out, "ok") {
		t.Fatalf("fsck: %s", out)
	}
}

// TestFsckReportsForeignCache: fsck says the stat cache does not belong
// to the database, and removes it (it is only a cache).
func TestFsckReportsForeignCache(t *testing.T) {
	e := rolledBack(t)
	code, out, errs := e.Run("fsck")
	if code != 0 {
		t.Fatalf("fsck: exit %d: %s%s", code, out, errs)
	}
	if !strings.Contains(errs, "ckpt: warning: stat cache") || !strings.Contains(errs, "newer than the database") {
		t.Fatalf("fsck does not report the stat cache:\nstdout: %s\nstderr: %s", out, errs)
	}
	if _, err := os.Stat(filepath.Join(e.Store, "statcache")); !os.IsNotExist(err) {
		t.Fatalf("the foreign stat cache is still there: %v", err)
	}
	code, _, errs = e.Run("fsck")
	if code != 0 || strings.Contains(errs, "warning") {
		t.Fatalf("second fsck: exit %d: %s", code, errs)
	}
}

// TestCacheMissingTreesRescans: the second line of defence. A cache that
// passes the header check (here: the database's cache counter was moved
// past it) but names trees the database lacks makes a save, a status and a
// restore drop it and scan again, instead of failing.
func TestCacheMissingTreesRescans(t *testing.T) {
	for _, first := range []string{"status", "save", "restore", "diff"} {
		t.Run(first, func(t *testing.T) {
			e := rolledBack(t)
			db, err := sql.Open("sqlite", "file:"+filepath.Join(e.Store, "ckpt.db"))
			if err != nil {
				t.Fatal(err)
			}
			if _, err := db.Exec(`INSERT OR REPLACE INTO meta(key, value) VALUES('cache_seq', '1000')`); err != nil {
				t.Fatal(err)
			}
			db.Close()
			switch first {
			case "status":
				if out := e.Must("status"); !strings.Contains(out, "A d/new/x.txt") {
					t.Fatalf("status:\n%s", out)
				}
			case "diff":
				if out := e.Must("diff", "--name-only"); !strings.Contains(out, "d/new/x.txt") {
					t.Fatalf("diff:\n%s", out)
				}
			case "save":
				e.Must("save", "-q")
			case "restore":
				e.Must("restore", "HEAD")
				if got := e.Read("a.txt"); got != "a1" {
					t.Fatalf("a.txt = %q after restoring HEAD", got)
				}
				e.Must("undo")
			}
			if got := e.Read("d/e/c.txt"); first != "restore" && got != "c3" {
				t.Fatalf("d/e/c.txt = %q", got)
			}
			e.Must("save", "-q", "-m", "again")
			roundTrip(t, e, strings.TrimSpace(e.Must("list", "-q", "-n", "1")))
			if out := e.Must("fsck"); !strings.Contains(out, "ok") {
				t.Fatalf("fsck: %s", out)
			}
		})
	}
}
