package hooks

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// Qwen Code's hooks: UserPromptSubmit begins a turn (and is run again,
// with no prompt, each time the tools' results go back to the model:
// those calls are ignored); Stop ends it with the tool calls from the
// transcript and the reply from the payload.
func TestQwenCodeHooks(t *testing.T) {
	e := newEnv(t)
	const sid = "5e8d2c41-9a7b-4f3e-b1c6-0d2a4e6f8b19"
	e.mustRun(t, QwenCode, "qwen-code/session_start.json", "opened session")
	e.mustRun(t, QwenCode, "qwen-code/user_prompt_submit.json", "began turn 1")
	e.editAndRemove(t)
	for range 2 {
		res, stderr, err := e.run(t, QwenCode, e.payload(t, "qwen-code/user_prompt_submit_tool_results.json"))
		if err != nil || res.Action != "ignored" || !strings.Contains(stderr, "ckpt does nothing for qwen-code UserPromptSubmit: tool results sent back to the model, not a prompt") {
			t.Fatalf("UserPromptSubmit with tool results: %+v, %v, %q", res, err, stderr)
		}
	}
	e.transcript(t, "qwen-code/transcript.jsonl", "qwen-code/stop.json")
	res := e.mustRun(t, QwenCode, "qwen-code/stop.json", "ended turn 1")
	if res.Files != 2 || res.Messages != 4 {
		t.Fatalf("result %+v", res)
	}
	e.mustRun(t, QwenCode, "qwen-code/pre_compact.json", "noted compaction")
	e.mustRun(t, QwenCode, "qwen-code/session_end.json", "closed session")
	e.checkTurn(t, sid, QwenCode, []msg{
		{"user", "", prompt},
		{"assistant", "", "I'll change the greeting in main.go, then remove notes.txt."},
		{"tool", "edit", "/home/alice/src/webapp/main.go"},
		{"tool", "run_shell_command", "rm notes.txt"},
		{"assistant", "", `Done: main.go now prints "hello", and notes.txt is gone.`},
		{"system", "", "the agent compacted its context (manual)"},
	})
	// main.go is no ignored file: the turn's checkpoints hold it.
	e.mustRun(t, QwenCode, "qwen-code/pre_tool_use.json", "nothing to keep")
}

func TestParseQwenCode(t *testing.T) {
	for _, c := range []struct {
		fixture        string
		kind           Kind
		detail, prompt string
	}{
		{"session_start.json", KindSessionStart, "startup", ""},
		{"user_prompt_submit.json", KindPrompt, "", prompt},
		{"user_prompt_submit_tool_results.json", KindIgnore, "tool results sent back to the model, not a prompt", ""},
		{"stop.json", KindStop, "", ""},
		{"session_end.json", KindSessionEnd, "prompt_input_exit", ""},
		{"pre_compact.json", KindCompact, "manual", ""},
		{"pre_tool_use.json", KindEdit, "edit", ""},
	} {
		data, err := os.ReadFile(filepath.Join("testdata", "qwen-code", c.fixture))
		if err != nil {
			t.Fatal(err)
		}
		ev, err := Parse(QwenCode, data)
		if err != nil {
			t.Fatalf("%s: %v", c.fixture, err)
		}
		if ev.Agent != QwenCode || ev.Kind != c.kind || ev.Detail != c.detail || ev.Prompt != c.prompt ||
			ev.SessionID != "5e8d2c41-9a7b-4f3e-b1c6-0d2a4e6f8b19" || ev.Cwd != "/home/alice/src/webapp" || !strings.HasSuffix(ev.Transcript, ".jsonl") {
			t.Errorf("%s: %+v", c.fixture, ev)
		}
		if c.kind == KindStop && !strings.HasPrefix(ev.Assistant, "Done:") {
			t.Errorf("%s: assistant %q", c.fixture, ev.Assistant)
		}
	}
	// submitted_prompt is the user's words; prompt, what the model got
	// (an @file expanded, say), stands in when it is missing.
	ev, err := Parse(QwenCode, []byte(`{"session_id":"s","hook_event_name":"UserPromptSubmit","prompt":"look at @a.go\n--- a.go ---\npackage a","submitted_prompt":"look at @a.go"}`))
	if err != nil || ev.Kind != KindPrompt || ev.Prompt != "look at @a.go" {
		t.Errorf("submitted_prompt: %+v, %v", ev, err)
	}
	ev, err = Parse(QwenCode, []byte(`{"session_id":"s","hook_event_name":"UserPromptSubmit","prompt":"fix it"}`))
	if err != nil || ev.Kind != KindPrompt || ev.Prompt != "fix it" {
		t.Errorf("prompt alone: %+v, %v", ev, err)
	}
	for _, bad := range []string{`["Stop"]`, `{"session_id":"s"}`} {
		if _, err := Parse(QwenCode, []byte(bad)); err == nil || !strings.HasPrefix(err.Error(), "qwen-code payload: ") {
			t.Errorf("Parse(%s): %v", bad, err)
		}
	}
}

// Qwen Code's settings: .qwen/settings.json in the workspace (the
// default), ~/.qwen/settings.json for the user ($QWEN_HOME if set); the
// entries are Claude Code's (timeout in seconds), and uninstall gives
// back the file as it was.
func TestQwenCodeInstall(t *testing.T) {
	ws, home := t.TempDir(), t.TempDir()
	t.Setenv("HOME", home)
	t.Setenv("QWEN_HOME", "")
	if got := DefaultScope(QwenCode); got != ScopeProject {
		t.Errorf("DefaultScope(qwen-code) = %s, want project", got)
	}
	if got := Scopes(QwenCode); !reflect.DeepEqual(got, []Scope{ScopeProject, ScopeUser}) {
		t.Errorf("Scopes(qwen-code) = %v", got)
	}
	for _, c := range []struct {
		scope Scope
		qhome string
		want  string
	}{
		{ScopeProject, "", filepath.Join(ws, ".qwen", "settings.json")},
		{ScopeUser, "", filepath.Join(home, ".qwen", "settings.json")},
		{ScopeUser, "/opt/qwen", "/opt/qwen/settings.json"},
	} {
		t.Setenv("QWEN_HOME", c.qhome)
		if got, err := SettingsFile(QwenCode, c.scope, ws); err != nil || got != c.want {
			t.Errorf("SettingsFile(qwen-code, %s) with QWEN_HOME=%q = %q, %v; want %q", c.scope, c.qhome, got, err, c.want)
		}
	}
	if _, err := SettingsFile(QwenCode, ScopeLocal, ws); err == nil {
		t.Error("SettingsFile(qwen-code, local): no error")
	}

	file := filepath.Join(ws, ".qwen", "settings.json")
	orig := "{\n  // the user's\n  \"model\": {\"name\": \"qwen3-coder-plus\"},\n  \"hooks\": {\"Stop\": [{\"hooks\": [{\"type\": \"command\", \"command\": \"say done\"}]}]}\n}\n"
	projectInstallRoundTrip(t, QwenCode, ws, file, orig)
}
