//go:build unix

package scan

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/seed1cedbf7c/ckpt/internal/failpoint"
)

// A directory removed after the scan opened it and before it listed it
// (Linux's getdents then fails with ENOENT) is not there, as when it is
// gone before the open: the scan goes on without it.
func TestDirectoryRemovedWhileOpen(t *testing.T) {
	f := newFixture(t)
	f.write("a/keep.txt", "k\n", 0o644)
	f.write("a/gone/x.txt", "x\n", 0o644)
	f.write("a/gone/sub/y.txt", "y\n", 0o644)
	defer failpoint.Set("scan/dir-opened", func(rel string) error {
		if rel == "a/gone" {
			if err := os.RemoveAll(filepath.Join(f.root, "a/gone")); err != nil {
				t.Error(err)
			}
		}
		return nil
	})()
	res := f.scan()
	got := f.files(res.Root)
	if _, ok := got["a/keep.txt"]; !ok {
		t.Errorf("a/keep.txt is missing: %v", keys(got))
	}
	for _, p := range []string{"a/gone/x.txt", "a/gone/sub/y.txt"} {
		if _, ok := got[p]; ok {
			t.Errorf("%s was removed before it was listed, yet the scan has it", p)
		}
	}
}
