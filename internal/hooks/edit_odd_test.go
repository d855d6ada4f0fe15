package hooks

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/seed1cedbf7c/ckpt"
	"github.com/seed1cedbf7c/ckpt/internal/testutil"
)

// The hook before an edit tool, given paths it must not follow: one out
// of the workspace (absolute, through .., through a symlinked directory),
// an ignored symlink to a file outside, an ignored FIFO, an ignored
// directory, a path with NUL, a very long one, a Codex patch naming 1500
// files. Nothing outside the workspace is read or kept, nothing hangs.
func TestEditToolOddPaths(t *testing.T) {
	e := newEnv(t)
	out := t.TempDir()
	secret := filepath.Join(out, "secret")
	testutil.WriteFile(t, secret, "TOP SECRET\n")
	testutil.WriteFiles(t, e.ws, map[string]string{".gitignore": "*.local\nbuild/\n", "build/big/x.o": "obj\n"})
	os.Symlink(secret, filepath.Join(e.ws, "link.local"))
	os.Symlink(out, filepath.Join(e.ws, "away.local"))
	if err := testutil.Mkfifo(filepath.Join(e.ws, "fifo.local"), 0o600); err != nil {
		t.Fatal(err)
	}
	const sid = "2f9c7c1e-5b0a-4c51-9a7e-3d1f6b8e4a21"
	e.mustRun(t, ClaudeCode, "claude-code/user_prompt_submit.json", "began turn 1")

	edit := func(agent, tool string, input map[string]any) (*Result, string, error) {
		t.Helper()
		var m map[string]any
		json.Unmarshal(e.payload(t, "claude-code/pre_tool_use.json"), &m)
		m["tool_name"], m["tool_input"] = tool, input
		b, _ := json.Marshal(m)
		done := make(chan struct{})
		var res *Result
		var stderr string
		var err error
		go func() {
			defer close(done)
			res, stderr, err = e.run(t, agent, b, func(o *RunOptions) { o.Timeout = 20 * time.Second })
		}()
		select {
		case <-done:
		case <-time.After(30 * time.Second):
			t.Fatalf("%s %v: hangs", tool, input)
		}
		return res, stderr, err
	}
	long := strings.Repeat("a/", 200000) + "f.local"
	almost := strings.Repeat("a/", 2000) + "f.local" // within PATH_MAX
	for _, c := range []struct{ p, want string }{
		{secret, "nothing to keep"},
		{"../" + filepath.Base(out) + "/secret", "nothing to keep"},
		{filepath.Join(e.ws, "away.local", "secret"), "nothing to keep"},
		{filepath.Join(e.ws, "link.local"), "kept ignored link.local"}, // the link, as a link
		{filepath.Join(e.ws, "fifo.local"), "nothing to keep"},
		{"build", "nothing to keep"},
		{"build/big", "nothing to keep"},
		{".env\x00.local", "ignored"},
		{long, "nothing to keep"},
		{almost, "kept ignored " + almost},
		{filepath.Join(e.ws, "x.local") + strings.Repeat("/", 5000), "kept ignored x.local"},
	} {
		start := time.Now()
		res, stderr, err := edit(ClaudeCode, "Write", map[string]any{"file_path": c.p})
		if d := time.Since(start); d > 5*time.Second {
			t.Errorf("%.80q: took %v", c.p, d)
		}
		if err != nil || res.Action != c.want {
			t.Errorf("%.80q: %.200q, %v, want %q\n%.300s", c.p, res.Action, err, c.want, stderr)
		}
	}
	var patch strings.Builder
	patch.WriteString("*** Begin Patch\n")
	for i := range 1500 {
		fmt.Fprintf(&patch, "*** Update File: ../%s/f%d.local\n*** Add File: n%d.local\n", filepath.Base(out), i, i)
	}
	patch.WriteString("*** Update File: " + secret + "\n*** Move to: link.local\n*** End Patch\n")
	start := time.Now()
	res, stderr, err := edit(Codex, "apply_patch", map[string]any{"command": patch.String()})
	if d := time.Since(start); err != nil || !strings.HasPrefix(res.Action, "kept ignored n0.local, n1.local, ") || d > 5*time.Second {
		t.Errorf("codex: %v, %.200q, %v\n%.300s", d, res.Action, err, stderr)
	}

	// What the turn kept: no file outside, the link as a link.
	r := e.open(t)
	_, s, err := r.Controller(context.Background(), ckpt.ControllerOptions{ID: sid, Exact: true})
	if err != nil {
		t.Fatal(err)
	}
	for _, ip := range s.Turns[0].Ignored {
		p := string(ip)
		if strings.HasPrefix(p, "..") || strings.HasPrefix(p, "/") || strings.HasPrefix(p, "build") || strings.Contains(p, "fifo") {
			t.Errorf("kept %q", p)
		}
	}
}
