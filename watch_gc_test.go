//go:build linux

package ckpt

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/seed1cedbf7c/ckpt/internal/failpoint"
	"github.com/seed1cedbf7c/ckpt/internal/flock"
)

// gcTestRepo opens a workspace whose store keeps 2 checkpoints per branch
// (no age or size limit), with a watcher whose log is returned.
func gcTestRepo(t *testing.T) (*Repo, string, func() string) {
	t.Helper()
	return gcTestRepoWith(t, map[string]string{"keep": "2", "max_age": "0", "max_size": "0"})
}

// gcTestRepoWith opens a workspace (a.txt) whose store has the settings
// cfg, with a watcher whose log is returned.
func gcTestRepoWith(t *testing.T, cfg map[string]string) (*Repo, string, func() string) {
	t.Helper()
	dir := t.TempDir()
	writeConfigs(t, dir, cfg)
	ws := t.TempDir()
	writeFile(t, ws, "a.txt", "0")
	r, err := Open(context.Background(), ws, Options{Store: dir})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close() })
	var mu sync.Mutex
	var log strings.Builder
	startWatcherWith(t, r, WatchOptions{Log: func(s string) { mu.Lock(); log.WriteString(s + "\n"); mu.Unlock() }})
	return r, ws, func() string { mu.Lock(); defer mu.Unlock(); return log.String() }
}

// servedTurns makes n served saves, each after an edit of a.txt.
func servedTurns(t *testing.T, r *Repo, ws string, n int) {
	t.Helper()
	for i := range n {
		writeFile(t, ws, "a.txt", fmt.Sprint("turn ", i+1))
		res, err := r.Save(context.Background(), SaveOptions{Kind: KindTurn})
		if err != nil {
			t.Fatal(err)
		}
		if !res.Served {
			t.Fatalf("save %d was not served by the watcher", i)
		}
	}
}

// fsckClean fails the test if fsck finds a problem.
func fsckClean(t *testing.T, r *Repo) {
	t.Helper()
	if fr, err := r.Fsck(context.Background()); err != nil || len(fr.Problems) != 0 {
		t.Fatalf("fsck: %+v %v", fr, err)
	}
}

// waitWatcherGC waits until the watcher's gc under way, if any, is done
// (it holds the store's lock; not r.lock, which asks it to yield).
func waitWatcherGC(t *testing.T, r *Repo) {
	t.Helper()
	unlock, err := r.st.Lock(context.Background(), time.Minute, nil)
	if err != nil {
		t.Fatal(err)
	}
	unlock()
}

func countCheckpoints(t *testing.T, r *Repo) int {
	t.Helper()
	list, err := r.List(context.Background(), ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return len(list)
}

// waitCheckpoints waits until the store holds n checkpoints (the
// watcher's gc runs once saves pause for two seconds).
func waitCheckpoints(t *testing.T, r *Repo, n int) {
	t.Helper()
	for i := 0; countCheckpoints(t, r) != n; i++ {
		if i > 600 {
			t.Fatalf("the store holds %d checkpoints after a minute, want %d", countCheckpoints(t, r), n)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// A client whose save the watcher served leaves the automatic gc to the
// watcher, which runs it once saves pause: the hook of an agent's turn
// does not wait for a gc (seconds at a million files).
func TestWatcherRunsTheAutomaticGC(t *testing.T) {
	r, ws, _ := gcTestRepo(t)
	// Every gc plans; the watcher's also passes serve/gc first.
	var plans, watcherGCs atomic.Int32
	defer failpoint.Set("gc/plan", func(string) error { plans.Add(1); return nil })()
	defer failpoint.Set("serve/gc", func(string) error { watcherGCs.Add(1); return nil })()
	servedTurns(t, r, ws, 15)
	waitCheckpoints(t, r, 2)
	if n := plans.Load() - watcherGCs.Load(); n != 0 {
		t.Fatalf("the client ran %d automatic gc(s) after saves the watcher served", n)
	}
	fsckClean(t, r)
}

// The client's own check: a served save runs gc only once the store is
// gcLag times further past its retention (the watcher never got to it).
func TestServedSaveGCLag(t *testing.T) {
	dir := t.TempDir()
	writeConfigs(t, dir, map[string]string{"keep": "2", "max_age": "0", "max_size": "0"})
	ws := t.TempDir()
	r, err := Open(context.Background(), ws, Options{Store: dir})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	ctx := context.Background()
	for i := range 20 { // past keep+slack (12), not past keep+4*slack (42)
		writeFile(t, ws, "a.txt", fmt.Sprint(i))
		if _, err := r.saveLocked(ctx, SaveOptions{Kind: KindManual}, nil); err != nil {
			t.Fatal(err)
		}
	}
	r.autoGC(ctx, gcLag)
	if n := countCheckpoints(t, r); n != 20 {
		t.Fatalf("with lag %d gc ran at 20 checkpoints: %d left", gcLag, n)
	}
	r.autoGC(ctx, 1)
	if n := countCheckpoints(t, r); n != 2 {
		t.Fatalf("without lag gc left %d checkpoints, want 2", n)
	}
}

// A client that wants the store's lock while the watcher's gc holds it
// asks the watcher to yield: the gc stops (its steps are transactions:
// nothing half done), the client goes on, and the gc runs again at the
// next pause.
func TestWatcherGCYieldsToAClient(t *testing.T) {
	r, ws, log := gcTestRepo(t)
	ctx := context.Background()
	servedTurns(t, r, ws, 15)
	started := make(chan struct{})
	var yielded atomic.Bool
	var once sync.Once
	disarm := failpoint.Set("gc/plan", func(string) error {
		first := false
		once.Do(func() { first = true; close(started) })
		// Until the client asks (a minute at most: the test then fails).
		for i := 0; first && !yielded.Load() && i < 12000; i++ {
			time.Sleep(5 * time.Millisecond)
		}
		return nil
	})
	defer disarm()
	disarmYield := failpoint.Set("serve/yield", func(string) error { yielded.Store(true); return nil })
	defer disarmYield()
	<-started // the watcher's gc holds the store's lock
	writeFile(t, ws, "a.txt", "during the gc")
	res, err := r.Save(ctx, SaveOptions{Kind: KindTurn})
	if err != nil {
		t.Fatal(err)
	}
	if !yielded.Load() || !res.Served {
		t.Fatalf("the save went through without asking the watcher to yield (yielded %v, served %v)", yielded.Load(), res.Served)
	}
	if !strings.Contains(log(), "automatic gc stopped") {
		t.Fatalf("the watcher's log does not say the gc stopped:\n%s", log())
	}
	waitCheckpoints(t, r, 2)
	fsckClean(t, r)
	if got := readRev(t, r, "HEAD", "a.txt"); got != "during the gc" {
		t.Fatalf("HEAD's a.txt = %q", got)
	}
}

// The watcher opened the store with keep 2; the user then raised it
// (ckpt config keep 100). The watcher's gc follows the settings as they
// are when it runs, not as they were when it opened the store: it must
// not remove the history the user now keeps.
func TestWatcherGCReadsTheSettingsAgain(t *testing.T) {
	r, ws, _ := gcTestRepo(t)
	ctx := context.Background()
	writeFile(t, ws, "a.txt", "first")
	if res, err := r.Save(ctx, SaveOptions{Kind: KindTurn}); err != nil || !res.Served {
		t.Fatalf("first save: %v (served %v)", err, res != nil && res.Served)
	}
	v := "100"
	if err := WriteConfig(r.StoreDir(), "keep", &v); err != nil {
		t.Fatal(err)
	}
	ran := make(chan struct{})
	var once sync.Once
	defer failpoint.Set("serve/gc", func(string) error { once.Do(func() { close(ran) }); return nil })()
	servedTurns(t, r, ws, 15)
	<-ran // the watcher's gc started; the store's lock is free once it is done
	waitWatcherGC(t, r)
	if n := countCheckpoints(t, r); n != 16 {
		t.Fatalf("the watcher's gc left %d of 16 checkpoints under keep 100", n)
	}
}

// When the watcher's gc finds max_size out of reach (HEAD alone exceeds
// it), the user hears of it: the reply to the next save carries the
// warning, as a save that ran the gc itself would.
func TestWatcherGCWarningReachesTheNextSave(t *testing.T) {
	r, ws, _ := gcTestRepo(t)
	ctx := context.Background()
	v := "64KiB"
	if err := WriteConfig(r.StoreDir(), "max_size", &v); err != nil {
		t.Fatal(err)
	}
	for i := range 15 { // 256 KiB of random letters a turn: HEAD alone is over 64 KiB
		writeFile(t, ws, "big.bin", fmt.Sprint(i)+randomText(256<<10, uint64(i)))
		if _, err := r.Save(ctx, SaveOptions{Kind: KindTurn}); err != nil {
			t.Fatal(err)
		}
	}
	ran := make(chan struct{})
	var once sync.Once
	defer failpoint.Set("serve/gc", func(string) error { once.Do(func() { close(ran) }); return nil })()
	<-ran
	waitWatcherGC(t, r)
	writeFile(t, ws, "a.txt", "after the gc")
	res, err := r.Save(ctx, SaveOptions{Kind: KindTurn})
	if err != nil {
		t.Fatal(err)
	}
	if !res.Served || !strings.Contains(res.Warning, "max_size") {
		t.Fatalf("the save after the watcher's gc: served %v, warning %q", res.Served, res.Warning)
	}
	if n := countCheckpoints(t, r); n < 2 {
		t.Fatalf("%d checkpoints left", n)
	}
}

// randomText is n bytes of incompressible text from seed.
func randomText(n int, seed uint64) string {
	rng := rand.New(rand.NewPCG(seed, 99))
	b := make([]byte, n)
	for i := range b {
		b[i] = 'a' + byte(rng.IntN(26))
	}
	return string(b)
}

// A client that finds the store's lock taken asks the watcher to yield;
// a watcher that takes the request and never answers must not add its
// wait to the client's lock budget (a hook waits 2 s in all: it would
// wait 2 s for the yield, then its whole budget again).
func TestYieldToAHungWatcherStaysInTheLockBudget(t *testing.T) {
	ws := t.TempDir()
	writeFile(t, ws, "a.txt", "one")
	ctx := context.Background()
	const budget = 300 * time.Millisecond
	r, err := Open(ctx, ws, Options{Store: t.TempDir(), LockTimeout: budget})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	// The lock held by "another process" (its own open file description).
	f, err := os.OpenFile(filepath.Join(r.StoreDir(), "lock"), os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := flock.Lock(f); err != nil {
		t.Fatal(err)
	}
	// A watcher that reads the request and never answers.
	ln, err := net.Listen("unix", r.WatchSocket())
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	heard := make(chan time.Duration, 1)
	go func() {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		defer c.Close()
		start := time.Now()
		io.Copy(io.Discard, c) // until the client hangs up
		heard <- time.Since(start)
	}()
	start := time.Now()
	_, err = r.Save(ctx, SaveOptions{})
	took := time.Since(start)
	if !errors.Is(err, ErrLocked) {
		t.Fatalf("save with the lock held: %v, want ErrLocked", err)
	}
	// The yield alone waits 2 s when it is not bounded by the budget;
	// bounded, the whole save gives up after about 300 ms.
	held := <-heard
	if held >= 2*time.Second || took >= 2*time.Second {
		t.Fatalf("with a %v lock budget the yield held the connection %v and the save took %v", budget, held, took)
	}
}
