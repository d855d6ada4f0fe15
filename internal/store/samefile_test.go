//go:build unix

package store

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"testing"
)

// A process that has a store open and opens it a second time must keep
// SQLite's locks: POSIX drops every lock a process holds on a file when it
// closes any descriptor of that file, so a second open that reads the
// database's header, or checks its files are writable, by opening and
// closing them, left the first connection unlocked. Another process then
// took itself for the database's only user and, closing, folded the WAL
// into the database and removed it under the first connection: what that
// connection committed afterwards no other process saw (a watcher saving
// for `ckpt save` lost its checkpoints).
func TestSecondOpenKeepsLocks(t *testing.T) {
	testKeepsLocks(t, func(dir string) {
		s2, err := OpenSQLite(context.Background(), dir, "/ws")
		if err != nil {
			t.Fatal(err)
		}
		s2.Close()
	})
}

// Reading a store's settings (RecordedMeta, RecordedWorkspace: a watcher
// checking its store is still the one at the path) in a process that has
// it open must keep the locks too: they probed the files for writing by
// opening and closing them.
func TestRecordedMetaKeepsLocks(t *testing.T) {
	testKeepsLocks(t, func(dir string) {
		if RecordedMeta(dir)["instance"] == "" || RecordedWorkspace(dir) != "/ws" {
			t.Fatal("the store's settings were not read")
		}
	})
}

// testKeepsLocks opens a store, does what (in this process), and checks
// that another process still sees what this one commits.
func testKeepsLocks(t *testing.T, what func(dir string)) {
	ctx := context.Background()
	dir := t.TempDir()
	s, err := OpenSQLite(ctx, dir, "/ws")
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	setMeta := func(s *SQLite, k, v string) {
		t.Helper()
		if err := s.Update(ctx, func(tx Tx) error { return tx.SetMeta(k, v) }); err != nil {
			t.Fatal(err)
		}
	}
	setMeta(s, "a", "1")
	what(dir)
	// Another process writes and closes.
	child := func(op, key, want string) {
		t.Helper()
		cmd := exec.Command(os.Args[0])
		cmd.Env = append(os.Environ(), "CKPT_STORE_CHILD="+dir, "CKPT_STORE_OP="+op, "CKPT_STORE_KEY="+key, "CKPT_STORE_WANT="+want)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("child %s %s: %v\n%s", op, key, err, out)
		}
	}
	child("set", "b", "2")
	for i := 0; i < 3; i++ {
		k := fmt.Sprint("c", i)
		setMeta(s, k, "3")
		child("get", k, "3")
	}
}

func TestMain(m *testing.M) {
	if dir := os.Getenv("CKPT_STORE_CHILD"); dir != "" {
		if err := secondOpenChild(dir); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// secondOpenChild is the other process of TestSecondOpenKeepsLocks.
func secondOpenChild(dir string) error {
	ctx := context.Background()
	s, err := OpenSQLite(ctx, dir, "/ws")
	if err != nil {
		return err
	}
	defer s.Close()
	key := os.Getenv("CKPT_STORE_KEY")
	switch os.Getenv("CKPT_STORE_OP") {
	case "set":
		return s.Update(ctx, func(tx Tx) error { return tx.SetMeta(key, "x") })
	case "get":
		v, err := s.Meta(ctx, key)
		if err != nil || v != os.Getenv("CKPT_STORE_WANT") {
			return fmt.Errorf("meta %s = %q, %v: a commit of the other process is not seen", key, v, err)
		}
	}
	return nil
}
