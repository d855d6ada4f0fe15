package mcpserver_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// A real MCP client, the official TypeScript SDK (test/mcp/client.mjs),
// spawns `ckpt mcp`, lists the tools and calls every one. It needs node and
// npm: scripts/test installs them, so their absence is a failure, not a
// skip.
func TestTypeScriptClient(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: skipping the TypeScript client")
	}
	node, err := exec.LookPath("node")
	if err != nil {
		t.Fatal("node is not installed (scripts/test installs it): ", err)
	}
	dir, err := filepath.Abs("../../test/mcp")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, "node_modules", "@modelcontextprotocol", "sdk")); err != nil {
		npm, err := exec.LookPath("npm")
		if err != nil {
			t.Fatal("npm is not installed (scripts/test installs it): ", err)
		}
		cmd := exec.Command(npm, "ci", "--no-audit", "--no-fund")
		cmd.Dir = dir
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("npm ci in %s: %v\n%s", dir, err, out)
		}
	}
	bin := ckptBinary(t)
	cmd := exec.Command(node, "client.mjs", bin, t.TempDir())
	cmd.Dir = dir
	state := t.TempDir()
	cmd.Env = append(os.Environ(), "XDG_STATE_HOME="+state, "HOME="+state)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("node client.mjs: %v\n%s", err, out)
	}
	if !strings.HasPrefix(string(out), "ok: ") {
		t.Errorf("node client.mjs printed %q", out)
	}
	t.Logf("%s", out)
}
