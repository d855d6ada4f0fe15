package agents

import (
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

var copilotCLI = agentCLI{"@github/copilot", "1.0.102", "copilot"}

// copilot is GitHub Copilot CLI (the real CLI, pinned) in a world of its
// own, offline (COPILOT_OFFLINE: no GitHub sign-in, telemetry or update
// check), talking to a scripted OpenAI-compatible model as a custom
// provider (COPILOT_PROVIDER_BASE_URL), with ckpt's hooks installed as
// `ckpt hook copilot install` installs them (~/.copilot/hooks/ckpt.json).
type copilot struct {
	*world
	bin   string
	cache string
	model *model
}

func newCopilot(t testing.TB, turns map[string][]step) *copilot {
	bin := copilotCLI.install(t)
	w := newWorld(t)
	m := openAIChatModel(t, turns)
	w.ckpt("hook", "copilot", "install")
	// The npm package's binary unpacks its JavaScript (some 200 MB) into
	// a cache on first run: one beside the package, for every test.
	cache := filepath.Join(filepath.Dir(filepath.Dir(filepath.Dir(bin))), "copilot-cache")
	return &copilot{world: w, bin: bin, cache: cache, model: m}
}

// env points Copilot at the scripted model.
func (c *copilot) env() []string {
	return []string{
		"COPILOT_OFFLINE=true",
		"COPILOT_PROVIDER_BASE_URL=" + c.model.srv.URL + "/v1",
		"COPILOT_PROVIDER_TYPE=openai",
		"COPILOT_PROVIDER_API_KEY=sk-test-key",
		"COPILOT_MODEL=scripted-model",
		"COPILOT_CACHE_HOME=" + c.cache,
		"COPILOT_AUTO_UPDATE=false",
	}
}

// prompt runs one turn of a session, non-interactively: the first with
// --session-id (a new session's id), later ones with --resume.
func (c *copilot) prompt(session string, first bool, prompt string) string {
	c.t.Helper()
	args := []string{"-p", prompt, "--allow-all-tools", "--no-auto-update"}
	if first {
		args = append(args, "--session-id="+session)
	} else {
		args = append(args, "--resume="+session)
	}
	return c.run(c.env(), c.bin, args...)
}

// TestCopilot drives a three-turn Copilot CLI session whose own tools
// (create, view, edit, bash) change the workspace, the user editing
// between turns, and checks what ckpt recorded and that a rewind restores
// the files exactly.
func TestCopilot(t *testing.T) {
	const sid = "3c9e1f27-8d4b-4a6e-9f1c-2b7d5e8a0c43"
	c := newCopilot(t, nil)
	abs := func(p string) string { return filepath.Join(c.ws, p) }
	c.model.turns = map[string][]step{
		"[t1]": {
			call("create", map[string]any{"path": abs("a.txt"), "file_text": "alpha\n"}),
			call("create", map[string]any{"path": abs("run.sh"), "file_text": "#!/bin/sh\necho run\n"}),
			call("bash", map[string]any{"command": "chmod +x run.sh && mkdir -p lib/deep build && printf 'bin\\000ary' > lib/deep/blob.bin && ln -s a.txt link && echo obj > build/out.o", "description": "set up"}),
			say("Set up."),
		},
		"[t2]": {
			call("view", map[string]any{"path": abs("src.txt")}),
			call("edit", map[string]any{"path": abs("src.txt"), "old_str": "two", "new_str": "TWO"}),
			call("bash", map[string]any{"command": "sed -i 's/alpha/ALPHA/' a.txt && rm lib/deep/blob.bin && echo obj2 > build/out.o", "description": "edit"}),
			say("Edited."),
		},
		"[t3]": {
			call("bash", map[string]any{"command": "rm link && mkdir -p new/dir && echo three > new/dir/c.txt && chmod -x run.sh", "description": "more"}),
			say("Finished."),
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

	// The model saw one conversation: each turn's request carries the
	// turns before it (--resume continued the session).
	var last []string
	for _, r := range c.model.requests() {
		last = r.Markers
	}
	if want := []string{"[t1]", "[t2]", "[t3]"}; !reflect.DeepEqual(last, want) {
		t.Errorf("the last request carried turns %q, want %q", last, want)
	}

	s := c.wantSession(sid, "copilot", threeTurnPrompts, threeTurnFiles())
	if want := filepath.Join(c.home, ".copilot", "session-state", sid, "events.jsonl"); s.Session.Transcript != want {
		t.Errorf("transcript %q, want %q", s.Session.Transcript, want)
	}
	// Each turn's messages: the prompt, the tool calls and the reply,
	// from Copilot's session events.
	var msgs []string
	for _, m := range s.Messages {
		msgs = append(msgs, fmt.Sprintf("%d %s %s: %s", m.Turn, m.Role, m.Tool, m.Content))
	}
	wantMsgs := []string{
		"1 user : [t1] set up the project",
		"1 tool create: " + abs("a.txt"),
		"1 tool create: " + abs("run.sh"),
		"1 tool bash: chmod +x run.sh && mkdir -p lib/deep build && printf 'bin\\000ary' > lib/deep/blob.bin && ln -s a.txt link && echo obj > build/out.o",
		"1 assistant : Set up.",
		"2 user : [t2] edit things",
		"2 tool view: " + abs("src.txt"),
		"2 tool edit: " + abs("src.txt"),
		"2 tool bash: sed -i 's/alpha/ALPHA/' a.txt && rm lib/deep/blob.bin && echo obj2 > build/out.o",
		"2 assistant : Edited.",
		"3 user : [t3] finish",
		"3 tool bash: rm link && mkdir -p new/dir && echo three > new/dir/c.txt && chmod -x run.sh",
		"3 assistant : Finished.",
	}
	if !reflect.DeepEqual(msgs, wantMsgs) {
		t.Errorf("messages\n got %q\nwant %q", msgs, wantMsgs)
	}
	// Copilot ran each of ckpt's hooks once per turn, and ckpt did what
	// each asks.
	log := c.hookLog()
	for _, want := range []string{"copilot SessionStart", "copilot UserPromptSubmit", "copilot Stop", "copilot SessionEnd"} {
		if n := strings.Count(log, want); n < 3 {
			t.Errorf("the hook log has %q %d times, want 3 or more:\n%s", want, n, log)
		}
	}

	// Rewind turn 2 on: the agent's changes of turns 2 and 3 undone, the
	// user's edits between them kept; ignored build output untouched.
	c.rewindThenUndo(with(afterT1, map[string]string{"notes.txt": "mine\n", "keep.txt": "keep, edited\n", "build/out.o": "obj2\n"}), afterT3, "2", "--session", sid)

	// The whole session, --exact: the workspace exactly as turn 1 began
	// (the user's edits too); ignored build output untouched.
	c.rewindThenUndo(with(start, map[string]string{"build/out.o": "obj2\n"}), afterT3, "1", "--exact", "--session", sid)

	// The whole session, keeping the user's edits: every turn's changes
	// undone (a file a turn added and a later one deleted stays away),
	// the user's between turns kept.
	c.rewindThenUndo(with(start, map[string]string{"notes.txt": "mine\n", "keep.txt": "keep, edited\n", "build/out.o": "obj2\n"}), afterT3, "1", "--session", sid)
	c.logHookTimes("Copilot CLI")
}

// TestCopilotProjectHooks installs ckpt's hooks in the repository's
// .github/hooks/ instead: Copilot runs them only in a folder the user
// trusts (the folder in config.json's trustedFolders), and skips them
// otherwise.
func TestCopilotProjectHooks(t *testing.T) {
	const untrusted, trusted = "5d0a2e38-9c6f-4b1d-8e2a-3f4b6c7d8e91", "6e1b3f49-0d7a-4c2e-9f3b-4a5c7d8e9fa2"
	c := newCopilot(t, nil)
	c.model.turns = map[string][]step{
		"[t1]": {call("create", map[string]any{"path": filepath.Join(c.ws, "a.txt"), "file_text": "alpha\n"}), say("Made a.")},
		"[t2]": {call("bash", map[string]any{"command": "echo beta > b.txt", "description": "b"}), say("Made b.")},
	}
	c.ckpt("hook", "copilot", "uninstall")
	c.ckpt("hook", "copilot", "install", "--project")
	if _, err := os.Stat(filepath.Join(c.ws, ".github", "hooks", "ckpt.json")); err != nil {
		t.Fatal(err)
	}
	c.run(c.env(), c.bin, "-p", "[t1] make a", "--allow-all-tools", "--no-auto-update", "--session-id="+untrusted)
	if log := c.hookLog(); strings.Contains(log, "copilot") {
		t.Fatalf("Copilot ran a repository's hooks in a folder not trusted:\n%s", log)
	}
	// Trust the folder as Copilot's prompt ("Do you trust the files in
	// this folder?") records it, in config.json.
	config := filepath.Join(c.home, ".copilot", "config.json")
	if err := os.WriteFile(config, []byte(fmt.Sprintf("{\n  \"trustedFolders\": [%q]\n}\n", c.ws)), 0o600); err != nil {
		t.Fatal(err)
	}
	c.run(c.env(), c.bin, "-p", "[t2] make b", "--allow-all-tools", "--no-auto-update", "--session-id="+trusted)
	c.wantSession(trusted, "copilot", []string{"[t2] make b"}, [][]string{{"added b.txt"}})
	if got := c.read("a.txt"); got != "alpha\n" {
		t.Errorf("a.txt %q", got)
	}
}

// TestCopilotIgnoredEdits: Copilot CLI's edit and create change ignored
// files; its PreToolUse hook keeps them, and a rewind puts them back.
func TestCopilotIgnoredEdits(t *testing.T) {
	const sid = "4d0f2a38-9e5c-4b7f-8a2d-3c8e6f9b1d54"
	c := newCopilot(t, map[string][]step{})
	abs := func(p string) string { return filepath.Join(c.ws, p) }
	c.ignoredEdits(sid, ".env", c.model.turns, func(first bool, text string) string { c.prompt(sid, first, text); return sid },
		func(p, content string) []step {
			old := strings.TrimSuffix(c.read(p), "\n")
			return []step{call("view", map[string]any{"path": abs(p)}),
				call("edit", map[string]any{"path": abs(p), "old_str": old, "new_str": strings.TrimSuffix(content, "\n")})}
		},
		func(p, content string) []step {
			return []step{call("create", map[string]any{"path": abs(p), "file_text": content})}
		})
}
