//go:build unix

package faults

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/seed1cedbf7c/ckpt/internal/treegen"
)

// emptyDirs lists the workspace's empty directories (outside .decree).
func emptyDirs(e *env) []string {
	e.T.Helper()
	var out []string
	err := filepath.WalkDir(e.WS, func(p string, d os.DirEntry, err error) error {
		if err != nil || !d.IsDir() {
			return err
		}
		if d.Name() == ".decree" {
			return filepath.SkipDir
		}
		if des, err := os.ReadDir(p); err == nil && len(des) == 0 {
			rel, _ := filepath.Rel(e.WS, p)
			out = append(out, filepath.ToSlash(rel))
		}
		return nil
	})
	if err != nil {
		e.T.Fatal(err)
	}
	return out
}

// TestRecoverPrunesEmptiedDirectories kills a restore after each change:
// the recovery finishes it exactly, including the removal of directories
// the restore's deletions had emptied before the kill.
func TestRecoverPrunesEmptiedDirectories(t *testing.T) {
	for n := 1; ; n++ {
		e := newEnv(t)
		e.Write(map[string]string{"keep.txt": "k\n"})
		v1 := strings.TrimSpace(e.Must("save", "-q", "-m", "v1"))
		s1 := e.Snapshot()
		e.Write(map[string]string{"x/y/z.txt": "z\n", "x/y/w.txt": "w\n", "x/v.txt": "v\n", "u/t.txt": "t\n"})
		e.Must("save", "-q", "-m", "v2")
		s2 := e.Snapshot()
		point := fmt.Sprintf("restore/change=kill@%d", n)
		e.Extra = []string{"CKPT_FAILPOINT=" + point}
		code, _, errs := e.Run("restore", v1)
		e.Extra = nil
		if code == 0 {
			if n <= 4 {
				t.Fatalf("restore not killed at %s", point)
			}
			return
		}
		if code != -1 { // not SIGKILLed
			t.Fatalf("restore killed at %s: exit %d: %s", point, code, errs)
		}
		e.Must("recover")
		if d := treegen.Diff(s1, e.Snapshot()); d != "" {
			t.Fatalf("killed at %s, then recovered:\n%s", point, d)
		}
		if dirs := emptyDirs(e); len(dirs) > 0 {
			t.Fatalf("killed at %s, then recovered: empty directories left: %v", point, dirs)
		}
		e.Must("undo")
		if d := treegen.Diff(s2, e.Snapshot()); d != "" {
			t.Fatalf("killed at %s, recovered, then undone:\n%s", point, d)
		}
	}
}
