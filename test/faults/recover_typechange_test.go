//go:build unix

package faults

import (
	"fmt"
	"strings"
	"testing"

	"github.com/seed1cedbf7c/ckpt/internal/testutil"
)

// A restore that turns a directory tree into a file (d/lib/data/x.bin
// becomes the file d), killed after each of its changes: recovery
// finishes it. (Recovery once tried to prune directories below the new
// file and failed with "not a directory".)
func TestRecoverAcrossDirectoryToFile(t *testing.T) {
	testutil.Long(t, "kills a restore at every step across a type change")
	for n := 1; n <= 14; n++ {
		t.Run(fmt.Sprint("kill", n), func(t *testing.T) {
			e := newEnv(t)
			e.Write(map[string]string{"d": "d is a file\n", "a.txt": "a1\n", "z.txt": "z1\n"})
			e.Must("save", "-q", "-m", "file")
			e.Must("restore", "-q", "HEAD") // nothing to do: a baseline
			removeAll(t, e, "d")
			e.Write(map[string]string{"d/lib/data/x.bin": "x\n", "d/lib/data/y.bin": "y\n", "d/lib/z": "z\n",
				"d/other/w": "w\n", "a.txt": "a2\n", "z.txt": "z2\n"})
			e.Must("save", "-q", "-m", "tree")
			e.Extra = []string{fmt.Sprintf("CKPT_FAILPOINT=restore/change=kill@%d", n)}
			code, _, _ := e.Run("restore", "HEAD~1")
			e.Extra = nil
			out := e.Must("recover")
			if code == 0 && !strings.Contains(out, "nothing to recover") {
				t.Fatalf("recover after a finished restore: %s", out)
			}
			if got := e.Read("d"); got != "d is a file\n" {
				t.Fatalf("d = %q after recover (%s)", got, out)
			}
			if e.Read("a.txt") != "a1\n" || e.Read("z.txt") != "z1\n" {
				t.Fatalf("a.txt %q z.txt %q", e.Read("a.txt"), e.Read("z.txt"))
			}
			e.Must("fsck")
		})
	}
}
