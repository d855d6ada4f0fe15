package agents

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// claude is Claude Code (the real CLI, pinned) in a world of its own,
// talking to a scripted Anthropic model, with ckpt's hooks installed as
// `ckpt hook claude-code install` installs them.
type claude struct {
	*world
	bin   string
	model *model
}

func newClaude(t testing.TB, turns map[string][]step) *claude {
	bin := claudeCLI.install(t)
	w := newWorld(t)
	m := anthropicModel(t, turns)
	w.ckpt("hook", "claude-code", "install")
	return &claude{world: w, bin: bin, model: m}
}

// env is what points Claude Code at the scripted model and keeps it off
// the network: no telemetry, no update check, no error reports.
func (c *claude) env() []string {
	return []string{
		"ANTHROPIC_BASE_URL=" + c.model.srv.URL,
		"ANTHROPIC_API_KEY=sk-ant-test-key",
		"IS_SANDBOX=1", // root may bypass permissions in a sandbox
		"DISABLE_TELEMETRY=1", "DISABLE_AUTOUPDATER=1", "DISABLE_ERROR_REPORTING=1",
		"CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1", "DISABLE_BUG_COMMAND=1",
	}
}

var claudeFlags = []string{"--permission-mode", "bypassPermissions", "--output-format", "json", "--model", "claude-sonnet-4-5"}

// prompt runs one turn of a session, non-interactively: the first with
// --session-id, later ones with --resume, as a user's `claude -c` does.
func (c *claude) prompt(session string, first bool, prompt string, extra ...string) string {
	c.t.Helper()
	args := append([]string{"-p", prompt}, claudeFlags...)
	if first {
		args = append(args, "--session-id", session)
	} else {
		args = append(args, "--resume", session)
	}
	return c.run(append(c.env(), extra...), c.bin, args...)
}

// A session's record, as `ckpt session show --json` prints it.
type sessionJSON struct {
	Session struct {
		ID    string `json:"id"`
		Agent string `json:"agent"`
		Turns []struct {
			N      int    `json:"n"`
			Prompt string `json:"prompt"`
			Begin  string `json:"begin"`
			End    string `json:"end"`
			Files  []struct {
				Path   string `json:"path"`
				Status string `json:"status"`
			} `json:"files"`
			Ignored []string `json:"ignored"`
		} `json:"turns"`
		Transcript string `json:"transcript"`
	} `json:"session"`
	Messages []struct {
		Turn    int    `json:"turn"`
		Role    string `json:"role"`
		Content string `json:"content"`
		Tool    string `json:"tool"`
	} `json:"messages"`
}

func (w *world) session(id string) sessionJSON {
	w.t.Helper()
	var s sessionJSON
	if err := json.Unmarshal([]byte(w.ckpt("session", "show", id, "--json")), &s); err != nil {
		w.t.Fatal(err)
	}
	return s
}

// turnFiles is each turn's changed paths, "STATUS PATH".
func (s sessionJSON) turnFiles() [][]string {
	var out [][]string
	for _, t := range s.Session.Turns {
		var fs []string
		for _, f := range t.Files {
			fs = append(fs, f.Status+" "+f.Path)
		}
		out = append(out, fs)
	}
	return out
}

func (s sessionJSON) prompts() []string {
	var out []string
	for _, t := range s.Session.Turns {
		out = append(out, t.Prompt)
	}
	return out
}

// tree is the workspace's files, each as its content, "-> TARGET" for a
// symlink, with " (x)" for an executable — not the agents' own settings
// directories (ckpt's hooks are installed there; OpenCode also installs
// its plugin package there).
func (w *world) tree() map[string]string {
	w.t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(w.ws, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(w.ws, p)
		rel = filepath.ToSlash(rel)
		if d.IsDir() {
			switch rel {
			case ".claude", ".gemini", ".codex", ".qwen", ".opencode", ".factory":
				return filepath.SkipDir
			}
			return nil
		}
		if d.Type()&os.ModeSymlink != 0 {
			tgt, err := os.Readlink(p)
			out[rel] = "-> " + tgt
			return err
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		fi, err := d.Info()
		if err != nil {
			return err
		}
		v := string(b)
		if fi.Mode()&0o111 != 0 {
			v += " (x)"
		}
		out[rel] = v
		return nil
	})
	if err != nil {
		w.t.Fatal(err)
	}
	return out
}

func (w *world) wantTree(what string, want map[string]string) {
	w.t.Helper()
	if got := w.tree(); !reflect.DeepEqual(got, want) {
		w.t.Fatalf("%s: workspace\n got %q\nwant %q", what, got, want)
	}
}

func with(base map[string]string, changes map[string]string) map[string]string {
	out := map[string]string{}
	for k, v := range base {
		out[k] = v
	}
	for k, v := range changes {
		if v == "" {
			delete(out, k)
		} else {
			out[k] = v
		}
	}
	return out
}

// TestClaudeCode drives a three-turn Claude Code session whose tools
// (Write, Edit, Bash) change the workspace every way a shell can, with
// the user editing between turns, and checks what ckpt recorded and what
// each kind of rewind, undo and fork does.
func TestClaudeCode(t *testing.T) {
	const sid = "0b5e1c2a-7d4f-4e8a-9c3b-1a2b3c4d5e6f"
	c := newClaude(t, nil)
	abs := func(p string) string { return filepath.Join(c.ws, p) }
	c.model.turns = map[string][]step{
		"[t1]": {
			call("Write", map[string]any{"file_path": abs("a.txt"), "content": "alpha\n"}),
			call("Write", map[string]any{"file_path": abs("run.sh"), "content": "#!/bin/sh\necho run\n"}),
			call("Bash", map[string]any{"command": "chmod +x run.sh && mkdir -p lib/deep build && printf 'bin\\000ary' > lib/deep/blob.bin && ln -s a.txt link && echo obj > build/out.o", "description": "set up"}),
		},
		"[t2]": {
			call("Read", map[string]any{"file_path": abs("src.txt")}),
			call("Edit", map[string]any{"file_path": abs("src.txt"), "old_string": "two", "new_string": "TWO"}),
			call("Bash", map[string]any{"command": "sed -i 's/alpha/ALPHA/' a.txt && rm lib/deep/blob.bin && echo obj2 > build/out.o", "description": "edit"}),
		},
		"[t3]": {
			call("Bash", map[string]any{"command": "rm link && mkdir -p new/dir && echo three > new/dir/c.txt && chmod -x run.sh", "description": "more"}),
		},
	}
	c.write(map[string]string{".gitignore": "build/\n", "src.txt": "one\ntwo\nthree\n", "keep.txt": "keep\n"})
	start := map[string]string{".gitignore": "build/\n", "src.txt": "one\ntwo\nthree\n", "keep.txt": "keep\n"}

	c.prompt(sid, true, "[t1] set up the project")
	afterT1 := with(start, map[string]string{"a.txt": "alpha\n", "run.sh": "#!/bin/sh\necho run\n (x)",
		"lib/deep/blob.bin": "bin\x00ary", "link": "-> a.txt", "build/out.o": "obj\n"})
	c.wantTree("after turn 1", afterT1)

	c.prompt(sid, false, "[t2] edit things")
	afterT2 := with(afterT1, map[string]string{"src.txt": "one\nTWO\nthree\n", "a.txt": "ALPHA\n", "lib/deep/blob.bin": "", "build/out.o": "obj2\n"})
	c.wantTree("after turn 2", afterT2)

	// The user's own work between turns 2 and 3.
	c.write(map[string]string{"notes.txt": "mine\n", "keep.txt": "keep, edited\n"})
	userT2 := with(afterT2, map[string]string{"notes.txt": "mine\n", "keep.txt": "keep, edited\n"})

	c.prompt(sid, false, "[t3] finish")
	afterT3 := with(userT2, map[string]string{"link": "", "new/dir/c.txt": "three\n", "run.sh": "#!/bin/sh\necho run\n"})
	c.wantTree("after turn 3", afterT3)

	s := c.wantSession(sid, "claude-code", threeTurnPrompts, threeTurnFiles())
	var tools []string
	for _, m := range s.Messages {
		if m.Role == "tool" {
			tools = append(tools, m.Tool)
		}
	}
	if want := []string{"Write", "Write", "Bash", "Read", "Edit", "Bash", "Bash"}; !reflect.DeepEqual(tools, want) {
		t.Errorf("tool messages %q, want %q", tools, want)
	}

	// Rewind turn 2 on: the agent's changes of turns 2 and 3 undone, the
	// user's edits between them kept; ignored build output untouched.
	// --exact: the whole tree as turn 2 began, the user's edits too.
	c.rewindThenUndo(with(afterT1, map[string]string{"notes.txt": "mine\n", "keep.txt": "keep, edited\n", "build/out.o": "obj2\n"}), afterT3, "2", "--session", sid)
	c.rewindThenUndo(with(afterT1, map[string]string{"build/out.o": "obj2\n"}), afterT3, "2", "--exact", "--session", sid)

	// The conversation: ckpt's copy loses turns 2 and 3 (the files stay),
	// and the command it prints resumes Claude Code's own conversation as
	// it was before turn 2 — a fork, the original transcript untouched.
	transcript, err := os.ReadFile(s.Session.Transcript)
	if err != nil {
		t.Fatal(err)
	}
	var rw struct {
		Turn        int    `json:"turn"`
		Prompt      string `json:"prompt"`
		AgentResume struct {
			Command []string `json:"command"`
		} `json:"agent_resume"`
	}
	if err := json.Unmarshal([]byte(c.ckpt("rewind", "2", "--conversation", "--json", "--session", sid)), &rw); err != nil {
		t.Fatal(err)
	}
	c.wantTree("rewind 2 --conversation", afterT3)
	if rw.Prompt != "[t2] edit things" {
		t.Errorf("rewind --conversation gave prompt %q", rw.Prompt)
	}
	if got := c.session(sid).prompts(); !reflect.DeepEqual(got, []string{"[t1] set up the project"}) {
		t.Errorf("after rewind --conversation, ckpt's turns %q", got)
	}
	cmd := rw.AgentResume.Command
	if len(cmd) < 2 || cmd[0] != "claude" || !strings.Contains(strings.Join(cmd, " "), "--fork-session") {
		t.Fatalf("agent_resume.command %q", cmd)
	}
	c.model.turns["[t9]"] = []step{call("Write", map[string]any{"file_path": abs("t9.txt"), "content": "nine\n"})}
	c.model.reset()
	c.run(c.env(), c.bin, append(append(cmd[1:], "-p", "[t9] after the rewind"), claudeFlags...)...)
	for _, r := range c.model.requests() {
		if want := []string{"[t1]", "[t9]"}; !reflect.DeepEqual(r.Markers, want) {
			t.Errorf("the resumed Claude Code sent turns %q, want %q", r.Markers, want)
		}
	}
	if len(c.model.requests()) == 0 {
		t.Error("the resumed Claude Code sent no request")
	}
	if after, err := os.ReadFile(s.Session.Transcript); err != nil || string(after) != string(transcript) {
		t.Errorf("the original transcript changed (%v)", err)
	}
	if c.read("t9.txt") != "nine\n" {
		t.Errorf("t9.txt: %q", c.read("t9.txt"))
	}
	os.Remove(abs("t9.txt"))

	// The original session, resumed, still has every turn.
	c.model.turns["[t4]"] = nil
	c.model.reset()
	c.prompt(sid, false, "[t4] still there?")
	for _, r := range c.model.requests() {
		if want := []string{"[t1]", "[t2]", "[t3]", "[t4]"}; !reflect.DeepEqual(r.Markers, want) {
			t.Errorf("the original session sent turns %q, want %q", r.Markers, want)
		}
	}

	// The session is now [t1], [t4] (turns 2 and 3 rewound away). A fork
	// from turn 2: a new session with turn 1's conversation, the
	// workspace as [t4] began (turn 3's end); then a fork from turn 1: no
	// conversation, the workspace as the session began. The original
	// session stays as it was.
	c.wantForks(sid, afterT3, with(start, map[string]string{"build/out.o": "obj2\n"}), []string{"[t1] set up the project", "[t4] still there?"})
	c.logHookTimes("Claude Code")
}

// TestClaudeCodeStoreTrouble: a store another ckpt holds locked, and one
// that is corrupt, never fail Claude Code's turn: it exits 0, its tools'
// changes are on disk, and the hook log says what ckpt skipped and why.
func TestClaudeCodeStoreTrouble(t *testing.T) {
	const sid = "5d6e7f80-1a2b-4c3d-8e9f-0a1b2c3d4e5f"
	c := newClaude(t, nil)
	abs := func(p string) string { return filepath.Join(c.ws, p) }
	c.model.turns = map[string][]step{
		"[t1]": {call("Write", map[string]any{"file_path": abs("a.txt"), "content": "a\n"})},
		"[t2]": {call("Write", map[string]any{"file_path": abs("b.txt"), "content": "b\n"})},
		"[t3]": {call("Write", map[string]any{"file_path": abs("c.txt"), "content": "c\n"})},
	}
	c.prompt(sid, true, "[t1] a")
	store := c.storeDir()

	// Locked: another process holds the store for the whole turn.
	unlock := c.lockStore(store)
	c.prompt(sid, false, "[t2] b")
	unlock()
	if c.read("b.txt") != "b\n" {
		t.Fatalf("b.txt %q", c.read("b.txt"))
	}
	if log := c.hookLog(); !strings.Contains(log, "UserPromptSubmit") || !strings.Contains(log, "lock") {
		t.Errorf("the hook log does not say the store was locked:\n%s", log)
	}
	if got := c.session(sid).prompts(); !reflect.DeepEqual(got, []string{"[t1] a"}) {
		t.Errorf("turns after the locked one: %q", got)
	}

	// Corrupt: the store's database overwritten with garbage.
	c.corruptStore(store)
	before := c.hookLog()
	c.prompt(sid, false, "[t3] c")
	if c.read("c.txt") != "c\n" {
		t.Fatalf("c.txt %q", c.read("c.txt"))
	}
	if after := strings.TrimPrefix(c.hookLog(), before); !strings.Contains(after, "UserPromptSubmit") || !strings.Contains(after, "ckpt.db") {
		t.Errorf("the hook log does not name the corrupt store:\n%s", after)
	}
}

// TestClaudeCodeSideBySide: two Claude Code sessions in one workspace at
// the same time. B's turn begins while A's runs; A writes a.txt, then B
// writes b.txt and ends; then A ends. Each turn's span holds both files.
// Rewinding A takes back A's a.txt and keeps B's b.txt, saying so.
func TestClaudeCodeSideBySide(t *testing.T) {
	const sidA, sidB = "aaaaaaaa-1111-4111-8111-111111111111", "bbbbbbbb-2222-4222-8222-222222222222"
	c := newClaude(t, nil)
	c.write(map[string]string{"keep.txt": "k\n"})
	abs := func(p string) string { return filepath.Join(c.ws, p) }
	bStarted, aWrote, bDone := make(chan struct{}), make(chan struct{}), make(chan error, 1)
	runB := func() {
		cmd := exec.Command(c.bin, append([]string{"-p", "[t2] change b", "--session-id", sidB}, claudeFlags...)...)
		cmd.Dir, cmd.Env = c.ws, append(append([]string{}, c.world.env...), c.env()...)
		out, err := cmd.CombinedOutput()
		if err != nil {
			err = fmt.Errorf("claude (session B): %v\n%s", err, out)
		}
		bDone <- err
	}
	var bErr error
	c.model.turns = map[string][]step{
		"[t1]": {
			{tool: "Write", input: map[string]any{"file_path": abs("a.txt"), "content": "A\n"}, do: func() {
				go runB()
				<-bStarted // B's turn has begun
			}},
			{text: "Changed a.", do: func() {
				close(aWrote)
				bErr = <-bDone // B's turn is over
			}},
		},
		"[t2]": {
			{tool: "Write", input: map[string]any{"file_path": abs("b.txt"), "content": "B\n"}, do: func() {
				close(bStarted)
				<-aWrote
			}},
		},
	}
	c.prompt(sidA, true, "[t1] change a")
	if bErr != nil {
		t.Fatal(bErr)
	}
	c.wantTree("both turns", map[string]string{"a.txt": "A\n", "b.txt": "B\n", "keep.txt": "k\n"})
	for _, sid := range []string{sidA, sidB} {
		if got := c.session(sid).turnFiles(); !reflect.DeepEqual(got, [][]string{{"added a.txt", "added b.txt"}}) {
			t.Fatalf("session %s: turn files %q (the turns did not overlap as planned)", sid[:8], got)
		}
	}
	code, _, errs := c.ckptCode("rewind", "1", "--session", sidA)
	if code != 0 || !strings.Contains(errs, "kept what another session's turn, running at the same time, changed too: b.txt") {
		t.Fatalf("rewind A: exit %d\n%s", code, errs)
	}
	c.wantTree("A rewound", map[string]string{"b.txt": "B\n", "keep.txt": "k\n"})
	c.ckpt("rewind", "1", "--session", sidB)
	c.wantTree("B rewound too", map[string]string{"keep.txt": "k\n"})
}

// TestClaudeCodeRewindBoth: code and conversation at once. The files go
// back, ckpt's record and the Claude Code conversation it resumes lose
// turn 2; undo brings the files back and leaves the conversation rewound.
func TestClaudeCodeRewindBoth(t *testing.T) {
	const sid = "c0ffee00-1234-4abc-8def-0123456789ab"
	c := newClaude(t, nil)
	abs := func(p string) string { return filepath.Join(c.ws, p) }
	c.model.turns = map[string][]step{
		"[t1]": {call("Write", map[string]any{"file_path": abs("one.txt"), "content": "1\n"})},
		"[t2]": {call("Bash", map[string]any{"command": "echo 2 > two.txt && rm one.txt", "description": "two"})},
		"[t3]": nil,
	}
	c.prompt(sid, true, "[t1] one")
	c.prompt(sid, false, "[t2] two")
	c.wantTree("after turn 2", map[string]string{"two.txt": "2\n"})
	var rw struct {
		Prompt      string `json:"prompt"`
		Turns       int    `json:"turns"`
		AgentResume struct {
			Command []string `json:"command"`
		} `json:"agent_resume"`
	}
	if err := json.Unmarshal([]byte(c.ckpt("rewind", "2", "--both", "--json")), &rw); err != nil {
		t.Fatal(err)
	}
	c.wantTree("rewind 2 --both", map[string]string{"one.txt": "1\n"})
	if rw.Prompt != "[t2] two" || rw.Turns != 1 {
		t.Errorf("rewind --both: prompt %q, %d turn(s) removed", rw.Prompt, rw.Turns)
	}
	if got := c.session(sid).prompts(); !reflect.DeepEqual(got, []string{"[t1] one"}) {
		t.Errorf("ckpt's turns after rewind --both: %q", got)
	}
	cmd := rw.AgentResume.Command
	if len(cmd) < 2 {
		t.Fatalf("agent_resume.command %q", cmd)
	}
	c.model.reset()
	c.run(c.env(), c.bin, append(append(cmd[1:], "-p", "[t3] again"), claudeFlags...)...)
	for _, r := range c.model.requests() {
		if want := []string{"[t1]", "[t3]"}; !reflect.DeepEqual(r.Markers, want) {
			t.Errorf("the resumed Claude Code sent turns %q, want %q", r.Markers, want)
		}
	}
	// Undo steps the files back; the conversation stays rewound.
	c.ckpt("undo")
	c.wantTree("undo of rewind --both", map[string]string{"two.txt": "2\n"})
	if got := c.session(sid).prompts(); !reflect.DeepEqual(got, []string{"[t1] one"}) {
		t.Errorf("ckpt's turns after undo: %q", got)
	}
}

// TestClaudeCodeIgnoredEdits: Claude Code's Edit and Write change ignored
// files; its PreToolUse hook keeps them, and a rewind puts them back.
func TestClaudeCodeIgnoredEdits(t *testing.T) {
	const sid = "7c1d2e3f-4a5b-4c6d-8e9f-0a1b2c3d4e5f"
	c := newClaude(t, map[string][]step{})
	abs := func(p string) string { return filepath.Join(c.ws, p) }
	c.ignoredEdits(sid, ".env", c.model.turns, func(first bool, text string) string { c.prompt(sid, first, text); return sid },
		func(p, content string) []step {
			// Claude Code edits only a file it has read.
			old := strings.TrimSuffix(c.read(p), "\n")
			return []step{call("Read", map[string]any{"file_path": abs(p)}),
				call("Edit", map[string]any{"file_path": abs(p), "old_string": old, "new_string": strings.TrimSuffix(content, "\n")})}
		},
		func(p, content string) []step {
			return []step{call("Write", map[string]any{"file_path": abs(p), "content": content})}
		})
}
