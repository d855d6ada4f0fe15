//go:build linux

package watch

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/seed1cedbf7c/ckpt/internal/failpoint"
	"github.com/seed1cedbf7c/ckpt/internal/scan"
)

// limitDaemon is a daemon on a workspace, with its stat cache and log.
type limitDaemon struct {
	root, cache, sock string
	mu                sync.Mutex
	log               []string
}

// writeCache writes the workspace's stat cache (what a save does).
func (l *limitDaemon) writeCache(t *testing.T) {
	t.Helper()
	w, err := scan.NewCacheWriter(l.cache, 0, 1, "i", "")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := scan.Scan(context.Background(), scan.Options{Root: l.root, CacheOut: w}); err != nil {
		t.Fatal(err)
	}
	if err := w.Commit(); err != nil {
		t.Fatal(err)
	}
}

func (l *limitDaemon) logged(sub string) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	n := 0
	for _, s := range l.log {
		if strings.Contains(s, sub) {
			n++
		}
	}
	return n
}

// startLimitDaemon writes dirs (each with a file), a stat cache of them,
// and starts a daemon.
func startLimitDaemon(t *testing.T, dirs ...string) *limitDaemon {
	t.Helper()
	state := t.TempDir()
	l := &limitDaemon{root: t.TempDir(), cache: filepath.Join(state, "statcache"), sock: filepath.Join(state, "w.sock")}
	for _, d := range dirs {
		os.MkdirAll(filepath.Join(l.root, d), 0o755)
		os.WriteFile(filepath.Join(l.root, d, "f.txt"), []byte("x"), 0o644)
	}
	l.writeCache(t)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	logf := func(s string) { l.mu.Lock(); l.log = append(l.log, s); l.mu.Unlock() }
	go func() { done <- Run(ctx, Options{Root: l.root, Cache: l.cache, Socket: l.sock, Log: logf}) }()
	t.Cleanup(func() { cancel(); <-done })
	for range 300 {
		if _, err := GetStatus(ctx, l.sock); err == nil {
			return l
		}
		select {
		case err := <-done:
			t.Fatalf("daemon stopped: %v", err)
		case <-time.After(10 * time.Millisecond):
		}
	}
	t.Fatal("daemon did not start")
	return nil
}

// failAdd makes adding the watch of each of dirs fail as at the inotify
// watch limit, until the test ends or the returned function is called.
func failAdd(t *testing.T, dirs ...string) func() {
	var disarms []func()
	for _, d := range dirs {
		disarms = append(disarms, failpoint.Set("watch/add("+d+")", func(string) error { return errors.New("no watch left") }))
	}
	disarm := func() {
		for _, f := range disarms {
			f()
		}
		disarms = nil
	}
	t.Cleanup(disarm)
	return disarm
}

// At the watch limit, the directories that cannot be watched are named
// in every answer (so every save reads them, and their ancestors), the
// daemon is not broken, and the status and answers carry a warning that
// names the limit, the count and the fix.
func TestWatchLimitUnwatched(t *testing.T) {
	disarmFirst := failAdd(t, "lim1/slow", "lim1/slow/deeper/x", "lim2")
	l := startLimitDaemon(t, "lim1/slow/deeper/x", "lim1/fast", "lim2", "lim3/ok")
	st, err := GetStatus(context.Background(), l.sock)
	if err != nil {
		t.Fatal(err)
	}
	if st.Error != "" || st.Unwatched != 3 {
		t.Fatalf("status: error %q, unwatched %d; want no error, 3 unwatched", st.Error, st.Unwatched)
	}
	if !strings.Contains(st.Warning, "fs.inotify.max_user_watches = ") && !strings.Contains(st.Warning, "user.max_inotify_watches = ") {
		t.Errorf("the warning does not name the limit and its value: %q", st.Warning)
	}
	for _, want := range []string{"3 directories are not watched", "every save reads them in full", "sudo sysctl ", "/etc/sysctl.d/"} {
		if !strings.Contains(st.Warning, want) {
			t.Errorf("the warning lacks %q: %q", want, st.Warning)
		}
	}
	if n := l.logged("warning: the inotify watch limit is reached"); n != 1 {
		t.Errorf("%d warnings logged, want 1", n)
	}

	a := query(t, l.sock, "")
	if !a.Full {
		t.Fatalf("first answer %+v", a)
	}
	a = query(t, l.sock, a.Token)
	unwatched := []string{"lim1/slow", "lim1/slow/deeper/x", "lim2"}
	if a.Full || !slices.Equal(a.Dirty, unwatched) || a.Warning != st.Warning {
		t.Fatalf("nothing changed: full %v (%s), dirty %q, warning %q; want %q and the status's warning", a.Full, a.Reason, a.Dirty, a.Warning, unwatched)
	}
	unchanged := Unchanged(a.Dirty)
	for dir, want := range map[string]bool{"": false, "lim1": false, "lim1/slow": false, "lim1/slow/deeper": false,
		"lim1/slow/deeper/x": false, "lim2": false, "lim1/fast": true, "lim3": true, "lim3/ok": true} {
		if unchanged(dir) != want {
			t.Errorf("Unchanged(%q) = %v, want %v", orDot(dir), !want, want)
		}
	}

	// An edit in a watched directory below an unwatched one is an event.
	tok := a.Token
	os.WriteFile(filepath.Join(l.root, "lim1/slow/deeper/f.txt"), []byte("y"), 0o644)
	a = query(t, l.sock, tok)
	if a.Full || !slices.Equal(a.Dirty, []string{"lim1/slow", "lim1/slow/deeper", "lim1/slow/deeper/x", "lim2"}) {
		t.Fatalf("after an edit in lim1/slow/deeper: full %v (%s), dirty %q", a.Full, a.Reason, a.Dirty)
	}

	// A directory that comes later and cannot be watched joins them, and
	// so do the directories below it; those it can watch are watched.
	// (Moved in whole, so the walk finds all of them.)
	disarmNew := failAdd(t, "lim3/new", "lim3/new/a")
	outside := t.TempDir()
	os.MkdirAll(filepath.Join(outside, "new/a/b"), 0o755)
	if err := os.Rename(filepath.Join(outside, "new"), filepath.Join(l.root, "lim3/new")); err != nil {
		t.Fatal(err)
	}
	if a = query(t, l.sock, a.Token); a.Full || !slices.Equal(a.Unvouched, []string{"lim3/new"}) {
		t.Fatalf("a directory moved in: %+v", a)
	}
	a = query(t, l.sock, a.Token)
	want := []string{"lim1/slow", "lim1/slow/deeper/x", "lim2", "lim3/new", "lim3/new/a"}
	if a.Full || !slices.Equal(a.Dirty, want) {
		t.Fatalf("after moving in lim3/new/a/b: full %v (%s), dirty %q, want %q", a.Full, a.Reason, a.Dirty, want)
	}
	os.WriteFile(filepath.Join(l.root, "lim3/new/a/b/g.txt"), []byte("g"), 0o644)
	a = query(t, l.sock, a.Token)
	if a.Full || !slices.Contains(a.Dirty, "lim3/new/a/b") {
		t.Fatalf("lim3/new/a/b is not watched: full %v (%s), dirty %q", a.Full, a.Reason, a.Dirty)
	}
	if st, _ := GetStatus(context.Background(), l.sock); st.Unwatched != 5 || !strings.Contains(st.Warning, "5 directories") {
		t.Fatalf("status: %d unwatched, warning %q", st.Unwatched, st.Warning)
	}

	// A save (a new stat cache) makes the daemon try again: gone
	// directories are forgotten; those it can watch now are watched, and
	// since what happened in them before is unknown, the next answer is
	// full once.
	disarmNew()
	if err := os.RemoveAll(filepath.Join(l.root, "lim3/new")); err != nil {
		t.Fatal(err)
	}
	l.writeCache(t)
	a = query(t, l.sock, a.Token)
	if st, _ := GetStatus(context.Background(), l.sock); a.Full || st.Unwatched != 3 {
		t.Fatalf("after lim3/new went: full %v (%s), %d unwatched, want 3", a.Full, a.Reason, st.Unwatched)
	}
	disarmFirst()
	l.writeCache(t)
	if a = query(t, l.sock, a.Token); !a.Full || a.Warning != "" {
		t.Fatalf("watched again: full %v (%s), warning %q; want full and no warning", a.Full, a.Reason, a.Warning)
	}
	if st, _ := GetStatus(context.Background(), l.sock); st.Unwatched != 0 || st.Warning != "" || l.logged("every directory is watched again") != 1 {
		t.Fatalf("watched again: status %d unwatched, warning %q; logged %d times that every directory is watched", st.Unwatched, st.Warning, l.logged("every directory is watched again"))
	}
	if a = query(t, l.sock, a.Token); a.Full || len(a.Dirty) != 0 {
		t.Fatalf("nothing changed: %+v", a)
	}
}
