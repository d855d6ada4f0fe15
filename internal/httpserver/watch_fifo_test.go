//go:build unix

package httpserver

import (
	"bytes"
	"os"
	"path/filepath"
	"syscall"
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

// A FIFO in the WAL index's place must not stop the poller: opening one
// to read blocks until a writer comes, and the poller would stop seeing
// other processes' changes for good.
func TestFingerprintDoesNotBlockOnAFIFO(t *testing.T) {
	dir := storeFiles(t)
	shm := filepath.Join(dir, "ckpt.db-shm")
	if err := os.Remove(shm); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(shm, 0o644); err != nil {
		t.Fatal(err)
	}
	done := make(chan string, 1)
	go func() { done <- storeFingerprint(dir) }()
	select {
	case fp := <-done:
		if fp == "" {
			t.Fatal("no fingerprint of a store with a FIFO in it")
		}
	case <-time.After(time.Minute):
		// Not a speed check: the open never returns without a writer.
		// Open the FIFO to write so the goroutine can end.
		if f, err := os.OpenFile(shm, os.O_WRONLY|syscall.O_NONBLOCK, 0); err == nil {
			f.Close()
		}
		t.Fatalf("the fingerprint blocked on %s, a FIFO", shm)
	}
}
