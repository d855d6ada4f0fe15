package mcpserver_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/seed1cedbf7c/ckpt/internal/testutil"
)

var (
	buildOnce sync.Once
	buildDir  string
	buildBin  string
	buildErr  error
)

func TestMain(m *testing.M) {
	code := m.Run()
	if buildDir != "" {
		os.RemoveAll(buildDir)
	}
	os.Exit(code)
}

// ckptBinary builds cmd/ckpt once per test run and returns its path.
func ckptBinary(t *testing.T) string {
	t.Helper()
	buildOnce.Do(func() {
		buildDir, buildErr = os.MkdirTemp("", "ckpt-mcp-test-")
		if buildErr != nil {
			return
		}
		buildBin = filepath.Join(buildDir, "ckpt")
		cmd := exec.Command("go", "build", "-o", buildBin, "github.com/seed1cedbf7c/ckpt/cmd/ckpt")
		if out, err := cmd.CombinedOutput(); err != nil {
			buildErr = &buildError{err, string(out)}
		}
	})
	if buildErr != nil {
		t.Fatalf("building ckpt: %v", buildErr)
	}
	return buildBin
}

type buildError struct {
	err error
	out string
}

func (e *buildError) Error() string { return e.err.Error() + "\n" + e.out }

// The ckpt binary serves MCP on stdio (the Go SDK's CommandTransport), with
// --workspace and without (then in its current directory), on the
// workspace's default store.
func TestBinaryOverStdio(t *testing.T) {
	bin := ckptBinary(t)
	ctx := context.Background()
	for _, pinned := range []bool{true, false} {
		ws, state := t.TempDir(), t.TempDir()
		testutil.WriteFiles(t, ws, map[string]string{"a.txt": "v1\n"})
		argv := []string{"mcp"}
		if pinned {
			argv = append(argv, "--workspace", ws)
		}
		cmd := exec.Command(bin, argv...)
		cmd.Dir = ws // without --workspace: the current directory
		if pinned {
			cmd.Dir = t.TempDir()
		}
		cmd.Env = append(os.Environ(), "XDG_STATE_HOME="+state, "CKPT_STORE=", "HOME="+state)
		var stderr strings.Builder
		cmd.Stderr = &stderr
		client := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "v0"}, &mcp.ClientOptions{Capabilities: &mcp.ClientCapabilities{}})
		cs, err := client.Connect(ctx, &mcp.CommandTransport{Command: cmd}, nil)
		if err != nil {
			t.Fatalf("connect: %v\n%s", err, stderr.String())
		}
		s := &session{t: t, cs: cs}
		res, err := cs.ListTools(ctx, nil)
		if err != nil || len(res.Tools) != len(allTools) {
			t.Fatalf("tools: %v, %v", res, err)
		}
		id := match(t, `^snapshot s1 created: ([0-9a-f]{64})$`, s.ok("snapshot_create", args{"name": "s1", "description": "first"}))[1]
		match(t, `^s1\t`+id[:12]+`\t\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\+00:00\tfirst$`, s.ok("snapshot_list", nil))
		testutil.WriteFiles(t, ws, map[string]string{"a.txt": "v2\n"})
		s.want("snapshot_diff", args{"name": "s1"}, "diff --git a/a.txt b/a.txt\nindex 626799f..8c1384d 100644\n--- a/a.txt\n+++ b/a.txt\n@@ -1 +1 @@\n-v1\n+v2\n")
		s.want("snapshot_restore", args{"name": "s1"}, "restored snapshot s1 (1 file(s) changed):\na.txt")
		if a := testutil.ReadFile(t, ws, "a.txt"); a != "v1\n" {
			t.Errorf("a.txt = %q after restore", a)
		}
		s.wantErr("snapshot_delete", args{"name": "s2"}, "ckpt: snapshot delete: no snapshot named \"s2\"\nckpt: hint: `ckpt snapshot list` (MCP: snapshot_list) shows the snapshots")
		s.want("snapshot_delete", args{"name": "s1"}, "snapshot s1 deleted")
		if err := cs.Close(); err != nil {
			t.Errorf("close: %v", err)
		}
		if err := cmd.Wait(); err != nil && !strings.Contains(err.Error(), "Wait was already called") {
			t.Errorf("ckpt mcp exited: %v\n%s", err, stderr.String())
		}
		if cmd.ProcessState == nil || !cmd.ProcessState.Success() {
			t.Errorf("ckpt mcp did not exit cleanly: %v\n%s", cmd.ProcessState, stderr.String())
		}
		// The store is the workspace's default one, outside it.
		if _, err := os.Stat(filepath.Join(ws, ".ckpt")); err == nil {
			t.Errorf("a store was created inside the workspace")
		}
		if m, _ := filepath.Glob(filepath.Join(state, "ckpt", filepath.Base(ws)+"-*")); len(m) != 1 {
			t.Errorf("default store under XDG_STATE_HOME: %v", m)
		}
	}
}
