package attack

import (
	"context"
	"testing"

	"github.com/seed1cedbf7c/ckpt"
	"github.com/seed1cedbf7c/ckpt/internal/object"
	"github.com/seed1cedbf7c/ckpt/internal/treegen"
	"github.com/seed1cedbf7c/ckpt/test/internal/ckptenv"
)

// TestMain lets the test binary act as the ckpt command: invoked under the
// name "ckpt" (a symlink made by newEnv), it runs the CLI.
func TestMain(m *testing.M) { ckptenv.Main(m, nil) }

// env is one workspace with its store, and a ckpt binary to run on it;
// this suite's own helpers are its methods.
type env struct{ *ckptenv.Env }

// newEnv makes an empty workspace and a store directory outside it.
func newEnv(t *testing.T) *env { return &env{ckptenv.New(t)} }

// diffStates compares two workspace states ("" when equal).
func diffStates(want, got treegen.State) string { return treegen.Diff(want, got) }

// inAnyCheckpoint reports whether some checkpoint holds p with content.
func inAnyCheckpoint(t *testing.T, e *env, p, content string) bool {
	t.Helper()
	ctx := context.Background()
	r, err := ckpt.Open(ctx, e.WS, ckpt.Options{Store: e.Store, NoRecover: true})
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
