package hooks

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/seed1cedbf7c/ckpt"
)

const copilotSession = "8b2f4d16-3e7a-4c59-a1d8-6f0e2b9c7a35"

// Copilot CLI's hooks, as ckpt installs them (PascalCase names, Claude
// Code's fields): UserPromptSubmit begins a turn, Stop ends it with the
// replies and tool calls from the session's events.jsonl — the main
// agent's, not a subagent's — and names that transcript on the session.
func TestCopilotHooks(t *testing.T) {
	e := newEnv(t)
	e.mustRun(t, Copilot, "copilot/session_start.json", "opened session")
	e.mustRun(t, Copilot, "copilot/user_prompt_submit.json", "began turn 1")
	e.editAndRemove(t)
	tp := e.transcript(t, "copilot/transcript.jsonl", "copilot/stop.json")
	res := e.mustRun(t, Copilot, "copilot/stop.json", "ended turn 1")
	if res.Files != 2 || res.Messages != 4 {
		t.Fatalf("result %+v", res)
	}
	e.mustRun(t, Copilot, "copilot/pre_compact.json", "noted compaction")
	e.mustRun(t, Copilot, "copilot/session_end.json", "closed session")
	e.checkTurn(t, copilotSession, Copilot, []msg{
		{"user", "", prompt},
		{"assistant", "", "I'll change the greeting in main.go, then remove notes.txt."},
		{"tool", "edit", "/home/alice/src/webapp/main.go"},
		{"tool", "bash", "rm notes.txt"},
		{"assistant", "", `Done: main.go now prints "hello", and notes.txt is gone.`},
		{"system", "", "the agent compacted its context (manual)"},
	})
	r := e.open(t)
	_, s, err := r.Controller(context.Background(), ckpt.ControllerOptions{ID: copilotSession})
	if err != nil {
		t.Fatal(err)
	}
	if s.Transcript != tp {
		t.Errorf("the session's transcript is %q, want %q (named at Stop)", s.Transcript, tp)
	}
	r.Close()
	for _, f := range []string{"notification.json", "camel_pre_tool_use.json"} {
		res, stderr, err := e.run(t, Copilot, e.payload(t, "copilot/"+f))
		if err != nil || res.Action != "ignored" || !strings.Contains(stderr, "ckpt does nothing for copilot ") {
			t.Errorf("%s: %+v, %v, %q", f, res, err, stderr)
		}
	}
}

// A camelCase entry of the user's (sessionStart, userPromptSubmitted,
// agentStop, sessionEnd) works as well: the payload names no event, its
// fields do.
func TestCopilotCamelCaseHooks(t *testing.T) {
	e := newEnv(t)
	e.mustRun(t, Copilot, "copilot/camel_session_start.json", "opened session")
	e.mustRun(t, Copilot, "copilot/camel_user_prompt_submitted.json", "began turn 1")
	e.editAndRemove(t)
	// camelCase payloads keep transcriptPath: point it at the test's copy.
	var stop map[string]any
	if err := json.Unmarshal(e.payload(t, "copilot/camel_agent_stop.json"), &stop); err != nil {
		t.Fatal(err)
	}
	stop["transcriptPath"] = e.transcript(t, "copilot/transcript.jsonl", "copilot/stop.json")
	payload, _ := json.Marshal(stop)
	res, stderr, err := e.run(t, Copilot, payload)
	if err != nil || res.Action != "ended turn 1" || res.Messages != 4 {
		t.Fatalf("agentStop: %+v, %v, %q", res, err, stderr)
	}
	e.mustRun(t, Copilot, "copilot/camel_session_end.json", "closed session")
}

func TestParseCopilot(t *testing.T) {
	for _, c := range []struct {
		fixture, name  string
		kind           Kind
		detail, prompt string
		transcript     bool
	}{
		{"session_start.json", "SessionStart", KindSessionStart, "new", "", false},
		{"user_prompt_submit.json", "UserPromptSubmit", KindPrompt, "", prompt, false},
		{"stop.json", "Stop", KindStop, "", "", true},
		{"session_end.json", "SessionEnd", KindSessionEnd, "user_exit", "", false},
		{"pre_compact.json", "PreCompact", KindCompact, "manual", "", true},
		{"notification.json", "Notification", KindIgnore, "", "", false},
		// Copilot names its edit tool Edit (Claude Code's name) here.
		{"pre_tool_use.json", "PreToolUse", KindEdit, "Edit", "", false},
		{"camel_session_start.json", "sessionStart", KindSessionStart, "new", "", false},
		{"camel_user_prompt_submitted.json", "userPromptSubmitted", KindPrompt, "", prompt, false},
		{"camel_agent_stop.json", "agentStop", KindStop, "", "", true},
		{"camel_session_end.json", "sessionEnd", KindSessionEnd, "user_exit", "", false},
		{"camel_pre_compact.json", "preCompact", KindCompact, "manual", "", true},
		{"camel_pre_tool_use.json", "a tool's, subagent's or error's event", KindIgnore, "", "", false},
		{"camel_post_tool_use.json", "a tool's, subagent's or error's event", KindIgnore, "", "", false},
		{"camel_error_occurred.json", "a tool's, subagent's or error's event", KindIgnore, "", "", false},
	} {
		data, err := os.ReadFile(filepath.Join("testdata", "copilot", c.fixture))
		if err != nil {
			t.Fatal(err)
		}
		ev, err := Parse(Copilot, data)
		if err != nil {
			t.Fatalf("%s: %v", c.fixture, err)
		}
		if ev.Agent != Copilot || ev.Name != c.name || ev.Kind != c.kind || ev.Detail != c.detail || ev.Prompt != c.prompt ||
			ev.SessionID != copilotSession || ev.Cwd != "/home/alice/src/webapp" || (ev.Transcript != "") != c.transcript {
			t.Errorf("%s: %+v", c.fixture, ev)
		}
	}
	// An empty prompt is still a prompt (the field is there).
	ev, err := Parse(Copilot, []byte(`{"sessionId":"s","timestamp":1,"cwd":"/w","prompt":""}`))
	if err != nil || ev.Kind != KindPrompt {
		t.Errorf("empty prompt: %+v, %v", ev, err)
	}
	for _, bad := range []string{`["Stop"]`, `{"timestamp":1}`, `{"session_id":"s"}`} {
		if _, err := Parse(Copilot, []byte(bad)); err == nil || !strings.HasPrefix(err.Error(), "copilot payload: ") {
			t.Errorf("Parse(%s): %v", bad, err)
		}
	}
}

// Copilot appends to events.jsonl in the background: a Stop that reads it
// before the turn's last reply is there reads it again until it is.
func TestCopilotStopWaitsForTranscript(t *testing.T) {
	head := `{"type":"user.message","data":{"content":"the prompt"}}` + "\n" +
		`{"type":"assistant.message","data":{"content":"","toolRequests":[{"toolCallId":"c1","name":"create","arguments":{"path":"/w/a.txt","file_text":"x"}}]}}` + "\n"
	rest := `{"type":"tool.execution_complete","data":{"toolCallId":"c1","success":true}}` + "\n" +
		`{"type":"assistant.message","data":{"content":"Done.","toolRequests":[]}}` + "\n"
	got := stopWhileCatchingUp(t, Copilot, head, rest, "")
	if want := []string{"tool create /w/a.txt", "assistant  Done."}; fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("messages %q, want %q", got, want)
	}
	// One that never catches up says so.
	p := filepath.Join(t.TempDir(), "events.jsonl")
	if err := os.WriteFile(p, []byte(head), 0o600); err != nil {
		t.Fatal(err)
	}
	msgs, err := turnMessages(&Event{Agent: Copilot, Kind: KindStop, Transcript: p}, "the prompt")
	if err != nil || len(msgs) != 2 || msgs[1].Role != "system" || !strings.Contains(msgs[1].Content, "had not caught up") {
		t.Errorf("a transcript behind: %+v, %v", msgs, err)
	}
}

// ckpt's hooks file for Copilot: ~/.copilot/hooks/ckpt.json by default
// ($COPILOT_HOME/hooks/), .github/hooks/ckpt.json in the workspace with
// --project; a file of ckpt's own, rewritten or removed whole, and left
// alone when it holds anyone else's hook.
func TestCopilotInstall(t *testing.T) {
	ws, home := t.TempDir(), t.TempDir()
	t.Setenv("HOME", home)
	t.Setenv("COPILOT_HOME", "")
	if got := DefaultScope(Copilot); got != ScopeUser {
		t.Errorf("DefaultScope(copilot) = %s, want user", got)
	}
	if got := Scopes(Copilot); !reflect.DeepEqual(got, []Scope{ScopeProject, ScopeUser}) {
		t.Errorf("Scopes(copilot) = %v", got)
	}
	for _, c := range []struct {
		scope Scope
		chome string
		want  string
	}{
		{ScopeProject, "", filepath.Join(ws, ".github", "hooks", "ckpt.json")},
		{ScopeUser, "", filepath.Join(home, ".copilot", "hooks", "ckpt.json")},
		{ScopeUser, "/opt/copilot", "/opt/copilot/hooks/ckpt.json"},
	} {
		t.Setenv("COPILOT_HOME", c.chome)
		if got, err := SettingsFile(Copilot, c.scope, ws); err != nil || got != c.want {
			t.Errorf("SettingsFile(copilot, %s) with COPILOT_HOME=%q = %q, %v; want %q", c.scope, c.chome, got, err, c.want)
		}
	}
	if _, err := SettingsFile(Copilot, ScopeLocal, ws); err == nil {
		t.Error("SettingsFile(copilot, local): no error")
	}

	file := filepath.Join(ws, ".github", "hooks", "ckpt.json")
	backups := t.TempDir()
	opts := InstallOptions{Command: "/opt/bin/ckpt", BackupDir: backups, Project: ws}
	ch, err := Install(Copilot, ScopeProject, file, opts)
	if err != nil || !ch.Changed || !reflect.DeepEqual(ch.Added, Events[Copilot]) || ch.Command != "/opt/bin/ckpt hook copilot" {
		t.Fatalf("install: %+v, %v", ch, err)
	}
	data, _ := os.ReadFile(file)
	want := `{
  "version": 1,
  "hooks": {
    "SessionStart": [
      {
        "type": "command",
        "bash": "/opt/bin/ckpt hook copilot",
        "timeoutSec": 30
      }
    ],
    "UserPromptSubmit": [
      {
        "type": "command",
        "bash": "/opt/bin/ckpt hook copilot",
        "timeoutSec": 30
      }
    ],
    "PreToolUse": [
      {
        "type": "command",
        "bash": "/opt/bin/ckpt hook copilot",
        "timeoutSec": 30
      }
    ],
    "Stop": [
      {
        "type": "command",
        "bash": "/opt/bin/ckpt hook copilot",
        "timeoutSec": 30
      }
    ],
    "SessionEnd": [
      {
        "type": "command",
        "bash": "/opt/bin/ckpt hook copilot",
        "timeoutSec": 30
      }
    ]
  }
}
`
	if string(data) != want {
		t.Fatalf("installed file:\n%s\nwant\n%s", data, want)
	}
	st := Status(Copilot, ScopeProject, file)
	if !reflect.DeepEqual(st.Events, Events[Copilot]) || len(st.Missing) != 0 || !reflect.DeepEqual(st.Commands, []string{"/opt/bin/ckpt hook copilot"}) {
		t.Errorf("status %+v", st)
	}
	if ch, err := Install(Copilot, ScopeProject, file, opts); err != nil || ch.Changed {
		t.Errorf("install again: %+v, %v", ch, err)
	}
	// Another ckpt, and an event taken out by hand: rewritten.
	var f map[string]any
	json.Unmarshal(data, &f)
	delete(f["hooks"].(map[string]any), "SessionEnd")
	edited, _ := json.Marshal(f)
	os.WriteFile(file, edited, 0o644)
	opts.Command = "/usr/local/bin/ckpt"
	ch, err = Install(Copilot, ScopeProject, file, opts)
	if err != nil || !ch.Changed || !reflect.DeepEqual(ch.Added, []string{"SessionEnd"}) ||
		!reflect.DeepEqual(ch.Updated, []string{"SessionStart", "UserPromptSubmit", "PreToolUse", "Stop"}) || ch.Backup == "" {
		t.Fatalf("install with another ckpt: %+v, %v", ch, err)
	}
	if data, _ := os.ReadFile(file); string(data) != strings.ReplaceAll(want, "/opt/bin/ckpt", "/usr/local/bin/ckpt") {
		t.Errorf("rewritten file:\n%s", data)
	}
	ch, err = Uninstall(Copilot, ScopeProject, file, opts)
	if err != nil || !ch.Changed || !reflect.DeepEqual(ch.Removed, Events[Copilot]) {
		t.Fatalf("uninstall: %+v, %v", ch, err)
	}
	if _, err := os.Stat(file); !os.IsNotExist(err) {
		t.Errorf("uninstall left %s: %v", file, err)
	}
	if ch, err := Uninstall(Copilot, ScopeProject, file, opts); err != nil || ch.Changed {
		t.Errorf("uninstall again: %+v, %v", ch, err)
	}

	// A ckpt.json with a hook of the user's in it is theirs: install
	// refuses it, uninstall leaves it, status finds ckpt's events in it.
	theirs := `{"version": 1, "hooks": {"Stop": [{"type": "command", "bash": "/opt/bin/ckpt hook copilot", "timeoutSec": 30}], "preToolUse": [{"type": "command", "bash": "./audit.sh"}]}}` + "\n"
	os.WriteFile(file, []byte(theirs), 0o644)
	if _, err := Install(Copilot, ScopeProject, file, opts); err == nil || !strings.Contains(err.Error(), "is not ckpt's hooks file") {
		t.Errorf("install over the user's file: %v", err)
	}
	ch, err = Uninstall(Copilot, ScopeProject, file, opts)
	if err != nil || ch.Changed || !reflect.DeepEqual(ch.Kept, []string{"Stop: /opt/bin/ckpt hook copilot"}) {
		t.Errorf("uninstall of the user's file: %+v, %v", ch, err)
	}
	if data, _ := os.ReadFile(file); string(data) != theirs {
		t.Errorf("the user's file changed:\n%s", data)
	}
	if st := Status(Copilot, ScopeProject, file); !reflect.DeepEqual(st.Events, []string{"Stop"}) || len(st.Missing) != len(Events[Copilot])-1 {
		t.Errorf("status of the user's file: %+v", st)
	}
	// A project install does not write through a link out of the project.
	os.Remove(file)
	outside := filepath.Join(t.TempDir(), "elsewhere.json")
	os.WriteFile(outside, nil, 0o644)
	if err := os.Symlink(outside, file); err != nil {
		t.Fatal(err)
	}
	if _, err := Install(Copilot, ScopeProject, file, opts); err == nil {
		t.Error("install through a link out of the project: no error")
	}
}

// ckpt's hooks file in odd places: a project whose .github/hooks is a
// link out of it (install refuses it, and uninstall removes nothing
// there), a user's hooks directory that is a dotfiles link (followed), a
// directory named ckpt.json, a read-only hooks directory; the other files
// of the hooks directory are left alone.
func TestCopilotInstallOddPlaces(t *testing.T) {
	ws := t.TempDir()
	opts := InstallOptions{Command: "/opt/bin/ckpt", BackupDir: t.TempDir(), Project: ws}

	// The project's .github/hooks leads to the user's own hooks directory,
	// which holds ckpt's file: neither install nor uninstall of the project
	// touches it.
	userHooks := filepath.Join(t.TempDir(), "hooks")
	os.MkdirAll(userHooks, 0o755)
	userFile := filepath.Join(userHooks, "ckpt.json")
	if err := os.WriteFile(userFile, copilotFile("/opt/bin/ckpt"), 0o644); err != nil {
		t.Fatal(err)
	}
	os.MkdirAll(filepath.Join(ws, ".github"), 0o755)
	if err := os.Symlink(userHooks, filepath.Join(ws, ".github", "hooks")); err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(ws, ".github", "hooks", "ckpt.json")
	opts.Command = "/usr/local/bin/ckpt"
	if _, err := Install(Copilot, ScopeProject, file, opts); err == nil || !strings.Contains(err.Error(), "leads out of the project") {
		t.Errorf("install through .github/hooks linked out of the project: %v", err)
	}
	if ch, err := Uninstall(Copilot, ScopeProject, file, opts); err == nil || ch.Changed {
		t.Errorf("uninstall through .github/hooks linked out of the project: %+v, %v", ch, err)
	}
	if got := string(read(t, userFile)); got != string(copilotFile("/opt/bin/ckpt")) {
		t.Errorf("the file out of the project changed:\n%s", got)
	}
	os.Remove(filepath.Join(ws, ".github", "hooks"))

	// The user's hooks directory is a dotfiles link: followed, the link
	// kept; the other files there stay.
	dotfiles := filepath.Join(t.TempDir(), "copilot-hooks")
	os.MkdirAll(dotfiles, 0o755)
	other := filepath.Join(dotfiles, "audit.json")
	os.WriteFile(other, []byte(`{"version": 1, "hooks": {}}`), 0o644)
	chome := t.TempDir()
	if err := os.Symlink(dotfiles, filepath.Join(chome, "hooks")); err != nil {
		t.Fatal(err)
	}
	ufile := filepath.Join(chome, "hooks", "ckpt.json")
	if _, err := Install(Copilot, ScopeUser, ufile, opts); err != nil {
		t.Fatal(err)
	}
	if got := string(read(t, filepath.Join(dotfiles, "ckpt.json"))); got != string(copilotFile("/usr/local/bin/ckpt")) {
		t.Errorf("ckpt.json in the linked directory:\n%s", got)
	}
	if ch, err := Uninstall(Copilot, ScopeUser, ufile, opts); err != nil || !ch.Changed {
		t.Fatalf("uninstall: %+v, %v", ch, err)
	}
	if fi, err := os.Lstat(filepath.Join(chome, "hooks")); err != nil || fi.Mode()&os.ModeSymlink == 0 {
		t.Errorf("the hooks link: %v, %v", fi, err)
	}
	if string(read(t, other)) != `{"version": 1, "hooks": {}}` {
		t.Error("another hooks file changed")
	}
	if des, _ := os.ReadDir(dotfiles); len(des) != 1 {
		t.Errorf("left in the hooks directory: %v", des)
	}

	// A directory named ckpt.json.
	dir := filepath.Join(t.TempDir(), "hooks", "ckpt.json")
	os.MkdirAll(dir, 0o755)
	if _, err := Install(Copilot, ScopeUser, dir, opts); err == nil || !strings.Contains(err.Error(), dir) {
		t.Errorf("install over a directory: %v", err)
	}
	if ch, err := Uninstall(Copilot, ScopeUser, dir, opts); err == nil || ch.Changed {
		t.Errorf("uninstall of a directory: %+v, %v", ch, err)
	}
	if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
		t.Errorf("the directory: %v, %v", fi, err)
	}

	// A read-only hooks directory: an error naming it, nothing written.
	if os.Geteuid() != 0 {
		ro := filepath.Join(t.TempDir(), "hooks")
		os.MkdirAll(ro, 0o755)
		os.Chmod(ro, 0o555)
		t.Cleanup(func() { os.Chmod(ro, 0o755) })
		if _, err := Install(Copilot, ScopeUser, filepath.Join(ro, "ckpt.json"), opts); err == nil || !strings.Contains(err.Error(), ro) {
			t.Errorf("install into a read-only directory: %v", err)
		}
		if des, _ := os.ReadDir(ro); len(des) != 0 {
			t.Errorf("left in the read-only directory: %v", des)
		}
	}
}
