package hooks

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/BurntSushi/toml"
)

// The fuzz targets of every parser a hook runs on input it did not write
// (run each with go test -run '^$' -fuzz '^FuzzX$' -fuzztime 1m
// ./internal/hooks): payloads, transcripts, settings files. Each asserts
// no panic and output bounded by its input; FuzzHookExit (fuzz_cli_test.go)
// runs the whole `ckpt hook AGENT` and asserts it exits 0.

// addFiles seeds f with the files matching pattern under testdata.
func addFiles(f *testing.F, pattern string, add func(data []byte)) {
	f.Helper()
	files, err := filepath.Glob(filepath.Join("testdata", pattern))
	if err != nil || len(files) == 0 {
		f.Fatalf("no seeds for %s: %v", pattern, err)
	}
	for _, p := range files {
		data, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		add(data)
	}
}

// eventSize is the bytes of an event's strings: all come from the
// payload, so they are bounded by it (invalid UTF-8 is replaced by U+FFFD:
// at most three bytes for one).
func eventSize(ev *Event) int {
	n := len(ev.Agent) + len(ev.Name) + len(string(ev.Kind)) + len(ev.SessionID) + len(ev.Cwd) + len(ev.Prompt) +
		len(ev.Transcript) + len(ev.Assistant) + len(ev.Detail) + len(ev.Label)
	for _, m := range ev.Messages {
		n += len(m.Role) + len(m.Tool) + len(m.Content)
	}
	return n
}

func fuzzParse(f *testing.F, agent string, seeds ...string) {
	for _, pattern := range seeds {
		addFiles(f, pattern, func(data []byte) { f.Add(data) })
	}
	f.Add([]byte(`{"hook_event_name":"Stop","session_id":"\ud800","transcript_path":"/dev/zero"}`))
	f.Add([]byte(`{"type":"agent-turn-complete","input-messages":["","",""],"thread-id":"t"}`))
	f.Fuzz(func(t *testing.T, payload []byte) {
		ev, err := Parse(agent, payload)
		if err != nil {
			if ev != nil {
				t.Fatalf("an event with the error %v", err)
			}
			return
		}
		if ev.Agent != agent || ev.Name == "" || ev.Kind == "" {
			t.Fatalf("event %+v", ev)
		}
		// Fixed strings (agent, kind) plus what the payload carried.
		if n := eventSize(ev); n > 3*len(payload)+64 {
			t.Fatalf("a %d-byte payload made a %d-byte event", len(payload), n)
		}
	})
}

// FuzzParseClaudeCode: Claude Code's hook payloads.
func FuzzParseClaudeCode(f *testing.F) { fuzzParse(f, ClaudeCode, "claude-code/*.json") }

// FuzzParseGemini: Gemini CLI's hook payloads.
func FuzzParseGemini(f *testing.F) { fuzzParse(f, Gemini, "gemini/*.json") }

// FuzzParseGeneric: ckpt's own protocol (ckpt hook generic).
func FuzzParseGeneric(f *testing.F) { fuzzParse(f, Generic, "generic/*.json") }

// FuzzParseCodex: Codex's payloads, its native hooks' and its legacy
// notify program's.
func FuzzParseCodex(f *testing.F) { fuzzParse(f, Codex, "codex/*.json", "codex-hooks/*.json") }

// fuzzTranscript reads a transcript's turn: at most maxMessages messages,
// each clipped, whatever the transcript holds.
func fuzzTranscript(f *testing.F, agent, seeds string) {
	addFiles(f, seeds, func(data []byte) { f.Add(data, prompt, "") })
	f.Add([]byte(`{"id":"1","type":"user","content":"p"}`+"\n"+`{"$rewindTo":"1"}`+"\n"), "p", "reply")
	f.Add([]byte(`{"messages":[{"id":"1","type":"user","content":"p"},{"id":"2","type":"gemini","content":[{"text":"a"}]}]}`), "p", "")
	// One file per worker process (iterations in a process run one at a
	// time); a directory per iteration would cost more than the parse.
	p := filepath.Join(f.TempDir(), "t.jsonl")
	f.Fuzz(func(t *testing.T, data []byte, prompt, assistant string) {
		if err := os.WriteFile(p, data, 0o600); err != nil {
			t.Fatal(err)
		}
		msgs, _ := turnMessages(&Event{Agent: agent, Transcript: p, Assistant: assistant}, prompt)
		if len(msgs) > maxMessages {
			t.Fatalf("%d messages, more than %d", len(msgs), maxMessages)
		}
		total := 0
		for _, m := range msgs {
			if len(m.Content) > maxAssistantText || len(m.Tool) > 3*len(data) {
				t.Fatalf("a %d-byte message (tool %d bytes) from %d bytes", len(m.Content), len(m.Tool), len(data))
			}
			total += len(m.Content) + len(m.Tool)
		}
		if total > 3*(len(data)+len(assistant))+100 {
			t.Fatalf("%d bytes of messages from a %d-byte transcript", total, len(data))
		}
	})
}

// FuzzClaudeTranscript: Claude Code's transcript (JSON lines).
func FuzzClaudeTranscript(f *testing.F) {
	fuzzTranscript(f, ClaudeCode, "claude-code/transcript.jsonl")
}

// FuzzGeminiTranscript: Gemini CLI's transcript (JSON lines with
// rewinds, or one legacy JSON object).
func FuzzGeminiTranscript(f *testing.F) { fuzzTranscript(f, Gemini, "gemini/transcript.jsonl") }

// FuzzSettingsJSON: install and uninstall on any settings file. They fail
// or give a file that parses, grown by at most ckpt's entries; uninstall
// after install takes ckpt's entries out again.
func FuzzSettingsJSON(f *testing.F) {
	addFiles(f, "settings/*.json", func(data []byte) { f.Add(data, false) })
	f.Add([]byte(`{"hooks": {"Stop": [{"hooks": [{"type": "command", "command": "ckpt hook claude-code && x"}]}]}}`), true)
	f.Add([]byte("{\n\t// c\n\t\"hooks\": {} /* x */\n}"), false)
	f.Fuzz(func(t *testing.T, src []byte, gemini bool) {
		agent := ClaudeCode
		if gemini {
			agent = Gemini
		}
		settingsRoundTrip(t, src, agent)
	})
}

// FuzzCursorHooksJSON: install and uninstall on any Cursor hooks.json,
// whose entries are commands, not groups of them.
func FuzzCursorHooksJSON(f *testing.F) {
	addFiles(f, "settings/*.json", func(data []byte) { f.Add(data) })
	f.Add([]byte(`{"version": 1, "hooks": {"stop": [{"command": "ckpt hook cursor"}, {"command": "./audit.sh"}]}}`))
	f.Add([]byte(`{"hooks": {"stop": [{"hooks": [{"command": "ckpt hook cursor"}]}], "beforeSubmitPrompt": {}}}`))
	f.Fuzz(func(t *testing.T, src []byte) { settingsRoundTrip(t, src, Cursor) })
}

// settingsRoundTrip installs ckpt's entries for agent in src and takes
// them out again: install fails, or gives a file that parses, grown by at
// most ckpt's entries, from which uninstall removes them.
func settingsRoundTrip(t *testing.T, src []byte, agent string) {
	opts := InstallOptions{Command: "/opt/ckpt/bin/ckpt"}
	ch := &Change{Agent: agent, File: "settings.json"}
	out, err := jsonInstall(append([]byte(nil), src...), agent, opts, ch)
	if err != nil {
		return
	}
	if _, err := parseSettings(out, "settings.json"); err != nil {
		t.Fatalf("install made a file it cannot read: %v\n%s", err, out)
	}
	if len(out) > len(src)+4096 {
		t.Fatalf("install grew %d bytes to %d", len(src), len(out))
	}
	back, err := jsonUninstall(out, agent, &Change{Agent: agent, File: "settings.json"})
	if err != nil {
		t.Fatalf("uninstall after install: %v\n%s", err, out)
	}
	if strings.Contains(string(back), opts.Command+" hook "+agent+`"`) {
		t.Fatalf("uninstall left ckpt's entry:\n%s", back)
	}
}

// FuzzCodexConfig: install and uninstall on any config.toml. They fail
// or give a file that decodes to the same settings plus (or minus) the
// notify key.
func FuzzCodexConfig(f *testing.F) {
	addFiles(f, "settings/*.toml", func(data []byte) { f.Add(data) })
	f.Add([]byte("notify = [\"ckpt\", \"hook\", \"codex\"]\n[tui]\nx = 1\n"))
	f.Add([]byte("# only a comment"))
	f.Fuzz(func(t *testing.T, src []byte) {
		ch := &Change{Agent: Codex, File: "config.toml"}
		out, err := codexInstall(append([]byte(nil), src...), "/opt/ckpt/bin/ckpt", ch)
		if err != nil {
			return
		}
		var m map[string]any
		if _, err := toml.Decode(string(out), &m); err != nil {
			t.Fatalf("install made a file that does not decode: %v\n%s", err, out)
		}
		if len(out) > len(src)+200 {
			t.Fatalf("install grew %d bytes to %d", len(src), len(out))
		}
		if _, err := codexUninstall(out, &Change{Agent: Codex, File: "config.toml"}); err != nil {
			t.Fatalf("uninstall after install: %v\n%s", err, out)
		}
	})
}

// FuzzCodexTrust: recording and removing the trust of ckpt's hooks in
// any config.toml. Both fail or give a file that decodes to the same
// settings plus (or minus) the trust entries; removing what was recorded
// gives back the same settings.
func FuzzCodexTrust(f *testing.F) {
	addFiles(f, "settings/*.toml", func(data []byte) { f.Add(data) })
	f.Add([]byte("[hooks.state.\"/h/hooks.json:stop:0:0\"]\nenabled = false\n"))
	f.Add([]byte("[hooks]\nstate = 1\n"))
	entries := []codexTrust{
		{Event: "Stop", Key: "/h/hooks.json:stop:0:0", Hash: "sha256:aa"},
		{Event: "SessionEnd", Key: "/h/hooks.json:session_end:1:0", Hash: "sha256:bb"},
	}
	f.Fuzz(func(t *testing.T, src []byte) {
		before, err := decodeTOML(src, "config.toml")
		if err != nil {
			return
		}
		out, err := setTrust(append([]byte(nil), src...), entries, &Change{File: "config.toml"})
		if err != nil {
			return
		}
		m, err := decodeTOML(out, "config.toml")
		if err != nil {
			t.Fatalf("trust made a file that does not decode: %v\n%s", err, out)
		}
		for _, e := range entries {
			if h, _ := trustedHash(m, e.Key); h != e.Hash {
				t.Fatalf("no trust for %s:\n%s", e.Key, out)
			}
		}
		back, err := removeTrust(out, entries, &Change{File: "config.toml"})
		if err != nil {
			t.Fatalf("removing the trust recorded: %v\n%s", err, out)
		}
		if !checkTOML(back, before, "config.toml") {
			for _, e := range entries {
				if _, had := trustedHash(before, e.Key); had {
					return // a table of the user's for the key: its other keys stay
				}
			}
			t.Fatalf("trust then untrust changed the settings:\n%s\n->\n%s", src, back)
		}
	})
}

// FuzzParseQwenCode: Qwen Code's hook payloads.
func FuzzParseQwenCode(f *testing.F) { fuzzParse(f, QwenCode, "qwen-code/*.json") }

// FuzzQwenCodeTranscript: Qwen Code's transcript (its chat recording,
// JSON lines).
func FuzzQwenCodeTranscript(f *testing.F) {
	fuzzTranscript(f, QwenCode, "qwen-code/transcript.jsonl")
}

// FuzzParseOpenCode: what ckpt's OpenCode plugin sends (ckpt's protocol).
func FuzzParseOpenCode(f *testing.F) { fuzzParse(f, OpenCode, "opencode/*.json", "generic/*.json") }

// FuzzParseDroid: Droid's hook payloads.
func FuzzParseDroid(f *testing.F) { fuzzParse(f, Droid, "droid/*.json") }

// FuzzDroidTranscript: Droid's transcript (JSON lines).
func FuzzDroidTranscript(f *testing.F) { fuzzTranscript(f, Droid, "droid/transcript.jsonl") }

// FuzzParseCursor: Cursor's hook payloads.
func FuzzParseCursor(f *testing.F) { fuzzParse(f, Cursor, "cursor/*.json") }

// FuzzCursorTranscript: Cursor's transcript (JSON lines).
func FuzzCursorTranscript(f *testing.F) { fuzzTranscript(f, Cursor, "cursor/transcript.jsonl") }

// FuzzParseCopilot: Copilot CLI's hook payloads, PascalCase and camelCase.
func FuzzParseCopilot(f *testing.F) { fuzzParse(f, Copilot, "copilot/*.json") }

// FuzzCopilotTranscript: Copilot CLI's transcript (its session events,
// JSON lines).
func FuzzCopilotTranscript(f *testing.F) {
	fuzzTranscript(f, Copilot, "copilot/transcript.jsonl")
}

// FuzzCopilotHooksFile: reading any file named ckpt.json in Copilot's
// hooks directories. ckpt's own file, with any command, reads back as
// ckpt's with every event.
func FuzzCopilotHooksFile(f *testing.F) {
	addFiles(f, "copilot/*.json", func(data []byte) { f.Add(data, "/opt/bin/ckpt") })
	f.Add(copilotFile("/usr/local/bin/ckpt"), "ckpt")
	f.Add([]byte(`{"version": 1, "hooks": {"Stop": [{"type": "command", "bash": "ckpt hook copilot"}, {}]}}`), "/a b/ckpt")
	f.Fuzz(func(t *testing.T, src []byte, command string) {
		if cmds, ours := copilotHooks(src); ours && len(cmds) == 0 {
			t.Fatalf("a file with no hook is ckpt's: %s", src)
		}
		if filepath.Base(command) != "ckpt" || strings.ContainsAny(command, "\x00\n") || !utf8.ValidString(command) {
			return
		}
		cmds, ours := copilotHooks(copilotFile(command))
		if !ours || len(cmds) != len(Events[Copilot]) {
			t.Fatalf("ckpt's file for %q is not read back as ckpt's: %v %v\n%s", command, ours, cmds, copilotFile(command))
		}
		for e, c := range cmds {
			if c != command {
				t.Fatalf("%s runs %q, want %q", e, c, command)
			}
		}
	})
}
