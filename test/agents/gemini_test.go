package agents

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// gemini is Gemini CLI (the real CLI, pinned) in a world of its own,
// talking to a scripted Gemini API model, with ckpt's hooks installed as
// `ckpt hook gemini install` installs them (the project's
// .gemini/settings.json).
type gemini struct {
	*world
	bin   string
	model *model
}

func newGemini(t *testing.T, turns map[string][]step) *gemini {
	bin := geminiCLI.install(t)
	w := newWorld(t)
	m := geminiModel(t, turns)
	// The user's settings: an API key, no folder trust prompt, nothing
	// sent anywhere but the model, no update check.
	settings := map[string]any{
		"security": map[string]any{
			"auth":        map[string]any{"selectedType": "gemini-api-key"},
			"folderTrust": map[string]any{"enabled": false},
		},
		"privacy":   map[string]any{"usageStatisticsEnabled": false},
		"telemetry": map[string]any{"enabled": false},
		"general": map[string]any{
			"enableAutoUpdate": false, "enableAutoUpdateNotification": false,
			// Gemini CLI's session cleanup (on by default) runs at startup
			// and deletes every chat file of a session one of whose files
			// has nothing to resume — which a resumed run that starts in
			// another minute than the session leaves behind. It takes the
			// chats these tests read (and check ckpt leaves alone) at
			// random, so it is off here; docs/hooks.md says what it means
			// for users.
			"sessionRetention": map[string]any{"enabled": false},
		},
		"ui": map[string]any{"hideBanner": true, "hideTips": true},
		// The next-speaker check (off by default) asks the model, after
		// each reply, whether the model or the user speaks next: on, the
		// scripted model must answer that side request too.
		"model": map[string]any{"skipNextSpeakerCheck": false},
	}
	if err := os.MkdirAll(filepath.Join(w.home, ".gemini"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(w.home, ".gemini", "settings.json"), []byte(mustJSON(settings)), 0o644); err != nil {
		t.Fatal(err)
	}
	w.ckpt("hook", "gemini", "install")
	return &gemini{world: w, bin: bin, model: m}
}

// env points Gemini CLI at the scripted model.
func (g *gemini) env() []string {
	return []string{
		"GEMINI_API_KEY=test",
		"GOOGLE_GEMINI_BASE_URL=" + g.model.srv.URL,
		"GEMINI_CLI_NO_RELAUNCH=true", // one node process, not a relaunched child with a bigger heap
	}
}

var geminiFlags = []string{"--approval-mode", "yolo", "--output-format", "json"}

// prompt runs one turn non-interactively: the first starts the session
// with --session-id, later ones --resume it.
func (g *gemini) prompt(session string, first bool, prompt string, extra ...string) string {
	g.t.Helper()
	args := append([]string{"-p", prompt}, geminiFlags...)
	if first {
		args = append(args, "--session-id", session)
	} else {
		args = append(args, "--resume", session)
	}
	return g.run(append(g.env(), extra...), g.bin, args...)
}

// TestGemini drives a Gemini CLI session over several runs of `gemini -p`
// (the later ones --resume it) whose tools (write_file, replace,
// run_shell_command) change the workspace every way a shell can, with
// the user editing between turns, and checks what the hooks recorded and
// what each kind of rewind, undo and fork does.
func TestGemini(t *testing.T) {
	const sid = "1c2d3e4f-5a6b-4c7d-8e9f-a0b1c2d3e4f5"
	g := newGemini(t, nil)
	abs := func(p string) string { return filepath.Join(g.ws, p) }
	g.model.turns = map[string][]step{
		"[t1]": {
			call("write_file", map[string]any{"file_path": abs("a.txt"), "content": "alpha\n"}),
			call("write_file", map[string]any{"file_path": abs("run.sh"), "content": "#!/bin/sh\necho run\n"}),
			call("run_shell_command", map[string]any{"command": "chmod +x run.sh && mkdir -p lib/deep build && printf 'bin\\000ary' > lib/deep/blob.bin && ln -s a.txt link && echo obj > build/out.o", "description": "set up"}),
		},
		"[t2]": {
			call("read_file", map[string]any{"file_path": abs("src.txt")}),
			call("replace", map[string]any{"file_path": abs("src.txt"), "instruction": "Capitalize two.", "old_string": "two", "new_string": "TWO"}),
			call("run_shell_command", map[string]any{"command": "sed -i 's/alpha/ALPHA/' a.txt && rm lib/deep/blob.bin && echo obj2 > build/out.o", "description": "edit"}),
		},
		"[t3]": {
			call("run_shell_command", map[string]any{"command": "rm link && mkdir -p new/dir && echo three > new/dir/c.txt && chmod -x run.sh", "description": "more"}),
		},
		"[t4]": {call("write_file", map[string]any{"file_path": abs("t4.txt"), "content": "four\n"})},
		"[t5]": nil,
	}
	start := map[string]string{".gitignore": "build/\n", "src.txt": "one\ntwo\nthree\n", "keep.txt": "keep\n"}
	g.write(start)

	g.prompt(sid, true, "[t1] set up the project")
	afterT1 := with(start, map[string]string{"a.txt": "alpha\n", "run.sh": "#!/bin/sh\necho run\n (x)",
		"lib/deep/blob.bin": "bin\x00ary", "link": "-> a.txt", "build/out.o": "obj\n"})
	g.wantTree("after turn 1", afterT1)

	g.prompt(sid, false, "[t2] edit things")
	afterT2 := with(afterT1, map[string]string{"src.txt": "one\nTWO\nthree\n", "a.txt": "ALPHA\n", "lib/deep/blob.bin": "", "build/out.o": "obj2\n"})
	g.wantTree("after turn 2", afterT2)

	// The user's own work between turns 2 and 3.
	g.write(map[string]string{"notes.txt": "mine\n", "keep.txt": "keep, edited\n", "src.txt": "one\nTWO\nthree\nfour\n"})
	userT2 := with(afterT2, map[string]string{"notes.txt": "mine\n", "keep.txt": "keep, edited\n", "src.txt": "one\nTWO\nthree\nfour\n"})

	g.prompt(sid, false, "[t3] finish")
	afterT3 := with(userT2, map[string]string{"link": "", "new/dir/c.txt": "three\n", "run.sh": "#!/bin/sh\necho run\n"})
	g.wantTree("after turn 3", afterT3)

	// The side requests were answered: the model router's (every main
	// request went to the flash model it chose) and the next-speaker
	// check's, once per turn each. (Had the check said the model speaks
	// next, Gemini CLI would have sent "Please continue." and asked
	// again.)
	router, speaker := " json:complexity_reasoning,complexity_score", " json:reasoning,next_speaker"
	if got, want := g.sideRequests(), []string{"[t1]" + router, "[t1]" + speaker, "[t2]" + router, "[t2]" + speaker, "[t3]" + router, "[t3]" + speaker}; !reflect.DeepEqual(got, want) {
		t.Errorf("side requests\n got %q\nwant %q", got, want)
	}
	var markers [][]string
	for _, r := range g.model.requests() {
		if !strings.Contains(r.Path, "-flash:streamGenerateContent") {
			t.Errorf("a main request to %s (the router's answer was not taken)", r.Path)
		}
		markers = append(markers, r.Markers)
	}
	t1, t12, t123 := []string{"[t1]"}, []string{"[t1]", "[t2]"}, []string{"[t1]", "[t2]", "[t3]"}
	if want := [][]string{t1, t1, t1, t1, t12, t12, t12, t12, t123, t123}; !reflect.DeepEqual(markers, want) {
		t.Errorf("the model saw the turns\n %q\nwant %q", markers, want)
	}

	s := g.wantSession(sid, "gemini", threeTurnPrompts, threeTurnFiles())
	chats := filepath.Join(g.home, ".gemini", "tmp", "work", "chats")
	if filepath.Dir(s.Session.Transcript) != chats || !strings.HasSuffix(s.Session.Transcript, "-"+sid[:8]+".jsonl") {
		t.Errorf("transcript %q, want Gemini CLI's chat file in %s", s.Session.Transcript, chats)
	}
	var msgs []string
	for _, m := range s.Messages {
		msgs = append(msgs, fmt.Sprintf("%d %s %s %s", m.Turn, m.Role, m.Tool, m.Content))
	}
	wantMsgs := []string{
		"1 user  [t1] set up the project",
		"1 tool write_file " + abs("a.txt"),
		"1 tool write_file " + abs("run.sh"),
		"1 tool run_shell_command chmod +x run.sh && mkdir -p lib/deep build && printf 'bin\\000ary' > lib/deep/blob.bin && ln -s a.txt link && echo obj > build/out.o",
		"1 assistant  Done with [t1].",
		"2 user  [t2] edit things",
		"2 tool read_file " + abs("src.txt"),
		"2 tool replace " + abs("src.txt"),
		"2 tool run_shell_command sed -i 's/alpha/ALPHA/' a.txt && rm lib/deep/blob.bin && echo obj2 > build/out.o",
		"2 assistant  Done with [t2].",
		"3 user  [t3] finish",
		"3 tool run_shell_command rm link && mkdir -p new/dir && echo three > new/dir/c.txt && chmod -x run.sh",
		"3 assistant  Done with [t3].",
	}
	if !reflect.DeepEqual(msgs, wantMsgs) {
		t.Errorf("messages\n got %q\nwant %q", msgs, wantMsgs)
	}

	// Rewind turn 2 on: the agent's changes of turns 2 and 3 undone, the
	// user's edits between them kept (src.txt: the agent's line undone,
	// the user's kept); ignored build output untouched.
	rw := g.rewind("2", "--session", sid)
	if rw.Scope != "code" || rw.Turn != 2 || rw.Restore == nil || !reflect.DeepEqual(rw.Kept, []string{"src.txt"}) || len(rw.Conflicts) != 0 {
		t.Errorf("rewind 2: %+v", rw)
	}
	g.wantTree("rewind 2", with(afterT1, map[string]string{"notes.txt": "mine\n", "keep.txt": "keep, edited\n", "src.txt": "one\ntwo\nthree\nfour\n", "build/out.o": "obj2\n"}))
	g.ckpt("undo")
	g.wantTree("undo of rewind 2", afterT3)

	// --exact: the whole tree as turn 2 began, the user's edits too.
	rw = g.rewind("2", "--exact", "--session", sid)
	if rw.Scope != "code" || rw.Turn != 2 || len(rw.Kept) != 0 {
		t.Errorf("rewind 2 --exact: %+v", rw)
	}
	g.wantTree("rewind 2 --exact", with(afterT1, map[string]string{"build/out.o": "obj2\n"}))
	g.ckpt("undo")
	g.wantTree("undo of rewind 2 --exact", afterT3)

	// --both: turn 3's changes and its conversation gone; undo brings
	// the code back, the conversation stays rewound.
	rw = g.rewind("3", "--both", "--session", sid)
	if rw.Scope != "both" || rw.Turn != 3 || rw.Prompt != "[t3] finish" || rw.Turns != 1 || rw.Messages != 3 || rw.AgentResume == nil {
		t.Errorf("rewind 3 --both: %+v", rw)
	}
	g.wantTree("rewind 3 --both", userT2)
	if got := g.session(sid).prompts(); !reflect.DeepEqual(got, []string{"[t1] set up the project", "[t2] edit things"}) {
		t.Errorf("after rewind 3 --both, ckpt's turns %q", got)
	}
	g.ckpt("undo")
	g.wantTree("undo of rewind 3 --both", afterT3)
	if got := g.session(sid).prompts(); !reflect.DeepEqual(got, []string{"[t1] set up the project", "[t2] edit things"}) {
		t.Errorf("after undo of rewind 3 --both, ckpt's turns %q", got)
	}

	// Gemini CLI's own conversation is not ckpt's: resumed, it still has
	// turn 3. The new turn is ckpt's turn 3.
	g.model.reset()
	g.prompt(sid, false, "[t4] go on")
	afterT4 := with(afterT3, map[string]string{"t4.txt": "four\n"})
	g.wantTree("after turn 4", afterT4)
	for _, r := range g.model.requests() {
		if want := []string{"[t1]", "[t2]", "[t3]", "[t4]"}; !reflect.DeepEqual(r.Markers, want) {
			t.Errorf("the resumed Gemini CLI sent turns %q, want %q", r.Markers, want)
		}
	}
	s = g.session(sid)
	if got, want := s.prompts(), []string{"[t1] set up the project", "[t2] edit things", "[t4] go on"}; !reflect.DeepEqual(got, want) {
		t.Fatalf("prompts %q, want %q", got, want)
	}
	if got, want := s.turnFiles()[2], []string{"added t4.txt"}; !reflect.DeepEqual(got, want) {
		t.Errorf("turn 3 ([t4]) files %q, want %q", got, want)
	}

	// --conversation: ckpt's copy loses turns 2 and 3 (the files stay);
	// Gemini CLI's own conversation stays whole (resumed, it still sends
	// every turn), and ckpt says how to go on from a copy of it before
	// turn 2 (TestGeminiSessionFileFork runs that).
	rw = g.rewind("2", "--conversation", "--session", sid)
	if rw.Scope != "conversation" || rw.Turn != 2 || rw.Prompt != "[t2] edit things" || rw.Turns != 2 || rw.Messages != 8 || rw.Restore != nil || rw.AgentResume == nil {
		t.Errorf("rewind 2 --conversation: %+v", rw)
	}
	g.wantTree("rewind 2 --conversation", afterT4)
	if got := g.session(sid).prompts(); !reflect.DeepEqual(got, []string{"[t1] set up the project"}) {
		t.Errorf("after rewind --conversation, ckpt's turns %q", got)
	}
	if _, _, errs := g.ckptCode("rewind", "1", "--conversation", "--dry-run", "--session", sid); !strings.Contains(errs, "Gemini CLI's own conversation is unchanged; turn 1 was its first, so a new conversation (gemini) starts before it") {
		t.Errorf("rewind 1 --conversation --dry-run does not say how Gemini CLI goes on:\n%s", errs)
	}
	g.model.reset()
	g.prompt(sid, false, "[t5] after the rewind")
	for _, r := range g.model.requests() {
		if want := []string{"[t1]", "[t2]", "[t3]", "[t4]", "[t5]"}; !reflect.DeepEqual(r.Markers, want) {
			t.Errorf("the resumed Gemini CLI sent turns %q, want %q", r.Markers, want)
		}
	}
	if got := g.session(sid).prompts(); !reflect.DeepEqual(got, []string{"[t1] set up the project", "[t5] after the rewind"}) {
		t.Fatalf("after [t5], ckpt's turns %q", got)
	}

	// A fork from turn 2: a new session with turn 1's conversation, the
	// workspace as [t5] began; then a fork from turn 1: no conversation,
	// the workspace as the session began. The original stays as it was.
	if got := g.fork(sid, "2").prompts(); !reflect.DeepEqual(got, []string{"[t1] set up the project"}) {
		t.Errorf("the fork from turn 2 has turns %q", got)
	}
	g.wantTree("fork 2", afterT4)
	if got := g.fork(sid, "1").prompts(); len(got) != 0 {
		t.Errorf("the fork from turn 1 has turns %q", got)
	}
	g.wantTree("fork 1", with(start, map[string]string{"build/out.o": "obj2\n"}))
	if got := g.session(sid).prompts(); !reflect.DeepEqual(got, []string{"[t1] set up the project", "[t5] after the rewind"}) {
		t.Errorf("the original session after the forks: %q", got)
	}
	// Every hook fired on every run, each turn begun and ended, numbered
	// as ckpt's turns are after the rewinds, with the files it changed
	// and the messages (tool calls, replies) read from Gemini CLI's chat.
	g.wantHookEvents(sid, []string{
		"SessionStart: opened session", "BeforeAgent: began turn 1", "AfterAgent: ended turn 1, 4 file(s) changed, 4 message(s)", "SessionEnd: closed session",
		"SessionStart: resumed session (1 turns)", "BeforeAgent: began turn 2", "AfterAgent: ended turn 2, 3 file(s) changed, 4 message(s)", "SessionEnd: closed session",
		"SessionStart: resumed session (2 turns)", "BeforeAgent: began turn 3", "AfterAgent: ended turn 3, 3 file(s) changed, 2 message(s)", "SessionEnd: closed session",
		"SessionStart: resumed session (2 turns)", "BeforeAgent: began turn 3", "AfterAgent: ended turn 3, 1 file(s) changed, 2 message(s)", "SessionEnd: closed session",
		"SessionStart: resumed session (1 turns)", "BeforeAgent: began turn 2", "AfterAgent: ended turn 2, 1 message(s)", "SessionEnd: closed session",
	})
	g.logHookTimes("Gemini CLI")
}

// sideRequests is the requests without tools Gemini CLI made, each as
// the last turn marker it sent (side requests send only the latest
// messages) and the JSON properties it asked for (see geminiModel).
func (g *gemini) sideRequests() []string {
	g.model.mu.Lock()
	defer g.model.mu.Unlock()
	var out []string
	for _, r := range g.model.log {
		if !r.Tools {
			mk := strings.Join(r.Markers[max(0, len(r.Markers)-1):], "")
			_, schema, _ := strings.Cut(r.Path, " json:")
			out = append(out, mk+" json:"+schema)
		}
	}
	return out
}

// rewindJSON is what `ckpt rewind --json` prints.
type rewindJSON struct {
	Scope     string   `json:"scope"`
	Turn      int      `json:"turn"`
	Prompt    string   `json:"prompt"`
	Messages  int      `json:"messages"`
	Turns     int      `json:"turns"`
	Kept      []string `json:"kept"`
	Conflicts []string `json:"conflicts"`
	Restore   any      `json:"restore"`
	// AgentResume is how the agent's own conversation goes on from before
	// the turn (Claude Code, Gemini CLI).
	AgentResume any `json:"agent_resume"`
}

func (w *world) rewind(args ...string) rewindJSON {
	w.t.Helper()
	var rw rewindJSON
	if err := json.Unmarshal([]byte(w.ckpt(append([]string{"rewind", "--json"}, args...)...)), &rw); err != nil {
		w.t.Fatal(err)
	}
	return rw
}

// hookEvents is the hook log's lines for a session, each "EVENT: what
// it did" without the checkpoint's id and the time it took.
var checkpointRE = regexp.MustCompile(` at [0-9a-f]{12}\b`)

func (w *world) hookEvents(session string) []string {
	var out []string
	for _, line := range strings.Split(w.hookLog(), "\n") {
		f := strings.Fields(line)
		if len(f) < 5 || f[3] != "session="+session {
			continue
		}
		_, what, _ := strings.Cut(line, ": ")
		what = checkpointRE.ReplaceAllString(what[:strings.LastIndex(what, " (")], "")
		out = append(out, f[2]+": "+what)
	}
	return out
}

func (w *world) wantHookEvents(session string, want []string) {
	w.t.Helper()
	// Before each edit tool: nothing to keep when the file is not ignored.
	got := slices.DeleteFunc(w.hookEvents(session), func(e string) bool { return e == "BeforeTool: nothing to keep" })
	if !reflect.DeepEqual(got, want) {
		w.t.Errorf("hook log\n got %q\nwant %q\n%s", got, want, w.hookLog())
	}
}

// TestGeminiStoreTrouble: a store another process holds locked, a store
// that is a file, and a corrupt store never fail Gemini CLI's turn: it
// exits 0, its tools' changes are on disk, and the hook log says what
// ckpt skipped and why. A turn after the lock is gone is recorded.
func TestGeminiStoreTrouble(t *testing.T) {
	const sid = "7e8f9a0b-1c2d-4e3f-8a5b-6c7d8e9f0a1b"
	g := newGemini(t, nil)
	abs := func(p string) string { return filepath.Join(g.ws, p) }
	g.model.turns = map[string][]step{}
	for _, n := range []string{"1", "2", "3", "4", "5"} {
		g.model.turns["[t"+n+"]"] = []step{call("write_file", map[string]any{"file_path": abs(n + ".txt"), "content": n + "\n"})}
	}
	g.prompt(sid, true, "[t1] one")
	store := g.storeDir()
	// wantLog checks what each hook call of the last run logged.
	wantLog := func(what, before string, want []string) {
		t.Helper()
		var got []string
		for _, line := range strings.Split(strings.TrimPrefix(g.hookLog(), before), "\n") {
			f := strings.Fields(line)
			if len(f) < 4 {
				continue
			}
			got = append(got, f[2])
			if i := len(got) - 1; i >= len(want) || !strings.Contains(line, want[i]) {
				t.Errorf("%s: hook log line %d: %q, want %q", what, i+1, line, want[min(i, len(want)-1)])
			}
		}
		if want := []string{"SessionStart", "BeforeAgent", "BeforeTool", "AfterAgent", "SessionEnd"}; !reflect.DeepEqual(got, want) {
			t.Errorf("%s: hook log events %q, want %q", what, got, want)
		}
	}

	// Locked: another process holds the store for the whole turn. The
	// hooks that write wait, give up and say so; those that only read
	// have nothing to do.
	unlock := g.lockStore(store)
	before := g.hookLog()
	g.prompt(sid, false, "[t2] two")
	unlock()
	locked := "session=" + sid + " workspace=" + g.ws + " error: store is locked by another process (waited 2s for " + filepath.Join(store, "lock") + ")"
	wantLog("locked", before, []string{locked, locked,
		// 3.txt is no ignored file: nothing to keep, no lock needed.
		"session=" + sid + " workspace=" + g.ws + ": nothing to keep",
		"session=" + sid + " workspace=" + g.ws + ": nothing to end; note: no turn in progress (its start was not recorded)",
		"session=" + sid + " workspace=" + g.ws + ": closed session"})

	// The lock gone, the next turn is recorded; 2.txt came between turns.
	g.prompt(sid, false, "[t3] three")
	s := g.session(sid)
	if got, want := s.prompts(), []string{"[t1] one", "[t3] three"}; !reflect.DeepEqual(got, want) {
		t.Errorf("turns after the locked one: %q, want %q", got, want)
	}
	if got, want := s.turnFiles(), [][]string{{"added 1.txt"}, {"added 3.txt"}}; !reflect.DeepEqual(got, want) {
		t.Errorf("turn files %q, want %q", got, want)
	}

	// A store that is a file.
	bad := filepath.Join(g.home, "not-a-store")
	if err := os.WriteFile(bad, []byte("a file\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	before = g.hookLog()
	g.prompt(sid, false, "[t4] four", "CKPT_STORE="+bad)
	notDir := "session=" + sid + " workspace=" + g.ws + " error: lstat " + filepath.Join(bad, "ckpt.db") + ": not a directory"
	wantLog("store a file", before, []string{notDir, notDir, notDir, notDir, notDir})
	if b, err := os.ReadFile(bad); err != nil || string(b) != "a file\n" {
		t.Errorf("the file named as the store: %q, %v", b, err)
	}

	// Corrupt: the store's database overwritten with garbage.
	g.corruptStore(store)
	before = g.hookLog()
	g.prompt(sid, false, "[t5] five")
	corrupt := "session=" + sid + " workspace=" + g.ws + " error: corrupt database: " + filepath.Join(store, "ckpt.db") + ": not a SQLite database"
	wantLog("corrupt", before, []string{corrupt, corrupt, corrupt, corrupt, corrupt})

	g.wantTree("after every turn", map[string]string{"1.txt": "1\n", "2.txt": "2\n", "3.txt": "3\n", "4.txt": "4\n", "5.txt": "5\n"})
}

// TestGeminiSessionFileFork: a conversation rewind for Gemini CLI writes
// a copy of its chat with a {"$rewindTo": ID} record appended, ID the
// message of the turn's prompt, and prints `gemini --session-file COPY`,
// which imports it as a new session (a new id, a new chat file; the
// original untouched): Gemini CLI goes on from before that turn. The
// hooks record the import as a new ckpt session, and resumed by its id it
// goes on from there.
func TestGeminiSessionFileFork(t *testing.T) {
	const sid = "3a4b5c6d-7e8f-4a0b-9c1d-2e3f4a5b6c7d"
	g := newGemini(t, nil)
	abs := func(p string) string { return filepath.Join(g.ws, p) }
	g.model.turns = map[string][]step{
		"[t1]":  {call("write_file", map[string]any{"file_path": abs("a.txt"), "content": "alpha\n"})},
		"[t2]":  {call("run_shell_command", map[string]any{"command": "echo two > b.txt"})},
		"[t3]":  nil,
		"[t9]":  {call("write_file", map[string]any{"file_path": abs("nine.txt"), "content": "nine\n"})},
		"[t10]": nil,
	}
	g.prompt(sid, true, "[t1] one")
	g.prompt(sid, false, "[t2] two")
	g.prompt(sid, false, "[t3] three")
	transcript := g.session(sid).Session.Transcript
	orig, err := os.ReadFile(transcript)
	if err != nil {
		t.Fatal(err)
	}

	// ckpt's conversation rewind to turn 2 writes the chat before turn 2
	// (the original's records, then a rewind to the message of [t2]'s
	// prompt) and prints the command that imports it.
	var prompt string
	for _, l := range strings.Split(string(orig), "\n") {
		var m struct {
			ID      string `json:"id"`
			Type    string `json:"type"`
			Content []struct {
				Text string `json:"text"`
			} `json:"content"`
		}
		if json.Unmarshal([]byte(l), &m) == nil && m.Type == "user" && len(m.Content) == 1 && m.Content[0].Text == "[t2] two" {
			prompt = m.ID
		}
	}
	if prompt == "" {
		t.Fatalf("no [t2] prompt record in %s", transcript)
	}
	if _, _, errs := g.ckptCode("rewind", "2", "--conversation", "--dry-run", "--session", sid); !strings.Contains(errs, "Gemini CLI's own conversation is unchanged; the rewind would write a copy of it ending before turn 2") {
		t.Errorf("rewind 2 --conversation --dry-run:\n%s", errs)
	}
	rw := g.rewind("2", "--conversation", "--session", sid)
	ar, _ := rw.AgentResume.(map[string]any)
	fork, _ := ar["file"].(string)
	if ar == nil || ar["at"] != prompt || ar["written"] != true || fork == "" {
		t.Fatalf("rewind 2 --conversation: agent_resume %+v", rw.AgentResume)
	}
	if cmd := fmt.Sprint(ar["command"]); cmd != "[gemini --session-file "+fork+"]" {
		t.Errorf("agent_resume.command %s", cmd)
	}
	if b, err := os.ReadFile(fork); err != nil || string(b) != string(orig)+mustJSON(map[string]string{"$rewindTo": prompt})+"\n" {
		t.Errorf("the chat copy %s (%v):\n%s", fork, err, b)
	}
	g.model.reset()
	g.run(g.env(), g.bin, append([]string{"--session-file", fork, "-p", "[t9] after the fork"}, geminiFlags...)...)
	for _, r := range g.model.requests() {
		if want := []string{"[t1]", "[t9]"}; !reflect.DeepEqual(r.Markers, want) {
			t.Errorf("the imported chat sent turns %q, want %q", r.Markers, want)
		}
	}
	if len(g.model.requests()) != 2 {
		t.Errorf("%d requests for [t9], want 2", len(g.model.requests()))
	}
	if after, err := os.ReadFile(transcript); err != nil || string(after) != string(orig) {
		t.Errorf("the original chat changed (%v)", err)
	}
	g.wantTree("after the fork's turn", map[string]string{"a.txt": "alpha\n", "b.txt": "two\n", "nine.txt": "nine\n"})

	// The hooks saw a new session: ckpt records it apart.
	var list []struct {
		ID string `json:"id"`
	}
	if err := json.Unmarshal([]byte(g.ckpt("session", "list", "--json")), &list); err != nil {
		t.Fatal(err)
	}
	var forked string
	for _, s := range list {
		if s.ID != sid {
			forked = s.ID
		}
	}
	if len(list) != 2 || forked == "" {
		t.Fatalf("sessions %q, want the original and the fork", list)
	}
	fs := g.session(forked)
	if got, want := fs.prompts(), []string{"[t9] after the fork"}; !reflect.DeepEqual(got, want) || fs.Session.Agent != "gemini" {
		t.Errorf("the fork's turns %q (agent %q), want %q", got, fs.Session.Agent, want)
	}
	if got, want := fs.turnFiles(), [][]string{{"added nine.txt"}}; !reflect.DeepEqual(got, want) {
		t.Errorf("the fork's turn files %q, want %q", got, want)
	}
	// The hooks named the imported chat as the fork's transcript (Gemini
	// CLI also leaves a second, empty chat file for it) and read the
	// turn's tool call and reply from it.
	var msgs []string
	for _, m := range fs.Messages {
		msgs = append(msgs, fmt.Sprintf("%d %s %s %s", m.Turn, m.Role, m.Tool, m.Content))
	}
	if want := []string{"1 user  [t9] after the fork", "1 tool write_file " + abs("nine.txt"), "1 assistant  Done with [t9]."}; !reflect.DeepEqual(msgs, want) {
		t.Errorf("the fork's messages %q, want %q (transcript %s)", msgs, want, fs.Session.Transcript)
	}
	if got, want := g.session(sid).prompts(), []string{"[t1] one"}; !reflect.DeepEqual(got, want) {
		t.Errorf("the original's turns in ckpt, rewound, %q, want %q", got, want)
	}

	// Resumed by its id, the fork goes on from [t9].
	g.model.reset()
	g.prompt(forked, false, "[t10] again")
	for _, r := range g.model.requests() {
		if want := []string{"[t1]", "[t9]", "[t10]"}; !reflect.DeepEqual(r.Markers, want) {
			t.Errorf("the resumed fork sent turns %q, want %q", r.Markers, want)
		}
	}
	if got, want := g.session(forked).prompts(), []string{"[t9] after the fork", "[t10] again"}; !reflect.DeepEqual(got, want) {
		t.Errorf("the fork's turns %q, want %q", got, want)
	}
}

// TestGeminiLongTurn: a turn of many tool calls, each a distinct shell
// command, runs to its end. After 30 model calls in a turn Gemini CLI
// asks the model on the side whether the session is stuck in a loop;
// the scripted answer (no) lets it go on, and ckpt records the turn.
func TestGeminiLongTurn(t *testing.T) {
	const sid = "9b8a7c6d-5e4f-4a3b-8c2d-1e0f9a8b7c6d"
	g := newGemini(t, nil)
	var steps []step
	want := ""
	for i := 1; i <= 40; i++ {
		steps = append(steps, call("run_shell_command", map[string]any{"command": fmt.Sprintf("echo %d >> log.txt", i)}))
		want += fmt.Sprintf("%d\n", i)
	}
	g.model.turns = map[string][]step{"[t1]": steps}
	g.prompt(sid, true, "[t1] count to forty")
	if got := g.read("log.txt"); got != want {
		t.Fatalf("log.txt %q, want %q", got, want)
	}
	if n := len(g.model.requests()); n != 41 {
		t.Errorf("%d requests with tools, want 41", n)
	}
	// The router's question, the loop check's after the 30th model call
	// (with the latest 20 messages: no prompt), the next-speaker check's
	// at the end.
	if got, want := g.sideRequests(), []string{"[t1] json:complexity_reasoning,complexity_score",
		" json:unproductive_state_analysis,unproductive_state_confidence", "[t1] json:reasoning,next_speaker"}; !reflect.DeepEqual(got, want) {
		t.Errorf("side requests\n got %q\nwant %q", got, want)
	}
	s := g.session(sid)
	if got, want := s.turnFiles(), [][]string{{"added log.txt"}}; !reflect.DeepEqual(got, want) {
		t.Errorf("turn files %q, want %q", got, want)
	}
	if n := len(s.Messages); n != 42 {
		t.Errorf("%d messages, want 42 (the prompt, 40 tool calls, the reply)", n)
	}
}

// TestGeminiIgnoredEdits: Gemini CLI's replace and write_file change
// ignored files; its BeforeTool hook keeps them, and a rewind puts them
// back. (Gemini CLI's tools refuse to touch an ignored .env, so the file
// is another.)
func TestGeminiIgnoredEdits(t *testing.T) {
	g := newGemini(t, map[string][]step{})
	abs := func(p string) string { return filepath.Join(g.ws, p) }
	const sid = "5a6b7c8d-9e0f-4a1b-8c2d-3e4f5a6b7c8d"
	g.ignoredEdits(sid, "app.local", g.model.turns, func(first bool, text string) string { g.prompt(sid, first, text); return sid },
		func(p, content string) []step {
			old := strings.TrimSuffix(g.read(p), "\n")
			return []step{call("replace", map[string]any{"file_path": abs(p), "instruction": "Change it.", "old_string": old, "new_string": strings.TrimSuffix(content, "\n")})}
		},
		func(p, content string) []step {
			return []step{call("write_file", map[string]any{"file_path": abs(p), "content": content})}
		})
}
