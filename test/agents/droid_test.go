package agents

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"runtime"
	"strings"
	"testing"
	"time"
)

// Droid's program is in a package of its own per platform, which
// @factory/cli installs as an optional dependency; the registry the tests
// reach has @factory/cli 0.225.1 but not its linux-x64 package of that
// version, so the test pins the program's package itself, at the version
// there is.
var droidCLI = agentCLI{"@factory/cli-linux-x64", "0.225.2", "@factory/cli-linux-x64/bin/droid"}

// droid is Factory's Droid (the real program, pinned) in a world of its
// own, talking to a scripted OpenAI-compatible model configured as a
// custom model (no Factory account, airgapped: nothing leaves the
// machine), with ckpt's hooks installed as `ckpt hook droid install`
// installs them (.factory/settings.json in the workspace).
type droid struct {
	*world
	bin   string
	model *model
}

func newDroid(t *testing.T, turns map[string][]step) *droid {
	if runtime.GOOS != "linux" || runtime.GOARCH != "amd64" {
		t.Skipf("Droid's pinned program is %s, for linux/amd64; this is %s/%s", droidCLI.pkg, runtime.GOOS, runtime.GOARCH)
	}
	bin := droidCLI.install(t)
	w := newWorld(t)
	m := openAIChatModel(t, turns)
	dir := filepath.Join(w.home, ".factory")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	settings := fmt.Sprintf(`{
  "customModels": [{"model": "scripted-model", "displayName": "Scripted", "baseUrl": %q,
    "apiKey": "sk-test-key", "provider": "generic-chat-completion-api", "maxOutputTokens": 4096}],
  "cloudSessionSync": false
}
`, m.srv.URL+"/v1")
	if err := os.WriteFile(filepath.Join(dir, "settings.json"), []byte(settings), 0o644); err != nil {
		t.Fatal(err)
	}
	w.ckpt("hook", "droid", "install")
	return &droid{world: w, bin: bin, model: m}
}

// droidRPC is one Droid process driven through its JSON-RPC protocol
// (droid exec --input-format stream-jsonrpc), the way its interactive
// session and SDK drive it: one session, a turn per user message. A plain
// `droid exec PROMPT` does not run UserPromptSubmit hooks.
type droidRPC struct {
	t     testing.TB
	cmd   *exec.Cmd
	in    io.WriteCloser
	lines chan map[string]any
	next  int
	sid   string
}

func (d *droid) start() *droidRPC {
	d.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	d.t.Cleanup(cancel)
	c := exec.CommandContext(ctx, d.bin, "exec", "--input-format", "stream-jsonrpc", "--output-format", "stream-jsonrpc",
		"--skip-permissions-unsafe", "-m", "custom:scripted-model")
	c.Dir = d.ws
	c.Env = append(append([]string{}, d.env...), "FACTORY_AIRGAP_ENABLED=1", "FACTORY_DROID_AUTO_UPDATE_ENABLED=false")
	c.WaitDelay = 5 * time.Second
	in, err := c.StdinPipe()
	if err != nil {
		d.t.Fatal(err)
	}
	out, err := c.StdoutPipe()
	if err != nil {
		d.t.Fatal(err)
	}
	var stderr strings.Builder
	c.Stderr = &stderr
	if err := c.Start(); err != nil {
		d.t.Fatal(err)
	}
	r := &droidRPC{t: d.t, cmd: c, in: in, lines: make(chan map[string]any, 1024)}
	go func() {
		defer close(r.lines)
		br := bufio.NewReaderSize(out, 1<<20)
		for {
			l, err := br.ReadBytes('\n')
			var m map[string]any
			if json.Unmarshal(l, &m) == nil {
				r.lines <- m
			}
			if err != nil {
				return
			}
		}
	}()
	d.t.Cleanup(func() {
		in.Close()
		if err := c.Wait(); err != nil && d.t.Failed() {
			d.t.Logf("droid: %v\nstderr:\n%s\nhook log:\n%s", err, stderr.String(), d.hookLog())
		}
	})
	res := r.call("droid.initialize_session", map[string]any{"machineId": "ckpt-test", "cwd": d.ws,
		"modelId": "custom:scripted-model", "skipPermissionsUnsafe": true})
	var init struct {
		SessionID string `json:"sessionId"`
	}
	if err := json.Unmarshal(res, &init); err != nil || init.SessionID == "" {
		d.t.Fatalf("initialize_session: %s, %v", res, err)
	}
	r.sid = init.SessionID
	return r
}

// send writes a request and returns its id.
func (r *droidRPC) send(method string, params any) string {
	r.t.Helper()
	r.next++
	id := fmt.Sprintf("req-%d", r.next)
	b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "type": "request", "factoryApiVersion": "1.0.0",
		"id": id, "method": method, "params": params})
	if _, err := r.in.Write(append(b, '\n')); err != nil {
		r.t.Fatalf("%s: %v", method, err)
	}
	return id
}

// wait reads Droid's output until a message matches (an error response
// fails the test).
func (r *droidRPC) wait(what string, match func(map[string]any) bool) map[string]any {
	r.t.Helper()
	timeout := time.After(2 * time.Minute)
	for {
		select {
		case m, ok := <-r.lines:
			if !ok {
				r.t.Fatalf("droid exited before %s", what)
			}
			if e, ok := m["error"]; ok && m["type"] == "response" {
				r.t.Fatalf("droid answered %v while waiting for %s", e, what)
			}
			if match(m) {
				return m
			}
		case <-timeout:
			r.t.Fatalf("no %s from droid within 2 minutes", what)
		}
	}
}

func (r *droidRPC) call(method string, params any) json.RawMessage {
	r.t.Helper()
	id := r.send(method, params)
	m := r.wait(method+"'s response", func(m map[string]any) bool { return m["type"] == "response" && m["id"] == id })
	b, _ := json.Marshal(m["result"])
	return b
}

func notification(m map[string]any) map[string]any {
	p, _ := m["params"].(map[string]any)
	n, _ := p["notification"].(map[string]any)
	return n
}

// prompt sends a user message and waits for the turn it starts to end.
func (r *droidRPC) prompt(text string) {
	r.t.Helper()
	r.call("droid.add_user_message", map[string]any{"text": text})
	n := notification(r.wait("the end of the turn "+text, func(m map[string]any) bool {
		return notification(m)["type"] == "agent_turn_completed"
	}))
	if n["reason"] != "completed" {
		r.t.Fatalf("turn %q ended: %v", text, n)
	}
}

// close ends the session (Droid runs SessionEnd) and the process.
func (r *droidRPC) close() {
	r.t.Helper()
	r.call("droid.close_session", map[string]any{"reason": "other"})
	r.in.Close()
}

// TestDroid drives a three-turn Droid session whose own tools (Create,
// Edit, Execute) change the workspace, the user editing between turns,
// and checks what ckpt recorded and that a rewind restores the files
// exactly.
func TestDroid(t *testing.T) {
	d := newDroid(t, nil)
	abs := func(p string) string { return filepath.Join(d.ws, p) }
	sh := func(summary, command string) step {
		return call("Execute", map[string]any{"summary": summary, "command": command})
	}
	d.model.turns = map[string][]step{
		"[t1]": {
			call("Create", map[string]any{"file_path": abs("a.txt"), "content": "alpha\n"}),
			call("Create", map[string]any{"file_path": abs("run.sh"), "content": "#!/bin/sh\necho run\n"}),
			sh("Set up the project files", "chmod +x run.sh && mkdir -p lib/deep build && printf 'bin\\000ary' > lib/deep/blob.bin && ln -s a.txt link && echo obj > build/out.o"),
			say("Set up."),
		},
		"[t2]": {
			call("Read", map[string]any{"file_path": abs("src.txt")}),
			call("Edit", map[string]any{"file_path": abs("src.txt"), "old_str": "two", "new_str": "TWO"}),
			sh("Edit the other files", "sed -i 's/alpha/ALPHA/' a.txt && rm lib/deep/blob.bin && echo obj2 > build/out.o"),
			say("Edited."),
		},
		"[t3]": {
			sh("Finish the project files", "rm link && mkdir -p new/dir && echo three > new/dir/c.txt && chmod -x run.sh"),
			say("Finished."),
		},
	}
	d.write(map[string]string{".gitignore": "build/\n", "src.txt": "one\ntwo\nthree\n", "keep.txt": "keep\n"})
	start := map[string]string{".gitignore": "build/\n", "src.txt": "one\ntwo\nthree\n", "keep.txt": "keep\n"}

	r := d.start()
	sid := r.sid
	r.prompt("[t1] set up the project")
	afterT1 := with(start, map[string]string{"a.txt": "alpha\n", "run.sh": "#!/bin/sh\necho run\n (x)",
		"lib/deep/blob.bin": "bin\x00ary", "link": "-> a.txt", "build/out.o": "obj\n"})
	d.wantTree("after turn 1", afterT1)

	r.prompt("[t2] edit things")
	afterT2 := with(afterT1, map[string]string{"src.txt": "one\nTWO\nthree\n", "a.txt": "ALPHA\n", "lib/deep/blob.bin": "", "build/out.o": "obj2\n"})
	d.wantTree("after turn 2", afterT2)

	// The user's own work between turns 2 and 3.
	d.write(map[string]string{"notes.txt": "mine\n", "keep.txt": "keep, edited\n"})
	userT2 := with(afterT2, map[string]string{"notes.txt": "mine\n", "keep.txt": "keep, edited\n"})

	r.prompt("[t3] finish")
	r.close()
	afterT3 := with(userT2, map[string]string{"link": "", "new/dir/c.txt": "three\n", "run.sh": "#!/bin/sh\necho run\n"})
	d.wantTree("after turn 3", afterT3)

	// The model saw one conversation: the last request carries every turn.
	var last []string
	for _, q := range d.model.requests() {
		last = q.Markers
	}
	if want := []string{"[t1]", "[t2]", "[t3]"}; !reflect.DeepEqual(last, want) {
		t.Errorf("the last request carried turns %q, want %q", last, want)
	}

	s := d.wantSession(sid, "droid", threeTurnPrompts, threeTurnFiles())
	if dir := filepath.Join(d.home, ".factory", "sessions") + string(filepath.Separator); !strings.HasPrefix(s.Session.Transcript, dir) || !strings.HasSuffix(s.Session.Transcript, sid+".jsonl") {
		t.Errorf("transcript %q, want Droid's session file under %s", s.Session.Transcript, dir)
	}
	var msgs []string
	for _, m := range s.Messages {
		msgs = append(msgs, fmt.Sprintf("%d %s %s: %s", m.Turn, m.Role, m.Tool, m.Content))
	}
	wantMsgs := []string{
		"1 user : [t1] set up the project",
		"1 tool Create: " + abs("a.txt"),
		"1 tool Create: " + abs("run.sh"),
		"1 tool Execute: chmod +x run.sh && mkdir -p lib/deep build && printf 'bin\\000ary' > lib/deep/blob.bin && ln -s a.txt link && echo obj > build/out.o",
		"1 assistant : Set up.",
		"2 user : [t2] edit things",
		"2 tool Read: " + abs("src.txt"),
		"2 tool Edit: " + abs("src.txt"),
		"2 tool Execute: sed -i 's/alpha/ALPHA/' a.txt && rm lib/deep/blob.bin && echo obj2 > build/out.o",
		"2 assistant : Edited.",
		"3 user : [t3] finish",
		"3 tool Execute: rm link && mkdir -p new/dir && echo three > new/dir/c.txt && chmod -x run.sh",
		"3 assistant : Finished.",
	}
	if !reflect.DeepEqual(msgs, wantMsgs) {
		t.Errorf("messages\n got %q\nwant %q", msgs, wantMsgs)
	}
	if log := d.hookLog(); !strings.Contains(log, "droid SessionEnd session="+sid) {
		t.Errorf("no SessionEnd in the hook log:\n%s", log)
	}

	// Rewind turn 2 on: the agent's changes of turns 2 and 3 undone, the
	// user's edits between them kept; ignored build output untouched.
	d.rewindThenUndo(with(afterT1, map[string]string{"notes.txt": "mine\n", "keep.txt": "keep, edited\n", "build/out.o": "obj2\n"}), afterT3, "2", "--session", sid)

	// The whole session, --exact: the workspace exactly as turn 1 began
	// (the user's edits too); ignored build output untouched.
	d.rewindThenUndo(with(start, map[string]string{"build/out.o": "obj2\n"}), afterT3, "1", "--exact", "--session", sid)

	// The whole session, keeping the user's edits.
	d.rewindThenUndo(with(start, map[string]string{"notes.txt": "mine\n", "keep.txt": "keep, edited\n", "build/out.o": "obj2\n"}), afterT3, "1", "--session", sid)
	d.logHookTimes("Droid")
}

// TestDroidIgnoredEdits: Droid's Edit and Create change ignored files; its
// PreToolUse hook keeps them, and a rewind puts them back.
func TestDroidIgnoredEdits(t *testing.T) {
	d := newDroid(t, map[string][]step{})
	abs := func(p string) string { return filepath.Join(d.ws, p) }
	var r *droidRPC
	d.ignoredEdits("", ".env", d.model.turns, func(first bool, text string) string {
		if first {
			r = d.start()
			t.Cleanup(r.close)
		}
		r.prompt(text)
		return r.sid
	},
		func(p, content string) []step {
			old := strings.TrimSuffix(d.read(p), "\n")
			return []step{call("Read", map[string]any{"file_path": abs(p)}),
				call("Edit", map[string]any{"file_path": abs(p), "old_str": old, "new_str": strings.TrimSuffix(content, "\n")})}
		},
		func(p, content string) []step {
			return []step{call("Create", map[string]any{"file_path": abs(p), "content": content})}
		})
}
