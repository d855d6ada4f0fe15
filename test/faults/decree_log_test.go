//go:build unix

package faults

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/seed1cedbf7c/ckpt/internal/testutil"
)

// A routine's log is streamed: to routine.log, to ckpt's stderr, and into
// attempt-N.log (a hard link), never read whole into memory; the tails
// that failure-context.md and run.json keep are bounded. A routine that
// printed 300 MB once made ckpt read it all at once (and again for its
// copy and its tail) and die, leaving the run "running".

// TestDecreeHugeLog runs a routine that prints 200 MB on one line, twice
// (both attempts fail): ckpt's memory stays small, the run ends dead and
// reverted, the logs are whole on disk, and failure-context.md holds a
// bounded tail.
func TestDecreeHugeLog(t *testing.T) {
	testutil.Long(t, "streams a routine log of hundreds of MiB")
	const size = 200 << 20
	e := newEnv(t)
	e.Write(map[string]string{"a.txt": "a\n"})
	script := `echo b >> a.txt; echo start; head -c ` + strconv.Itoa(size) + ` /dev/zero | tr '\0' x; exit 1`
	code, out, errs, rss := e.runUsage("run", "--id", revertRunID, "--retries", "1", "--", "sh", "-c", script)
	if code != 1 {
		t.Fatalf("ckpt run: exit %d, want 1\nstdout: %s\nstderr: %.500s", code, out, errs)
	}
	if rss > 100<<20 {
		t.Errorf("ckpt run peaked at %d MiB of memory for a %d MiB log", rss>>20, size>>20)
	}
	t.Logf("peak memory %d MiB", rss>>20)
	rec := readRunRecord(e, revertRunID)
	if rec.Status != "dead" || len(rec.Attempts) != 2 || e.Read("a.txt") != "a\n" {
		t.Fatalf("run.json says %s after %d attempts, a.txt = %q; want dead after 2, reverted", rec.Status, len(rec.Attempts), e.Read("a.txt"))
	}
	dir := filepath.Join(e.WS, ".decree", "runs", revertRunID)
	for _, name := range []string{"routine.log", "attempt-1.log", "attempt-2.log"} {
		fi, err := os.Stat(filepath.Join(dir, name))
		if err != nil || fi.Size() != size+int64(len("start\n")) {
			t.Errorf("%s: %v, want %d bytes", name, err, size+6)
		}
	}
	fc, err := os.ReadFile(filepath.Join(dir, "failure-context.md"))
	if err != nil {
		t.Fatal(err)
	}
	if len(fc) > 80<<10 || !strings.Contains(string(fc), "[...]xxxx") {
		t.Errorf("failure-context.md is %d bytes; want a tail of at most 64 KiB, marked cut", len(fc))
	}
	if fi, err := os.Stat(filepath.Join(dir, "run.json")); err != nil || fi.Size() > 64<<10 {
		t.Errorf("run.json: %v (%d bytes)", err, fi.Size())
	}
}
