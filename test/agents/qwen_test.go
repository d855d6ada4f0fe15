package agents

import (
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

var qwenCLI = agentCLI{"@qwen-code/qwen-code", "0.24.4", "qwen"}

// qwen is Qwen Code (the real CLI, pinned) in a world of its own, talking
// to a scripted OpenAI-compatible model, with ckpt's hooks installed as
// `ckpt hook qwen-code install` installs them (.qwen/settings.json in the
// workspace).
type qwen struct {
	*world
	bin   string
	model *model
}

func newQwen(t testing.TB, turns map[string][]step) *qwen {
	bin := qwenCLI.install(t)
	w := newWorld(t)
	m := openAIChatModel(t, turns)
	// The user's settings: an OpenAI-compatible provider (the scripted
	// model), no usage statistics, no update check.
	dir := filepath.Join(w.home, ".qwen")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	settings := `{
  "security": {"auth": {"selectedType": "openai"}},
  "model": {"name": "scripted-model"},
  "privacy": {"usageStatisticsEnabled": false},
  "telemetry": {"enabled": false},
  "general": {"enableAutoUpdate": false}
}
`
	if err := os.WriteFile(filepath.Join(dir, "settings.json"), []byte(settings), 0o644); err != nil {
		t.Fatal(err)
	}
	w.ckpt("hook", "qwen-code", "install")
	return &qwen{world: w, bin: bin, model: m}
}

// env points Qwen Code at the scripted model.
func (q *qwen) env() []string {
	return []string{
		"OPENAI_BASE_URL=" + q.model.srv.URL + "/v1",
		"OPENAI_API_KEY=sk-test-key",
		"OPENAI_MODEL=scripted-model",
		"QWEN_CODE_NO_RELAUNCH=true",
	}
}

var qwenFlags = []string{"--approval-mode", "yolo", "--auth-type", "openai", "--model", "scripted-model"}

// prompt runs one turn of a session, non-interactively: the first with
// --session-id, later ones with --resume.
func (q *qwen) prompt(session string, first bool, prompt string) string {
	q.t.Helper()
	args := append([]string{"-p", prompt}, qwenFlags...)
	if first {
		args = append(args, "--session-id", session)
	} else {
		args = append(args, "--resume", session)
	}
	return q.run(q.env(), q.bin, args...)
}

// TestQwenCode drives a three-turn Qwen Code session whose own tools
// (write_file, edit, run_shell_command) change the workspace, the user
// editing between turns, and checks what ckpt recorded and that a rewind
// restores the files exactly.
func TestQwenCode(t *testing.T) {
	const sid = "7a3e9c12-4b5d-4e6f-8a9b-0c1d2e3f4a5b"
	q := newQwen(t, nil)
	abs := func(p string) string { return filepath.Join(q.ws, p) }
	q.model.turns = map[string][]step{
		"[t1]": {
			call("write_file", map[string]any{"file_path": abs("a.txt"), "content": "alpha\n"}),
			call("write_file", map[string]any{"file_path": abs("run.sh"), "content": "#!/bin/sh\necho run\n"}),
			call("run_shell_command", map[string]any{"command": "chmod +x run.sh && mkdir -p lib/deep build && printf 'bin\\000ary' > lib/deep/blob.bin && ln -s a.txt link && echo obj > build/out.o", "description": "set up"}),
			say("Set up."),
		},
		"[t2]": {
			call("read_file", map[string]any{"file_path": abs("src.txt")}),
			call("edit", map[string]any{"file_path": abs("src.txt"), "old_string": "two", "new_string": "TWO"}),
			call("run_shell_command", map[string]any{"command": "sed -i 's/alpha/ALPHA/' a.txt && rm lib/deep/blob.bin && echo obj2 > build/out.o", "description": "edit"}),
			say("Edited."),
		},
		"[t3]": {
			call("run_shell_command", map[string]any{"command": "rm link && mkdir -p new/dir && echo three > new/dir/c.txt && chmod -x run.sh", "description": "more"}),
			say("Finished."),
		},
	}
	q.write(map[string]string{".gitignore": "build/\n", "src.txt": "one\ntwo\nthree\n", "keep.txt": "keep\n"})
	start := map[string]string{".gitignore": "build/\n", "src.txt": "one\ntwo\nthree\n", "keep.txt": "keep\n"}

	q.prompt(sid, true, "[t1] set up the project")
	afterT1 := with(start, map[string]string{"a.txt": "alpha\n", "run.sh": "#!/bin/sh\necho run\n (x)",
		"lib/deep/blob.bin": "bin\x00ary", "link": "-> a.txt", "build/out.o": "obj\n"})
	q.wantTree("after turn 1", afterT1)

	q.prompt(sid, false, "[t2] edit things")
	afterT2 := with(afterT1, map[string]string{"src.txt": "one\nTWO\nthree\n", "a.txt": "ALPHA\n", "lib/deep/blob.bin": "", "build/out.o": "obj2\n"})
	q.wantTree("after turn 2", afterT2)

	// The user's own work between turns 2 and 3.
	q.write(map[string]string{"notes.txt": "mine\n", "keep.txt": "keep, edited\n"})
	userT2 := with(afterT2, map[string]string{"notes.txt": "mine\n", "keep.txt": "keep, edited\n"})

	q.prompt(sid, false, "[t3] finish")
	afterT3 := with(userT2, map[string]string{"link": "", "new/dir/c.txt": "three\n", "run.sh": "#!/bin/sh\necho run\n"})
	q.wantTree("after turn 3", afterT3)

	// The model saw one conversation: each turn's request carries the
	// turns before it (--resume continued the session).
	var last []string
	for _, r := range q.model.requests() {
		last = r.Markers
	}
	if want := []string{"[t1]", "[t2]", "[t3]"}; !reflect.DeepEqual(last, want) {
		t.Errorf("the last request carried turns %q, want %q", last, want)
	}

	s := q.wantSession(sid, "qwen-code", threeTurnPrompts, threeTurnFiles())
	// Each turn's messages: the prompt, the tool calls (from Qwen Code's
	// transcript), the reply.
	var msgs []string
	for _, m := range s.Messages {
		msgs = append(msgs, fmt.Sprintf("%d %s %s: %s", m.Turn, m.Role, m.Tool, m.Content))
	}
	wantMsgs := []string{
		"1 user : [t1] set up the project",
		"1 tool write_file: " + abs("a.txt"),
		"1 tool write_file: " + abs("run.sh"),
		"1 tool run_shell_command: chmod +x run.sh && mkdir -p lib/deep build && printf 'bin\\000ary' > lib/deep/blob.bin && ln -s a.txt link && echo obj > build/out.o",
		"1 assistant : Set up.",
		"2 user : [t2] edit things",
		"2 tool read_file: " + abs("src.txt"),
		"2 tool edit: " + abs("src.txt"),
		"2 tool run_shell_command: sed -i 's/alpha/ALPHA/' a.txt && rm lib/deep/blob.bin && echo obj2 > build/out.o",
		"2 assistant : Edited.",
		"3 user : [t3] finish",
		"3 tool run_shell_command: rm link && mkdir -p new/dir && echo three > new/dir/c.txt && chmod -x run.sh",
		"3 assistant : Finished.",
	}
	if !reflect.DeepEqual(msgs, wantMsgs) {
		t.Errorf("messages\n got %q\nwant %q", msgs, wantMsgs)
	}

	// Rewind turn 2 on: the agent's changes of turns 2 and 3 undone, the
	// user's edits between them kept; ignored build output untouched.
	q.rewindThenUndo(with(afterT1, map[string]string{"notes.txt": "mine\n", "keep.txt": "keep, edited\n", "build/out.o": "obj2\n"}), afterT3, "2", "--session", sid)

	// The whole session, --exact: the workspace exactly as turn 1 began
	// (the user's edits too); ignored build output untouched.
	q.rewindThenUndo(with(start, map[string]string{"build/out.o": "obj2\n"}), afterT3, "1", "--exact", "--session", sid)

	// The whole session, keeping the user's edits: every turn's changes
	// undone (a file a turn added and a later one deleted stays away),
	// the user's between turns kept.
	q.rewindThenUndo(with(start, map[string]string{"notes.txt": "mine\n", "keep.txt": "keep, edited\n", "build/out.o": "obj2\n"}), afterT3, "1", "--session", sid)
	q.logHookTimes("Qwen Code")
}

// TestQwenCodeIgnoredEdits: Qwen Code's edit and write_file change ignored
// files; its PreToolUse hook keeps them, and a rewind puts them back.
func TestQwenCodeIgnoredEdits(t *testing.T) {
	q := newQwen(t, map[string][]step{})
	abs := func(p string) string { return filepath.Join(q.ws, p) }
	const sid = "6b7c8d9e-0f1a-4b2c-9d3e-4f5a6b7c8d9e"
	q.ignoredEdits(sid, ".env", q.model.turns, func(first bool, text string) string { q.prompt(sid, first, text); return sid },
		func(p, content string) []step {
			old := strings.TrimSuffix(q.read(p), "\n")
			// Qwen Code edits only a file it has read.
			return []step{call("read_file", map[string]any{"file_path": abs(p)}),
				call("edit", map[string]any{"file_path": abs(p), "old_string": old, "new_string": strings.TrimSuffix(content, "\n")})}
		},
		func(p, content string) []step {
			return []step{call("write_file", map[string]any{"file_path": abs(p), "content": content})}
		})
}
