package flock

import (
	"os"
	"path/filepath"
	"testing"
)

func TestTryLockExcludesOtherHolder(t *testing.T) {
	p := filepath.Join(t.TempDir(), "lock")
	open := func() *os.File {
		f, err := os.OpenFile(p, os.O_RDWR|os.O_CREATE, 0o600)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { f.Close() })
		return f
	}
	a, b := open(), open()
	if ok, err := TryLock(a); !ok || err != nil {
		t.Fatalf("first TryLock: got %v, %v, want true, nil", ok, err)
	}
	if ok, err := TryLock(b); ok || err != nil {
		t.Fatalf("TryLock while held: got %v, %v, want false, nil", ok, err)
	}
	// The holder's file stays readable and writable (Windows locks ranges).
	if _, err := a.WriteAt([]byte("123 ckpt\n"), 0); err != nil {
		t.Fatal(err)
	}
	if data, err := os.ReadFile(p); err != nil || string(data) != "123 ckpt\n" {
		t.Fatalf("reading the locked file: got %q, %v", data, err)
	}
	if err := Unlock(a); err != nil {
		t.Fatal(err)
	}
	if err := Lock(b); err != nil {
		t.Fatalf("Lock after Unlock: %v", err)
	}
	if ok, err := TryLock(a); ok || err != nil {
		t.Fatalf("TryLock while b holds: got %v, %v, want false, nil", ok, err)
	}
	b.Close()
	if ok, err := TryLock(a); !ok || err != nil {
		t.Fatalf("TryLock after the holder closed: got %v, %v, want true, nil", ok, err)
	}
}
