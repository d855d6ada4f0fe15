package hooks

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// Droid's hooks: UserPromptSubmit begins a turn; Stop (no reply in its
// payload) ends it with the replies and tool calls from the transcript,
// where Droid also records its hooks' runs and the context it adds
// before a prompt (neither is a prompt).
func TestDroidHooks(t *testing.T) {
	e := newEnv(t)
	const sid = "3f6c1a2e-8b4d-4c7e-9a15-2d8e6b0f4c91"
	e.mustRun(t, Droid, "droid/session_start.json", "opened session")
	e.mustRun(t, Droid, "droid/user_prompt_submit.json", "began turn 1")
	e.editAndRemove(t)
	// Execute is no edit tool: nothing to do before it.
	res, stderr, err := e.run(t, Droid, e.payload(t, "droid/pre_tool_use.json"))
	if err != nil || res.Action != "ignored" || !strings.Contains(stderr, "ckpt does nothing for droid PreToolUse: not an edit tool: Execute\n") {
		t.Fatalf("PreToolUse: %+v, %v, %q", res, err, stderr)
	}
	e.transcript(t, "droid/transcript.jsonl", "droid/stop.json")
	res = e.mustRun(t, Droid, "droid/stop.json", "ended turn 1")
	if res.Files != 2 || res.Messages != 4 {
		t.Fatalf("result %+v", res)
	}
	e.mustRun(t, Droid, "droid/pre_compact.json", "noted compaction")
	e.mustRun(t, Droid, "droid/session_end.json", "closed session")
	e.checkTurn(t, sid, Droid, []msg{
		{"user", "", prompt},
		{"assistant", "", "I'll change the greeting in main.go, then remove notes.txt."},
		{"tool", "Edit", "/home/alice/src/webapp/main.go"},
		{"tool", "Execute", "rm notes.txt"},
		{"assistant", "", `Done: main.go now prints "hello", and notes.txt is gone.`},
		{"system", "", "the agent compacted its context (manual)"},
	})
}

func TestParseDroid(t *testing.T) {
	for _, c := range []struct {
		fixture        string
		kind           Kind
		detail, prompt string
	}{
		{"session_start.json", KindSessionStart, "startup", ""},
		{"user_prompt_submit.json", KindPrompt, "", prompt},
		{"stop.json", KindStop, "", ""},
		{"session_end.json", KindSessionEnd, "prompt_input_exit", ""},
		{"pre_compact.json", KindCompact, "manual", ""},
		{"pre_tool_use.json", KindIgnore, "not an edit tool: Execute", ""},
	} {
		data, err := os.ReadFile(filepath.Join("testdata", "droid", c.fixture))
		if err != nil {
			t.Fatal(err)
		}
		ev, err := Parse(Droid, data)
		if err != nil {
			t.Fatalf("%s: %v", c.fixture, err)
		}
		if ev.Agent != Droid || ev.Kind != c.kind || ev.Detail != c.detail || ev.Prompt != c.prompt || ev.Assistant != "" ||
			ev.SessionID != "3f6c1a2e-8b4d-4c7e-9a15-2d8e6b0f4c91" || ev.Cwd != "/home/alice/src/webapp" || !strings.HasSuffix(ev.Transcript, ".jsonl") {
			t.Errorf("%s: %+v", c.fixture, ev)
		}
	}
	for _, bad := range []string{`["Stop"]`, `{"session_id":"s"}`, `{"hook_event_name":7}`} {
		if _, err := Parse(Droid, []byte(bad)); err == nil || !strings.HasPrefix(err.Error(), "droid payload: ") {
			t.Errorf("Parse(%s): %v", bad, err)
		}
	}
}

// A turn starts at its own prompt; a prompt that is not in the
// transcript falls back to the latest prompt there is; hook records and
// the context Droid adds are not prompts.
func TestDroidTranscript(t *testing.T) {
	path := filepath.Join("testdata", "droid", "transcript.jsonl")
	msgs, err := droidTurn(path, "What does this project do?")
	if err != nil || len(msgs) < 2 || msgs[0].Tool != "Read" || msgs[1].Content != "It prints a greeting." {
		t.Errorf("first turn: %+v, %v", msgs, err)
	}
	msgs, err = droidTurn(path, "not a prompt of this session")
	if err != nil || len(msgs) != 4 || msgs[3].Content != `Done: main.go now prints "hello", and notes.txt is gone.` {
		t.Errorf("fallback: %+v, %v", msgs, err)
	}
	dir := t.TempDir()
	only := filepath.Join(dir, "t.jsonl")
	os.WriteFile(only, []byte(`{"type":"session_start","id":"s"}`+"\n"+
		`{"type":"message","id":"h","message":{"role":"user","content":[],"visibility":"user_only","hookEventName":"UserPromptSubmit"}}`+"\n"+
		`{"type":"message","id":"context-x","message":{"role":"user","content":[{"type":"text","text":"<system-reminder>x</system-reminder>"}]}}`+"\n"), 0o600)
	if _, err := droidTurn(only, "hi"); err == nil || !strings.Contains(err.Error(), "the turn's prompt is not in it") {
		t.Errorf("no prompt: %v", err)
	}
}

// Droid's settings: .factory/settings.json in the workspace (the default),
// ~/.factory/settings.json for the user ($FACTORY_HOME_OVERRIDE stands for
// the home directory); the entries are Claude Code's (timeout in seconds),
// and uninstall gives back the file as it was.
func TestDroidInstall(t *testing.T) {
	ws, home := t.TempDir(), t.TempDir()
	t.Setenv("HOME", home)
	t.Setenv("FACTORY_HOME_OVERRIDE", "")
	if got := DefaultScope(Droid); got != ScopeProject {
		t.Errorf("DefaultScope(droid) = %s, want project", got)
	}
	if got := Scopes(Droid); !reflect.DeepEqual(got, []Scope{ScopeProject, ScopeUser}) {
		t.Errorf("Scopes(droid) = %v", got)
	}
	for _, c := range []struct {
		scope    Scope
		override string
		want     string
	}{
		{ScopeProject, "", filepath.Join(ws, ".factory", "settings.json")},
		{ScopeUser, "", filepath.Join(home, ".factory", "settings.json")},
		{ScopeUser, "/srv/droid", "/srv/droid/.factory/settings.json"},
	} {
		t.Setenv("FACTORY_HOME_OVERRIDE", c.override)
		if got, err := SettingsFile(Droid, c.scope, ws); err != nil || got != c.want {
			t.Errorf("SettingsFile(droid, %s) with FACTORY_HOME_OVERRIDE=%q = %q, %v; want %q", c.scope, c.override, got, err, c.want)
		}
	}
	if _, err := SettingsFile(Droid, ScopeLocal, ws); err == nil {
		t.Error("SettingsFile(droid, local): no error")
	}

	file := filepath.Join(ws, ".factory", "settings.json")
	orig := "{\n  // the user's\n  \"customModels\": [{\"model\": \"m\", \"provider\": \"anthropic\"}],\n  \"hooks\": {\"Stop\": [{\"hooks\": [{\"type\": \"command\", \"command\": \"say done\"}]}]}\n}\n"
	projectInstallRoundTrip(t, Droid, ws, file, orig)
}
