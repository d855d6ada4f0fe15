package hooks

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/seed1cedbf7c/ckpt"
	"github.com/seed1cedbf7c/ckpt/internal/testutil"
)

// env is a workspace, its store, a directory standing for the agent's own
// (where transcripts live) and the hook log, all in temporary directories.
type env struct {
	ws, store, agentDir, log string
}

func newEnv(t *testing.T) *env {
	t.Helper()
	t.Setenv("XDG_STATE_HOME", t.TempDir())
	e := &env{ws: t.TempDir(), store: filepath.Join(t.TempDir(), "store"), agentDir: t.TempDir()}
	e.log = filepath.Join(t.TempDir(), "hooks.log")
	testutil.WriteFiles(t, e.ws, map[string]string{
		"main.go":   "package main\n\nfunc main() { println(\"hi\") }\n",
		"notes.txt": "unused\n",
	})
	return e
}

// payload reads a recorded payload and points it at the test's workspace
// (cwd) and agent directory (transcript_path).
func (e *env) payload(t *testing.T, fixture string) []byte {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", fixture))
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(data, &m); err != nil {
		t.Fatal(err)
	}
	if _, ok := m["cwd"]; ok {
		m["cwd"] = e.ws
	}
	if tp, ok := m["transcript_path"].(string); ok {
		m["transcript_path"] = filepath.Join(e.agentDir, filepath.Base(tp))
	}
	out, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// transcript copies a recorded transcript to where the payloads say it is.
func (e *env) transcript(t *testing.T, fixture, payloadFixture string) string {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(e.payload(t, payloadFixture), &m); err != nil {
		t.Fatal(err)
	}
	dst := m["transcript_path"].(string)
	data, err := os.ReadFile(filepath.Join("testdata", fixture))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(dst, data, 0o600); err != nil {
		t.Fatal(err)
	}
	return dst
}

func (e *env) run(t *testing.T, agent string, payload []byte, mod ...func(*RunOptions)) (*Result, string, error) {
	t.Helper()
	var stderr bytes.Buffer
	opts := RunOptions{Options: Options{Store: e.store}, Stderr: &stderr, Log: e.log}
	for _, m := range mod {
		m(&opts)
	}
	res, err := Run(context.Background(), agent, payload, opts)
	return res, stderr.String(), err
}

func (e *env) mustRun(t *testing.T, agent, fixture, action string) *Result {
	t.Helper()
	res, stderr, err := e.run(t, agent, e.payload(t, fixture))
	if err != nil {
		t.Fatalf("%s: %v\n%s", fixture, err, stderr)
	}
	if res.Action != action {
		t.Fatalf("%s: action %q, want %q (notes %v)", fixture, res.Action, action, res.Notes)
	}
	if stderr != "" {
		t.Fatalf("%s: stderr %q, want none", fixture, stderr)
	}
	return res
}

func (e *env) open(t *testing.T) *ckpt.Repo {
	t.Helper()
	r, err := ckpt.Open(context.Background(), e.ws, ckpt.Options{Store: e.store})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close() })
	return r
}

func (e *env) editAndRemove(t *testing.T) {
	t.Helper()
	testutil.WriteFile(t, filepath.Join(e.ws, "main.go"), "package main\n\nfunc main() { println(\"hello\") }\n")
	// The agent's shell command, not an edit tool.
	cmd := exec.Command("sh", "-c", "rm notes.txt")
	cmd.Dir = e.ws
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("rm: %v\n%s", err, out)
	}
}

type msg struct{ role, tool, content string }

func messages(t *testing.T, ctl *ckpt.Controller) []msg {
	t.Helper()
	ms, err := ctl.Messages(context.Background(), false)
	if err != nil {
		t.Fatal(err)
	}
	var out []msg
	for _, m := range ms {
		out = append(out, msg{m.Role, m.Tool, m.Content})
	}
	return out
}

const prompt = `Rename the greeting to "hello" and delete the unused notes file`

// checkTurn verifies the session the hooks recorded: one turn with the
// prompt, begin and end checkpoints of kind turn, the two files changed,
// and a rewind that brings the workspace back.
func (e *env) checkTurn(t *testing.T, sessionID, agent string, want []msg) {
	t.Helper()
	ctx := context.Background()
	r := e.open(t)
	ctl, _, err := r.Controller(ctx, ckpt.ControllerOptions{ID: sessionID})
	if err != nil {
		t.Fatal(err)
	}
	s, err := ctl.Session(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if s.ID != sessionID || s.Agent != agent || len(s.Turns) != 1 {
		t.Fatalf("session %s agent %s with %d turns, want %s, %s, 1", s.ID, s.Agent, len(s.Turns), sessionID, agent)
	}
	tt := s.Turns[0]
	if tt.Prompt != prompt || tt.Open() || tt.Begin == *tt.End {
		t.Fatalf("turn %+v", tt)
	}
	wantFiles := []ckpt.TurnFile{{Path: "main.go", Status: "modified"}, {Path: "notes.txt", Status: "deleted"}}
	if len(tt.Files) != 2 || tt.Files[0] != wantFiles[0] || tt.Files[1] != wantFiles[1] {
		t.Fatalf("files %+v, want %+v", tt.Files, wantFiles)
	}
	ids := []ckpt.ID{tt.Begin, *tt.End}
	if agent == Codex {
		ids = ids[1:] // a Codex turn begins at whatever checkpoint came before
	}
	for _, id := range ids {
		c, err := r.Get(ctx, id.String())
		if err != nil {
			t.Fatal(err)
		}
		if c.Kind != ckpt.KindTurn || c.Meta["session"] != sessionID {
			t.Fatalf("checkpoint %s: kind %s meta %v", c.Short(), c.Kind, c.Meta)
		}
	}
	got := messages(t, ctl)
	if len(got) != len(want) {
		t.Fatalf("messages:\n%q\nwant\n%q", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("message %d: %q, want %q", i, got[i], want[i])
		}
	}
	// The begin checkpoint is the state before the turn: rewinding brings
	// back what the shell's rm deleted.
	if _, err := ctl.Rewind(ctx, 1, ckpt.ScopeCode, ckpt.RewindOptions{Exact: true}); err != nil {
		t.Fatal(err)
	}
	if b, err := os.ReadFile(filepath.Join(e.ws, "notes.txt")); err != nil || string(b) != "unused\n" {
		t.Fatalf("notes.txt after rewind: %q, %v", b, err)
	}
}

func TestClaudeCodeHooks(t *testing.T) {
	e := newEnv(t)
	const sid = "2f9c7c1e-5b0a-4c51-9a7e-3d1f6b8e4a21"
	e.mustRun(t, ClaudeCode, "claude-code/session_start.json", "opened session")
	res := e.mustRun(t, ClaudeCode, "claude-code/user_prompt_submit.json", "began turn 1")
	if res.Session != sid || res.Workspace == "" || res.Checkpoint == "" {
		t.Fatalf("result %+v", res)
	}
	e.editAndRemove(t)
	e.transcript(t, "claude-code/transcript.jsonl", "claude-code/stop.json")
	res = e.mustRun(t, ClaudeCode, "claude-code/stop.json", "ended turn 1")
	if res.Files != 2 || res.Messages != 4 {
		t.Fatalf("result %+v", res)
	}
	// SessionEnd after the turn ended has nothing to end; PreCompact is
	// noted in the conversation.
	e.mustRun(t, ClaudeCode, "claude-code/session_end.json", "closed session")
	e.checkTurn(t, sid, ClaudeCode, []msg{
		{"user", "", prompt},
		{"assistant", "", "I'll change the greeting in main.go, then remove notes.txt."},
		{"tool", "Edit", "/home/alice/src/webapp/main.go"},
		{"tool", "Bash", "rm notes.txt"},
		{"assistant", "", `Done: main.go now prints "hello", and notes.txt is gone.`},
	})
	log, err := os.ReadFile(e.log)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"claude-code SessionStart session=" + sid, "began turn 1 at", "ended turn 1 at", "2 file(s) changed, 4 message(s)"} {
		if !strings.Contains(string(log), want) {
			t.Errorf("log lacks %q:\n%s", want, log)
		}
	}
}

// Without SessionStart (hooks installed mid-session) the prompt opens the
// session; a transcript that lags behind still gets the last message from
// the payload; a turn interrupted before Stop is ended by SessionEnd.
func TestClaudeCodeWithoutSessionStartAndLaggingTranscript(t *testing.T) {
	e := newEnv(t)
	const sid = "2f9c7c1e-5b0a-4c51-9a7e-3d1f6b8e4a21"
	e.mustRun(t, ClaudeCode, "claude-code/user_prompt_submit.json", "began turn 1")
	e.editAndRemove(t)
	path := e.transcript(t, "claude-code/transcript.jsonl", "claude-code/stop.json")
	data, _ := os.ReadFile(path)
	ls := strings.SplitAfter(strings.TrimSuffix(string(data), "\n"), "\n")
	os.WriteFile(path, []byte(strings.Join(ls[:len(ls)-1], "")), 0o600) // the final reply not written yet
	e.mustRun(t, ClaudeCode, "claude-code/stop.json", "ended turn 1")
	e.checkTurn(t, sid, ClaudeCode, []msg{
		{"user", "", prompt},
		{"assistant", "", "I'll change the greeting in main.go, then remove notes.txt."},
		{"tool", "Edit", "/home/alice/src/webapp/main.go"},
		{"tool", "Bash", "rm notes.txt"},
		{"assistant", "", `Done: main.go now prints "hello", and notes.txt is gone.`},
		{"system", "", "ckpt: the agent's transcript had not caught up with the turn's end; some tool calls may be missing"},
	})

	e.mustRun(t, ClaudeCode, "claude-code/user_prompt_submit.json", "began turn 2")
	res := e.mustRun(t, ClaudeCode, "claude-code/session_end.json", "ended turn 2 (session end)")
	if res.Messages != 0 {
		t.Fatalf("result %+v", res)
	}
	// A Stop with no turn in progress is a note, not an error.
	res, stderr, err := e.run(t, ClaudeCode, e.payload(t, "claude-code/stop.json"))
	if err != nil || res.Action != "nothing to end" || !strings.Contains(stderr, "note: no turn in progress") {
		t.Fatalf("stop without a turn: %+v, %v, %q", res, err, stderr)
	}
	e.mustRun(t, ClaudeCode, "claude-code/pre_compact.json", "noted compaction")
}

func TestGeminiHooks(t *testing.T) {
	e := newEnv(t)
	const sid = "b3c1f0a8-6e2d-4c7a-9f15-2d8e4b7a1c90"
	e.mustRun(t, Gemini, "gemini/session_start.json", "opened session")
	e.mustRun(t, Gemini, "gemini/before_agent.json", "began turn 1")
	e.editAndRemove(t)
	e.transcript(t, "gemini/transcript.jsonl", "gemini/after_agent.json")
	res := e.mustRun(t, Gemini, "gemini/after_agent.json", "ended turn 1")
	if res.Files != 2 || res.Messages != 4 {
		t.Fatalf("result %+v", res)
	}
	e.mustRun(t, Gemini, "gemini/pre_compress.json", "noted compaction")
	e.mustRun(t, Gemini, "gemini/session_end.json", "closed session")
	e.checkTurn(t, sid, Gemini, []msg{
		{"user", "", prompt},
		{"assistant", "", "I'll change the greeting in main.go and then delete notes.txt."},
		{"tool", "replace", "/home/alice/src/webapp/main.go"},
		{"tool", "run_shell_command", "rm notes.txt"},
		{"assistant", "", `Done: main.go now prints "hello", and notes.txt is gone.`},
		{"system", "", "the agent compacted its context (auto)"},
	})
	// A tool event is not one ckpt handles.
	res, stderr, err := e.run(t, Gemini, e.payload(t, "gemini/before_tool.json"))
	if err != nil || res.Action != "ignored" || !strings.Contains(stderr, "ckpt does nothing for gemini BeforeTool") {
		t.Fatalf("BeforeTool: %+v, %v, %q", res, err, stderr)
	}
}

// Codex reports a turn when it is over: it begins at the last checkpoint
// (here, the user's own save before starting Codex) and ends now.
func TestCodexNotify(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	r := e.open(t)
	if _, err := r.Save(ctx, ckpt.SaveOptions{Message: "before codex"}); err != nil {
		t.Fatal(err)
	}
	r.Close()
	e.editAndRemove(t)
	res := e.mustRun(t, Codex, "codex/agent_turn_complete.json", "recorded turn 1")
	if res.Files != 2 || res.Messages != 1 {
		t.Fatalf("result %+v", res)
	}
	e.checkTurn(t, "019a7c3e-5b21-7d40-9c8e-4f2a6b1d3e57", Codex, []msg{
		{"user", "", prompt},
		{"assistant", "", `Done: main.go now prints "hello", and notes.txt is gone.`},
	})
}

// Nothing a hook meets fails the agent: each of these returns quickly
// with the error on stderr and in the log (the CLI exits 0 whatever Run
// returns, unless --strict).
func TestErrorsAreReportedNotFatal(t *testing.T) {
	e := newEnv(t)
	notDir := filepath.Join(t.TempDir(), "file")
	testutil.WriteFile(t, filepath.Join(filepath.Dir(notDir), "file"), "not a directory\n")

	cases := []struct {
		name, agent string
		payload     []byte
		mod         func(*RunOptions)
		want        string
	}{
		{"malformed", ClaudeCode, []byte(`{"session_id": "x", "hook_event_name": "Stop"`), nil, "claude-code payload: unexpected end of JSON input"},
		{"not an object", Gemini, []byte(`["BeforeAgent"]`), nil, "gemini payload: not a JSON object"},
		{"empty", ClaudeCode, []byte("\n"), nil, "claude-code payload: empty"},
		{"no event name", ClaudeCode, []byte(`{"session_id": "x"}`), nil, "no hook_event_name"},
		{"no session id", ClaudeCode, []byte(`{"hook_event_name": "UserPromptSubmit", "prompt": "p"}`), nil, "the payload has no session id"},
		{"unwritable store", ClaudeCode, e.payload(t, "claude-code/user_prompt_submit.json"),
			func(o *RunOptions) { o.Store = filepath.Join(notDir, "store") }, "not a directory"},
		{"missing cwd", ClaudeCode, []byte(`{"session_id": "x", "hook_event_name": "SessionStart", "cwd": "/nonexistent/ckpt-test"}`), nil, "no such file or directory"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			start := time.Now()
			mod := []func(*RunOptions){}
			if c.mod != nil {
				mod = append(mod, c.mod)
			}
			_, stderr, err := e.run(t, c.agent, c.payload, mod...)
			if err == nil {
				t.Fatal("no error")
			}
			if !strings.Contains(err.Error(), c.want) || !strings.Contains(stderr, c.want) {
				t.Fatalf("error %v, stderr %q; want %q", err, stderr, c.want)
			}
			if !strings.Contains(stderr, "the hook log is "+e.log) {
				t.Fatalf("stderr does not name the log: %q", stderr)
			}
			log, _ := os.ReadFile(e.log)
			if !strings.Contains(string(log), c.want) {
				t.Fatalf("log lacks %q:\n%s", c.want, log)
			}
			if d := time.Since(start); d > 2*time.Second {
				t.Fatalf("took %s", d)
			}
		})
	}
}

// A store that cannot be opened (here a file where its directory should
// be) is logged and recorded with the session the event was for, so a
// user with several sessions knows whose turn went unrecorded.
func TestStoreErrorNamesSession(t *testing.T) {
	e := newEnv(t)
	notDir := filepath.Join(t.TempDir(), "file")
	testutil.WriteFile(t, notDir, "not a directory\n")
	failures := filepath.Join(t.TempDir(), "last-failure.json")
	const sid = "2f9c7c1e-5b0a-4c51-9a7e-3d1f6b8e4a21" // the payload's
	_, _, err := e.run(t, ClaudeCode, e.payload(t, "claude-code/user_prompt_submit.json"), func(o *RunOptions) {
		o.Store = filepath.Join(notDir, "store")
		o.FailureFile = failures
	})
	if err == nil || !strings.Contains(err.Error(), "not a directory") {
		t.Fatalf("err %v", err)
	}
	log, _ := os.ReadFile(e.log)
	if !strings.Contains(string(log), " session="+sid+" ") {
		t.Errorf("the log line does not name the session:\n%s", log)
	}
	fl, err := LastFailure(failures)
	if err != nil || fl == nil || fl.Session != sid {
		t.Errorf("failure record %+v (%v), want session %s", fl, err, sid)
	}
}

// A store another process holds is skipped after the short lock timeout;
// the call's own deadline bounds it too.
func TestLockedStoreIsSkipped(t *testing.T) {
	e := newEnv(t)
	r := e.open(t)
	held, release := make(chan struct{}), make(chan struct{})
	done := make(chan error, 1)
	go func() {
		done <- r.HoldLock(context.Background(), func() { close(held); <-release })
	}()
	<-held
	defer func() { close(release); <-done }()

	payload := e.payload(t, "claude-code/user_prompt_submit.json")
	start := time.Now()
	_, stderr, err := e.run(t, ClaudeCode, payload, func(o *RunOptions) { o.LockTimeout = 300 * time.Millisecond })
	if !errors.Is(err, ckpt.ErrLocked) || !strings.Contains(stderr, "store is locked by pid") || !strings.Contains(stderr, "the event was skipped") {
		t.Fatalf("err %v, stderr %q", err, stderr)
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Fatalf("took %s", d)
	}

	start = time.Now()
	_, stderr, err = e.run(t, ClaudeCode, payload, func(o *RunOptions) {
		o.LockTimeout = time.Minute
		o.Timeout = 300 * time.Millisecond
	})
	if !errors.Is(err, ErrTimeout) || !strings.Contains(stderr, "timed out after 300ms") {
		t.Fatalf("err %v, stderr %q", err, stderr)
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Fatalf("took %s", d)
	}
	log, _ := os.ReadFile(e.log)
	if !strings.Contains(string(log), "store is locked by") || !strings.Contains(string(log), "timed out") {
		t.Fatalf("log:\n%s", log)
	}
}

func TestSessionID(t *testing.T) {
	for in, want := range map[string]string{
		"2f9c7c1e-5b0a-4c51-9a7e-3d1f6b8e4a21": "2f9c7c1e-5b0a-4c51-9a7e-3d1f6b8e4a21",
		"a b/c":                                "a_b_c-",
		"///":                                  "s-",
	} {
		got := SessionID(in)
		if !strings.HasPrefix(got, want) || !ckpt.ValidSessionID(got) {
			t.Errorf("SessionID(%q) = %q, want prefix %q", in, got, want)
		}
	}
	if SessionID("a b") == SessionID("a_b") {
		t.Error("distinct ids map to one")
	}
}

func TestParseEvents(t *testing.T) {
	cases := []struct {
		agent, fixture string
		kind           Kind
		detail         string
	}{
		{ClaudeCode, "claude-code/session_start.json", KindSessionStart, "startup"},
		{ClaudeCode, "claude-code/user_prompt_submit.json", KindPrompt, ""},
		{ClaudeCode, "claude-code/stop.json", KindStop, ""},
		{ClaudeCode, "claude-code/session_end.json", KindSessionEnd, "prompt_input_exit"},
		{ClaudeCode, "claude-code/pre_compact.json", KindCompact, "manual"},
		{ClaudeCode, "claude-code/notification.json", KindIgnore, ""},
		{Gemini, "gemini/session_start.json", KindSessionStart, "startup"},
		{Gemini, "gemini/before_agent.json", KindPrompt, ""},
		{Gemini, "gemini/after_agent.json", KindStop, ""},
		{Gemini, "gemini/session_end.json", KindSessionEnd, "exit"},
		{Gemini, "gemini/pre_compress.json", KindCompact, "auto"},
		{Gemini, "gemini/before_tool.json", KindIgnore, "not an edit tool: run_shell_command"},
		{Gemini, "gemini/before_tool_write_file.json", KindEdit, "write_file"},
		{ClaudeCode, "claude-code/pre_tool_use.json", KindEdit, "Edit"},
		{Codex, "codex/agent_turn_complete.json", KindTurnComplete, "019a7c3f-0a12-7e93-b5c4-8d1e2f6a9b30"},
		{Codex, "codex-hooks/session_start.json", KindSessionStart, "startup"},
		{Codex, "codex-hooks/user_prompt_submit.json", KindPrompt, "019abb61-33b3-7801-8b1a-5e5d10eda0af"},
		{Codex, "codex-hooks/stop.json", KindStop, "019abb61-33b3-7801-8b1a-5e5d10eda0af"},
		{Codex, "codex-hooks/session_end.json", KindSessionEnd, "other"},
		{Codex, "codex-hooks/pre_tool_use.json", KindIgnore, "not an edit tool: Bash"},
		{Codex, "codex-hooks/pre_tool_use_apply_patch.json", KindEdit, "apply_patch"},
	}
	for _, c := range cases {
		data, err := os.ReadFile(filepath.Join("testdata", c.fixture))
		if err != nil {
			t.Fatal(err)
		}
		ev, err := Parse(c.agent, data)
		if err != nil {
			t.Fatalf("%s: %v", c.fixture, err)
		}
		if ev.Kind != c.kind || ev.Detail != c.detail || ev.SessionID == "" || ev.Cwd != "/home/alice/src/webapp" {
			t.Errorf("%s: %+v", c.fixture, ev)
		}
		if (c.kind == KindPrompt || c.kind == KindTurnComplete) && ev.Prompt != prompt {
			t.Errorf("%s: prompt %q", c.fixture, ev.Prompt)
		}
		if c.kind == KindStop && !strings.HasPrefix(ev.Assistant, "Done:") {
			t.Errorf("%s: assistant %q", c.fixture, ev.Assistant)
		}
		if strings.HasPrefix(c.fixture, "codex-hooks/") && (ev.Transcript == "" || ev.Name == "") {
			t.Errorf("%s: %+v", c.fixture, ev)
		}
	}
}

// Codex's legacy notification holds every prompt of the thread so far:
// the turn's prompt is the last one.
func TestCodexNotifyLastPrompt(t *testing.T) {
	ev, err := Parse(Codex, []byte(`{"type":"agent-turn-complete","thread-id":"t","turn-id":"2","cwd":"/w","input-messages":["first prompt","second prompt"],"last-assistant-message":"ok"}`))
	if err != nil || ev.Kind != KindTurnComplete || ev.Prompt != "second prompt" || ev.Assistant != "ok" {
		t.Fatalf("%+v, %v", ev, err)
	}
	ev, err = Parse(Codex, []byte(`{"type":"agent-turn-complete","thread-id":"t","input-messages":[]}`))
	if err != nil || ev.Prompt != "" {
		t.Fatalf("%+v, %v", ev, err)
	}
	if _, err := Parse(Codex, []byte(`{"thread-id":"t"}`)); err == nil || !strings.Contains(err.Error(), "neither hook_event_name") {
		t.Fatalf("err %v", err)
	}
}

// Codex's native hooks drive a turn as Claude Code's do: a checkpoint
// when the prompt is submitted, another at Stop, which Codex waits for.
func TestCodexHooks(t *testing.T) {
	e := newEnv(t)
	const sid = "019abb61-3395-7e83-ae16-be1e83938813"
	e.mustRun(t, Codex, "codex-hooks/session_start.json", "opened session")
	res := e.mustRun(t, Codex, "codex-hooks/user_prompt_submit.json", "began turn 1")
	if res.Session != sid || res.Checkpoint == "" {
		t.Fatalf("result %+v", res)
	}
	e.editAndRemove(t)
	res = e.mustRun(t, Codex, "codex-hooks/stop.json", "ended turn 1")
	if res.Files != 2 || res.Messages != 1 {
		t.Fatalf("result %+v", res)
	}
	e.mustRun(t, Codex, "codex-hooks/session_end.json", "closed session")
	e.checkTurn(t, sid, Codex, []msg{
		{"user", "", prompt},
		{"assistant", "", `Done: main.go now prints "hello", and notes.txt is gone.`},
	})
	res, stderr, err := e.run(t, Codex, e.payload(t, "codex-hooks/pre_tool_use.json"))
	if err != nil || res.Action != "ignored" || !strings.Contains(stderr, "ckpt does nothing for codex PreToolUse") {
		t.Fatalf("PreToolUse: %+v, %v, %q", res, err, stderr)
	}
}

// The legacy Gemini transcript (one JSON object) reads like the JSON
// lines one; a rewind record drops what it names.
func TestGeminiTranscriptForms(t *testing.T) {
	dir := t.TempDir()
	legacy := `{"sessionId":"s","projectHash":"h","startTime":"t","lastUpdated":"t","messages":[
	{"id":"1","timestamp":"t","type":"user","content":"old prompt"},
	{"id":"2","timestamp":"t","type":"gemini","content":"old answer"},
	{"id":"3","timestamp":"t","type":"user","content":"the prompt"},
	{"id":"4","timestamp":"t","type":"gemini","content":"","toolCalls":[{"id":"c","name":"write_file","args":{"file_path":"a.txt","content":"x"},"status":"success","timestamp":"t"}]},
	{"id":"5","timestamp":"t","type":"gemini","content":[{"text":"Wrote "},{"text":"a.txt."}]}]}`
	p := filepath.Join(dir, "session.json")
	os.WriteFile(p, []byte(legacy), 0o600)
	got, err := geminiTurn(p, "the prompt")
	if err != nil || len(got) != 2 || got[0].Tool != "write_file" || got[0].Content != "a.txt" || got[1].Content != "Wrote a.txt." {
		t.Fatalf("legacy: %+v, %v", got, err)
	}
	lines := `{"sessionId":"s","projectHash":"h"}
{"id":"1","type":"user","content":[{"text":"the prompt"}]}
{"id":"2","type":"gemini","content":"first try"}
{"$rewindTo":"1"}
{"id":"3","type":"user","content":[{"text":"the prompt"}]}
{"id":"4","type":"gemini","content":"second try"}
`
	p = filepath.Join(dir, "session.jsonl")
	os.WriteFile(p, []byte(lines), 0o600)
	got, err = geminiTurn(p, "the prompt")
	if err != nil || len(got) != 1 || got[0].Content != "second try" {
		t.Fatalf("jsonl: %+v, %v", got, err)
	}
	if _, err := geminiTurn(p, "another prompt"); err == nil {
		t.Fatal("found a prompt that is not there")
	}
}

// A long transcript is read from its end.
func TestClaudeTranscriptTail(t *testing.T) {
	dir := t.TempDir()
	var b strings.Builder
	filler := `{"type":"user","message":{"role":"user","content":"filler ` + strings.Repeat("x", 1000) + `"}}` + "\n"
	for b.Len() < 3<<20 {
		b.WriteString(filler)
	}
	b.WriteString(`{"type":"user","message":{"role":"user","content":"the prompt"}}` + "\n")
	b.WriteString(`{"type":"assistant","message":{"role":"assistant","id":"m","content":[{"type":"text","text":"the answer"},{"type":"tool_use","id":"t","name":"Write","input":{"file_path":"x.txt","content":"x"}}]}}` + "\n")
	b.WriteString(`{"type":"assistant","isSidechain":true,"message":{"role":"assistant","id":"n","content":[{"type":"text","text":"a subagent's"}]}}` + "\n")
	p := filepath.Join(dir, "t.jsonl")
	os.WriteFile(p, []byte(b.String()), 0o600)
	got, err := claudeTurn(p, "the prompt")
	if err != nil || len(got) != 2 || got[0].Content != "the answer" || got[1].Tool != "Write" || got[1].Content != "x.txt" {
		t.Fatalf("%+v, %v", got, err)
	}
	// A prompt the transcript holds in another form (a slash command
	// expanded, say): the last prompt stands for it.
	got, err = claudeTurn(p, "/refactor")
	if err != nil || len(got) != 2 || got[0].Content != "the answer" {
		t.Fatalf("%+v, %v", got, err)
	}
	// No prompt at all.
	os.WriteFile(p, []byte(`{"type":"assistant","message":{"role":"assistant","content":[{"type":"text","text":"hi"}]}}`+"\n"), 0o600)
	if _, err := claudeTurn(p, "the prompt"); err == nil || !strings.Contains(err.Error(), "the turn's prompt is not in it") {
		t.Fatalf("err %v", err)
	}
}

// A Stop that runs late — in the background, after the next prompt's hook
// has begun turn 2 (which ended turn 1) — leaves turn 2 alone.
func TestLateStopDoesNotEndTheNextTurn(t *testing.T) {
	e := newEnv(t)
	e.mustRun(t, ClaudeCode, "claude-code/user_prompt_submit.json", "began turn 1")
	e.editAndRemove(t)
	called := time.Now() // the agent runs the Stop hook...
	time.Sleep(10 * time.Millisecond)
	e.mustRun(t, ClaudeCode, "claude-code/user_prompt_submit.json", "began turn 2") // ...which runs after the next prompt's
	res, stderr, err := e.run(t, ClaudeCode, e.payload(t, "claude-code/stop.json"), func(o *RunOptions) { o.Called = called })
	if err != nil || res.Action != "nothing to end" || !strings.Contains(stderr, "turn 2 began after this Stop was sent") {
		t.Fatalf("%+v %v %q", res, err, stderr)
	}
	ctl, s, err := e.open(t).Controller(context.Background(), ckpt.ControllerOptions{ID: "2f9c7c1e-5b0a-4c51-9a7e-3d1f6b8e4a21", Exact: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(s.Turns) != 2 || s.Turns[0].Open() || len(s.Turns[0].Files) != 2 || !s.Turns[1].Open() {
		t.Fatalf("turns %+v", s.Turns)
	}
	_ = ctl
}

// The project directory the agent names wins over the payload's cwd,
// which follows the agent's shell (here: somewhere else entirely).
func TestProjectDirWinsOverCwd(t *testing.T) {
	e := newEnv(t)
	elsewhere := t.TempDir()
	var m map[string]any
	json.Unmarshal(e.payload(t, "claude-code/user_prompt_submit.json"), &m)
	m["cwd"] = elsewhere
	payload, _ := json.Marshal(m)
	res, _, err := e.run(t, ClaudeCode, payload, func(o *RunOptions) { o.ProjectDir = e.ws })
	if err != nil || res.Workspace != e.ws {
		t.Fatalf("workspace %s, %v; want %s", res.Workspace, err, e.ws)
	}
}

// An edit tool about to change an ignored file (.env): PreToolUse keeps
// it in the turn, and a rewind of the turn puts it back. A file the rules
// do not ignore needs nothing (the turn's checkpoints hold it).
func TestEditToolKeepsIgnoredFile(t *testing.T) {
	e := newEnv(t)
	testutil.WriteFiles(t, e.ws, map[string]string{".gitignore": ".env\n", ".env": "GREETING=hi\n"})
	const sid = "2f9c7c1e-5b0a-4c51-9a7e-3d1f6b8e4a21"
	e.mustRun(t, ClaudeCode, "claude-code/user_prompt_submit.json", "began turn 1")
	// Relative to the payload's cwd, as the agent may name it.
	e.mustRun(t, ClaudeCode, "claude-code/pre_tool_use.json", `kept ignored .env`)
	e.mustRun(t, ClaudeCode, "claude-code/pre_tool_use.json", "nothing to keep") // kept already
	testutil.WriteFile(t, filepath.Join(e.ws, ".env"), "GREETING=hello\n")
	// Gemini's form, for a file no rule ignores: nothing to do.
	var m map[string]any
	json.Unmarshal(e.payload(t, "claude-code/pre_tool_use.json"), &m)
	m["tool_input"] = map[string]any{"file_path": filepath.Join(e.ws, "main.go")}
	b, _ := json.Marshal(m)
	if res, _, err := e.run(t, ClaudeCode, b); err != nil || res.Action != "nothing to keep" {
		t.Fatalf("main.go: %+v %v", res, err)
	}
	e.editAndRemove(t)
	e.transcript(t, "claude-code/transcript.jsonl", "claude-code/stop.json")
	e.mustRun(t, ClaudeCode, "claude-code/stop.json", "ended turn 1")
	r := e.open(t)
	ctl, s, err := r.Controller(context.Background(), ckpt.ControllerOptions{ID: sid, Exact: true})
	if err != nil {
		t.Fatal(err)
	}
	if got := s.Turns[0].Ignored; len(got) != 1 || got[0] != ".env" {
		t.Fatalf("turn ignored = %q", got)
	}
	if _, err := ctl.Rewind(context.Background(), 1, ckpt.ScopeCode, ckpt.RewindOptions{}); err != nil {
		t.Fatal(err)
	}
	if got := testutil.ReadFile(t, e.ws, ".env"); got != "GREETING=hi\n" {
		t.Fatalf(".env = %q after the rewind", got)
	}
}

// The file an edit tool names is found as its write finds it: through a
// symlinked directory inside the workspace to the real file; through one
// leading out, nowhere in the workspace; in a directory not made yet, below
// its resolved ancestor.
func TestWorkspacePath(t *testing.T) {
	ws, out := t.TempDir(), t.TempDir()
	os.MkdirAll(filepath.Join(ws, "sub"), 0o755)
	os.Symlink("sub", filepath.Join(ws, "link"))
	os.Symlink(out, filepath.Join(ws, "away"))
	wsLink := filepath.Join(t.TempDir(), "wslink")
	os.Symlink(ws, wsLink)
	for _, c := range []struct {
		cwd, p, want string
		ok           bool
	}{
		{ws, ".env", ".env", true},
		{ws, filepath.Join(ws, "link", "f"), "sub/f", true},
		{filepath.Join(ws, "link"), "f", "sub/f", true},
		{ws, filepath.Join(ws, "away", "f"), "", false},
		{ws, filepath.Join(ws, "new", "dir", "f"), "new/dir/f", true},
		{ws, filepath.Join(wsLink, "link", "new", "f"), "sub/new/f", true},
		{ws, "../x", "", false},
		{ws, ws, "", false},
		{ws, "/etc/passwd", "", false},
	} {
		got, ok := workspacePath(ws, c.cwd, c.p)
		if got != c.want || ok != c.ok {
			t.Errorf("workspacePath(%s, %s) = %q, %v; want %q, %v", c.cwd, c.p, got, ok, c.want, c.ok)
		}
	}
}
