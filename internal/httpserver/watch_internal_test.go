package httpserver

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/seed1cedbf7c/ckpt"
)

// A commit changes the fingerprint even where the store's files hide it
// (after a checkpoint SQLite writes the WAL from its start again, so its
// size stays; two commits within one tick of the file system's clock
// leave one modification time): the part the files do not show, the
// store's data version, changes with every commit, of this process or
// another, and stays while nothing is committed.
func TestFingerprintSeesCommitsTheFilesHide(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	ws, sd := filepath.Join(dir, "ws"), filepath.Join(dir, "store")
	save := func(r *ckpt.Repo, content string) {
		t.Helper()
		if err := os.WriteFile(filepath.Join(ws, "a.txt"), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		if _, err := r.Save(ctx, ckpt.SaveOptions{Message: content}); err != nil {
			t.Fatal(err)
		}
	}
	open := func() *ckpt.Repo {
		t.Helper()
		r, err := ckpt.Open(ctx, ws, ckpt.Options{Store: sd})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { r.Close() })
		return r
	}
	if err := os.MkdirAll(ws, 0o755); err != nil {
		t.Fatal(err)
	}
	r := open()
	save(r, "one")
	w := &watcher{s: &Server{repo: r}}
	hidden := func() string {
		t.Helper()
		fp, files := w.fingerprint(ctx), storeFingerprint(sd)
		if !strings.HasPrefix(fp, files) {
			t.Fatalf("the fingerprint does not start with the store's files:\n%s", fp)
		}
		return fp[len(files):]
	}
	last := hidden()
	if again := hidden(); again != last {
		t.Fatalf("with nothing committed, the fingerprint went from %q to %q", last, again)
	}
	other := open()
	for i, r := range []*ckpt.Repo{other, r, other} {
		save(r, fmt.Sprint("two", i))
		if now := hidden(); now == last {
			t.Fatalf("save %d: a commit left the fingerprint's hidden part as it was: %q", i, now)
		} else {
			last = now
		}
	}
}
