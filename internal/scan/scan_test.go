//go:build unix

package scan

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/seed1cedbf7c/ckpt/internal/object"
	"github.com/seed1cedbf7c/ckpt/internal/store"
	"github.com/seed1cedbf7c/ckpt/internal/tree"
)

type fixture struct {
	t         *testing.T
	root      string
	mem       *store.Memory
	cache     *Cache
	treeReads int
	lookups   int // trees looked up (HasTree) by the last scan
	stored    int // trees stored (PutTreeFrom) by the last scan
}

// countingSink counts the trees a scan looks up and stores.
type countingSink struct {
	store.Tx
	lookups, stored *int
}

func (c countingSink) HasTree(id object.ID) (bool, error) { *c.lookups++; return c.Tx.HasTree(id) }

func (c countingSink) PutTreeFrom(id object.ID, data []byte, base object.ID) error {
	*c.stored++
	return c.Tx.PutTreeFrom(id, data, base)
}

func newFixture(t *testing.T) *fixture {
	return &fixture{t: t, root: t.TempDir(), mem: store.NewMemory("")}
}

func (f *fixture) write(p, data string, perm fs.FileMode) {
	f.t.Helper()
	full := filepath.Join(f.root, filepath.FromSlash(p))
	if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
		f.t.Fatal(err)
	}
	if err := os.WriteFile(full, []byte(data), perm); err != nil {
		f.t.Fatal(err)
	}
	if err := os.Chmod(full, perm); err != nil {
		f.t.Fatal(err)
	}
}

// scan runs a storing scan with the current cache and installs the new one,
// the way a save does. It counts the trees the scan reads from the store.
func (f *fixture) scan() *Result {
	f.t.Helper()
	f.treeReads, f.lookups, f.stored = 0, 0, 0
	return f.scanTx(func(tx store.Tx) Options {
		load := func(id object.ID) (*object.Tree, error) { f.treeReads++; return tx.ReadTree(id) }
		return Options{Sink: countingSink{tx, &f.lookups, &f.stored}, LoadTree: load, Workers: 1}
	})
}

// scanTx scans f.root in a transaction of f.mem with the options opts
// gives for it, from f.cache, and makes the new stat cache f.cache.
func (f *fixture) scanTx(opts func(tx store.Tx) Options) *Result {
	f.t.Helper()
	cw, err := NewCacheWriter("", FSClock(f.root), 1, "test", "")
	if err != nil {
		f.t.Fatal(err)
	}
	var res *Result
	err = f.mem.Update(context.Background(), func(tx store.Tx) error {
		o := opts(tx)
		o.Root, o.Cache, o.CacheOut = f.root, f.cache, cw
		var err error
		res, err = Scan(context.Background(), o)
		return err
	})
	if err != nil {
		f.t.Fatal(err)
	}
	if err := cw.Commit(); err != nil {
		f.t.Fatal(err)
	}
	if f.cache, err = cw.Cache(); err != nil {
		f.t.Fatal(err)
	}
	return res
}

func (f *fixture) files(root object.ID) map[string]object.Entry {
	f.t.Helper()
	m := map[string]object.Entry{}
	err := tree.Walk(context.Background(), f.mem.ReadTree, root, nil, func(p string, e object.Entry) error {
		m[p] = e
		return nil
	})
	if err != nil {
		f.t.Fatal(err)
	}
	return m
}

func TestScanCapturesEntries(t *testing.T) {
	f := newFixture(t)
	f.write("a.txt", "a\n", 0o644)
	f.write("bin/run", "#!/bin/sh\n", 0o755)
	f.write("empty", "", 0o600)
	f.write("caf\xe9/\xff.txt", "latin-1 name\n", 0o644)
	os.Symlink("../outside/target", filepath.Join(f.root, "link"))
	os.Symlink("bin", filepath.Join(f.root, "dirlink"))
	os.MkdirAll(filepath.Join(f.root, "emptydir/nested"), 0o755)
	f.write(".git/config", "x", 0o644)
	f.write("sub/.git/HEAD", "x", 0o644)
	f.write(".ckpt/x", "x", 0o644)
	f.write(".decree/inbox/m.md", "x", 0o644)
	f.write(".ckpt-tmp-abc/leftover", "x", 0o644) // a user's: captured
	f.write(".ckpt-tmp-watch-0123", "", 0o600)    // the watcher's: skipped
	syscall.Mkfifo(filepath.Join(f.root, "fifo"), 0o644)

	res := f.scan()
	got := f.files(res.Root)
	want := map[string]uint32{
		"a.txt": 0o100644, "bin/run": 0o100755, "empty": 0o100600,
		"caf\xe9/\xff.txt": 0o100644, "link": 0o120000, "dirlink": 0o120000,
		".ckpt-tmp-abc/leftover": 0o100644,
	}
	if len(got) != len(want) {
		t.Fatalf("captured %v, want %v", keys(got), want)
	}
	for p, mode := range want {
		if got[p].Mode != mode {
			t.Errorf("%q: mode %o, want %o", p, got[p].Mode, mode)
		}
	}
	if got["link"].ID != object.Sum([]byte("../outside/target")) || got["link"].Size != int64(len("../outside/target")) {
		t.Errorf("symlink entry records %v, want its target", got["link"])
	}
	if got["a.txt"].ID != object.Sum([]byte("a\n")) {
		t.Errorf("a.txt id is not the SHA-256 of its content")
	}
	if len(res.Skipped) != 1 || res.Skipped[0].Path != "fifo" || res.Skipped[0].Reason != "named pipe (FIFO)" {
		t.Errorf("skipped = %v, want the FIFO", res.Skipped)
	}
	if len(res.Temp) != 1 || res.Temp[0] != ".ckpt-tmp-watch-0123" {
		t.Errorf("temp = %v", res.Temp)
	}
	if !res.Untracked[""] {
		t.Errorf("root should be marked as holding uncaptured entries (the FIFO)")
	}
}

func keys(m map[string]object.Entry) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}

// waitClock waits until the file system clock has moved past every mtime
// in the tree, so cache entries become trusted.
func waitClock(t *testing.T, dir string) {
	start := FSClock(dir)
	for FSClock(dir) <= start {
		time.Sleep(time.Millisecond)
	}
}

func TestCacheAvoidsRereading(t *testing.T) {
	f := newFixture(t)
	for i := 0; i < 50; i++ {
		f.write(filepath.Join("d", string(rune('a'+i%26)), "f"+string(rune('0'+i%10))+".txt"), "content\n", 0o644)
	}
	f.write("top.txt", "top\n", 0o644)
	f.write("d/mid.txt", "mid\n", 0o644)
	first := f.scan()
	if first.Hashed == 0 {
		t.Fatal("first scan hashed nothing")
	}
	waitClock(t, f.root)
	f.scan() // entries written before this scan's clock are now trusted
	waitClock(t, f.root)
	again := f.scan()
	if again.Hashed != 0 {
		t.Fatalf("an unchanged tree re-read %d files", again.Hashed)
	}
	// One lookup checks that the root tree taken from the cache is in the
	// store.
	if f.treeReads != 0 || f.lookups != 1 || f.stored != 0 {
		t.Fatalf("an unchanged tree read %d trees from the store, looked up %d and stored %d", f.treeReads, f.lookups, f.stored)
	}
	if again.Root != first.Root {
		t.Fatal("root changed")
	}
	f.write("d/a/f0.txt", "changed\n", 0o644)
	third := f.scan()
	if third.Hashed != 1 {
		t.Fatalf("one changed file: hashed %d", third.Hashed)
	}
	// Only the directories on the changed file's path are re-read and
	// stored, without a lookup: d/a, d and the root. (The 25 other
	// subdirectories of d, unchanged, are each looked up once: their trees,
	// taken from the cache, must be in the store.)
	if f.treeReads > 3 || f.stored != 3 || f.lookups != 25 {
		t.Fatalf("one changed file read %d trees, stored %d and looked up %d (want the 3 on its path stored, and 25 lookups)", f.treeReads, f.stored, f.lookups)
	}
	// The file back as it was: its directories go back to trees the store
	// holds, and the scan records them again.
	f.write("d/a/f0.txt", "content\n", 0o644)
	if back := f.scan(); back.Root != first.Root {
		t.Fatalf("the tree back as it was has root %s, want %s", back.Root, first.Root)
	}
}

// TestRacyRewrites: a same-size rewrite right after a scan, and a rewrite
// with the mtime set back, are always seen.
func TestRacyRewrites(t *testing.T) {
	for i := 0; i < 50; i++ {
		f := newFixture(t)
		f.write("x.txt", "AAAA", 0o644)
		r1 := f.scan()
		// Rewrite at once, same size: mtime may be in the same clock tick.
		f.write("x.txt", "BBBB", 0o644)
		r2 := f.scan()
		if r2.Root == r1.Root {
			t.Fatalf("trial %d: same-size rewrite right after a scan was missed", i)
		}
		if got := f.files(r2.Root)["x.txt"].ID; got != object.Sum([]byte("BBBB")) {
			t.Fatalf("trial %d: recorded wrong content", i)
		}
		// Rewrite with the old mtime put back (ctime still moves).
		fi, _ := os.Stat(filepath.Join(f.root, "x.txt"))
		waitClock(t, f.root)
		f.scan()
		f.write("x.txt", "CCCC", 0o644)
		os.Chtimes(filepath.Join(f.root, "x.txt"), fi.ModTime(), fi.ModTime())
		r3 := f.scan()
		if got := f.files(r3.Root)["x.txt"].ID; got != object.Sum([]byte("CCCC")) {
			t.Fatalf("trial %d: rewrite with mtime set back was missed", i)
		}
	}
}

func TestSizeLimitAndUnreadable(t *testing.T) {
	f := newFixture(t)
	f.write("small", "0123", 0o644)
	f.write("big", "0123456789", 0o644)
	res, err := Scan(context.Background(), Options{Root: f.root, MaxFileSize: 5})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Skipped) != 1 || res.Skipped[0].Path != "big" || res.Skipped[0].Size != 10 {
		t.Fatalf("skipped = %+v", res.Skipped)
	}
	if os.Getuid() == 0 {
		return // root reads anything; the CLI scripts cover EACCES via setpriv
	}
	f.write("secret", "x", 0o000)
	_, err = Scan(context.Background(), Options{Root: f.root})
	var pe *PathError
	if !errors.As(err, &pe) || pe.Path != "secret" || !errors.Is(err, fs.ErrPermission) {
		t.Fatalf("unreadable file: got %v, want a PathError for secret", err)
	}
}

// capturedPaths lists the files and symlinks a scan without a Sink
// captured, in order.
func capturedPaths(res *Result) []string {
	var got []string
	tree.Walk(context.Background(), func(ctx context.Context, id object.ID) (*object.Tree, error) {
		return object.DecodeTree(res.Trees[id])
	}, res.Root, nil, func(p string, e object.Entry) error {
		got = append(got, p)
		return nil
	})
	return got
}

func TestIgnoredDirectoryNotDescended(t *testing.T) {
	f := newFixture(t)
	f.write(".gitignore", "node_modules/\n*.log\n!keep.log\n", 0o644)
	f.write("node_modules/pkg/index.js", "x", 0o644)
	f.write("a.log", "x", 0o644)
	f.write("keep.log", "x", 0o644)
	f.write(".ckptignore", "!.env\n", 0o644)
	f.write("sub/.gitignore", ".env\n", 0o644)
	f.write("sub/.env", "SECRET=1", 0o644)
	// An unreadable ignored directory is never opened.
	os.Chmod(filepath.Join(f.root, "node_modules"), 0o000)
	defer os.Chmod(filepath.Join(f.root, "node_modules"), 0o755)
	res, err := Scan(context.Background(), Options{Root: f.root, Sink: nil})
	if err != nil {
		t.Fatal(err)
	}
	got := capturedPaths(res)
	want := []string{".ckptignore", ".gitignore", "keep.log", "sub/.env", "sub/.gitignore"}
	if len(got) != len(want) {
		t.Fatalf("got %v, want %v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("got %v, want %v", got, want)
		}
	}
}

// TestIncludeIgnored: Options.Include captures paths the ignore rules
// leave out, and everything below them — through an ignored directory, of
// which nothing else is captured — and reports them in Result.Forced; what
// is not there is not made up.
func TestIncludeIgnored(t *testing.T) {
	f := newFixture(t)
	f.write(".gitignore", "/build\n*.log\n", 0o644)
	f.write("a.log", "x", 0o644)
	f.write("b.log", "x", 0o644)
	f.write("build/keep/x.o", "x", 0o644)
	f.write("build/keep/y.o", "y", 0o644)
	f.write("build/other", "x", 0o644)
	f.write("src/c.go", "c", 0o644)
	f.write("src/d.log", "d", 0o644)
	f.write("tmp/x.log", "x", 0o644)
	f.write("tmp/y", "y", 0o644)
	res, err := Scan(context.Background(), Options{Root: f.root, Include: []string{"a.log", "build/keep/x.o", "src/c.go", "gone.log", "build/none/z", "tmp"}})
	if err != nil {
		t.Fatal(err)
	}
	got := capturedPaths(res)
	if want := ".gitignore a.log build/keep/x.o src/c.go tmp/x.log tmp/y"; strings.Join(got, " ") != want {
		t.Fatalf("captured %q, want %q", strings.Join(got, " "), want)
	}
	if want := "a.log build/keep/x.o tmp/x.log"; strings.Join(res.Forced, " ") != want {
		t.Fatalf("Forced = %q, want %q", strings.Join(res.Forced, " "), want)
	}
	for _, d := range []string{"", "build", "build/keep", "src"} {
		if !res.Untracked[d] {
			t.Errorf("%q holds uncaptured entries but is not in Untracked", d)
		}
	}
}

// TestTrackedBelowIgnoredFile: a tracked path below an ignored file or
// symlink is absent (a symlink is never followed), and the ignored entry
// on the way to it is not captured either; an included one is (a revert
// puts back what lies there).
func TestTrackedBelowIgnoredFile(t *testing.T) {
	f := newFixture(t)
	f.write(".gitignore", "cfg\nflat\n", 0o644)
	f.write("a", "a", 0o644)
	f.write("flat", "a file where a directory was", 0o644)
	out := t.TempDir()
	if err := os.WriteFile(filepath.Join(out, "passwd"), []byte("outside"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(out, filepath.Join(f.root, "cfg")); err != nil {
		t.Fatal(err)
	}
	res, err := Scan(context.Background(), Options{Root: f.root, Tracked: []string{"cfg/passwd", "flat/x"}})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := strings.Join(capturedPaths(res), " "), ".gitignore a"; got != want {
		t.Fatalf("captured %q, want %q", got, want)
	}
	if len(res.Forced) != 0 || !res.Untracked[""] {
		t.Fatalf("Forced = %q, Untracked = %v", res.Forced, res.Untracked)
	}
	res, err = Scan(context.Background(), Options{Root: f.root, Include: []string{"flat/x"}, Tracked: []string{"cfg/passwd", "flat/y"}})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := strings.Join(capturedPaths(res), " "), ".gitignore a flat"; got != want {
		t.Fatalf("with flat/x included: captured %q, want %q", got, want)
	}
}

func TestExcludeStoreInside(t *testing.T) {
	f := newFixture(t)
	f.write("a", "a", 0o644)
	f.write("state/store/ckpt.db", "db", 0o644)
	f.write("state/other", "o", 0o644)
	res, err := Scan(context.Background(), Options{Root: f.root, Exclude: []string{"state/store"}})
	if err != nil {
		t.Fatal(err)
	}
	if res.Files != 2 {
		t.Fatalf("captured %d files, want 2 (the store excluded)", res.Files)
	}
}

func FuzzParseCache(f *testing.F) {
	cw, _ := NewCacheWriter("", 12345, 1, "inst", "")
	cw.Block("", object.Sum(nil), 7, []cachedEntry{{name: "a", mode: object.ModeFile | 0o644, size: 3, mtime: 1, ctime: 2, ino: 3},
		{name: "d", mode: object.ModeDir, id: object.Sum([]byte("d"))}}, 0, 3)
	cw.Block("d", object.Sum([]byte("d")), 7, nil, flagLinked, 0)
	cw.Commit()
	c, err := cw.Cache()
	if err != nil {
		f.Fatal(err)
	}
	f.Add(c.encode())
	f.Fuzz(func(t *testing.T, data []byte) {
		c, err := parseCache(data)
		if err != nil {
			return
		}
		for dir := range c.dirs {
			c.block(dir) // must not panic, whatever the blocks hold
			c.rawBlock(dir)
		}
	})
}

// TestNestedRepos: with NestedRepos, a directory holding a .git entry (dir
// or file) below the root is reported, never descended, and marked so
// restores leave it alone; without it (the sqlite backend) it is captured,
// its .git excluded.
func TestNestedRepos(t *testing.T) {
	f := newFixture(t)
	f.write("a.txt", "a", 0o644)
	f.write("deps/lib/.git", "gitdir: ../../.git/modules/lib\n", 0o644)
	f.write("deps/lib/lib.go", "x", 0o644)
	f.write("tools/x/.git/HEAD", "ref: refs/heads/main\n", 0o644)
	f.write("tools/x/main.go", "y", 0o644)
	f.write("tools/y.go", "z", 0o644)
	paths := func(res *Result) []string {
		var got []string
		tree.Walk(context.Background(), func(ctx context.Context, id object.ID) (*object.Tree, error) {
			return object.DecodeTree(res.Trees[id])
		}, res.Root, nil, func(p string, e object.Entry) error {
			got = append(got, p)
			return nil
		})
		return got
	}
	res, err := Scan(context.Background(), Options{Root: f.root, NestedRepos: true})
	if err != nil {
		t.Fatal(err)
	}
	if got := paths(res); len(got) != 2 || got[0] != "a.txt" || got[1] != "tools/y.go" {
		t.Errorf("captured %q", got)
	}
	if len(res.Nested) != 2 || res.Nested[0] != "deps/lib" || res.Nested[1] != "tools/x" {
		t.Errorf("nested %q", res.Nested)
	}
	if len(res.Skipped) != 2 || res.Skipped[0].Reason != NestedReason {
		t.Errorf("skipped %+v", res.Skipped)
	}
	for _, d := range []string{"deps", "deps/lib", "tools", "tools/x"} {
		if !res.Untracked[d] {
			t.Errorf("%s not marked untracked", d)
		}
	}
	if _, _, err := Path(context.Background(), Options{Root: f.root, NestedRepos: true}, "deps/lib/lib.go"); !errors.As(err, new(*NestedError)) {
		t.Errorf("Path inside a nested repository: %v", err)
	}
	res, err = Scan(context.Background(), Options{Root: f.root})
	if err != nil {
		t.Fatal(err)
	}
	if got := paths(res); len(got) != 4 || len(res.Nested) != 0 {
		t.Errorf("without NestedRepos: captured %q, nested %q", got, res.Nested)
	}
}

// TestStaleCacheRescans: a cache naming trees the store does not have (its
// database replaced by an older copy) is dropped and the scan starts over
// without it, storing every tree; the result equals a scan without cache.
func TestStaleCacheRescans(t *testing.T) {
	f := newFixture(t)
	f.write("a/x.txt", "x\n", 0o644)
	f.write("a/b/y.txt", "y\n", 0o644)
	f.write("c/z.txt", "z\n", 0o644)
	f.write("top.txt", "t\n", 0o644)
	first := f.scan()
	waitClock(t, f.root)
	f.scan() // the cache now trusts every entry
	f.write("top.txt", "t2\n", 0o644)
	other := store.NewMemory("") // the rolled-back database: no trees at all
	stale := 0
	cw, err := NewCacheWriter("", FSClock(f.root), 1, "test", "")
	if err != nil {
		t.Fatal(err)
	}
	var res *Result
	err = other.Update(context.Background(), func(tx store.Tx) error {
		var err error
		res, err = Scan(context.Background(), Options{Root: f.root, Cache: f.cache, CacheOut: cw, Sink: tx, LoadTree: tx.ReadTree,
			OnStaleCache: func() { stale++ }, Workers: 2})
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	if stale != 1 {
		t.Fatalf("OnStaleCache called %d times, want 1", stale)
	}
	if res.Root == first.Root {
		t.Fatal("top.txt changed but the root did not")
	}
	// Every tree of the result is in the other store, and the new cache
	// is complete and valid.
	if err := tree.Walk(context.Background(), other.ReadTree, res.Root, nil, func(string, object.Entry) error { return nil }); err != nil {
		t.Fatalf("walk the result in the store it was saved to: %v", err)
	}
	if err := cw.Commit(); err != nil {
		t.Fatal(err)
	}
	c, err := cw.Cache()
	if err != nil {
		t.Fatal(err)
	}
	for _, id := range c.Trees() {
		if ok, _ := other.HasTree(context.Background(), id); !ok && id != object.EmptyTree {
			t.Fatalf("the new cache names tree %s, not in the store", id)
		}
	}
}

// A cache kept in memory gets another seq and is written out: the file
// loads, with the new seq and the same blocks.
func TestCacheSetSeqAndWrite(t *testing.T) {
	cw, err := NewCacheWriterSeq("", 12345, 7, 3, "inst", "epoch:9 max=1")
	if err != nil {
		t.Fatal(err)
	}
	cw.Block("", object.Sum(nil), 7, []cachedEntry{{name: "a", mode: object.ModeFile | 0o644, size: 3, mtime: 1, ctime: 2, ino: 3}}, 0, 3)
	cw.Block("d", object.Sum([]byte("d")), 7, nil, 0, 0)
	if err := cw.Commit(); err != nil {
		t.Fatal(err)
	}
	c, err := cw.Cache()
	if err != nil {
		t.Fatal(err)
	}
	if err := c.SetSeq(42); err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(t.TempDir(), "statcache")
	if err := c.WriteFile(p); err != nil {
		t.Fatal(err)
	}
	got, err := LoadCache(p)
	if err != nil {
		t.Fatal(err)
	}
	defer got.Close()
	if got.Seq != 42 || got.Generation != 7 || got.Instance != "inst" || got.Watch != "epoch:9 max=1" || got.Dirs() != 2 {
		t.Fatalf("loaded seq %d gen %d inst %q watch %q dirs %d", got.Seq, got.Generation, got.Instance, got.Watch, got.Dirs())
	}
	if _, es, ok := got.block(""); !ok || len(es) != 1 || es[0].name != "a" {
		t.Fatalf("root block: %v %v", es, ok)
	}
	if got.dirs[""].size != 3 {
		t.Fatalf("root size %d", got.dirs[""].size)
	}
}
