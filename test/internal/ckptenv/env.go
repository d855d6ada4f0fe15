// Package ckptenv is what the fault and attack suites share: a workspace
// with its own store and state directory, and the test binary itself as
// the ckpt command run on it as a child process.
//
// A suite's TestMain calls [Main], so that the test binary, run under the
// name "ckpt" (the symlink [New] makes), acts as the CLI.
package ckptenv

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
	"github.com/seed1cedbf7c/ckpt/internal/testutil"
	"github.com/seed1cedbf7c/ckpt/internal/treegen"
)

// Main runs the CLI when the test binary is invoked as "ckpt" (calling
// atExit, if set, before it exits), and the tests otherwise.
func Main(m *testing.M, atExit func()) {
	if filepath.Base(os.Args[0]) == "ckpt" {
		code := cli.Run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr)
		if atExit != nil {
			atExit()
		}
		os.Exit(code)
	}
	os.Exit(m.Run())
}

// Env is one workspace with its store, and a ckpt binary to run on it.
type Env struct {
	T     *testing.T
	WS    string // the workspace (symlinks resolved)
	Store string // its store directory
	State string // XDG_STATE_HOME for child processes
	Bin   string // the ckpt command
	Extra []string
}

// New makes an empty workspace and a store directory outside it.
func New(t *testing.T) *Env {
	t.Helper()
	base := t.TempDir()
	return &Env{T: t, WS: testutil.TempDir(t), Store: filepath.Join(base, "store"), State: filepath.Join(base, "state"),
		Bin: testutil.CkptBinary(t, filepath.Join(base, "bin"))}
}

// Open opens the workspace with its store in this process.
func (e *Env) Open(opts ckpt.Options) *ckpt.Repo {
	e.T.Helper()
	if opts.Store == "" {
		opts.Store = e.Store
	}
	r, err := ckpt.Open(context.Background(), e.WS, opts)
	if err != nil {
		e.T.Fatal(err)
	}
	e.T.Cleanup(func() { r.Close() })
	return r
}

// Write creates or replaces files (relative paths, parents made).
func (e *Env) Write(files map[string]string) {
	e.T.Helper()
	testutil.WriteFiles(e.T, e.WS, files)
}

// Read returns a file's content, or "<absent>".
func (e *Env) Read(p string) string {
	e.T.Helper()
	return testutil.ReadFile(e.T, e.WS, p)
}

// Snapshot is the workspace's state (ckpt's temporary entries left out).
func (e *Env) Snapshot() treegen.State {
	e.T.Helper()
	st, err := treegen.Snapshot(e.WS, func(rel string) bool { return strings.HasPrefix(rel, ".ckpt-tmp-") })
	if err != nil {
		e.T.Fatal(err)
	}
	return st
}

// Cmd prepares the ckpt command in the workspace, with the store and a
// state directory of its own; Extra environment entries come last.
func (e *Env) Cmd(args ...string) *exec.Cmd {
	c := exec.Command(e.Bin, args...)
	c.Dir = e.WS
	c.Env = append(os.Environ(), "CKPT_STORE="+e.Store, "XDG_STATE_HOME="+e.State, "CKPT_FAILPOINT=", "NO_COLOR=1")
	c.Env = append(c.Env, e.Extra...)
	return c
}

// Run runs ckpt and returns its exit status, stdout and stderr.
func (e *Env) Run(args ...string) (int, string, string) {
	e.T.Helper()
	return testutil.Run(e.T, e.Cmd(args...))
}

// RunEnv runs ckpt with more environment entries (CKPT_FAILPOINT=...).
func (e *Env) RunEnv(extra []string, args ...string) (int, string, string) {
	e.T.Helper()
	saved := e.Extra
	e.Extra = append(append([]string{}, saved...), extra...)
	defer func() { e.Extra = saved }()
	return e.Run(args...)
}

// Must runs ckpt and fails the test unless it exits 0.
func (e *Env) Must(args ...string) string {
	e.T.Helper()
	code, out, errs := e.Run(args...)
	if code != 0 {
		e.T.Fatalf("ckpt %s: exit %d\nstdout: %s\nstderr: %s", strings.Join(args, " "), code, out, errs)
	}
	return out
}

// Once arms a failpoint that runs fn at its first hit only (a rollback's
// own restore hits the same points).
func Once(name string, fn func(arg string) error) (disarm func()) {
	var done atomic.Bool // hits may come from parallel workers
	return failpoint.Set(name, func(arg string) error {
		if done.Swap(true) {
			return nil
		}
		return fn(arg)
	})
}
