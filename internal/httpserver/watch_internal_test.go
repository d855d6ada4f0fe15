package httpserver

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// storeFiles makes the files of a store in WAL mode in a new directory:
// the database, its WAL and its WAL index, each of fixed size.
func storeFiles(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	for name, size := range map[string]int{"ckpt.db": 4096, "ckpt.db-wal": 8192, "ckpt.db-shm": 32768} {
		if err := os.WriteFile(filepath.Join(dir, name), bytes.Repeat([]byte{1}, size), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// A commit that leaves every file's size and modification time as they
// were (the WAL written again from its start, within one tick of the
// file system's clock) still changes the fingerprint: its WAL index
// header changed.
func TestFingerprintSeesTheWALIndexHeader(t *testing.T) {
	dir := storeFiles(t)
	shm := filepath.Join(dir, "ckpt.db-shm")
	fi, err := os.Stat(shm)
	if err != nil {
		t.Fatal(err)
	}
	before := storeFingerprint(dir)
	if before != storeFingerprint(dir) {
		t.Fatal("the fingerprint of an unchanged store changed")
	}
	f, err := os.OpenFile(shm, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteAt([]byte{2, 3, 4, 5}, 8); err != nil { // the change counter
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	if err := os.Chtimes(shm, time.Time{}, fi.ModTime()); err != nil {
		t.Fatal(err)
	}
	if after := storeFingerprint(dir); after == before {
		t.Fatalf("a changed WAL index header left the fingerprint as it was:\n%s", after)
	}
}
