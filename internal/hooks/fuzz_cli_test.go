package hooks_test

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/seed1cedbf7c/ckpt/internal/cli"
	"github.com/seed1cedbf7c/ckpt/internal/hooks"
)

// FuzzHookExit runs `ckpt hook AGENT` end to end — the CLI, the payload,
// the workspace's store, the transcript the payload names — on any
// payload, as stdin or (Codex) as the argument: it exits 0 and prints
// nothing on stdout (for Cursor, the JSON answer that lets it go on),
// whatever the payload says.
func FuzzHookExit(f *testing.F) {
	ws := f.TempDir()
	state := f.TempDir()
	os.WriteFile(filepath.Join(ws, "a.txt"), []byte("a\n"), 0o644)
	for k, v := range map[string]string{
		"XDG_STATE_HOME": state, "HOME": f.TempDir(), "CKPT_STORE": filepath.Join(state, "store"),
		"CKPT_HOOK_LOG": filepath.Join(state, "hooks.log"), "CKPT_NO_WATCH": "1",
		"CLAUDE_PROJECT_DIR": ws, "GEMINI_PROJECT_DIR": ws, "CKPT_BACKEND": "", "CKPT_NOW": "",
	} {
		f.Setenv(k, v)
	}
	run := func(args []string, stdin []byte) (int, string, string) {
		var out, errb bytes.Buffer
		code := cli.Main(context.Background(), args, bytes.NewReader(stdin), &out, &errb)
		return code, out.String(), errb.String()
	}
	if code, _, errs := run([]string{"-C", ws, "save", "-q"}, nil); code != 0 {
		f.Fatalf("save: %s", errs)
	}
	for i, agent := range hooks.Agents {
		files, _ := filepath.Glob(filepath.Join("testdata", agent, "*.json"))
		if agent == hooks.Codex { // its native hooks' payloads too
			native, _ := filepath.Glob(filepath.Join("testdata", "codex-hooks", "*.json"))
			files = append(files, native...)
		}
		for _, p := range files {
			data, _ := os.ReadFile(p)
			data = bytes.ReplaceAll(data, []byte("/home/alice/src/webapp"), []byte(ws))
			f.Add(uint8(i), data, false)
		}
	}
	f.Add(uint8(2), []byte(`{"type":"agent-turn-complete","thread-id":"t","cwd":"/"}`), true)
	f.Add(uint8(0), []byte(`{"session_id":"s","hook_event_name":"Stop","transcript_path":"/dev/zero"}`), false)
	f.Fuzz(func(t *testing.T, which uint8, payload []byte, asArg bool) {
		agent := hooks.Agents[int(which)%len(hooks.Agents)]
		args := []string{"-C", ws, "hook", agent, "--timeout", "5s", "--lock-timeout", "1s"}
		var stdin []byte
		// Codex passes the JSON as the last argument; one that starts
		// with '-' would be a flag (--strict), which JSON never is.
		if agent == hooks.Codex && asArg && !bytes.HasPrefix(payload, []byte("-")) {
			args = append(args, string(payload))
		} else {
			stdin = payload
		}
		code, out, errs := run(args, stdin)
		if agent == hooks.Cursor {
			// Cursor reads a JSON answer that lets it go on.
			want := string(hooks.CursorResponse(payload))
			if code != 0 || out != want && (json.Valid(payload) || out != "{}\n" && out != "{\"continue\":true}\n") {
				t.Fatalf("ckpt %q: exit %d, stdout %q; want 0 and %q\nstderr: %s", args, code, out, want, errs)
			}
			return
		}
		if code != 0 || out != "" {
			t.Fatalf("ckpt %q: exit %d, stdout %q; want 0 and nothing\nstderr: %s", args, code, out, errs)
		}
	})
}
