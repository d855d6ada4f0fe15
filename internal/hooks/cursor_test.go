package hooks

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// cursorPayload reads a payload of Cursor's and points it at the test's
// workspace (workspace_roots) and agent directory (transcript_path).
func (e *env) cursorPayload(t *testing.T, fixture string) []byte {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(e.payload(t, fixture), &m); err != nil {
		t.Fatal(err)
	}
	m["workspace_roots"] = []string{e.ws}
	out, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func (e *env) mustRunCursor(t *testing.T, fixture, action string) *Result {
	t.Helper()
	res, stderr, err := e.run(t, Cursor, e.cursorPayload(t, fixture))
	if err != nil || res.Action != action || stderr != "" {
		t.Fatalf("%s: %+v, %v, stderr %q; want action %q", fixture, res, err, stderr, action)
	}
	return res
}

// Cursor's hooks: beforeSubmitPrompt begins a turn in the session of the
// conversation, in the workspace of workspace_roots; stop ends it with the
// replies and tool calls from the transcript the payload names.
func TestCursorHooks(t *testing.T) {
	e := newEnv(t)
	const cid = "9d41e6b2-5c07-4a3f-8e19-b2c6f0a7d583"
	e.mustRunCursor(t, "cursor/session_start.json", "opened session")
	e.mustRunCursor(t, "cursor/before_submit_prompt.json", "began turn 1")
	e.editAndRemove(t)
	res, stderr, err := e.run(t, Cursor, e.cursorPayload(t, "cursor/after_file_edit.json"))
	if err != nil || res.Action != "ignored" || !strings.Contains(stderr, "ckpt does nothing for cursor afterFileEdit\n") {
		t.Fatalf("afterFileEdit: %+v, %v, %q", res, err, stderr)
	}
	e.transcript(t, "cursor/transcript.jsonl", "cursor/stop.json")
	res = e.mustRunCursor(t, "cursor/stop.json", "ended turn 1")
	if res.Files != 2 || res.Messages != 4 {
		t.Fatalf("result %+v", res)
	}
	e.mustRunCursor(t, "cursor/session_end.json", "closed session")
	e.checkTurn(t, cid, Cursor, []msg{
		{"user", "", prompt},
		{"assistant", "", "I'll change the greeting in main.go, then remove notes.txt."},
		{"tool", "StrReplace", "/home/alice/src/webapp/main.go"},
		{"tool", "Shell", "rm notes.txt"},
		{"assistant", "", `Done: main.go now prints "hello", and notes.txt is gone.`},
	})
}

// The Cursor CLI sends "transcript_path": null: the turn is recorded
// without its replies and tool calls, and nothing is wrong.
func TestCursorNoTranscript(t *testing.T) {
	e := newEnv(t)
	null := func(fixture string) []byte {
		var m map[string]any
		json.Unmarshal(e.cursorPayload(t, fixture), &m)
		m["transcript_path"] = nil
		out, _ := json.Marshal(m)
		return out
	}
	for _, c := range []struct{ fixture, action string }{
		{"cursor/before_submit_prompt.json", "began turn 1"},
		{"cursor/stop.json", "ended turn 1"},
	} {
		res, stderr, err := e.run(t, Cursor, null(c.fixture))
		if err != nil || res.Action != c.action || stderr != "" {
			t.Fatalf("%s: %+v, %v, %q", c.fixture, res, err, stderr)
		}
	}
}

func TestParseCursor(t *testing.T) {
	for _, c := range []struct {
		fixture        string
		kind           Kind
		detail, prompt string
	}{
		{"session_start.json", KindSessionStart, "", ""},
		{"before_submit_prompt.json", KindPrompt, "", prompt},
		{"after_file_edit.json", KindIgnore, "", ""},
		{"stop.json", KindStop, "completed", ""},
		{"session_end.json", KindSessionEnd, "completed", ""},
	} {
		data, err := os.ReadFile(filepath.Join("testdata", "cursor", c.fixture))
		if err != nil {
			t.Fatal(err)
		}
		ev, err := Parse(Cursor, data)
		if err != nil {
			t.Fatalf("%s: %v", c.fixture, err)
		}
		if ev.Agent != Cursor || ev.Kind != c.kind || ev.Detail != c.detail || ev.Prompt != c.prompt ||
			ev.SessionID != "9d41e6b2-5c07-4a3f-8e19-b2c6f0a7d583" || ev.Cwd != "/home/alice/src/webapp" || !strings.HasSuffix(ev.Transcript, ".jsonl") {
			t.Errorf("%s: %+v", c.fixture, ev)
		}
	}
	// session_id stands in for a missing conversation_id; no
	// workspace_roots, no cwd (the hook's directory is used).
	ev, err := Parse(Cursor, []byte(`{"session_id":"s1","hook_event_name":"stop","status":"aborted","loop_count":1,"transcript_path":null}`))
	if err != nil || ev.SessionID != "s1" || ev.Kind != KindStop || ev.Detail != "aborted" || !ev.StopHookActive || ev.Cwd != "" || ev.Transcript != "" {
		t.Errorf("session_id alone: %+v, %v", ev, err)
	}
	for _, bad := range []string{`["stop"]`, `{"conversation_id":"c"}`, `{"hook_event_name":"stop","workspace_roots":"/a"}`} {
		if _, err := Parse(Cursor, []byte(bad)); err == nil || !strings.HasPrefix(err.Error(), "cursor payload: ") {
			t.Errorf("Parse(%s): %v", bad, err)
		}
	}
}

// Cursor reads a hook's stdout as JSON; beforeSubmitPrompt's answer must
// say "continue": true or the prompt is dropped. Every payload — an
// unreadable one too — gets an answer that lets the agent go on.
func TestCursorResponse(t *testing.T) {
	for payload, want := range map[string]string{
		`{"hook_event_name":"beforeSubmitPrompt","prompt":"x"}`: `{"continue":true}`,
		`{"hook_event_name":"stop","status":"completed"}`:       `{}`,
		`{"hook_event_name":"sessionStart"}`:                    `{}`,
		`not json`:                                              `{}`,
		``:                                                      `{}`,
		// A payload cut short (past the 16 MiB a hook reads, or by
		// --timeout) still names its event before the long prompt.
		`{"conversation_id":"c","hook_event_name":"beforeSubmitPrompt","prompt":"xxxx`: `{"continue":true}`,
		`{"workspace_roots":7,"hook_event_name":"beforeSubmitPrompt"`:                  `{"continue":true}`,
		`{"hook_event_name":"stop","status":"compl`:                                    `{}`,
		`{"prompt":"xxx`: `{}`,
		`[{"hook_event_name":"beforeSubmitPrompt"}]`: `{}`,
		`{"hook_event_name":7}`:                      `{}`,
	} {
		got := CursorResponse([]byte(payload))
		if string(got) != want+"\n" {
			t.Errorf("CursorResponse(%s) = %q, want %q", payload, got, want)
		}
		var v map[string]any
		if err := json.Unmarshal(got, &v); err != nil {
			t.Errorf("CursorResponse(%s): not JSON: %v", payload, err)
		}
	}
}

// Cursor's hooks.json: .cursor/hooks.json in the workspace (the default)
// or ~/.cursor/hooks.json; each entry is a command of its own, not a
// group; a new file says "version": 1; other entries and keys are kept,
// and uninstall gives back the file as it was.
func TestCursorInstall(t *testing.T) {
	ws, home := t.TempDir(), t.TempDir()
	t.Setenv("HOME", home)
	if got := DefaultScope(Cursor); got != ScopeProject {
		t.Errorf("DefaultScope(cursor) = %s, want project", got)
	}
	if got, err := SettingsFile(Cursor, ScopeProject, ws); err != nil || got != filepath.Join(ws, ".cursor", "hooks.json") {
		t.Errorf("SettingsFile(cursor, project) = %q, %v", got, err)
	}
	if got, err := SettingsFile(Cursor, ScopeUser, ws); err != nil || got != filepath.Join(home, ".cursor", "hooks.json") {
		t.Errorf("SettingsFile(cursor, user) = %q, %v", got, err)
	}
	opts := InstallOptions{Command: "/opt/bin/ckpt", BackupDir: t.TempDir(), Project: ws}

	// A new file.
	file := filepath.Join(ws, ".cursor", "hooks.json")
	ch, err := Install(Cursor, ScopeProject, file, opts)
	if err != nil || !ch.Changed || !reflect.DeepEqual(ch.Added, Events[Cursor]) {
		t.Fatalf("install: %+v, %v", ch, err)
	}
	data, _ := os.ReadFile(file)
	want := `{
  "version": 1,
  "hooks": {
    "beforeSubmitPrompt": [
      {
        "command": "/opt/bin/ckpt hook cursor"
      }
    ],
    "stop": [
      {
        "command": "/opt/bin/ckpt hook cursor"
      }
    ]
  }
}
`
	if string(data) != want {
		t.Errorf("new file:\n%s\nwant\n%s", data, want)
	}
	if ch, err := Uninstall(Cursor, ScopeProject, file, opts); err != nil || !reflect.DeepEqual(ch.Removed, Events[Cursor]) {
		t.Fatalf("uninstall: %+v, %v", ch, err)
	}
	if data, _ := os.ReadFile(file); strings.Join(strings.Fields(string(data)), "") != `{"version":1}` {
		t.Errorf("after uninstall: %s", data)
	}

	// A file of the user's, with other hooks.
	orig := `{
  "version": 1,
  "hooks": {
    "afterFileEdit": [{"command": "./hooks/format.sh"}],
    "stop": [{"command": "./hooks/audit.sh", "loop_limit": 3}]
  }
}
`
	if err := os.WriteFile(file, []byte(orig), 0o644); err != nil {
		t.Fatal(err)
	}
	if ch, err = Install(Cursor, ScopeProject, file, opts); err != nil || !reflect.DeepEqual(ch.Added, Events[Cursor]) {
		t.Fatalf("install: %+v, %v", ch, err)
	}
	data, _ = os.ReadFile(file)
	flat := strings.Join(strings.Fields(string(data)), "")
	for _, w := range []string{`"afterFileEdit":[{"command":"./hooks/format.sh"}]`, `"stop":[{"command":"./hooks/audit.sh","loop_limit":3},{"command":"/opt/bin/ckpthookcursor"}]`,
		`"beforeSubmitPrompt":[{"command":"/opt/bin/ckpthookcursor"}]`} {
		if !strings.Contains(flat, w) {
			t.Errorf("installed file lacks %s:\n%s", w, data)
		}
	}
	st := Status(Cursor, ScopeProject, file)
	if !reflect.DeepEqual(st.Events, Events[Cursor]) || len(st.Missing) != 0 || !reflect.DeepEqual(st.Commands, []string{"/opt/bin/ckpt hook cursor"}) {
		t.Errorf("status %+v", st)
	}
	if ch, err := Install(Cursor, ScopeProject, file, opts); err != nil || ch.Changed {
		t.Errorf("install again: %+v, %v", ch, err)
	}
	// Another ckpt binary: the entries are updated, not doubled.
	opts2 := opts
	opts2.Command = "/usr/local/bin/ckpt"
	if ch, err := Install(Cursor, ScopeProject, file, opts2); err != nil || !reflect.DeepEqual(ch.Updated, Events[Cursor]) {
		t.Errorf("install with another ckpt: %+v, %v", ch, err)
	}
	if ch, err := Uninstall(Cursor, ScopeProject, file, opts); err != nil || !reflect.DeepEqual(ch.Removed, Events[Cursor]) {
		t.Fatalf("uninstall: %+v, %v", ch, err)
	}
	if data, _ := os.ReadFile(file); string(data) != orig {
		t.Errorf("after uninstall:\n%s\nwant\n%s", data, orig)
	}

	// A command of the user's that runs ckpt's hook is theirs.
	mine := `{"version": 1, "hooks": {"stop": [{"command": "ckpt hook cursor --no-messages"}]}}` + "\n"
	os.WriteFile(file, []byte(mine), 0o644)
	ch, err = Install(Cursor, ScopeProject, file, opts)
	if err != nil || !reflect.DeepEqual(ch.Added, []string{"beforeSubmitPrompt"}) || len(ch.Kept) != 1 {
		t.Errorf("install beside the user's: %+v, %v", ch, err)
	}
	ch, err = Uninstall(Cursor, ScopeProject, file, opts)
	if data, _ := os.ReadFile(file); err != nil || string(data) != mine || len(ch.Kept) != 1 {
		t.Errorf("uninstall beside the user's: %+v, %v\n%s", ch, err, data)
	}
}
