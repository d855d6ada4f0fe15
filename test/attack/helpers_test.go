package attack

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/seed1cedbf7c/ckpt"
	"github.com/seed1cedbf7c/ckpt/internal/cli"
	"github.com/seed1cedbf7c/ckpt/internal/failpoint"
	"github.com/seed1cedbf7c/ckpt/internal/object"
	"github.com/seed1cedbf7c/ckpt/internal/testutil"
	"github.com/seed1cedbf7c/ckpt/internal/treegen"
)

// TestMain lets the test binary act as the ckpt command: invoked under the
// name "ckpt" (a symlink made by newEnv), it runs the CLI.
func TestMain(m *testing.M) {
	if filepath.Base(os.Args[0]) == "ckpt" {
		os.Exit(cli.Run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
	}
	os.Exit(m.Run())
}

// env is one workspace with its store, and a ckpt binary to run on it.
type env struct {
	t     *testing.T
	ws    string // the workspace (symlinks resolved)
	store string // its store directory
	state string // XDG_STATE_HOME for child processes
	bin   string // the ckpt command
	extra []string
}

// newEnv makes an empty workspace and a store directory outside it.
func newEnv(t *testing.T) *env {
	t.Helper()
	base := t.TempDir()
	return &env{t: t, ws: testutil.TempDir(t), store: filepath.Join(base, "store"), state: filepath.Join(base, "state"),
		bin: testutil.CkptBinary(t, filepath.Join(base, "bin"))}
}

// open opens the workspace with its store in this process.
func (e *env) open(opts ckpt.Options) *ckpt.Repo {
	e.t.Helper()
	if opts.Store == "" {
		opts.Store = e.store
	}
	r, err := ckpt.Open(context.Background(), e.ws, opts)
	if err != nil {
		e.t.Fatal(err)
	}
	e.t.Cleanup(func() { r.Close() })
	return r
}

// write creates or replaces files (relative paths, parents made).
func (e *env) write(files map[string]string) {
	e.t.Helper()
	testutil.WriteFiles(e.t, e.ws, files)
}

// read returns a file's content, or "<absent>".
func (e *env) read(p string) string {
	e.t.Helper()
	return testutil.ReadFile(e.t, e.ws, p)
}

// snapshot is the workspace's state (ckpt's temporary entries left out).
func (e *env) snapshot() treegen.State {
	e.t.Helper()
	st, err := treegen.Snapshot(e.ws, func(rel string) bool { return strings.HasPrefix(rel, ".ckpt-tmp-") })
	if err != nil {
		e.t.Fatal(err)
	}
	return st
}

// cmd prepares the ckpt command in the workspace, with the store and a
// state directory of its own; extra environment entries come last.
func (e *env) cmd(args ...string) *exec.Cmd {
	c := exec.Command(e.bin, args...)
	c.Dir = e.ws
	c.Env = append(os.Environ(), "CKPT_STORE="+e.store, "XDG_STATE_HOME="+e.state, "CKPT_FAILPOINT=", "NO_COLOR=1")
	c.Env = append(c.Env, e.extra...)
	return c
}

// run runs ckpt and returns its exit status, stdout and stderr.
func (e *env) run(args ...string) (int, string, string) {
	e.t.Helper()
	return testutil.Run(e.t, e.cmd(args...))
}

// must runs ckpt and fails the test unless it exits 0.
func (e *env) must(args ...string) string {
	e.t.Helper()
	code, out, errs := e.run(args...)
	if code != 0 {
		e.t.Fatalf("ckpt %s: exit %d\nstdout: %s\nstderr: %s", strings.Join(args, " "), code, out, errs)
	}
	return out
}

// once arms a failpoint that runs fn at its first hit only (a rollback's
// own restore hits the same points).
func once(name string, fn func(arg string) error) (disarm func()) {
	var done atomic.Bool // hits may come from parallel workers
	return failpoint.Set(name, func(arg string) error {
		if done.Swap(true) {
			return nil
		}
		return fn(arg)
	})
}

// diffStates compares two workspace states ("" when equal).
func diffStates(want, got treegen.State) string { return treegen.Diff(want, got) }

// runEnv runs ckpt with extra environment entries (CKPT_FAILPOINT=...).
func (e *env) runEnv(extra []string, args ...string) (int, string, string) {
	e.t.Helper()
	saved := e.extra
	e.extra = append(append([]string{}, saved...), extra...)
	defer func() { e.extra = saved }()
	return e.run(args...)
}

// inAnyCheckpoint reports whether some checkpoint holds p with content.
func inAnyCheckpoint(t *testing.T, e *env, p, content string) bool {
	t.Helper()
	ctx := context.Background()
	r, err := ckpt.Open(ctx, e.ws, ckpt.Options{Store: e.store, NoRecover: true})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	cps, err := r.List(ctx, ckpt.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	want := object.Sum([]byte(content)).String()
	for _, c := range cps {
		m, err := r.Manifest(ctx, c.ID.String())
		if err != nil {
			t.Fatal(err)
		}
		if f, ok := m.Files[p]; ok && f.SHA256 == want {
			return true
		}
	}
	return false
}
