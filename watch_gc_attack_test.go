//go:build linux

package ckpt

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/seed1cedbf7c/ckpt/internal/failpoint"
	"github.com/seed1cedbf7c/ckpt/internal/store"
)

// attackJunk returns n random (incompressible) bytes.
func attackJunk(rng *rand.Rand, n int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(rng.IntN(256))
	}
	return b
}

// HEAD alone exceeds max_size once written in full, but most of it is
// stored as a delta against an older version (a big file edited a little
// each turn). markWithin counts delta objects at their delta size, so the
// protected checkpoints "fit"; only the re-encode cost makes them not fit,
// and then the binary search settles at 0 candidates with unreachable
// false: automatic gc removes the whole history (what b2626c9 meant to
// stop).
func TestAttackAutoGCDeltaHeadWipesHistory(t *testing.T) {
	ctx := context.Background()
	rng := rand.New(rand.NewPCG(5, 6))
	dir, ws := t.TempDir(), t.TempDir()
	writeConfigs(t, dir, map[string]string{"keep": "100", "max_age": "0", "max_size": "512KiB"})
	big := attackJunk(rng, 1<<20) // 1 MiB: twice max_size, under ChunkThreshold
	writeFile(t, ws, "big.bin", string(big))
	r, err := Open(ctx, ws, Options{Store: dir})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	n := 0
	warned := ""
	for i := range 8 {
		// a few bytes of big.bin change (stored as a delta), and a new
		// 256 KiB file makes the store grow past the 1 MiB auto gc waits for
		copy(big[rng.IntN(len(big)-8):], fmt.Sprintf("%08d", i))
		writeFile(t, ws, "big.bin", string(big))
		writeFile(t, ws, "turn.bin", string(attackJunk(rng, 256<<10)))
		res, err := r.Save(ctx, SaveOptions{Message: fmt.Sprint("turn ", i)})
		if err != nil {
			t.Fatal(err)
		}
		n++
		if res.Warning != "" {
			warned = res.Warning
		}
	}
	list, err := r.List(ctx, ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	fsckClean(t, r)
	u, _ := r.st.Usage(ctx)
	if len(list) != n {
		t.Fatalf("automatic gc left %d of %d checkpoints (store now %d bytes used, max_size 512 KiB; warning %q): "+
			"HEAD alone exceeds max_size but is stored as deltas, and the history went", len(list), n, u.Used, warned)
	}
	if !strings.Contains(warned, "max_size") {
		t.Fatalf("no warning says max_size cannot be met (last warning %q)", warned)
	}
}

// openHookClient opens the workspace as a hook's process does: waiting
// 2 s for the store's lock (hooks.DefaultLockTimeout). It is closed when
// the test ends.
func openHookClient(t *testing.T, r *Repo, ws string) *Repo {
	t.Helper()
	hook, err := Open(context.Background(), ws, Options{Store: r.StoreDir(), LockTimeout: 2 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { hook.Close() })
	return hook
}

// A yield that arrives after the watcher's idleGC took the store's lock
// but before it installed gcCancel (Journal, LoadConfig, serve/gc) finds
// nothing to cancel; the client then waits for the whole gc. The failpoint
// only widens that window; gc/plan stands for a gc that takes a few
// seconds (a million files) and would stop at once if it were cancelled.
// A hook waits 2 s for the lock (hooks.DefaultLockTimeout): its save fails.
func TestAttackYieldLostBeforeGCCancelIsSet(t *testing.T) {
	r, ws, log := gcTestRepo(t)
	ctx := context.Background()
	servedTurns(t, r, ws, 15)
	var yields atomic.Int32
	var gcStarted atomic.Bool
	var yieldDuringGC atomic.Bool
	locked := make(chan struct{})
	var once sync.Once
	defer failpoint.Set("serve/yield", func(string) error {
		yields.Add(1)
		if gcStarted.Load() {
			yieldDuringGC.Store(true)
		}
		return nil
	})()
	defer failpoint.Set("serve/gc", func(string) error {
		// The store's lock is held; gcCancel is not set yet.
		once.Do(func() { close(locked) })
		for i := 0; yields.Load() == 0 && i < 2000; i++ {
			time.Sleep(5 * time.Millisecond)
		}
		return nil
	})()
	defer failpoint.Set("gc/plan", func(string) error {
		gcStarted.Store(true)
		// A long gc: 4 s, or until the client's yield cancels it.
		for i := 0; !yieldDuringGC.Load() && i < 800; i++ {
			time.Sleep(5 * time.Millisecond)
		}
		return nil
	})()
	<-locked
	// A hook's client: it waits 2 s for the lock.
	hook := openHookClient(t, r, ws)
	writeFile(t, ws, "a.txt", "hook's turn")
	start := time.Now()
	res, err := hook.Save(ctx, SaveOptions{Kind: KindTurn})
	if err != nil {
		t.Fatalf("the hook's save failed after %v (yields sent %d, one during the gc: %v): %v\nwatcher log:\n%s",
			time.Since(start).Round(time.Millisecond), yields.Load(), yieldDuringGC.Load(), err, log())
	}
	_ = res
}

// attackVerify checks the store after a race: fsck clean, every ref names a
// checkpoint the store has, undo and redo work, and (with retention
// turned off first, so nothing more goes) every listed checkpoint restores
// to exactly its tree.
func attackVerify(t *testing.T, r *Repo, ws string) {
	t.Helper()
	ctx := context.Background()
	if fr, err := r.Fsck(ctx); err != nil || len(fr.Problems) != 0 {
		t.Fatalf("fsck: %+v %v", fr, err)
	} else if len(fr.Warnings) > 0 {
		t.Logf("fsck warnings: %v", fr.Warnings)
	}
	if refsStored(t, r); t.Failed() {
		t.FailNow()
	}
	if _, err := r.Timeline(ctx); err != nil {
		t.Fatalf("timeline: %v", err)
	}
	if _, err := r.Undo(ctx); err != nil && !errors.Is(err, ErrNothingToUndo) {
		t.Fatalf("undo: %v", err)
	}
	if _, err := r.Redo(ctx); err != nil && !errors.Is(err, ErrNothingToRedo) {
		t.Fatalf("redo: %v", err)
	}
	off := "0"
	for _, k := range []string{"keep", "max_age", "max_size"} {
		if err := WriteConfig(r.StoreDir(), k, &off); err != nil {
			t.Fatal(err)
		}
	}
	v, err := Open(ctx, ws, Options{Store: r.StoreDir()})
	if err != nil {
		t.Fatal(err)
	}
	defer v.Close()
	list, err := v.List(ctx, ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, cp := range list {
		if cp.Kind == KindEdit {
			continue // a partial checkpoint: only its paths are restored
		}
		if _, err := v.Restore(ctx, cp.ID.String(), RestoreOptions{}); err != nil {
			t.Fatalf("restore %s: %v", cp.ID, err)
		}
		if got := fullScanTree(t, v); got != cp.Tree {
			t.Fatalf("restored %s (%s): the workspace's tree is %s, the checkpoint's %s", cp.ID, cp.Message, got, cp.Tree)
		}
	}
	if fr, err := v.Fsck(ctx); err != nil || len(fr.Problems) != 0 {
		t.Fatalf("fsck after the round trips: %+v %v", fr, err)
	}
}

// Served saves, non-served saves, restores, undo/redo, explicit gc, tags,
// snapshots, partial saves and session turns, each right when the
// watcher's idle gc may be planning or sweeping (gc/plan adds a random
// delay to widen the window).
func TestAttackRaceSoupWithWatcherGC(t *testing.T) {
	if testing.Short() {
		t.Skip("slow")
	}
	dir := t.TempDir()
	writeConfigs(t, dir, map[string]string{"keep": "3", "max_age": "0", "max_size": "0"})
	ws := t.TempDir()
	for d := range 4 {
		for f := range 5 {
			writeFile(t, ws, fmt.Sprintf("d%d/f%d.txt", d, f), fmt.Sprint("init ", d, f))
		}
	}
	ctx := context.Background()
	r, err := Open(ctx, ws, Options{Store: dir})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	// r2 is never served (Now set): its saves run their own gc.
	r2, err := Open(ctx, ws, Options{Store: dir, Now: time.Now})
	if err != nil {
		t.Fatal(err)
	}
	defer r2.Close()
	var mu sync.Mutex
	var wlog strings.Builder
	startWatcherWith(t, r, WatchOptions{Log: func(s string) { mu.Lock(); wlog.WriteString(s + "\n"); mu.Unlock() }})
	seed := uint64(7)
	if s := os.Getenv("ATTACK_SEED"); s != "" {
		fmt.Sscan(s, &seed)
	}
	rng := rand.New(rand.NewPCG(seed, 8))
	var rmu sync.Mutex
	randN := func(n int) int { rmu.Lock(); defer rmu.Unlock(); return rng.IntN(n) }
	var watcherGCs, plans atomic.Int32
	defer failpoint.Set("serve/gc", func(string) error { watcherGCs.Add(1); return nil })()
	defer failpoint.Set("gc/plan", func(string) error {
		plans.Add(1)
		time.Sleep(time.Duration(randN(400)) * time.Millisecond)
		return nil
	})()
	edit := func() {
		for range 1 + randN(3) {
			p := fmt.Sprintf("d%d/f%d.txt", randN(4), randN(6))
			if randN(5) == 0 {
				os.Remove(filepath.Join(ws, p))
			} else {
				writeFile(t, ws, p, fmt.Sprint("v", randN(1000000)))
			}
		}
	}
	sess := newCtl(t, r, "attack")
	okErr := func(what string, err error) {
		if err == nil || errors.Is(err, ErrNotFound) || errors.Is(err, ErrNothingToUndo) || errors.Is(err, ErrNothingToRedo) {
			return
		}
		t.Fatalf("%s: %v\nwatcher log:\n%s", what, err, wlog.String())
	}
	deadline := time.Now().Add(35 * time.Second)
	ops := map[string]int{}
	for round := 0; time.Now().Before(deadline); round++ {
		for range 1 + randN(4) {
			edit()
			if _, err := r.Save(ctx, SaveOptions{Kind: KindTurn}); err != nil {
				t.Fatal(err)
			}
		}
		time.Sleep(time.Duration(1800+randN(1500)) * time.Millisecond)
		list, err := r.List(ctx, ListOptions{})
		if err != nil {
			t.Fatal(err)
		}
		pick := list[randN(len(list))].ID.String()
		op := randN(10)
		switch op {
		case 0:
			_, err = r.Restore(ctx, pick, RestoreOptions{})
			okErr("restore", err)
		case 1:
			_, err = r.Undo(ctx)
			okErr("undo", err)
		case 2:
			_, err = r.Redo(ctx)
			okErr("redo", err)
		case 3:
			_, err = r.GC(ctx, GCOptions{NoCompact: randN(2) == 0})
			okErr("gc", err)
		case 4:
			_, err = r.CreateTag(ctx, fmt.Sprint("t", round), pick, false)
			okErr("tag", err)
		case 5:
			_, err = r.SnapshotCreate(ctx, fmt.Sprint("s", round), SnapshotOptions{TTL: time.Duration(1+randN(3)) * time.Second})
			okErr("snapshot", err)
		case 6:
			edit()
			_, err = r2.Save(ctx, SaveOptions{Kind: KindTurn})
			okErr("non-served save", err)
		case 7:
			edit()
			_, err = r.Save(ctx, SaveOptions{Paths: []string{"d0", "d1/f1.txt"}})
			okErr("partial save", err)
		case 8:
			if _, err := sess.BeginTurn(ctx, fmt.Sprint("turn ", round)); err != nil {
				t.Fatal(err)
			}
			edit()
			if _, err := sess.EndTurn(ctx); err != nil {
				t.Fatal(err)
			}
		case 9:
			saveMatchesFull(t, r, fmt.Sprint("round ", round))
		}
		ops[fmt.Sprint(op)]++
		if fr, err := r.Fsck(ctx); err != nil || len(fr.Problems) != 0 {
			t.Fatalf("round %d (op %d): fsck: %+v %v", round, op, fr, err)
		}
	}
	keys := make([]string, 0, len(ops))
	for k := range ops {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	mu.Lock()
	stopped := strings.Count(wlog.String(), "automatic gc stopped")
	mu.Unlock()
	t.Logf("ops %v; watcher gcs %d, plans %d, yields that stopped a gc %d", ops, watcherGCs.Load(), plans.Load(), stopped)
	saveMatchesFull(t, r, "at the end")
	attackVerify(t, r, ws)
}

// The client yields once (Repo.lock). After a watcher gc that ran for more
// than the flusher's tick (1 s: any gc worth yielding for), the ticker has
// a tick pending; once the yielded gc returns, the flusher loops at once
// into idleGC again (gcDue is still set), takes the free lock before the
// client's next poll (up to 100 ms), and starts the gc over. The client,
// which does not ask again, waits for that whole gc. gc/plan stands for a
// gc that takes seconds and stops as soon as it is asked to.
func TestAttackYieldedGCRestartsBeforeClient(t *testing.T) {
	r, ws, log := gcTestRepo(t)
	ctx := context.Background()
	servedTurns(t, r, ws, 15)
	var yields, plans atomic.Int32
	running := make(chan struct{})
	defer failpoint.Set("serve/yield", func(string) error { yields.Add(1); return nil })()
	defer failpoint.Set("gc/plan", func(string) error {
		n := plans.Add(1)
		if n == 1 {
			close(running)
		}
		// A gc of 4 s, stopped by a yield that comes while it runs.
		y := yields.Load()
		for i := 0; yields.Load() == y && i < 800; i++ {
			time.Sleep(5 * time.Millisecond)
		}
		return nil
	})()
	<-running
	time.Sleep(1300 * time.Millisecond) // the gc has run past a tick
	hook := openHookClient(t, r, ws)
	writeFile(t, ws, "a.txt", "hook's turn")
	start := time.Now()
	if _, err := hook.Save(ctx, SaveOptions{Kind: KindTurn}); err != nil {
		t.Fatalf("the hook's save failed after %v (yields %d, gc plans %d): %v\nwatcher log:\n%s",
			time.Since(start).Round(time.Millisecond), yields.Load(), plans.Load(), err, log())
	}
	t.Logf("the hook's save took %v (gc plans %d)", time.Since(start).Round(time.Millisecond), plans.Load())
}

// The watcher's gc follows config.toml as it is when it runs, whatever it
// was when the watcher opened the store.
func TestAttackWatcherGCConfigChanges(t *testing.T) {
	cases := []struct {
		name   string
		before map[string]string
		after  map[string]string
		want   int // checkpoints left of 16
	}{
		{"retention turned off", map[string]string{"keep": "2", "max_age": "0", "max_size": "0"},
			map[string]string{"keep": "0", "max_age": "0", "max_size": "0"}, 16},
		{"keep raised, max_size dropped", map[string]string{"keep": "2", "max_age": "0", "max_size": "1MiB"},
			map[string]string{"keep": "100", "max_size": "0"}, 16},
		{"keep lowered", map[string]string{"keep": "100", "max_age": "0", "max_size": "0"},
			map[string]string{"keep": "2"}, 2},
		{"max_age turned off", map[string]string{"keep": "0", "max_age": "1s", "max_size": "0"},
			map[string]string{"max_age": "0"}, 16},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			r, ws, _ := gcTestRepoWith(t, tc.before)
			dir := r.StoreDir()
			writeFile(t, ws, "a.txt", "first")
			if res, err := r.Save(ctx, SaveOptions{Kind: KindTurn}); err != nil || !res.Served {
				t.Fatalf("first save: %v", err)
			}
			writeConfigs(t, dir, tc.after)
			var gcs atomic.Int32
			defer failpoint.Set("serve/gc", func(string) error { gcs.Add(1); return nil })()
			servedTurns(t, r, ws, 15)
			if tc.name == "max_age turned off" {
				time.Sleep(1100 * time.Millisecond) // past the old max_age (and its day of grace does not matter: lag 1 adds none)
			}
			for i := 0; gcs.Load() == 0; i++ {
				if i > 200 {
					t.Fatal("the watcher ran no gc in 10 s after 15 served saves")
				}
				time.Sleep(50 * time.Millisecond)
			}
			waitWatcherGC(t, r)
			if n := countCheckpoints(t, r); n != tc.want {
				t.Fatalf("after the watcher's gc: %d checkpoints, want %d", n, tc.want)
			}
		})
	}
}

// attackStoreState is what a hostile request must not change.
func attackStoreState(t *testing.T, r *Repo) string {
	t.Helper()
	ctx := context.Background()
	var b strings.Builder
	recs, err := r.st.Checkpoints(ctx, store.ListFilter{})
	if err != nil {
		t.Fatal(err)
	}
	for _, rec := range recs {
		fmt.Fprintln(&b, "cp", rec.ID)
	}
	refs, err := r.st.Refs(ctx, "")
	if err != nil {
		t.Fatal(err)
	}
	for _, ref := range refs {
		fmt.Fprintln(&b, "ref", ref.Name, ref.ID, ref.Symbolic)
	}
	ops, err := r.st.Ops(ctx, 0)
	if err != nil {
		t.Fatal(err)
	}
	for _, op := range ops {
		fmt.Fprintln(&b, "op", op.Seq, op.Kind, op.Before, op.After)
	}
	return b.String()
}

// attackSend sends raw request lines to the watcher's socket from another
// process (python3) and returns its replies.
func attackSend(t *testing.T, sock string, lines []string) string {
	t.Helper()
	in, _ := json.Marshal(lines)
	cmd := exec.Command(os.Args[0])
	cmd.Env = append(os.Environ(), "CKPT_TEST_SOCKSEND="+sock)
	cmd.Stdin = strings.NewReader(string(in))
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("socksend: %v\n%s", err, out)
	}
	return string(out)
}

// Hostile serve bodies over the watcher's socket, from a process that
// holds no lock (while this one holds it, and while nobody does): nothing
// in the store may change, and the watcher keeps serving.
func TestAttackHostileServeBodies(t *testing.T) {
	ctx := context.Background()
	r, ws, _ := gcTestRepoWith(t, map[string]string{"keep": "100", "max_age": "0", "max_size": "0"})
	for i := range 3 {
		writeFile(t, ws, "a.txt", fmt.Sprint(i+1))
		if res, err := r.Save(ctx, SaveOptions{Kind: KindTurn}); err != nil || !res.Served {
			t.Fatalf("save %d: %v", i, err)
		}
	}
	atHead := servedSaveRequest(t, r)
	writeFile(t, ws, "a.txt", "changed by nobody's save")
	save := func(headID string) string {
		req := atHead
		req.Head, req.Kind, req.Message = headID, KindTurn, "hostile"
		b, _ := json.Marshal(req)
		return string(b)
	}
	bodies := []string{
		`{"op":"yield"}`, `{"op":"yield","instance":"x","head":"y"}`, `"yield"`, `{"OP":"yield"}`, `{"op":"yield","op":"save"}`,
		`{"op":"save","op":"yield"}`, `null`, `[]`, `{"op":"yield"`, `{"op":{"yield":1}}`, `{"op":"yield\u0000"}`,
		save(atHead.Head), save(""), `{"op":"save","kind":"turn","backend":"sqlite","instance":"` + atHead.Instance + `"}`,
	}
	var lines []string
	for _, b := range bodies {
		lines = append(lines, `{"op":"serve","body":`+b+`}`)
	}
	lines = append(lines, `{"op":"serve"}`, `{"op":"serve","body":{"op":"yield"}} trailing`, strings.Repeat(`{"op":"serve","body":{"op":"yield"}}`, 1000))
	before := attackStoreState(t, r)
	// Nobody holds the lock.
	out1 := attackSend(t, r.WatchSocket(), lines)
	// This process holds it (as a client waiting for its served save would).
	unlock, err := r.st.Lock(ctx, time.Minute, nil)
	if err != nil {
		t.Fatal(err)
	}
	out2 := attackSend(t, r.WatchSocket(), lines)
	unlock()
	if after := attackStoreState(t, r); after != before {
		t.Fatalf("hostile requests changed the store:\nbefore:\n%s\nafter:\n%s\nreplies:\n%s\n%s", before, after, out1, out2)
	}
	for _, out := range []string{out1, out2} {
		if strings.Contains(out, `"created":true`) || strings.Contains(out, `"checkpoint"`) {
			t.Fatalf("a hostile save was served:\n%s", out)
		}
	}
	t.Logf("replies (lock free):\n%s\nreplies (lock held here):\n%s", out1, out2)
	if _, err := r.WatchStatus(ctx); err != nil {
		t.Fatalf("the watcher is gone: %v", err)
	}
	if res, err := r.Save(ctx, SaveOptions{Kind: KindTurn}); err != nil || !res.Served {
		t.Fatalf("a save after the hostile requests: %v (served %v)", err, res != nil && res.Served)
	}
	fsckClean(t, r)
}

// A separate `ckpt watch -d` process, killed -9 at its gc (paused at
// gc/plan, then let go and killed 0-30 ms later: planning or sweeping),
// after a `ckpt gc` or `ckpt save` made it yield, or at a random moment
// after. After each kill: fsck exit 0, list works, save works.
func TestAttackCLIKillWatcherDuringGC(t *testing.T) {
	if testing.Short() {
		t.Skip("slow")
	}
	T := t.TempDir()
	bin := filepath.Join(T, "ckpt")
	if out, err := exec.Command("go", "build", "-o", bin, "./cmd/ckpt").CombinedOutput(); err != nil {
		t.Fatalf("build: %v\n%s", err, out)
	}
	ws, st, fp := filepath.Join(T, "ws"), filepath.Join(T, "st"), filepath.Join(T, "fp")
	for _, d := range []string{ws, st, fp} {
		os.MkdirAll(d, 0o755)
	}
	writeConfigs(t, st, map[string]string{"keep": "3", "max_age": "0", "max_size": "0"})
	rng := rand.New(rand.NewPCG(11, 12))
	for d := range 20 {
		for f := range 50 {
			writeFile(t, ws, fmt.Sprintf("d%02d/f%02d.txt", d, f), strings.Repeat(fmt.Sprint(d, f, " "), 40))
		}
	}
	base := []string{"CKPT_PROGRESS=none"}
	for _, e := range os.Environ() {
		if !strings.HasPrefix(e, "CKPT_") {
			base = append(base, e)
		}
	}
	cmdOf := func(env []string, args ...string) *exec.Cmd {
		cmd := exec.Command(bin, append([]string{"--store", st, "--workspace", ws}, args...)...)
		cmd.Env = append(append([]string{}, base...), env...)
		cmd.Dir = ws
		return cmd
	}
	run := func(env []string, args ...string) (string, int) {
		out, err := cmdOf(env, args...).CombinedOutput()
		code := 0
		if ee, ok := err.(*exec.ExitError); ok {
			code = ee.ExitCode()
		} else if err != nil {
			t.Fatalf("%v: %v", args, err)
		}
		return string(out), code
	}
	must := func(what string, out string, code int) {
		t.Helper()
		if code != 0 {
			logb, _ := os.ReadFile(filepath.Join(st, "watch.log"))
			t.Fatalf("%s: exit %d\n%s\nwatch.log:\n%s", what, code, out, logb)
		}
	}
	mustRun := func(what string, env []string, args ...string) string {
		t.Helper()
		out, code := run(env, args...)
		must(what, out, code)
		return out
	}
	edit := func() {
		for range 3 {
			writeFile(t, ws, fmt.Sprintf("d%02d/f%02d.txt", rng.IntN(20), rng.IntN(60)), fmt.Sprint("v", rng.Int64()))
		}
	}
	var pid int
	t.Cleanup(func() {
		if pid > 0 {
			syscall.Kill(pid, syscall.SIGKILL)
		}
	})
	mustRun("first save", nil, "save", "-q")
	kills := map[string]int{}
	for i := range 6 {
		os.RemoveAll(fp)
		os.MkdirAll(fp, 0o755)
		mustRun("watch -d", []string{"CKPT_FAILPOINT=gc/plan=pause", "CKPT_FAILPOINT_DIR=" + fp}, "watch", "-d", "--idle", "10m")
		out := mustRun("status", nil, "watch", "--status", "--json")
		var stt struct {
			PID int `json:"pid"`
		}
		if err := json.Unmarshal([]byte(out), &stt); err != nil || stt.PID == 0 {
			t.Fatalf("status: %v %s", err, out)
		}
		pid = stt.PID
		served := 0
		for range 14 {
			edit()
			out := mustRun("save", nil, "save", "--json")
			if strings.Contains(out, `"served": true`) {
				served++
			}
		}
		hit := false
		for j := 0; j < 300; j++ {
			if _, err := os.Stat(filepath.Join(fp, "gc-plan.hit")); err == nil {
				hit = true
				break
			}
			time.Sleep(20 * time.Millisecond)
		}
		release := func() { os.WriteFile(filepath.Join(fp, "gc-plan.go"), nil, 0o600) }
		mode := []string{"in gc", "after ckpt gc yielded", "after ckpt save yielded"}[i%3]
		switch i % 3 {
		case 0:
			release()
			time.Sleep(time.Duration(rng.IntN(30)) * time.Millisecond)
		case 1, 2:
			args := []string{"gc", "--json"}
			if i%3 == 2 {
				edit()
				args = []string{"save", "--json"}
			}
			c := cmdOf(nil, args...)
			var buf strings.Builder
			c.Stdout, c.Stderr = &buf, &buf
			if err := c.Start(); err != nil {
				t.Fatal(err)
			}
			time.Sleep(300 * time.Millisecond)
			release()
			err := c.Wait()
			if err != nil {
				logb, _ := os.ReadFile(filepath.Join(st, "watch.log"))
				t.Fatalf("%v while the watcher's gc held the lock: %v\n%s\nwatch.log:\n%s", args, err, buf.String(), logb)
			}
			time.Sleep(time.Duration(rng.IntN(2500)) * time.Millisecond)
		}
		syscall.Kill(pid, syscall.SIGKILL)
		for j := 0; j < 200 && syscall.Kill(pid, 0) == nil; j++ {
			time.Sleep(10 * time.Millisecond)
		}
		pid = 0
		kills[mode]++
		t.Logf("round %d: %d/14 saves served, gc reached plan %v, killed %s", i, served, hit, mode)
		mustRun("fsck after kill", nil, "fsck")
		out = mustRun("list after kill", nil, "list", "--json")
		var list []map[string]any
		if err := json.Unmarshal([]byte(out), &list); err != nil || len(list) == 0 {
			t.Fatalf("list after kill: %v\n%s", err, out)
		}
		edit()
		mustRun("save after kill", nil, "save", "-q")
		mustRun("undo after kill", nil, "undo")
		mustRun("redo after kill", nil, "redo")
	}
	t.Logf("kills %v", kills)
	r, err := Open(context.Background(), ws, Options{Store: st})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	attackVerify(t, r, ws)
}

// Explicit `ckpt gc --max-size` with HEAD alone over the limit: it still
// removes what does not fit and says size_unreachable in --json. Then the
// same with a HEAD stored as deltas (its full size is over the limit, its
// stored size under it): the result should say so too.
func TestAttackExplicitGCSizeUnreachable(t *testing.T) {
	for _, delta := range []bool{false, true} {
		t.Run(fmt.Sprint("delta=", delta), func(t *testing.T) {
			ctx := context.Background()
			rng := rand.New(rand.NewPCG(9, 10))
			dir, ws := t.TempDir(), t.TempDir()
			writeConfigs(t, dir, map[string]string{"keep": "100", "max_age": "0", "max_size": "0"})
			big := attackJunk(rng, 1<<20)
			writeFile(t, ws, "big.bin", string(big))
			r, err := Open(ctx, ws, Options{Store: dir})
			if err != nil {
				t.Fatal(err)
			}
			defer r.Close()
			for i := range 6 {
				if delta {
					copy(big[rng.IntN(len(big)-8):], fmt.Sprintf("%08d", i))
				} else {
					big = attackJunk(rng, 1<<20)
				}
				writeFile(t, ws, "big.bin", string(big))
				writeFile(t, ws, "turn.bin", string(attackJunk(rng, 64<<10)))
				if _, err := r.Save(ctx, SaveOptions{Message: fmt.Sprint("turn ", i)}); err != nil {
					t.Fatal(err)
				}
			}
			bin := filepath.Join(t.TempDir(), "ckpt")
			if out, err := exec.Command("go", "build", "-o", bin, "./cmd/ckpt").CombinedOutput(); err != nil {
				t.Fatalf("build: %v\n%s", err, out)
			}
			cmd := exec.Command(bin, "--store", dir, "--workspace", ws, "gc", "--max-size", "512KiB", "--json")
			cmd.Env = append(os.Environ(), "CKPT_PROGRESS=none")
			out, err := cmd.Output()
			if err != nil {
				t.Fatalf("ckpt gc: %v\n%s", err, out)
			}
			var res struct {
				Removed         []any `json:"removed"`
				Kept            int   `json:"kept"`
				SizeUnreachable bool  `json:"size_unreachable"`
				SizeAfter       int64 `json:"size_after"`
			}
			if err := json.Unmarshal(out, &res); err != nil {
				t.Fatal(err)
			}
			r2, err := Open(ctx, ws, Options{Store: dir})
			if err != nil {
				t.Fatal(err)
			}
			defer r2.Close()
			u, _ := r2.st.Usage(ctx)
			t.Logf("removed %d, kept %d, size_unreachable %v, used after %d (max 512 KiB)", len(res.Removed), res.Kept, res.SizeUnreachable, u.Used)
			if res.Kept != 1 || len(res.Removed) != 5 {
				t.Fatalf("explicit gc --max-size kept %d, removed %d; want HEAD only", res.Kept, len(res.Removed))
			}
			if !res.SizeUnreachable {
				t.Fatalf("the store is %d bytes after gc --max-size 512KiB (HEAD alone), but size_unreachable is false", u.Used)
			}
			if fr, err := r2.Fsck(ctx); err != nil || len(fr.Problems) != 0 {
				t.Fatalf("fsck: %+v %v", fr, err)
			}
		})
	}
}

// The watcher's gc must keep the trees its in-memory stat cache uses, and
// after it a served save records what a full scan does. Between the served
// saves and the gc, a client moves HEAD (restore, undo, a save that is not
// served), so the cache's trees belong to a checkpoint the gc removes.
func TestAttackWatcherGCKeepsCacheTrees(t *testing.T) {
	for _, between := range []string{"restore", "undo", "unserved save", "explicit gc", "partial restore", "edit save"} {
		t.Run(between, func(t *testing.T) {
			ctx := context.Background()
			r, ws, log := gcTestRepo(t)
			for d := range 6 {
				for f := range 4 {
					writeFile(t, ws, fmt.Sprintf("d%d/s/f%d.txt", d, f), fmt.Sprint("init", d, f))
				}
			}
			first, err := r.Save(ctx, SaveOptions{Kind: KindTurn})
			if err != nil {
				t.Fatal(err)
			}
			for i := range 14 {
				writeFile(t, ws, fmt.Sprintf("d%d/s/f%d.txt", i%6, i%4), fmt.Sprint("v", i))
				if res, err := r.Save(ctx, SaveOptions{Kind: KindTurn}); err != nil || !res.Served {
					t.Fatalf("save %d: %v", i, err)
				}
			}
			other, err := Open(ctx, ws, Options{Store: r.StoreDir(), Now: time.Now}) // never served
			if err != nil {
				t.Fatal(err)
			}
			defer other.Close()
			switch between {
			case "restore":
				if _, err := r.Restore(ctx, first.Checkpoint.ID.String(), RestoreOptions{}); err != nil {
					t.Fatal(err)
				}
			case "undo":
				if _, err := r.Undo(ctx); err != nil {
					t.Fatal(err)
				}
			case "unserved save":
				writeFile(t, ws, "d0/s/f0.txt", "unserved")
				if res, err := other.Save(ctx, SaveOptions{Kind: KindTurn}); err != nil || res.Served {
					t.Fatalf("unserved save: %v", err)
				}
			case "explicit gc":
				if _, err := other.GC(ctx, GCOptions{}); err != nil {
					t.Fatal(err)
				}
			case "partial restore":
				writeFile(t, ws, "d1/s/f1.txt", "unsaved before a partial restore")
				if _, err := other.Restore(ctx, first.Checkpoint.ID.String(), RestoreOptions{Paths: []string{"d0"}}); err != nil {
					t.Fatal(err)
				}
			case "edit save":
				writeFile(t, ws, "d1/s/f2.txt", "edited")
				if _, err := other.Save(ctx, SaveOptions{Paths: []string{"d1/s/f2.txt"}}); err != nil {
					t.Fatal(err)
				}
			}
			var gcs atomic.Int32
			disarm := failpoint.Set("serve/gc", func(string) error { gcs.Add(1); return nil })
			for i := 0; gcs.Load() == 0; i++ {
				if i > 200 {
					break // nothing was due
				}
				time.Sleep(50 * time.Millisecond)
			}
			disarm()
			unlock, err := r.st.Lock(ctx, time.Minute, nil)
			if err != nil {
				t.Fatal(err)
			}
			unlock()
			if fr, err := r.Fsck(ctx); err != nil || len(fr.Problems) != 0 || len(fr.Warnings) != 0 {
				t.Fatalf("fsck after the watcher's gc (%d gcs): %+v %v\n%s", gcs.Load(), fr, err, log())
			}
			// A change in one directory, the rest taken from the cache.
			writeFile(t, ws, "d5/s/f1.txt", "after the gc")
			saveMatchesFull(t, r, "the first served save after the watcher's gc")
			writeFile(t, ws, "d2/s/new.txt", "new")
			saveMatchesFull(t, r, "the second")
			attackVerify(t, r, ws)
			t.Logf("watcher gcs %d", gcs.Load())
		})
	}
}

// Yields at random moments of the watcher's gc (planning, re-encoding,
// inside the Sweep transaction, committing): whatever it stopped, nothing
// is half done. Even rounds measure a whole gc; odd rounds yield at a
// uniform moment within 1.3 times that.
func TestAttackYieldAtRandomMomentsOfWatcherGC(t *testing.T) {
	rounds := 8
	if testing.Short() {
		rounds = 2
	}
	ctx := context.Background()
	r, ws, log := gcTestRepo(t)
	rng := rand.New(rand.NewPCG(13, 14))
	const dirs, files = 40, 50
	for d := range dirs {
		for f := range files {
			writeFile(t, ws, fmt.Sprintf("d%02d/f%02d.txt", d, f), strings.Repeat(fmt.Sprint(d, f), 20))
		}
	}
	planned := make(chan time.Time, 16)
	defer failpoint.Set("gc/plan", func(string) error {
		select {
		case planned <- time.Now():
		default:
		}
		return nil
	})()
	var dur time.Duration
	stoppedNothingGone, stoppedAfterSweep, completed := 0, 0, 0
	for round := range rounds {
		// Let a gc left due finish, then start from a clean count.
		time.Sleep(2500 * time.Millisecond)
		if u, err := r.st.Lock(ctx, time.Minute, nil); err == nil {
			u()
		}
		for len(planned) > 0 {
			<-planned
		}
		for i := range 14 {
			for range 1200 {
				writeFile(t, ws, fmt.Sprintf("d%02d/f%02d.txt", rng.IntN(dirs), rng.IntN(files)), fmt.Sprint(round, i, rng.Int64()))
			}
			if res, err := r.Save(ctx, SaveOptions{Kind: KindTurn}); err != nil || !res.Served {
				t.Fatalf("save: %v", err)
			}
		}
		before := countCheckpoints(t, r)
		stops := strings.Count(log(), "automatic gc stopped")
		var at time.Time
		select {
		case at = <-planned:
		case <-time.After(20 * time.Second):
			t.Fatalf("round %d: the watcher ran no gc\n%s", round, log())
		}
		var delay time.Duration
		if round%2 == 1 {
			delay = time.Duration(rng.Int64N(int64(dur)*13/10 + 1))
			time.Sleep(time.Until(at.Add(delay)))
			r.yieldWatcher(ctx, yieldTimeout)
		}
		unlock, err := r.st.Lock(ctx, time.Minute, nil)
		if err != nil {
			t.Fatal(err)
		}
		if round%2 == 0 {
			dur = time.Since(at)
		}
		after := countCheckpoints(t, r)
		fr, ferr := r.Fsck(ctx)
		unlock()
		if ferr != nil || len(fr.Problems) != 0 {
			t.Fatalf("round %d (yield %v into the gc): fsck: %+v %v", round, delay, fr, ferr)
		}
		stopped := strings.Count(log(), "automatic gc stopped") > stops
		switch {
		case stopped && after == before:
			stoppedNothingGone++
		case stopped:
			stoppedAfterSweep++
		case after < before:
			completed++
		}
		t.Logf("round %d: yield %v into a gc of ~%v: %d -> %d checkpoints, stopped %v", round, delay, dur, before, after, stopped)
		if _, err := r.Timeline(ctx); err != nil {
			t.Fatal(err)
		}
		if _, err := r.Undo(ctx); err != nil {
			t.Fatalf("undo: %v", err)
		}
		if _, err := r.Redo(ctx); err != nil {
			t.Fatalf("redo: %v", err)
		}
		saveMatchesFull(t, r, fmt.Sprint("round ", round))
	}
	t.Logf("stopped with nothing removed %d, stopped after the sweep committed %d, completed %d", stoppedNothingGone, stoppedAfterSweep, completed)
	attackVerify(t, r, ws)
}

// b2626c9: when max_size cannot be met, "the save warns and names the
// setting to raise". With a watcher running (hooks start one), the save is
// served and leaves the gc to the watcher, whose idleGC only writes the
// warning to its log: no save ever tells the user.
func TestAttackServedSavesLoseSizeWarning(t *testing.T) {
	ctx := context.Background()
	rng := rand.New(rand.NewPCG(3, 4))
	dir, ws := t.TempDir(), t.TempDir()
	writeConfigs(t, dir, map[string]string{"keep": "100", "max_age": "0", "max_size": "64KiB"})
	writeFile(t, ws, "big.bin", string(attackJunk(rng, 256<<10))) // HEAD alone is 4x max_size
	r, err := Open(ctx, ws, Options{Store: dir})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	var mu sync.Mutex
	var wlog strings.Builder
	startWatcherWith(t, r, WatchOptions{Log: func(s string) { mu.Lock(); wlog.WriteString(s + "\n"); mu.Unlock() }})
	warned := ""
	for i := range 24 {
		writeFile(t, ws, "turn.bin", string(attackJunk(rng, 256<<10)))
		res, err := r.Save(ctx, SaveOptions{Message: fmt.Sprint("turn ", i)})
		if err != nil {
			t.Fatal(err)
		}
		if !res.Served {
			t.Fatalf("save %d not served", i)
		}
		if res.Warning != "" {
			warned = res.Warning
		}
		if i%6 == 5 {
			time.Sleep(3 * time.Second) // a pause: the watcher's gc runs
		}
	}
	mu.Lock()
	logged := wlog.String()
	mu.Unlock()
	if n := countCheckpoints(t, r); n != 24 {
		t.Fatalf("%d of 24 checkpoints left", n)
	}
	if !strings.Contains(warned, "max_size") {
		t.Fatalf("no save warned that max_size cannot be met (last warning %q); the watcher's log has it %d time(s):\n%s",
			warned, strings.Count(logged, "max_size"), logged)
	}
}
