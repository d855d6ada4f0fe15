package cli

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/seed1cedbf7c/ckpt/internal/testutil"
	"github.com/seed1cedbf7c/ckpt/internal/treegen"
)

// ckptCmd runs the real ckpt CLI as a separate process (this test binary,
// invoked under the name "ckpt", see TestMain).
type ckptRunner struct {
	t     *testing.T
	bin   string
	ws    string
	store string
}

func newRunner(t *testing.T) *ckptRunner {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	bin := filepath.Join(dir, "ckpt")
	if err := os.Symlink(exe, bin); err != nil {
		t.Fatal(err)
	}
	return &ckptRunner{t: t, bin: bin, ws: t.TempDir(), store: filepath.Join(t.TempDir(), "store")}
}

func (r *ckptRunner) cmd(args ...string) *exec.Cmd {
	c := exec.Command(r.bin, args...)
	c.Dir = r.ws
	c.Env = append(os.Environ(), "CKPT_STORE="+r.store, "XDG_STATE_HOME="+filepath.Dir(r.store), "CKPT_FAILPOINT=")
	return c
}

// run runs ckpt and fails the test on a non-zero exit.
func (r *ckptRunner) run(args ...string) string {
	r.t.Helper()
	var out, errb bytes.Buffer
	c := r.cmd(args...)
	c.Stdout, c.Stderr = &out, &errb
	if err := c.Run(); err != nil {
		r.t.Fatalf("ckpt %s: %v\nstdout: %s\nstderr: %s", strings.Join(args, " "), err, out.String(), errb.String())
	}
	return strings.TrimSpace(out.String())
}

func (r *ckptRunner) state() treegen.State {
	r.t.Helper()
	st, err := treegen.Snapshot(r.ws, func(rel string) bool { return strings.HasPrefix(rel, ".ckpt-tmp-") })
	if err != nil {
		r.t.Fatal(err)
	}
	return st
}

// bigTree writes n files in a few levels of directories.
func bigTree(rng *rand.Rand, n int) treegen.State {
	st := treegen.State{}
	for i := 0; i < n; i++ {
		p := fmt.Sprintf("d%d/e%d/f%d.txt", i%7, i%23, i)
		data := strings.Repeat(fmt.Sprintf("file %d line %x\n", i, rng.Uint32()), 1+rng.IntN(80))
		mode := os.FileMode(0o644)
		if i%13 == 0 {
			mode = 0o755
		}
		st[p] = treegen.Entry{Mode: mode, Data: data}
	}
	return st
}

// TestCrashRestore kills `ckpt restore` with SIGKILL at random moments;
// afterwards `ckpt recover` (as any next command would) leaves the workspace
// exactly as before the restore or exactly as its target, and fsck is clean.
func TestCrashRestore(t *testing.T) {
	testutil.Long(t, "kills ckpt at every step of a restore")
	r := newRunner(t)
	rng := rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 1))
	seed := rng.Uint64()
	t.Logf("seed %d", seed)
	rng = rand.New(rand.NewPCG(seed, 2))
	if err := treegen.Write(r.ws, bigTree(rng, 1000)); err != nil {
		t.Fatal(err)
	}
	a := r.run("save", "-q", "-m", "A")
	stateA := r.state()
	// B: many modifications, deletions, additions and type changes.
	if _, err := treegen.Mutate(rng, r.ws, stateA, 150, false); err != nil {
		t.Fatal(err)
	}
	b := r.run("save", "-q", "-m", "B")
	stateB := r.state()
	if treegen.Diff(stateA, stateB) == "" {
		t.Fatal("A and B are equal")
	}
	states := map[string]treegen.State{a: stateA, b: stateB}
	// How long does a restore take?
	start := time.Now()
	r.run("restore", "-q", a)
	r.run("restore", "-q", b)
	d := time.Since(start) / 2
	t.Logf("a restore takes %v", d)

	cur := b
	trials := 50
	landed := 0
	for i := 0; i < trials; i++ {
		target := a
		if cur == a {
			target = b
		}
		c := r.cmd("restore", "-q", target)
		if err := c.Start(); err != nil {
			t.Fatal(err)
		}
		time.Sleep(time.Duration(rng.Int64N(int64(d + d/4 + time.Millisecond))))
		c.Process.Signal(syscall.SIGKILL)
		c.Wait()
		out := r.run("recover")
		got := r.state()
		switch {
		case treegen.Diff(states[target], got) == "":
			cur = target
			landed++
		case treegen.Diff(states[cur], got) == "":
		default:
			t.Fatalf("trial %d (seed %d): after kill and recover (%q) the workspace is neither the state before nor the target:\nvs target:\n%s",
				i, seed, out, treegen.Diff(states[target], got))
		}
		if head := r.run("show", "-q", "HEAD"); head != cur {
			t.Fatalf("trial %d: HEAD is %s, want %s", i, head, cur)
		}
		if i%10 == 9 {
			r.run("fsck")
		}
	}
	r.run("fsck")
	t.Logf("%d of %d killed restores had reached their target", landed, trials)
}

// TestCrashSave kills `ckpt save` at random moments: the workspace is never
// touched, the store stays consistent (fsck), and the next save works.
func TestCrashSave(t *testing.T) {
	testutil.Long(t, "kills ckpt at every step of a save")
	r := newRunner(t)
	rng := rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 3))
	st := bigTree(rng, 1500)
	if err := treegen.Write(r.ws, st); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	r.run("save", "-q")
	d := time.Since(start)
	cur := r.state()
	for i := 0; i < 25; i++ {
		var err error
		if cur, err = treegen.Mutate(rng, r.ws, cur, 100, false); err != nil {
			t.Fatal(err)
		}
		before := r.state()
		c := r.cmd("save", "-q", "-m", fmt.Sprint("trial ", i))
		if err := c.Start(); err != nil {
			t.Fatal(err)
		}
		time.Sleep(time.Duration(rng.Int64N(int64(d + d/2 + time.Millisecond))))
		c.Process.Signal(syscall.SIGKILL)
		c.Wait()
		r.run("fsck")
		if diff := treegen.Diff(before, r.state()); diff != "" {
			t.Fatalf("trial %d: a killed save changed the workspace:\n%s", i, diff)
		}
		r.run("save", "-q")
		if out := r.run("diff", "--name-only"); out != "" {
			t.Fatalf("trial %d: after saving again, diff shows %s", i, out)
		}
	}
}

// TestParallelSaves: four processes saving at once all succeed (the later
// ones wait for the store), and the store is consistent afterwards.
func TestParallelSaves(t *testing.T) {
	r := newRunner(t)
	rng := rand.New(rand.NewPCG(5, 5))
	if err := treegen.Write(r.ws, bigTree(rng, 300)); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	errs := make(chan error, 20)
	for p := 0; p < 4; p++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for round := 0; round < 5; round++ {
				f := filepath.Join(r.ws, fmt.Sprintf("saver-%d.txt", p))
				os.WriteFile(f, []byte(fmt.Sprintf("saver %d round %d\n", p, round)), 0o644)
				var out bytes.Buffer
				c := r.cmd("save", "-m", fmt.Sprintf("saver %d round %d", p, round))
				c.Stdout, c.Stderr = &out, &out
				if err := c.Run(); err != nil {
					errs <- fmt.Errorf("saver %d round %d: %v: %s", p, round, err, out.String())
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	r.run("fsck")
	r.run("save", "-q")
	if out := r.run("diff", "--name-only"); out != "" {
		t.Fatalf("after all saves, diff shows %s", out)
	}
	if n := len(strings.Fields(r.run("list", "-q"))); n < 5 {
		t.Fatalf("%d checkpoints, want at least 5", n)
	}
}

// TestSavesDuringRestore: four processes saving while a fifth restores:
// every command succeeds (waiting for the store as needed), fsck is clean,
// and the restore's result is exact.
func TestSavesDuringRestore(t *testing.T) {
	testutil.Long(t, "races saves against a restore")
	r := newRunner(t)
	rng := rand.New(rand.NewPCG(6, 6))
	if err := treegen.Write(r.ws, bigTree(rng, 1000)); err != nil {
		t.Fatal(err)
	}
	a := r.run("save", "-q", "-m", "A")
	stateA := r.state()
	if _, err := treegen.Mutate(rng, r.ws, stateA, 400, false); err != nil {
		t.Fatal(err)
	}
	r.run("save", "-q", "-m", "B")
	var wg sync.WaitGroup
	errs := make(chan error, 40)
	run := func(name string, args ...string) {
		var out bytes.Buffer
		c := r.cmd(args...)
		c.Stdout, c.Stderr = &out, &out
		if err := c.Run(); err != nil {
			errs <- fmt.Errorf("%s: ckpt %s: %v: %s", name, strings.Join(args, " "), err, out.String())
		}
	}
	for p := 0; p < 4; p++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 4; i++ {
				run(fmt.Sprint("saver ", p), "save", "-m", fmt.Sprint("concurrent ", p))
			}
		}()
	}
	wg.Add(1)
	go func() {
		defer wg.Done()
		time.Sleep(20 * time.Millisecond)
		run("restorer", "restore", a)
	}()
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if d := treegen.Diff(stateA, r.state()); d != "" {
		t.Fatalf("after the restore the workspace differs from A:\n%s", d)
	}
	r.run("fsck")
}
