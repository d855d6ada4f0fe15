//go:build unix

package agents

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/seed1cedbf7c/ckpt/internal/testutil"
)

// codex is Codex (the real CLI, pinned) in a world of its own, talking to
// a scripted Responses API model, with ckpt's hooks installed as `ckpt
// hook codex install` installs them.
type codex struct {
	*world
	bin   string
	model *model
	home  string // CODEX_HOME
	proxy *proxy
}

// proxy is where Codex's HTTP(S)_PROXY points: anything Codex sends
// beyond loopback is refused here, and remembered.
type proxy struct {
	mu    sync.Mutex
	hosts []string
	srv   *httptest.Server
}

func newProxy(t testing.TB) *proxy {
	p := &proxy{}
	p.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p.mu.Lock()
		p.hosts = append(p.hosts, r.Method+" "+r.Host)
		p.mu.Unlock()
		http.Error(w, "offline test: no internet", http.StatusForbidden)
	}))
	t.Cleanup(p.srv.Close)
	return p
}

func (p *proxy) tried() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]string(nil), p.hosts...)
}

// newCodex sets up Codex's config.toml (the scripted model as a custom
// provider; no approvals, no sandbox; nothing that phones home) and then
// installs ckpt's hooks into it. With codexHome set, Codex and ckpt find
// it through $CODEX_HOME; else it is ~/.codex.
func newCodex(t testing.TB, turns map[string][]step, codexHome bool, install ...string) *codex {
	c := codexWorld(t, turns, codexHome)
	c.ckpt(append([]string{"hook", "codex", "install"}, install...)...)
	return c
}

// codexWorld is newCodex without ckpt's hooks.
func codexWorld(t testing.TB, turns map[string][]step, codexHome bool) *codex {
	bin := codexCLI.install(t)
	w := newWorld(t)
	m := responsesModel(t, turns)
	c := &codex{world: w, bin: bin, model: m, home: filepath.Join(w.home, ".codex"), proxy: newProxy(t)}
	if codexHome {
		c.home = filepath.Join(w.home, "codex-home")
		w.env = append(w.env, "CODEX_HOME="+c.home)
	}
	if err := os.MkdirAll(c.home, 0o700); err != nil {
		t.Fatal(err)
	}
	config := `model = "gpt-5.5"
model_provider = "mock"
approval_policy = "never"
sandbox_mode = "danger-full-access"
check_for_update_on_startup = false
web_search = "disabled"

[model_providers.mock]
name = "scripted model"
base_url = "` + m.srv.URL + `/v1"
wire_api = "responses"
env_key = "CKPT_TEST_OPENAI_KEY"
request_max_retries = 0
stream_max_retries = 0

[features]
plugins = false

[analytics]
enabled = false

[otel]
exporter = "none"
`
	if err := os.WriteFile(filepath.Join(c.home, "config.toml"), []byte(config), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if tried := c.proxy.tried(); len(tried) > 0 {
			t.Errorf("codex tried to reach beyond loopback: %q", tried)
		}
	})
	return c
}

// env points Codex at the scripted model (its key) and everything else
// at the refusing proxy.
func (c *codex) env() []string {
	env := []string{"CKPT_TEST_OPENAI_KEY=sk-test-key", "NO_PROXY=127.0.0.1,localhost", "no_proxy=127.0.0.1,localhost"}
	for _, k := range []string{"HTTPS_PROXY", "HTTP_PROXY", "ALL_PROXY", "https_proxy", "http_proxy", "all_proxy"} {
		env = append(env, k+"="+c.proxy.srv.URL)
	}
	return env
}

var codexFlags = []string{"--skip-git-repo-check", "--strict-config"}

// prompt runs one turn with `codex exec` (session "": a new session) or
// `codex exec resume SESSION`, checks that Codex saw each of ckpt's hooks
// complete, and returns the session's id.
func (c *codex) prompt(session, prompt string, extra ...string) string {
	c.t.Helper()
	args := append([]string{"exec"}, codexFlags...)
	if session != "" {
		args = append([]string{"exec", "resume"}, codexFlags...)
		args = append(args, session)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, c.bin, append(args, prompt)...)
	cmd.Dir, cmd.Env = c.ws, append(append(append([]string{}, c.world.env...), c.env()...), extra...)
	cmd.WaitDelay = 5 * time.Second
	code, out, errs := testutil.Run(c.t, cmd)
	if code != 0 {
		c.t.Fatalf("codex %s: exit %d\nstdout:\n%s\nstderr:\n%s\nhook log:\n%s", strings.Join(args, " "), code, out, errs, c.hookLog())
	}
	c.checkHookRuns(errs)
	if b, _ := os.ReadFile(filepath.Join(c.home, "hooks.json")); strings.Contains(string(b), "hook codex") {
		for _, ev := range []string{"UserPromptSubmit", "Stop"} {
			if !strings.Contains(errs, "hook: "+ev+" Completed") {
				c.t.Errorf("codex did not run ckpt's %s hook:\n%s", ev, errs)
			}
		}
	}
	return sessionID(c.t, errs, session)
}

// checkHookRuns checks what codex exec says of each hook it ran ("hook:
// Stop", then "hook: Stop Completed"; a hook that printed what Codex
// cannot read, or exited non-zero, is "Failed").
func (c *codex) checkHookRuns(stderr string) {
	c.t.Helper()
	started := map[string]int{}
	for _, l := range strings.Split(stderr, "\n") {
		f := strings.Fields(strings.TrimPrefix(l, "hook: "))
		switch {
		case !strings.HasPrefix(l, "hook: ") || len(f) == 0:
		case len(f) == 1:
			started[f[0]]++
		case f[1] == "Completed":
			started[f[0]]--
		default:
			c.t.Errorf("codex says of ckpt's hook: %q\n%s", l, stderr)
		}
	}
	for ev, n := range started {
		if n != 0 {
			c.t.Errorf("codex started %s hook(s) it did not see complete:\n%s", ev, stderr)
		}
	}
}

// sessionID reads the session's id from what codex exec prints on
// stderr ("session id: …").
func sessionID(t testing.TB, stderr, want string) string {
	t.Helper()
	id, ok := sessionIDOf(stderr)
	if !ok {
		t.Fatalf("no session id in codex's output:\n%s", stderr)
	}
	if want != "" && id != want {
		t.Fatalf("codex resumed session %s, want %s", id, want)
	}
	return id
}

func sessionIDOf(stderr string) (string, bool) {
	for _, l := range strings.Split(stderr, "\n") {
		if id, ok := strings.CutPrefix(l, "session id: "); ok {
			return strings.TrimSpace(id), true
		}
	}
	return "", false
}

// hookLines returns the hook log's lines for one event.
func (w *world) hookLines(event string) []string {
	var out []string
	for _, l := range strings.Split(w.hookLog(), "\n") {
		if f := strings.Fields(l); len(f) > 2 && f[2] == event {
			out = append(out, l)
		}
	}
	return out
}

// wantHookSays checks that the hook log's lines for event say, in order,
// each of want (one line each).
func (w *world) wantHookSays(event string, want ...string) {
	w.t.Helper()
	got := w.hookLines(event)
	if len(got) != len(want) {
		w.t.Fatalf("%d %s hook call(s) logged, want %d:\n%s", len(got), event, len(want), w.hookLog())
	}
	for i, s := range want {
		if !strings.Contains(got[i], s) {
			w.t.Errorf("%s hook call %d: %q does not say %q", event, i+1, got[i], s)
		}
	}
}

// TestCodex drives a three-turn Codex session (codex exec, then codex
// exec resume) whose tools — apply_patch adding, updating and deleting
// files, exec_command changing the workspace every way a shell can —
// change the workspace, with the user editing between turns, and checks
// what ckpt's native hooks recorded and what each kind of rewind, undo
// and fork does.
func TestCodex(t *testing.T) {
	c := newCodex(t, map[string][]step{
		"[t1]": {
			patch("*** Add File: a.txt", "+alpha", "*** Add File: run.sh", "+#!/bin/sh", "+echo run"),
			shell("chmod +x run.sh && mkdir -p lib/deep build && printf 'bin\\000ary' > lib/deep/blob.bin && ln -s a.txt link && echo obj > build/out.o"),
		},
		"[t2]": {
			patch("*** Update File: src.txt", "@@", " one", "-two", "+TWO", " three"),
			shell("sed -i 's/alpha/ALPHA/' a.txt && rm lib/deep/blob.bin && echo obj2 > build/out.o"),
		},
		"[t3]": {
			patch("*** Delete File: old.txt"),
			shell("rm link && mkdir -p new/dir && echo three > new/dir/c.txt && chmod -x run.sh"),
		},
	}, false)
	start := map[string]string{".gitignore": "build/\n", "src.txt": "one\ntwo\nthree\n", "keep.txt": "keep\n", "old.txt": "old\n"}
	c.write(start)

	sid := c.prompt("", "[t1] set up the project")
	afterT1 := with(start, map[string]string{"a.txt": "alpha\n", "run.sh": "#!/bin/sh\necho run\n (x)",
		"lib/deep/blob.bin": "bin\x00ary", "link": "-> a.txt", "build/out.o": "obj\n"})
	c.wantTree("after turn 1", afterT1)
	// The hooks ran (Codex trusts them as installed): the turn began on
	// the prompt and ended, with the files, before codex exited.
	c.wantHookSays("UserPromptSubmit", "began turn 1")
	c.wantHookSays("Stop", "ended turn 1 at ")

	if got := c.prompt(sid, "[t2] edit things"); got != sid {
		t.Fatalf("resumed session %s, want %s", got, sid)
	}
	afterT2 := with(afterT1, map[string]string{"src.txt": "one\nTWO\nthree\n", "a.txt": "ALPHA\n", "lib/deep/blob.bin": "", "build/out.o": "obj2\n"})
	c.wantTree("after turn 2", afterT2)

	// The user's own work between turns 2 and 3, right after codex exits:
	// turn 2 ended before that, and turn 3 has not begun.
	c.write(map[string]string{"notes.txt": "mine\n", "keep.txt": "keep, edited\n"})
	userT2 := with(afterT2, map[string]string{"notes.txt": "mine\n", "keep.txt": "keep, edited\n"})

	c.prompt(sid, "[t3] finish")
	afterT3 := with(userT2, map[string]string{"old.txt": "", "link": "", "new/dir/c.txt": "three\n", "run.sh": "#!/bin/sh\necho run\n"})
	c.wantTree("after turn 3", afterT3)
	c.wantHookSays("SessionStart", "opened session", "resumed session (1 turns)", "resumed session (2 turns)")
	c.wantHookSays("UserPromptSubmit", "began turn 1", "began turn 2", "began turn 3")
	c.wantHookSays("Stop", "ended turn 1", "ended turn 2", "ended turn 3")
	c.wantHookSays("SessionEnd", "closed session", "closed session", "closed session")

	// What Codex sent the model: each turn's requests carry the
	// conversation so far, one prompt per turn.
	var markers [][]string
	for _, r := range c.model.requests() {
		markers = append(markers, r.Markers)
	}
	t1, t12, t123 := []string{"[t1]"}, []string{"[t1]", "[t2]"}, []string{"[t1]", "[t2]", "[t3]"}
	if want := [][]string{t1, t1, t1, t12, t12, t12, t123, t123, t123}; !reflect.DeepEqual(markers, want) {
		t.Errorf("the model saw\n %q\nwant %q", markers, want)
	}

	s := c.wantSession(sid, "codex", threeTurnPrompts, threeTurnFiles("deleted old.txt"))
	if dir := filepath.Join(c.home, "sessions") + string(filepath.Separator); !strings.HasPrefix(s.Session.Transcript, dir) || !strings.HasSuffix(s.Session.Transcript, sid+".jsonl") {
		t.Errorf("transcript %q, want Codex's rollout file under %s", s.Session.Transcript, dir)
	}
	var msgs []string
	for _, m := range s.Messages {
		msgs = append(msgs, m.Role+": "+m.Content)
	}
	if want := []string{"user: [t1] set up the project", "assistant: Done with [t1].", "user: [t2] edit things",
		"assistant: Done with [t2].", "user: [t3] finish", "assistant: Done with [t3]."}; !reflect.DeepEqual(msgs, want) {
		t.Errorf("messages\n %q\nwant %q", msgs, want)
	}

	// Rewind turn 2 on: the agent's changes of turns 2 and 3 undone, the
	// user's edits between them kept; ignored build output untouched.
	// --exact: the whole tree as turn 2 began, the user's edits too.
	c.rewindThenUndo(with(afterT1, map[string]string{"notes.txt": "mine\n", "keep.txt": "keep, edited\n", "build/out.o": "obj2\n"}), afterT3, "2", "--session", sid)
	c.rewindThenUndo(with(afterT1, map[string]string{"build/out.o": "obj2\n"}), afterT3, "2", "--exact", "--session", sid)

	// The conversation: ckpt's copy loses turns 2 and 3 (the files stay).
	// Codex's own conversation is never changed: a dry run says Codex
	// would fork it, and here ckpt cannot (no `codex` on its PATH), so it
	// forks nothing; the session, resumed, still has every turn.
	// TestCodexForkBeforeTurn has the fork.
	var rw struct {
		Turn        int             `json:"turn"`
		Prompt      string          `json:"prompt"`
		Turns       int             `json:"turns"`
		AgentResume json.RawMessage `json:"agent_resume"`
	}
	_, _, errs := c.ckptCode("rewind", "2", "--conversation", "--dry-run", "--session", sid)
	if !strings.Contains(errs, "Codex's own conversation is unchanged; the rewind would have Codex fork it before turn 2") {
		t.Errorf("rewind --conversation --dry-run does not say Codex would fork its conversation:\n%s", errs)
	}
	if err := json.Unmarshal([]byte(c.ckpt("rewind", "2", "--conversation", "--json", "--session", sid)), &rw); err != nil {
		t.Fatal(err)
	}
	c.wantTree("rewind 2 --conversation", afterT3)
	if rw.Prompt != "[t2] edit things" || rw.Turns != 2 || rw.AgentResume != nil {
		t.Errorf("rewind --conversation: prompt %q, %d turn(s) removed, agent_resume %s", rw.Prompt, rw.Turns, rw.AgentResume)
	}
	if got := c.session(sid).prompts(); !reflect.DeepEqual(got, []string{"[t1] set up the project"}) {
		t.Errorf("after rewind --conversation, ckpt's turns %q", got)
	}

	c.model.turns["[t4]"] = nil
	c.model.reset()
	c.prompt(sid, "[t4] still there?")
	for _, r := range c.model.requests() {
		if want := []string{"[t1]", "[t2]", "[t3]", "[t4]"}; !reflect.DeepEqual(r.Markers, want) {
			t.Errorf("the resumed session sent turns %q, want %q", r.Markers, want)
		}
	}
	if got := c.session(sid).prompts(); !reflect.DeepEqual(got, []string{"[t1] set up the project", "[t4] still there?"}) {
		t.Errorf("ckpt's turns after the next prompt: %q", got)
	}

	// The session is now [t1], [t4]. A fork from turn 2: a new session
	// with turn 1's conversation, the workspace as [t4] began (turn 3's
	// end); then a fork from turn 1: no conversation, the workspace as the
	// session began. The original session stays as it was.
	c.wantForks(sid, afterT3, with(start, map[string]string{"build/out.o": "obj2\n"}), []string{"[t1] set up the project", "[t4] still there?"})
	c.logHookTimes("Codex")
}

// TestCodexStoreTrouble: a store another ckpt holds locked, and one that
// is corrupt, never fail Codex's turn: codex exits 0, its tools' changes
// are on disk, and the hook log says what ckpt skipped and why. (Codex
// finds its settings through $CODEX_HOME here, as ckpt's install does.)
func TestCodexStoreTrouble(t *testing.T) {
	c := newCodex(t, map[string][]step{
		"[t1]": {patch("*** Add File: a.txt", "+a")},
		"[t2]": {shell("echo b > b.txt")},
		"[t3]": {patch("*** Add File: c.txt", "+c")},
	}, true)
	if _, err := os.Stat(filepath.Join(c.home, "hooks.json")); err != nil {
		t.Fatalf("ckpt did not install into $CODEX_HOME: %v", err)
	}
	sid := c.prompt("", "[t1] a")
	store := c.storeDir()

	// Locked: another process holds the store for the whole turn.
	unlock := c.lockStore(store)
	c.prompt(sid, "[t2] b")
	unlock()
	if c.read("b.txt") != "b\n" {
		t.Fatalf("b.txt %q", c.read("b.txt"))
	}
	// The turn's beginning waited for the lock, then gave up; its end
	// found no turn to end.
	c.wantHookSays("UserPromptSubmit", "began turn 1", "store is locked by another process")
	c.wantHookSays("Stop", "ended turn 1", "no turn in progress (its start was not recorded)")
	if got := c.session(sid).prompts(); !reflect.DeepEqual(got, []string{"[t1] a"}) {
		t.Errorf("turns after the locked one: %q", got)
	}

	// Corrupt: the store's database overwritten with garbage.
	c.corruptStore(store)
	before := c.hookLog()
	c.prompt(sid, "[t3] c")
	if c.read("c.txt") != "c\n" {
		t.Fatalf("c.txt %q", c.read("c.txt"))
	}
	after := strings.TrimPrefix(c.hookLog(), before)
	for _, ev := range []string{"UserPromptSubmit", "Stop"} {
		ok := false
		for _, l := range strings.Split(after, "\n") {
			if f := strings.Fields(l); len(f) > 2 && f[2] == ev && strings.Contains(l, "ckpt.db") {
				ok = true
			}
		}
		if !ok {
			t.Errorf("the hook log does not name the corrupt store at %s:\n%s", ev, after)
		}
	}
}

// TestCodexRewindBoth: code and conversation at once. The files go back
// and ckpt's record loses turn 2; undo brings the files back and leaves
// ckpt's record rewound. Codex's own conversation is not forked here (ckpt
// has no codex on its PATH; TestCodexForkBeforeTurn forks it).
func TestCodexRewindBoth(t *testing.T) {
	c := newCodex(t, map[string][]step{
		"[t1]": {patch("*** Add File: one.txt", "+1")},
		"[t2]": {shell("echo 2 > two.txt && rm one.txt")},
	}, false)
	sid := c.prompt("", "[t1] one")
	c.prompt(sid, "[t2] two")
	c.wantTree("after turn 2", map[string]string{"two.txt": "2\n"})
	var rw struct {
		Prompt      string          `json:"prompt"`
		Turns       int             `json:"turns"`
		AgentResume json.RawMessage `json:"agent_resume"`
	}
	if err := json.Unmarshal([]byte(c.ckpt("rewind", "2", "--both", "--json")), &rw); err != nil {
		t.Fatal(err)
	}
	c.wantTree("rewind 2 --both", map[string]string{"one.txt": "1\n"})
	if rw.Prompt != "[t2] two" || rw.Turns != 1 || rw.AgentResume != nil {
		t.Errorf("rewind --both: prompt %q, %d turn(s) removed, agent_resume %s", rw.Prompt, rw.Turns, rw.AgentResume)
	}
	if got := c.session(sid).prompts(); !reflect.DeepEqual(got, []string{"[t1] one"}) {
		t.Errorf("ckpt's turns after rewind --both: %q", got)
	}
	c.ckpt("undo")
	c.wantTree("undo of rewind --both", map[string]string{"two.txt": "2\n"})
	if got := c.session(sid).prompts(); !reflect.DeepEqual(got, []string{"[t1] one"}) {
		t.Errorf("ckpt's turns after undo: %q", got)
	}
}

// waitHook waits until the hook log has n lines for event: Codex runs its
// legacy notify program without waiting for it.
func (w *world) waitHook(event string, n int) {
	w.t.Helper()
	deadline := time.Now().Add(time.Minute)
	for len(w.hookLines(event)) < n {
		if time.Now().After(deadline) {
			w.t.Fatalf("no %d %s hook call(s) logged in a minute:\n%s", n, event, w.hookLog())
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestCodexNotify: ckpt's legacy notify program (`ckpt hook codex install
// --notify`, for a Codex without hooks) records each turn when it is
// over, with only that turn's prompt, though Codex passes every prompt of
// the conversation so far; turn 2 rewinds.
func TestCodexNotify(t *testing.T) {
	c := newCodex(t, map[string][]step{
		"[t1]": {patch("*** Add File: a.txt", "+a")},
		"[t2]": {shell("echo b > b.txt && rm a.txt")},
	}, false, "--notify")
	if _, err := os.Stat(filepath.Join(c.home, "hooks.json")); err == nil {
		t.Error("install --notify left hooks.json")
	}
	sid := c.prompt("", "[t1] add a")
	c.waitHook("agent-turn-complete", 1)
	c.prompt(sid, "[t2] add b, remove a")
	c.waitHook("agent-turn-complete", 2)
	s := c.session(sid)
	if got, want := s.prompts(), []string{"[t1] add a", "[t2] add b, remove a"}; !reflect.DeepEqual(got, want) {
		t.Fatalf("prompts %q, want %q", got, want)
	}
	// A turn is known only when it is over: it begins at the last
	// checkpoint, and the first has none before it, so lists no files.
	if got, want := s.turnFiles(), [][]string{nil, {"deleted a.txt", "added b.txt"}}; !reflect.DeepEqual(got, want) {
		t.Errorf("turn files %q, want %q", got, want)
	}
	for _, ev := range []string{"SessionStart", "UserPromptSubmit", "Stop", "SessionEnd"} {
		if ls := c.hookLines(ev); len(ls) > 0 {
			t.Errorf("%s hooks ran besides the notify program: %q", ev, ls)
		}
	}
	c.ckpt("rewind", "2")
	c.wantTree("rewind 2", map[string]string{"a.txt": "a\n"})
}

// codexTurnIDs returns the ids of a Codex session's turns, in order, from
// its rollout file (the task_started events).
func codexTurnIDs(t *testing.T, rollout string) []string {
	t.Helper()
	b, err := os.ReadFile(rollout)
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, l := range strings.Split(string(b), "\n") {
		var e struct {
			Type    string `json:"type"`
			Payload struct {
				Type            string `json:"type"`
				TurnAttribution struct {
					TurnID string `json:"turn_id"`
				} `json:"turn_attribution"`
			} `json:"payload"`
		}
		if json.Unmarshal([]byte(l), &e) == nil && e.Type == "event_msg" && e.Payload.Type == "task_started" {
			ids = append(ids, e.Payload.TurnAttribution.TurnID)
		}
	}
	return ids
}

// appServer sends one JSON-RPC request to `codex app-server` (after the
// initialize handshake) and returns the result.
func (c *codex) appServer(method string, params any) json.RawMessage {
	c.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, c.bin, "app-server")
	cmd.Dir, cmd.Env = c.ws, append(append([]string{}, c.world.env...), c.env()...)
	cmd.WaitDelay = 5 * time.Second
	in, err := cmd.StdinPipe()
	if err != nil {
		c.t.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		c.t.Fatal(err)
	}
	var errs strings.Builder
	cmd.Stderr = &errs
	if err := cmd.Start(); err != nil {
		c.t.Fatal(err)
	}
	defer cmd.Wait()
	defer in.Close()
	fmt.Fprintf(in, "%s\n", mustJSON(map[string]any{"id": 1, "method": "initialize", "params": map[string]any{
		"clientInfo": map[string]any{"name": "ckpt-test", "version": "0"}, "capabilities": map[string]any{"experimentalApi": true}}}))
	fmt.Fprintf(in, "%s\n", mustJSON(map[string]any{"method": "initialized"}))
	fmt.Fprintf(in, "%s\n", mustJSON(map[string]any{"id": 2, "method": method, "params": params}))
	sc := bufio.NewScanner(out)
	sc.Buffer(nil, 1<<26)
	for sc.Scan() {
		var m struct {
			ID     *int            `json:"id"`
			Result json.RawMessage `json:"result"`
			Error  json.RawMessage `json:"error"`
		}
		if json.Unmarshal(sc.Bytes(), &m) != nil || m.ID == nil || *m.ID != 2 {
			continue
		}
		if m.Error != nil {
			c.t.Fatalf("codex app-server %s: %s", method, m.Error)
		}
		return m.Result
	}
	c.t.Fatalf("codex app-server gave no answer to %s: %v\n%s", method, sc.Err(), errs.String())
	return nil
}

// codexOnPath lets ckpt run this Codex: a conversation rewind has
// Codex's app server fork the conversation, and ckpt finds `codex` on
// PATH — with the refusing proxy, so it reaches nothing beyond loopback.
func (c *codex) codexOnPath() {
	for i, kv := range c.world.env {
		if p, ok := strings.CutPrefix(kv, "PATH="); ok {
			c.world.env[i] = "PATH=" + filepath.Dir(c.bin) + string(os.PathListSeparator) + p
		}
	}
	c.world.env = append(c.world.env, c.env()...)
}

// codexResumeJSON is a conversation rewind's agent_resume for Codex.
type codexResumeJSON struct {
	Agent   string   `json:"agent"`
	Command []string `json:"command"`
	At      string   `json:"at"`
	File    string   `json:"file"`
	Written bool     `json:"written"`
}

// rewindCodex runs `ckpt rewind ARGS --json` and returns its agent_resume.
func (c *codex) rewindCodex(args ...string) *codexResumeJSON {
	c.t.Helper()
	var rw struct {
		AgentResume *codexResumeJSON `json:"agent_resume"`
	}
	if err := json.Unmarshal([]byte(c.ckpt(append([]string{"rewind", "--json"}, args...)...)), &rw); err != nil {
		c.t.Fatal(err)
	}
	return rw.AgentResume
}

// rollouts counts the rollout files under $CODEX_HOME/sessions.
func (c *codex) rollouts() int {
	c.t.Helper()
	n := 0
	err := filepath.WalkDir(filepath.Join(c.home, "sessions"), func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.HasSuffix(p, ".jsonl") {
			n++
		}
		return err
	})
	if err != nil {
		c.t.Fatal(err)
	}
	return n
}

// TestCodexForkBeforeTurn: a conversation rewind to turn 2 has Codex's
// app server fork the conversation before turn 2 (thread/fork with
// beforeTurnId, the turn's id from the rollout file) and prints `codex
// resume FORK`; resumed, the fork sends turn 1 and nothing after. The
// original rollout stays byte for byte, and ckpt's hooks record the fork
// as a session of its own. A rewind of the fork's own first turn forks
// again (the fork's history, inherited from the original, comes before
// it), and a rewind of the original's turn 1 starts a new conversation.
func TestCodexForkBeforeTurn(t *testing.T) {
	c := newCodex(t, map[string][]step{
		"[t1]":  {patch("*** Add File: one.txt", "+1")},
		"[t2]":  {patch("*** Add File: two.txt", "+2")},
		"[t3]":  {patch("*** Add File: three.txt", "+3")},
		"[t9]":  {patch("*** Add File: nine.txt", "+9")},
		"[t10]": nil,
	}, false)
	c.codexOnPath()
	sid := c.prompt("", "[t1] one")
	c.prompt(sid, "[t2] two")
	c.prompt(sid, "[t3] three")
	rollout := c.session(sid).Session.Transcript
	before, err := os.ReadFile(rollout)
	if err != nil {
		t.Fatal(err)
	}
	ids := codexTurnIDs(t, rollout)
	if len(ids) != 3 {
		t.Fatalf("turn ids in the rollout: %q", ids)
	}

	// A dry run says what it would do, and Codex writes nothing.
	if _, _, errs := c.ckptCode("rewind", "2", "--conversation", "--dry-run", "--session", sid); !strings.Contains(errs, "Codex's own conversation is unchanged; the rewind would have Codex fork it before turn 2") {
		t.Errorf("rewind 2 --conversation --dry-run:\n%s", errs)
	}
	if ar := c.rewindCodex("2", "--conversation", "--dry-run", "--session", sid); ar == nil || ar.At != ids[1] || ar.Written || ar.File != "" || ar.Command != nil {
		t.Errorf("rewind 2 --conversation --dry-run: agent_resume %+v", ar)
	}
	if n := c.rollouts(); n != 1 {
		t.Errorf("%d rollout files after the dry runs, want 1", n)
	}

	_, _, errs := c.ckptCode("rewind", "2", "--conversation", "--session", sid)
	if got := c.session(sid).prompts(); !reflect.DeepEqual(got, []string{"[t1] one"}) {
		t.Fatalf("ckpt's turns after rewind 2 --conversation: %q", got)
	}
	var fork string
	for _, l := range strings.Split(errs, "\n") {
		if f := strings.Fields(l); len(f) == 3 && f[0] == "codex" && f[1] == "resume" {
			fork = f[2]
		}
	}
	if fork == "" || !strings.Contains(errs, "Codex's own conversation is unchanged; Codex forked it before turn 2 (") {
		t.Fatalf("rewind 2 --conversation does not print `codex resume FORK`:\n%s", errs)
	}
	if n := c.rollouts(); n != 2 {
		t.Errorf("%d rollout files after the fork, want 2", n)
	}
	var turns struct {
		Data []struct {
			ID string `json:"id"`
		} `json:"data"`
	}
	if err := json.Unmarshal(c.appServer("thread/turns/list", map[string]any{"threadId": fork}), &turns); err != nil {
		t.Fatal(err)
	}
	if len(turns.Data) != 1 || turns.Data[0].ID != ids[0] {
		t.Errorf("the fork's turns, as Codex lists them: %+v, want %s only", turns.Data, ids[0])
	}

	// `codex resume FORK`, run as `codex exec resume FORK PROMPT`.
	c.model.reset()
	if got := c.prompt(fork, "[t9] after the fork"); got != fork {
		t.Fatalf("resumed %s, want the fork %s", got, fork)
	}
	for _, r := range c.model.requests() {
		if want := []string{"[t1]", "[t9]"}; !reflect.DeepEqual(r.Markers, want) {
			t.Errorf("the fork sent turns %q, want %q", r.Markers, want)
		}
	}
	if len(c.model.requests()) != 2 {
		t.Errorf("%d requests for [t9], want 2", len(c.model.requests()))
	}
	if after, err := os.ReadFile(rollout); err != nil || string(after) != string(before) {
		t.Errorf("the original rollout changed (%v)", err)
	}
	fs := c.session(fork)
	if got := fs.prompts(); !reflect.DeepEqual(got, []string{"[t9] after the fork"}) {
		t.Errorf("ckpt's record of the fork: %q", got)
	}
	if fs.Session.Agent != "codex" || !strings.HasSuffix(fs.Session.Transcript, fork+".jsonl") {
		t.Errorf("the fork's session: agent %q, transcript %q", fs.Session.Agent, fs.Session.Transcript)
	}
	c.wantTree("after the fork's turn", map[string]string{"one.txt": "1\n", "two.txt": "2\n", "three.txt": "3\n", "nine.txt": "9\n"})

	// The fork's first turn: its rollout holds only its own turns, and
	// [t1] (the original's) comes before [t9]: a fork again.
	forkRollout := fs.Session.Transcript
	forkBefore, err := os.ReadFile(forkRollout)
	if err != nil {
		t.Fatal(err)
	}
	ar2 := c.rewindCodex("1", "--conversation", "--session", fork)
	if ar2 == nil || len(ar2.Command) != 3 || ar2.Command[0] != "codex" || ar2.Command[1] != "resume" || !ar2.Written || ar2.File == "" {
		t.Fatalf("rewind 1 --conversation of the fork: agent_resume %+v", ar2)
	}
	c.model.reset()
	c.prompt(ar2.Command[2], "[t10] again")
	for _, r := range c.model.requests() {
		if want := []string{"[t1]", "[t10]"}; !reflect.DeepEqual(r.Markers, want) {
			t.Errorf("the fork of the fork sent turns %q, want %q", r.Markers, want)
		}
	}
	if after, err := os.ReadFile(forkRollout); err != nil || string(after) != string(forkBefore) {
		t.Errorf("the fork's rollout changed (%v)", err)
	}

	// The original's first turn: a new conversation, nothing forked.
	n := c.rollouts()
	if ar := c.rewindCodex("1", "--conversation", "--session", sid); ar == nil || !reflect.DeepEqual(ar.Command, []string{"codex"}) || ar.At != "" || ar.Written {
		t.Errorf("rewind 1 --conversation: agent_resume %+v", ar)
	}
	if c.rollouts() != n {
		t.Errorf("rewind 1 --conversation wrote a rollout")
	}
	if after, err := os.ReadFile(rollout); err != nil || string(after) != string(before) {
		t.Errorf("the original rollout changed (%v)", err)
	}
}

// TestCodexHookLatency: twenty turns of one Codex session, each changing
// two files (one edited by apply_patch, one written by exec_command),
// each recorded as exactly that; it logs each hook event's median and
// 95th percentile as the hook log timed them.
func TestCodexHookLatency(t *testing.T) {
	const n = 20
	turns := map[string][]step{}
	for i := 1; i <= n; i++ {
		turns[fmt.Sprintf("[t%d]", i)] = []step{
			patch("*** Update File: log.txt", "@@", fmt.Sprintf("-%d", i-1), fmt.Sprintf("+%d", i)),
			shell(fmt.Sprintf("echo %d > f%02d.txt", i, i)),
		}
	}
	c := newCodex(t, turns, false)
	c.write(map[string]string{"log.txt": "0\n"})
	sid := ""
	for i := 1; i <= n; i++ {
		sid = c.prompt(sid, fmt.Sprintf("[t%d] turn %d", i, i))
	}
	s := c.session(sid)
	files := s.turnFiles()
	if len(files) != n {
		t.Fatalf("%d turns recorded, want %d", len(files), n)
	}
	for i, fs := range files {
		want := []string{fmt.Sprintf("added f%02d.txt", i+1), "modified log.txt"}
		if !reflect.DeepEqual(fs, want) {
			t.Errorf("turn %d: files %q, want %q", i+1, fs, want)
		}
	}
	if got := c.read("log.txt"); got != fmt.Sprintf("%d\n", n) {
		t.Errorf("log.txt %q", got)
	}
	c.logHookTimes("Codex")
}

// TestCodexInterrupted: Ctrl-C in the middle of a turn. Codex runs no
// Stop hook then, only SessionEnd, which ends the turn there: what the
// user changes by hand before the next prompt is not the turn's, and
// rewinding the turn keeps it.
func TestCodexInterrupted(t *testing.T) {
	c := newCodex(t, nil, false)
	started := make(chan int, 1)
	c.model.turns = map[string][]step{
		"[t1]": {
			patch("*** Add File: a.txt", "+a"),
			// Codex asks for the next step: the user interrupts it.
			{text: "interrupted before this", do: func() {
				pid := <-started
				if err := syscall.Kill(-pid, syscall.SIGINT); err != nil {
					t.Error(err)
				}
			}},
		},
		"[t2]": {patch("*** Add File: c.txt", "+c")},
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, c.bin, append(append([]string{"exec"}, codexFlags...), "[t1] one")...)
	cmd.Dir, cmd.Env = c.ws, append(append([]string{}, c.world.env...), c.env()...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	var errs strings.Builder
	cmd.Stderr = &errs
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	started <- cmd.Process.Pid
	err := cmd.Wait()
	t.Logf("codex, interrupted: %v", err)
	if ctx.Err() != nil {
		t.Fatalf("codex did not stop on SIGINT:\n%s", c.hookLog())
	}
	sid := sessionID(t, errs.String(), "")
	c.wantTree("after the interrupted turn", map[string]string{"a.txt": "a\n"})
	if n := len(c.hookLines("Stop")); n != 0 {
		t.Errorf("%d Stop hook call(s) on an interrupted turn", n)
	}
	c.wantHookSays("SessionEnd", "ended turn 1 (session end)")

	c.write(map[string]string{"b.txt": "by hand\n"})
	c.prompt(sid, "[t2] two")
	s := c.session(sid)
	if got, want := s.prompts(), []string{"[t1] one", "[t2] two"}; !reflect.DeepEqual(got, want) {
		t.Fatalf("prompts %q, want %q", got, want)
	}
	if got, want := s.turnFiles(), [][]string{{"added a.txt"}, {"added c.txt"}}; !reflect.DeepEqual(got, want) {
		t.Errorf("turn files %q, want %q", got, want)
	}
	code, _, rerrs := c.ckptCode("rewind", "1", "--session", sid)
	if code != 0 || strings.Contains(rerrs, "had not ended") {
		t.Errorf("rewind 1: exit %d\n%s", code, rerrs)
	}
	c.wantTree("rewind 1", map[string]string{"b.txt": "by hand\n"})
}

// codexTrustHash is the trusted_hash Codex 0.169 wants for a command hook
// declared with only type and command (for the user's own hooks in
// TestCodexUserHooks; ckpt computes its own).
func codexTrustHash(label, command string) string {
	id := map[string]any{"event_name": label, "hooks": []any{
		map[string]any{"type": "command", "command": command, "timeout": 600, "async": false}}}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.Encode(id)
	sum := sha256.Sum256(bytes.TrimSuffix(b.Bytes(), []byte("\n")))
	return "sha256:" + hex.EncodeToString(sum[:])
}

// TestCodexUserHooks: a user who has hooks of their own, trusted, installs
// ckpt's, installs again, then uninstalls. Codex runs the user's hooks
// all along (ckpt's entries never move theirs, whose trust is by
// position), runs ckpt's while they are installed, and after uninstall
// the user's hooks.json and config.toml are byte for byte as before.
func TestCodexUserHooks(t *testing.T) {
	c := codexWorld(t, map[string][]step{"[t1]": nil, "[t2]": {shell("echo 2 > two.txt")}, "[t3]": nil}, false)
	prompt, stop := `echo prompt >> "$HOME/user-hooks.log"`, `echo stop >> "$HOME/user-hooks.log"`
	hooksJSON := `{
  "hooks": {
    "UserPromptSubmit": [
      { "hooks": [ { "type": "command", "command": ` + mustJSON(prompt) + ` } ] }
    ],
    "Stop": [
      { "hooks": [ { "type": "command", "command": ` + mustJSON(stop) + ` } ] }
    ]
  }
}
`
	hooksFile, configFile := filepath.Join(c.home, "hooks.json"), filepath.Join(c.home, "config.toml")
	testutil.WriteFile(t, hooksFile, hooksJSON)
	config := testutil.ReadFile(t, c.home, "config.toml") + "\n# my hooks\n" +
		"[hooks.state." + mustJSON(hooksFile+":user_prompt_submit:0:0") + "]\ntrusted_hash = " + mustJSON(codexTrustHash("user_prompt_submit", prompt)) + "\n\n" +
		"[hooks.state." + mustJSON(hooksFile+":stop:0:0") + "]\ntrusted_hash = " + mustJSON(codexTrustHash("stop", stop)) + "\n"
	testutil.WriteFile(t, configFile, config)
	userLog := func() string {
		b, _ := os.ReadFile(filepath.Join(c.home, "..", "user-hooks.log"))
		return string(b)
	}

	// The user's hooks alone.
	sid := c.prompt("", "[t1] one")
	if got := userLog(); got != "prompt\nstop\n" {
		t.Fatalf("the user's hooks logged %q before ckpt's were installed", got)
	}

	// Installed (twice: the second changes nothing): both run.
	c.ckpt("hook", "codex", "install")
	installedHooks, installedConfig := testutil.ReadFile(t, c.home, "hooks.json"), testutil.ReadFile(t, c.home, "config.toml")
	if !strings.HasPrefix(installedConfig, config) {
		t.Errorf("install changed config.toml's existing lines:\n%s", installedConfig)
	}
	c.ckpt("hook", "codex", "install")
	if testutil.ReadFile(t, c.home, "hooks.json") != installedHooks || testutil.ReadFile(t, c.home, "config.toml") != installedConfig {
		t.Error("installing again changed Codex's settings")
	}
	c.prompt(sid, "[t2] two")
	if got := userLog(); got != strings.Repeat("prompt\nstop\n", 2) {
		t.Errorf("the user's hooks logged %q with ckpt's installed", got)
	}
	if got := c.session(sid).turnFiles(); !reflect.DeepEqual(got, [][]string{{"added two.txt"}}) {
		t.Errorf("ckpt recorded turns %q", got)
	}

	// Uninstalled: the user's settings as they were; their hooks run,
	// ckpt's do not.
	c.ckpt("hook", "codex", "uninstall")
	if got := testutil.ReadFile(t, c.home, "hooks.json"); got != hooksJSON {
		t.Errorf("hooks.json after uninstall:\n%s\nwant\n%s", got, hooksJSON)
	}
	if got := testutil.ReadFile(t, c.home, "config.toml"); got != config {
		t.Errorf("config.toml after uninstall:\n%s\nwant\n%s", got, config)
	}
	before := c.hookLog()
	c.prompt(sid, "[t3] three")
	if got := userLog(); got != strings.Repeat("prompt\nstop\n", 3) {
		t.Errorf("the user's hooks logged %q after ckpt's were uninstalled", got)
	}
	if after := c.hookLog(); after != before {
		t.Errorf("ckpt's hooks ran after uninstall:\n%s", strings.TrimPrefix(after, before))
	}
}

// TestCodexSideBySide: two Codex sessions in one workspace at the same
// time (one CODEX_HOME). B's turn begins while A's runs; A writes a.txt,
// then B writes b.txt and ends; then A ends. Each turn's span holds both
// files, and a rewind of either session never undoes the other's work.
func TestCodexSideBySide(t *testing.T) {
	c := newCodex(t, nil, false)
	c.write(map[string]string{"keep.txt": "k\n"})
	type result struct {
		sid string
		err error
	}
	// bDone has B's result when B exits; bResult has it for the test,
	// once A's turn has waited for B.
	bStarted, aWrote := make(chan struct{}), make(chan struct{})
	bDone, bResult := make(chan result, 1), make(chan result, 1)
	runB := func() {
		cmd := exec.Command(c.bin, append(append([]string{"exec"}, codexFlags...), "[t2] change b")...)
		cmd.Dir, cmd.Env = c.ws, append(append([]string{}, c.world.env...), c.env()...)
		var out, errs strings.Builder
		cmd.Stdout, cmd.Stderr = &out, &errs
		if err := cmd.Run(); err != nil {
			bDone <- result{err: fmt.Errorf("codex (session B): %v\n%s%s", err, out.String(), errs.String())}
			return
		}
		sid, ok := sessionIDOf(errs.String())
		if !ok {
			bDone <- result{err: fmt.Errorf("codex (session B): no session id:\n%s", errs.String())}
			return
		}
		bDone <- result{sid: sid}
	}
	c.model.turns = map[string][]step{
		"[t1]": {
			{tool: "apply_patch", input: map[string]any{"input": "*** Begin Patch\n*** Add File: a.txt\n+A\n*** End Patch\n"}, do: func() {
				go runB()
				select { // B's turn has begun, or B failed
				case <-bStarted:
				case r := <-bDone:
					close(aWrote)
					bResult <- r
				}
			}},
			{text: "Changed a.", do: func() {
				if len(bResult) == 0 {
					close(aWrote)
					bResult <- <-bDone // B's turn is over
				}
			}},
		},
		"[t2]": {
			{tool: "apply_patch", input: map[string]any{"input": "*** Begin Patch\n*** Add File: b.txt\n+B\n*** End Patch\n"}, do: func() {
				close(bStarted)
				<-aWrote
			}},
		},
	}
	sidA := c.prompt("", "[t1] change a")
	b := <-bResult
	if b.err != nil {
		t.Fatal(b.err)
	}
	sidB := b.sid
	c.wantTree("both turns", map[string]string{"a.txt": "A\n", "b.txt": "B\n", "keep.txt": "k\n"})
	for _, sid := range []string{sidA, sidB} {
		if got := c.session(sid).turnFiles(); !reflect.DeepEqual(got, [][]string{{"added a.txt", "added b.txt"}}) {
			t.Fatalf("session %s: turn files %q (the turns did not overlap as planned)", sid, got)
		}
	}
	// ckpt records no tool calls of Codex's (its hooks give none, and ckpt
	// does not read Codex's rollout), so it cannot tell whose turn wrote
	// which file: a rewind of either keeps both, and says so.
	for _, sid := range []string{sidA, sidB} {
		code, _, errs := c.ckptCode("rewind", "1", "--session", sid)
		if code != 0 || !strings.Contains(errs, "kept what another session's turn, running at the same time, changed too: a.txt, b.txt") {
			t.Fatalf("rewind %s: exit %d\n%s", sid, code, errs)
		}
		c.wantTree("rewound", map[string]string{"a.txt": "A\n", "b.txt": "B\n", "keep.txt": "k\n"})
	}
}

// TestCodexSymlinkedHome: Codex's settings directory is a symlink (a
// dotfiles manager's ~/.codex, or $CODEX_HOME): ckpt's install records
// the trust under the path Codex checks, so Codex runs ckpt's hooks.
func TestCodexSymlinkedHome(t *testing.T) {
	for _, tc := range []struct {
		name      string
		codexHome bool
		link      string // what is the symlink, in Codex's directory
	}{{"dot-codex", false, "."}, {"CODEX_HOME", true, "."}, {"hooks.json", false, "hooks.json"}} {
		t.Run(tc.name, func(t *testing.T) {
			c := codexWorld(t, map[string][]step{"[t1]": {patch("*** Add File: a.txt", "+a")}}, tc.codexHome)
			dotfiles := filepath.Join(c.world.home, "dotfiles")
			if err := os.MkdirAll(dotfiles, 0o755); err != nil {
				t.Fatal(err)
			}
			link, real := filepath.Join(c.home, tc.link), filepath.Join(dotfiles, "codex")
			if tc.link == "hooks.json" {
				testutil.WriteFile(t, filepath.Join(dotfiles, "codex-hooks.json"), "{}\n")
				real = filepath.Join(dotfiles, "codex-hooks.json")
			} else if err := os.Rename(c.home, real); err != nil {
				t.Fatal(err)
			}
			if err := os.Symlink(real, link); err != nil {
				t.Fatal(err)
			}
			c.ckpt("hook", "codex", "install")
			if fi, err := os.Lstat(link); err != nil || fi.Mode()&os.ModeSymlink == 0 {
				t.Fatalf("install replaced the symlink %s (%v)", link, err)
			}
			sid := c.prompt("", "[t1] a")
			if got := c.session(sid).turnFiles(); !reflect.DeepEqual(got, [][]string{{"added a.txt"}}) {
				t.Errorf("turns %q; hook log:\n%s", got, c.hookLog())
			}
		})
	}
}

// TestCodexIgnoredEdits: Codex's apply_patch changes ignored files; its
// PreToolUse hook (Codex runs it for apply_patch, with the patch) keeps
// the files the patch names, and a rewind puts them back.
func TestCodexIgnoredEdits(t *testing.T) {
	c := newCodex(t, map[string][]step{}, false)
	sid := ""
	c.ignoredEdits("", ".env", c.model.turns, func(first bool, text string) string { sid = c.prompt(sid, text); return sid },
		func(p, content string) []step {
			lines := []string{"*** Update File: " + p, "@@"}
			for _, l := range strings.Split(strings.TrimSuffix(c.read(p), "\n"), "\n") {
				lines = append(lines, "-"+l)
			}
			for _, l := range strings.Split(strings.TrimSuffix(content, "\n"), "\n") {
				lines = append(lines, "+"+l)
			}
			return []step{patch(lines...)}
		},
		func(p, content string) []step {
			lines := []string{"*** Add File: " + p}
			for _, l := range strings.Split(strings.TrimSuffix(content, "\n"), "\n") {
				lines = append(lines, "+"+l)
			}
			return []step{patch(lines...)}
		})
}
