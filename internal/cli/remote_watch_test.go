package cli

import (
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/seed1cedbf7c/ckpt"
)

// TestWatchPushesContinuously: `ckpt watch -d` pushes each new checkpoint
// to a remote added --continuous, with no push command; a save returns
// without waiting for it.
func TestWatchPushesContinuously(t *testing.T) {
	if !ckpt.WatchSupported {
		t.Skipf("watch mode needs inotify (Linux), and replication runs in the watcher; %s has none", runtime.GOOS)
	}
	r := newRunner(t)
	remoteDir := filepath.Join(t.TempDir(), "remote")
	os.Mkdir(remoteDir, 0o755)
	os.WriteFile(filepath.Join(r.ws, "a.txt"), []byte("one\n"), 0o644)
	r.run("save", "-q")
	r.run("remote", "add", "origin", remoteDir, "--continuous")
	r.run("watch", "-d", "--idle", "5m")
	defer r.run("watch", "--stop")
	for i, content := range []string{"two\n", "three\n"} {
		os.WriteFile(filepath.Join(r.ws, "a.txt"), []byte(content), 0o644)
		id := r.run("save", "-q")
		ref := filepath.Join(remoteDir, "refs", "branches", "main")
		start := time.Now()
		for {
			data, _ := os.ReadFile(ref)
			if strings.Contains(string(data), id) {
				break
			}
			if time.Since(start) > time.Minute {
				log, _ := os.ReadFile(filepath.Join(r.store, "watch.log"))
				t.Fatalf("save %d (%s) not on the remote after a minute; watch.log:\n%s", i, id, log)
			}
			time.Sleep(20 * time.Millisecond)
		}
		t.Logf("save %d on the remote after %v", i, time.Since(start))
	}
	log, _ := os.ReadFile(filepath.Join(r.store, "watch.log"))
	if !strings.Contains(string(log), "pushed 1 checkpoint(s)") {
		t.Errorf("watch.log does not say what it pushed:\n%s", log)
	}
}
