//go:build unix

package fsroot

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"testing"

	"golang.org/x/sys/unix"
)

func TestReadRegular(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "f")
	if err := os.WriteFile(file, []byte("hello"), 0o644); err != nil {
		t.Fatal(err)
	}
	if got, err := ReadRegular(file, 5); err != nil || string(got) != "hello" {
		t.Fatalf("regular file: %q %v", got, err)
	}
	if _, err := ReadRegular(file, 4); !errors.Is(err, ErrTooLarge) {
		t.Fatalf("over the limit: %v", err)
	}
	link := filepath.Join(dir, "link")
	os.Symlink(file, link)
	if got, err := ReadRegular(link, 5); err != nil || string(got) != "hello" {
		t.Fatalf("through a symlink: %q %v", got, err)
	}
	fifo := filepath.Join(dir, "fifo")
	if err := unix.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	// A FIFO with no writer would block a plain open forever.
	if _, err := ReadRegular(fifo, 5); !errors.Is(err, ErrNotRegular) {
		t.Fatalf("FIFO: %v", err)
	}
	for _, dev := range []string{"/dev/zero", "/dev/null", dir} {
		if _, err := ReadRegular(dev, 1<<20); !errors.Is(err, ErrNotRegular) {
			t.Fatalf("%s: %v", dev, err)
		}
	}
	zero := filepath.Join(dir, "zero")
	os.Symlink("/dev/zero", zero)
	if _, err := ReadRegular(zero, 1<<20); !errors.Is(err, ErrNotRegular) {
		t.Fatalf("symlink to /dev/zero: %v", err)
	}
	if _, err := ReadRegular(filepath.Join(dir, "missing"), 5); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("missing: %v", err)
	}
}
