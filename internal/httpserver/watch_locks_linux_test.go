package httpserver

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/seed1cedbf7c/ckpt"
	"golang.org/x/sys/unix"
)

// shmDMS is the byte of the WAL index on which every SQLite connection
// that has the index mapped holds a shared lock (the "dead man switch"
// of SQLite's unix VFS).
const shmDMS = 128

// sharedLockHeld reports whether some lock on the byte at off of the file
// open as f conflicts with a write lock. It asks with an open file
// description lock, which conflicts with this process's own POSIX locks
// too (fcntl(2)).
func sharedLockHeld(t *testing.T, f *os.File, off int64) bool {
	t.Helper()
	lk := unix.Flock_t{Type: unix.F_WRLCK, Whence: 0, Start: off, Len: 1}
	if err := unix.FcntlFlock(f.Fd(), unix.F_OFD_GETLK, &lk); err != nil {
		t.Fatal(err)
	}
	return lk.Type != unix.F_UNLCK
}

// POSIX locks belong to a process and a file, not to a file descriptor:
// closing any descriptor of a file drops all of the process's locks on
// it. The server reads the store through SQLite in the same process, so
// the poller must never open and close SQLite's files; if it did, the
// WAL's read and write locks SQLite holds would be gone, and another
// process could write over the WAL under a read, or write beside this
// one's writer.
func TestFingerprintKeepsSQLiteLocks(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	ws, sd := filepath.Join(dir, "ws"), filepath.Join(dir, "store")
	if err := os.MkdirAll(ws, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(ws, "a.txt"), []byte("one\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	r, err := ckpt.Open(ctx, ws, ckpt.Options{Store: sd})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if _, err := r.Save(ctx, ckpt.SaveOptions{Message: "first"}); err != nil {
		t.Fatal(err)
	}
	// The probe stays open to the end: closing it would drop the locks.
	probe, err := os.Open(filepath.Join(sd, "ckpt.db-shm"))
	if err != nil {
		t.Fatal(err)
	}
	defer probe.Close()
	if !sharedLockHeld(t, probe, shmDMS) {
		t.Fatal("SQLite holds no lock on its WAL index: the probe is wrong")
	}
	storeFingerprint(sd)
	if !sharedLockHeld(t, probe, shmDMS) {
		t.Fatal("after the poller's fingerprint, SQLite's locks on ckpt.db-shm are gone")
	}
}
