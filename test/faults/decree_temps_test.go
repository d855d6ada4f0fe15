//go:build unix

package faults

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// A ckpt killed while it writes a run's file atomically leaves the
// temporary file (.decree/runs/ID/.ckpt-tmp-N); the chaos harness found
// that ckpt recover left it for ever. recover now removes such files from
// the directories of runs no ckpt is running: at once for a run it
// settles, after a minute for the others (a ckpt may be writing one now).
func TestDecreeRecoverRemovesRunTemps(t *testing.T) {
	e := newEnv(t)
	const id = "2026010100000000-0"
	e.Must("run", "--id", id, "--", "true")
	dir := filepath.Join(e.WS, ".decree", "runs", id)
	old := time.Now().Add(-2 * time.Minute)
	for name, mtime := range map[string]time.Time{".ckpt-tmp-111": old, ".ckpt-tmp-222": time.Now()} {
		p := filepath.Join(dir, name)
		os.WriteFile(p, []byte("{"), 0o644)
		os.Chtimes(p, mtime, mtime)
	}
	os.Mkdir(filepath.Join(dir, ".ckpt-tmp-notes"), 0o755) // not a file ckpt writes
	out := e.Must("recover")
	if !strings.Contains(out, "removed leftover .decree/runs/"+id+"/.ckpt-tmp-111") {
		t.Errorf("recover: %s", out)
	}
	for name, want := range map[string]bool{".ckpt-tmp-111": false, ".ckpt-tmp-222": true, ".ckpt-tmp-notes": true, "run.json": true} {
		if got := exists(e, ".decree/runs/"+id+"/"+name); got != want {
			t.Errorf("%s exists: %v, want %v", name, got, want)
		}
	}
}
