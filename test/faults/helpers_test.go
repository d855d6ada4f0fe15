//go:build unix

package faults

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/seed1cedbf7c/ckpt/internal/failpoint"
	"github.com/seed1cedbf7c/ckpt/internal/treegen"
	"github.com/seed1cedbf7c/ckpt/test/internal/ckptenv"
)

// TestMain lets the test binary act as the ckpt command: invoked under the
// name "ckpt" (a symlink made by newEnv), it runs the CLI, reporting its
// peak memory as it exits (see reportPeakMemory).
func TestMain(m *testing.M) { ckptenv.Main(m, reportPeakMemory) }

// env is one workspace with its store, and a ckpt binary to run on it;
// this suite's own helpers are its methods.
type env struct{ *ckptenv.Env }

// newEnv makes an empty workspace and a store directory outside it.
func newEnv(t *testing.T) *env { return &env{ckptenv.New(t)} }

// failpointEvery runs fn at every hit of a failpoint.
func failpointEvery(name string, fn func(arg string)) (disarm func()) {
	return failpoint.Set(name, func(arg string) error { fn(arg); return nil })
}

// diffStates compares two workspace states ("" when equal).
func diffStates(want, got treegen.State) string { return treegen.Diff(want, got) }

// removeAll removes a workspace path and everything below it.
func removeAll(t *testing.T, e *env, p string) {
	t.Helper()
	if err := os.RemoveAll(filepath.Join(e.WS, filepath.FromSlash(p))); err != nil {
		t.Fatal(err)
	}
}
