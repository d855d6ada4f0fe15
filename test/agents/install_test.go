package agents

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/seed1cedbf7c/ckpt/internal/testutil"
)

// An agent CLI, pinned: the npm package and the command it installs
// (a name in node_modules/.bin, or a path under node_modules for a
// package that installs its program without a bin entry).
type agentCLI struct {
	pkg, version, bin string
}

var (
	claudeCLI = agentCLI{"@anthropic-ai/claude-code", "2.1.328", "claude"}
	geminiCLI = agentCLI{"@google/gemini-cli", "0.61.0", "gemini"}
	codexCLI  = agentCLI{"@openai/codex", "0.169.0", "codex"}
)

var installMu sync.Mutex

// install returns the agent's command, installing its pinned npm package
// into the cache first when it is not there. In -short mode the test is
// skipped (the full run installs); a failed install fails the test.
func (a agentCLI) install(t testing.TB) string {
	t.Helper()
	testutil.Long(t, a.pkg+"@"+a.version+" end to end")
	installMu.Lock()
	defer installMu.Unlock()
	cache := os.Getenv("CKPT_AGENTS_CACHE")
	if cache == "" {
		base, err := os.UserCacheDir()
		if err != nil {
			t.Fatalf("no cache directory for the agents' CLIs: %v (set CKPT_AGENTS_CACHE)", err)
		}
		cache = filepath.Join(base, "ckpt", "agents")
	}
	dir := filepath.Join(cache, strings.NewReplacer("/", "_", "@", "_").Replace(a.pkg)+"_"+a.version)
	bin := filepath.Join(dir, "node_modules", ".bin", a.bin)
	if strings.Contains(a.bin, "/") {
		bin = filepath.Join(dir, "node_modules", filepath.FromSlash(a.bin))
	}
	if _, err := os.Stat(bin); err == nil {
		return bin
	}
	npm, err := exec.LookPath("npm")
	if err != nil {
		t.Fatalf("installing %s@%s needs npm (scripts/test installs it): %v", a.pkg, a.version, err)
	}
	tmp := dir + ".tmp"
	os.RemoveAll(tmp)
	if err := os.MkdirAll(tmp, 0o755); err != nil {
		t.Fatal(err)
	}
	c := exec.Command(npm, "install", "--prefix", tmp, "--no-audit", "--no-fund", "--loglevel=error", a.pkg+"@"+a.version)
	if out, err := c.CombinedOutput(); err != nil {
		t.Fatalf("npm install %s@%s failed: %v\n%s", a.pkg, a.version, err, out)
	}
	if err := os.Rename(tmp, dir); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(bin); err != nil {
		t.Fatalf("npm installed %s@%s but not its %s command: %v", a.pkg, a.version, a.bin, err)
	}
	return bin
}
