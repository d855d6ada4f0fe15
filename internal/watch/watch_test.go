//go:build linux

package watch

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/seed1cedbf7c/ckpt/internal/object"
	"github.com/seed1cedbf7c/ckpt/internal/scan"
)

// setup writes a workspace and a stat cache listing its directories, and
// starts a daemon on them.
func setup(t *testing.T) (root, sock string) {
	t.Helper()
	return setupWith(t, Options{})
}

// setupWith is setup with more options (Root, Cache and Socket are set).
func setupWith(t *testing.T, opts Options) (root, sock string) {
	t.Helper()
	root = t.TempDir()
	for _, d := range []string{"a/b", "c", "sub/deep"} {
		os.MkdirAll(filepath.Join(root, d), 0o755)
		os.WriteFile(filepath.Join(root, d, "f.txt"), []byte("x"), 0o644)
	}
	state := t.TempDir()
	cache := filepath.Join(state, "statcache")
	w, err := scan.NewCacheWriter(cache, 0, 1, "i", "")
	if err != nil {
		t.Fatal(err)
	}
	res, err := scan.Scan(context.Background(), scan.Options{Root: root, CacheOut: w})
	if err != nil || res.Root == object.ZeroID {
		t.Fatal(err)
	}
	if err := w.Commit(); err != nil {
		t.Fatal(err)
	}
	sock = filepath.Join(state, "w.sock")
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	opts.Root, opts.Cache, opts.Socket = root, cache, sock
	go func() { done <- Run(ctx, opts) }()
	t.Cleanup(func() { cancel(); <-done })
	for i := 0; i < 200; i++ {
		if _, err := GetStatus(ctx, sock); err == nil {
			return root, sock
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatal("daemon did not start")
	return
}

// oldQuery asks as a client from before Answer.Unvouched did.
func oldQuery(t *testing.T, sock, token string) *Answer {
	t.Helper()
	resp, err := call(context.Background(), sock, request{Op: "query", Token: token}, 3*time.Second)
	if err != nil || resp.Answer == nil {
		t.Fatal(resp, err)
	}
	return resp.Answer
}

func query(t *testing.T, sock, token string) *Answer {
	t.Helper()
	a, err := Query(context.Background(), sock, token, 3*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(a.Dirty)
	return a
}

func TestDaemon(t *testing.T) {
	root, sock := setup(t)

	a := query(t, sock, "")
	if !a.Full || !strings.Contains(a.Reason, "no watcher token") {
		t.Fatalf("first answer %+v", a)
	}
	a = query(t, sock, a.Token)
	if a.Full || len(a.Dirty) != 0 {
		t.Fatalf("nothing changed: %+v", a)
	}
	// A file edit deep down marks its directory only.
	tok := a.Token
	os.WriteFile(filepath.Join(root, "sub/deep/f.txt"), []byte("y"), 0o644)
	a = query(t, sock, tok)
	if a.Full || !slices.Equal(a.Dirty, []string{"sub/deep"}) {
		t.Fatalf("after an edit: %+v", a)
	}
	// A new directory: what happened in it before its watch was added is
	// unknown (a hard link made and removed there), so the daemon names
	// it apart, its parent dirty; it is watched from then on.
	tok = a.Token
	os.MkdirAll(filepath.Join(root, "c/new/er"), 0o755)
	os.WriteFile(filepath.Join(root, "c/new/er/g.txt"), []byte("g"), 0o644)
	a = query(t, sock, tok)
	if a.Full || !slices.Contains(a.Unvouched, "c/new") || !slices.Contains(a.Dirty, "c") {
		t.Fatalf("after mkdir -p: %+v", a)
	}
	// A client that does not know of Unvouched is told "full" instead.
	if a := oldQuery(t, sock, tok); !a.Full || !strings.Contains(a.Reason, "directory c/new") || !strings.Contains(a.Reason, "was created") ||
		len(a.RawDirty)+len(a.RawUnvouched) != 0 {
		t.Fatalf("after mkdir -p, asked without Unvouched: %+v", a)
	}
	if a := query(t, sock, a.Token); a.Full || len(a.Unvouched) != 0 {
		t.Fatalf("asked again with the new token: %+v", a)
	}
	tok = a.Token
	os.WriteFile(filepath.Join(root, "c/new/er/g.txt"), []byte("g2"), 0o644)
	if a = query(t, sock, tok); !slices.Equal(a.Dirty, []string{"c/new/er"}) {
		t.Fatalf("edit in a new directory: %+v", a)
	}
	// The sync cookie is never reported.
	if a = query(t, sock, a.Token); len(a.Dirty) != 0 {
		t.Fatalf("cookie reported: %+v", a)
	}
	// A renamed directory: both names (and the directory itself, moved).
	tok = a.Token
	os.Rename(filepath.Join(root, "a"), filepath.Join(root, "a2"))
	if a = query(t, sock, tok); a.Full || !slices.Contains(a.Unvouched, "a") || !slices.Contains(a.Unvouched, "a2") {
		t.Fatalf("after a rename: %+v", a)
	}
	if a := oldQuery(t, sock, tok); !a.Full || !strings.Contains(a.Reason, "moved") {
		t.Fatalf("after a rename, asked without Unvouched: %+v", a)
	}
	// A changed ignore file, another epoch: full.

	tok = a.Token
	os.WriteFile(filepath.Join(root, "sub/.gitignore"), []byte("*.o\n"), 0o644)
	if a = query(t, sock, tok); !a.Full || !strings.Contains(a.Reason, "sub/.gitignore changed") {
		t.Fatalf("after .gitignore: %+v", a)
	}
	if a = query(t, sock, "otherepoch:5"); !a.Full || !strings.Contains(a.Reason, "started after") {
		t.Fatalf("another epoch: %+v", a)
	}
	st, err := GetStatus(context.Background(), sock)
	if err != nil || st.Root != root || st.Watches < 5 {
		t.Fatalf("status %+v %v", st, err)
	}
	if err := Stop(context.Background(), sock); err != nil {
		t.Fatal(err)
	}
	time.Sleep(50 * time.Millisecond)
	if _, err := Query(context.Background(), sock, a.Token, time.Second); err == nil {
		t.Fatal("the daemon still answers after stop")
	}
	if des, _ := os.ReadDir(root); slices.ContainsFunc(des, func(de os.DirEntry) bool { return strings.HasPrefix(de.Name(), CookiePrefix) }) {
		t.Fatal("a cookie file was left")
	}
}

func TestSecondDaemonRefused(t *testing.T) {
	root, sock := setup(t)
	err := Run(context.Background(), Options{Root: root, Cache: filepath.Join(filepath.Dir(sock), "statcache"), Socket: sock})
	if err == nil || !strings.Contains(err.Error(), "already listens") {
		t.Fatalf("second daemon: %v", err)
	}
}

func TestUnchanged(t *testing.T) {
	u := Unchanged([]string{"a/b/c", "x"})
	for rel, want := range map[string]bool{"": false, "a": false, "a/b": false, "a/b/c": false, "a/b/c/d": true, "a/z": true, "x": false, "y": true} {
		if got := u(rel); got != want {
			t.Errorf("Unchanged(%q) = %v, want %v", rel, got, want)
		}
	}
	if !Unchanged(nil)("") {
		t.Error("nothing dirty: the root is unchanged")
	}
}

func TestSocketPath(t *testing.T) {
	if p := SocketPath("/s"); p != "/s/watch.sock" {
		t.Fatal(p)
	}
	long := "/" + strings.Repeat("x", 120)
	if p := SocketPath(long); len(p) >= 100 || !strings.HasPrefix(filepath.Base(p), "ckpt-watch-") {
		t.Fatal(p)
	}
}

// Directories a new stat cache lists that the watcher does not watch yet
// (thousands after a workspace's first checkpoint) make one log line, not
// one each.
func TestUnwatchedDirectoriesLogOnce(t *testing.T) {
	root, state := t.TempDir(), t.TempDir()
	os.WriteFile(filepath.Join(root, ".ckptignore"), []byte("x*/\n"), 0o644)
	for i := range 20 {
		d := filepath.Join(root, "x"+strings.Repeat("y", i))
		os.MkdirAll(d, 0o755)
		os.WriteFile(filepath.Join(d, "f.txt"), []byte("x"), 0o644)
	}
	cache := filepath.Join(state, "statcache")
	writeCache := func() {
		w, err := scan.NewCacheWriter(cache, 0, 1, "i", "")
		if err != nil {
			t.Fatal(err)
		}
		if _, err := scan.Scan(context.Background(), scan.Options{Root: root, CacheOut: w}); err != nil {
			t.Fatal(err)
		}
		if err := w.Commit(); err != nil {
			t.Fatal(err)
		}
	}
	writeCache() // without the x* directories
	sock := filepath.Join(state, "w.sock")
	lines := make(chan string, 1000)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- Run(ctx, Options{Root: root, Cache: cache, Socket: sock, Log: func(s string) { lines <- s }})
	}()
	t.Cleanup(func() { cancel(); <-done })
	var a *Answer
	for i := 0; i < 200; i++ {
		if _, err := GetStatus(ctx, sock); err == nil {
			a = query(t, sock, "")
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	if a == nil {
		t.Fatal("daemon did not start")
	}
	os.Remove(filepath.Join(root, ".ckptignore"))
	writeCache() // now with them
	query(t, sock, a.Token)
	n := 0
	for len(lines) > 0 {
		if l := <-lines; strings.Contains(l, "not watched") {
			n++
			if !strings.Contains(l, "20 directories were not watched") {
				t.Errorf("log line %q", l)
			}
		}
	}
	if n != 1 {
		t.Errorf("%d log lines about unwatched directories, want 1", n)
	}
}
