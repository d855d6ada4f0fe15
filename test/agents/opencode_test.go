package agents

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

var opencodeCLI = agentCLI{"opencode-ai", "1.18.33", "opencode"}

// opencode is OpenCode (the real CLI, pinned) in a world of its own,
// talking to a scripted OpenAI-compatible model, with ckpt's plugin
// installed as `ckpt hook opencode install` installs it
// (.opencode/plugins/ckpt.js in the workspace).
type opencode struct {
	*world
	bin   string
	model *model
}

func newOpenCode(t testing.TB, turns map[string][]step) *opencode {
	bin := opencodeCLI.install(t)
	w := newWorld(t)
	m := openAIChatModel(t, turns)
	// The user's configuration: one OpenAI-compatible provider (the
	// scripted model), its tools allowed, nothing shared or updated.
	cfg := map[string]any{
		"autoupdate": false, "share": "disabled", "model": "scripted/scripted-model",
		"permission": map[string]any{"edit": "allow", "bash": "allow"},
		"provider": map[string]any{"scripted": map[string]any{
			"npm": "@ai-sdk/openai-compatible", "name": "Scripted",
			"options": map[string]any{"baseURL": m.srv.URL + "/v1", "apiKey": "sk-test-key"},
			"models":  map[string]any{"scripted-model": map[string]any{"name": "Scripted", "tool_call": true}},
		}},
	}
	dir := filepath.Join(w.home, ".config", "opencode")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "opencode.json"), []byte(mustJSON(cfg)), 0o644); err != nil {
		t.Fatal(err)
	}
	w.ckpt("hook", "opencode", "install")
	return &opencode{world: w, bin: bin, model: m}
}

func (o *opencode) env() []string {
	return []string{"OPENCODE_DISABLE_MODELS_FETCH=1", "OPENCODE_DISABLE_AUTOUPDATE=1", "OPENCODE_DISABLE_SHARE=1",
		"OPENCODE_DISABLE_LSP_DOWNLOAD=1", "OPENCODE_DISABLE_DEFAULT_PLUGINS=1"}
}

// prompt runs one turn, non-interactively (opencode run): the first
// starts a session, later ones continue it (--session). It returns the
// session's id, from the JSON events opencode run prints.
func (o *opencode) prompt(session, prompt string) string {
	o.t.Helper()
	args := []string{"run", "--format", "json"}
	if session != "" {
		args = append(args, "--session", session)
	}
	out := o.run(o.env(), o.bin, append(args, prompt)...)
	for _, line := range strings.Split(out, "\n") {
		var ev struct {
			SessionID string `json:"sessionID"`
		}
		if json.Unmarshal([]byte(line), &ev) == nil && ev.SessionID != "" {
			return ev.SessionID
		}
	}
	o.t.Fatalf("opencode run printed no session id:\n%s", out)
	return ""
}

// TestOpenCode drives a two-turn OpenCode session whose own tools (write,
// edit, bash) change the workspace, the user editing between turns, and
// checks what ckpt's plugin recorded and that rewinds restore the files.
func TestOpenCode(t *testing.T) {
	o := newOpenCode(t, nil)
	abs := func(p string) string { return filepath.Join(o.ws, p) }
	o.model.turns = map[string][]step{
		"[t1]": {
			call("write", map[string]any{"filePath": abs("a.txt"), "content": "alpha\n"}),
			call("bash", map[string]any{"command": "mkdir -p lib && printf 'bin\\000ary' > lib/blob.bin && ln -s a.txt link", "description": "set up"}),
			say("Set up."),
		},
		"[t2]": {
			call("read", map[string]any{"filePath": abs("src.txt")}),
			call("edit", map[string]any{"filePath": abs("src.txt"), "oldString": "two", "newString": "TWO"}),
			call("bash", map[string]any{"command": "rm link && echo beta >> a.txt", "description": "edit"}),
			say("Edited."),
		},
	}
	start := map[string]string{"src.txt": "one\ntwo\nthree\n", "keep.txt": "keep\n"}
	o.write(start)

	sid := o.prompt("", "[t1] set up")
	afterT1 := with(start, map[string]string{"a.txt": "alpha\n", "lib/blob.bin": "bin\x00ary", "link": "-> a.txt"})
	o.wantTree("after turn 1", afterT1)
	o.write(map[string]string{"keep.txt": "keep, edited\n"})
	userT1 := with(afterT1, map[string]string{"keep.txt": "keep, edited\n"})

	if got := o.prompt(sid, "[t2] edit"); got != sid {
		t.Fatalf("turn 2 ran in session %s, want %s", got, sid)
	}
	afterT2 := with(userT1, map[string]string{"src.txt": "one\nTWO\nthree\n", "a.txt": "alpha\nbeta\n", "link": ""})
	o.wantTree("after turn 2", afterT2)
	var last []string
	for _, r := range o.model.requests() {
		last = r.Markers
	}
	if want := []string{"[t1]", "[t2]"}; !reflect.DeepEqual(last, want) {
		t.Errorf("the last request carried turns %q, want %q", last, want)
	}

	s := o.session(sid)
	if s.Session.Agent != "opencode" {
		t.Errorf("agent %q", s.Session.Agent)
	}
	// opencode run quotes a message with spaces in it.
	if got, want := s.prompts(), []string{`"[t1] set up"`, `"[t2] edit"`}; !reflect.DeepEqual(got, want) {
		t.Fatalf("prompts %q, want %q", got, want)
	}
	wantFiles := [][]string{
		{"added a.txt", "added lib/blob.bin", "added link"},
		{"modified a.txt", "deleted link", "modified src.txt"},
	}
	if got := s.turnFiles(); !reflect.DeepEqual(got, wantFiles) {
		t.Fatalf("turn files\n got %q\nwant %q", got, wantFiles)
	}
	var msgs []string
	for _, m := range s.Messages {
		msgs = append(msgs, fmt.Sprintf("%d %s %s: %s", m.Turn, m.Role, m.Tool, m.Content))
	}
	wantMsgs := []string{
		`1 user : "[t1] set up"`,
		"1 tool write: " + abs("a.txt"),
		"1 tool bash: mkdir -p lib && printf 'bin\\000ary' > lib/blob.bin && ln -s a.txt link",
		"1 assistant : Set up.",
		`2 user : "[t2] edit"`,
		"2 tool read: " + abs("src.txt"),
		"2 tool edit: " + abs("src.txt"),
		"2 tool bash: rm link && echo beta >> a.txt",
		"2 assistant : Edited.",
	}
	if !reflect.DeepEqual(msgs, wantMsgs) {
		t.Errorf("messages\n got %q\nwant %q", msgs, wantMsgs)
	}

	// Rewind turn 2: its changes undone, the user's edit kept.
	o.rewindThenUndo(userT1, afterT2, "2", "--session", sid)
	// The whole session, --exact: the workspace as turn 1 began.
	o.ckpt("rewind", "1", "--exact", "--session", sid)
	o.wantTree("rewind 1 --exact", start)
	o.logHookTimes("OpenCode")
}

// TestOpenCodeIgnoredEdits: OpenCode's edit and write change ignored
// files; ckpt's plugin sends them before the tool runs, and a rewind puts
// them back. (OpenCode's run would not read the .env here, so the file
// is another.)
func TestOpenCodeIgnoredEdits(t *testing.T) {
	o := newOpenCode(t, map[string][]step{})
	abs := func(p string) string { return filepath.Join(o.ws, p) }
	sid := ""
	o.ignoredEdits("", "app.local", o.model.turns, func(first bool, text string) string { sid = o.prompt(sid, text); return sid },
		func(p, content string) []step {
			// OpenCode edits only a file it has read.
			old := strings.TrimSuffix(o.read(p), "\n")
			return []step{call("read", map[string]any{"filePath": abs(p)}),
				call("edit", map[string]any{"filePath": abs(p), "oldString": old, "newString": strings.TrimSuffix(content, "\n")})}
		},
		func(p, content string) []step {
			return []step{call("write", map[string]any{"filePath": abs(p), "content": content})}
		})
}
