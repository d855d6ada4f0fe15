package faults

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// installEnv is a project with its .claude directory, the ckpt command
// named for installed entries, and a home directory of its own.
func installEnv(t *testing.T) (e *env, settings string) {
	e = newEnv(t)
	if err := os.MkdirAll(filepath.Join(e.ws, ".claude"), 0o755); err != nil {
		t.Fatal(err)
	}
	e.extra = []string{"HOME=" + t.TempDir(), "CLAUDE_CONFIG_DIR=", "CODEX_HOME="}
	return e, filepath.Join(e.ws, ".claude", "settings.json")
}

// TestInstallLeavesTheUsersOwnCommand: a hook command of the user's that
// runs ckpt's hook among other things is theirs — uninstall leaves it,
// install adds no second entry — and so is a Codex notify line that does.
func TestInstallLeavesTheUsersOwnCommand(t *testing.T) {
	e, settings := installEnv(t)
	orig := `{
  "hooks": {
    "Stop": [
      { "hooks": [ { "type": "command", "command": "ckpt hook claude-code && notify-send done" } ] }
    ]
  }
}
`
	if err := os.WriteFile(settings, []byte(orig), 0o644); err != nil {
		t.Fatal(err)
	}
	e.must("hook", "claude-code", "uninstall")
	if got := readFile(t, settings); got != orig {
		t.Fatalf("uninstall changed the user's command:\n%s", got)
	}
	out := e.must("hook", "claude-code", "install", "--command", "/opt/bin/ckpt")
	if !strings.Contains(out, "left as it is, your own command that runs ckpt's hook: Stop: ckpt hook claude-code && notify-send done") {
		t.Errorf("install did not say it left the user's command:\n%s", out)
	}
	got := readFile(t, settings)
	if strings.Count(got, "hook claude-code") != 4 || !strings.Contains(got, "notify-send done") {
		t.Fatalf("after install (want the user's Stop and ckpt's three others):\n%s", got)
	}
	e.must("hook", "claude-code", "uninstall")
	if got := readFile(t, settings); got != orig {
		t.Fatalf("install then uninstall:\n%s\nwant\n%s", got, orig)
	}

	// Codex: a notify program of the user's that runs ckpt's hook.
	codexHome := t.TempDir()
	e.extra = append(e.extra, "CODEX_HOME="+codexHome)
	conf := filepath.Join(codexHome, "config.toml")
	corig := "notify = [\"ckpt\", \"hook\", \"codex\", \"--no-watch\"]\nmodel = \"o3\"\n"
	if err := os.WriteFile(conf, []byte(corig), 0o644); err != nil {
		t.Fatal(err)
	}
	e.must("hook", "codex", "uninstall")
	e.must("hook", "codex", "install", "--command", "/opt/bin/ckpt")
	if got := readFile(t, conf); got != corig {
		t.Fatalf("codex config changed:\n%s", got)
	}
}

func readFile(t *testing.T, p string) string {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
