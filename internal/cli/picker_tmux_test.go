package cli

import (
	"crypto/rand"
	"encoding/hex"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/seed1cedbf7c/ckpt/internal/testutil"
)

// tmuxTerm is a real terminal: a tmux server of its own (its own socket,
// no user configuration) running one command in a window of fixed size.
type tmuxTerm struct {
	t    *testing.T
	tmux string
	sock string
	path string // the socket's, to remove it at the end
}

func newTmux(t *testing.T) *tmuxTerm {
	t.Helper()
	path, err := exec.LookPath("tmux")
	if err != nil {
		t.Fatalf("the picker's end-to-end test needs tmux (a real terminal): install it, e.g. apt-get install tmux (scripts/test does): %v", err)
	}
	var b [6]byte
	rand.Read(b[:])
	x := &tmuxTerm{t: t, tmux: path, sock: "ckpt-test-" + hex.EncodeToString(b[:])}
	t.Cleanup(func() {
		x.run("kill-server")
		if x.path != "" {
			os.Remove(x.path)
		}
	})
	return x
}

func (x *tmuxTerm) run(args ...string) (string, error) {
	c := exec.Command(x.tmux, append([]string{"-L", x.sock, "-f", "/dev/null"}, args...)...)
	out, err := c.CombinedOutput()
	return string(out), err
}

func (x *tmuxTerm) must(args ...string) string {
	x.t.Helper()
	out, err := x.run(args...)
	if err != nil {
		x.t.Fatalf("tmux %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return out
}

// start runs a shell command in a new 100×30 window named name; the
// window stays after the command ends, showing its exit status (until
// the server is killed at the end of the test).
func (x *tmuxTerm) start(name, dir, command string) {
	x.t.Helper()
	x.must("new-session", "-d", "-s", name, "-x", "100", "-y", "30", "-c", dir,
		command+`; echo "exit status $?"; sleep 3600`)
	if x.path == "" {
		x.path = strings.TrimSpace(x.must("display-message", "-p", "#{socket_path}"))
	}
}

func (x *tmuxTerm) keys(name string, keys ...string) {
	x.t.Helper()
	x.must(append([]string{"send-keys", "-t", name}, keys...)...)
}

func (x *tmuxTerm) capture(name string) string {
	x.t.Helper()
	return x.must("capture-pane", "-p", "-J", "-t", name)
}

// waitFor polls the window until it shows every one of want.
func (x *tmuxTerm) waitFor(name string, want ...string) string {
	x.t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		screen := x.capture(name)
		missing := ""
		for _, w := range want {
			if !strings.Contains(screen, w) {
				missing = w
				break
			}
		}
		if missing == "" {
			return screen
		}
		if time.Now().After(deadline) {
			x.t.Fatalf("the terminal does not show %q after 30s; it shows:\n%s", missing, screen)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func shq(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }

// buildCkpt builds cmd/ckpt (with the race detector when the tests run
// with it, which reuses their build cache).
func buildCkpt(t *testing.T) string {
	t.Helper()
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Fatalf("building ckpt needs the go command: %v", err)
	}
	bin := filepath.Join(t.TempDir(), "ckpt")
	args := []string{"build", "-o", bin}
	if raceEnabled {
		args = append(args, "-race")
	}
	out, err := exec.Command(goTool, append(args, "github.com/seed1cedbf7c/ckpt/cmd/ckpt")...).CombinedOutput()
	if err != nil {
		t.Fatalf("go build ./cmd/ckpt: %v\n%s", err, out)
	}
	return bin
}

// lineOf returns the index of the first line of screen holding s (-1: none).
func lineOf(screen, s string) int {
	for i, l := range strings.Split(screen, "\n") {
		if strings.Contains(l, s) {
			return i
		}
	}
	return -1
}

// The picker driven in a real terminal: the ckpt binary, a session of
// three turns made with the CLI, `ckpt rewind` in tmux, keys sent with
// send-keys, the screen read with capture-pane.
func TestPickerInTmux(t *testing.T) {
	testutil.Long(t, "drives the picker in a real terminal")
	x := newTmux(t)
	r := newRunner(t)
	r.bin = buildCkpt(t)
	write := func(p, data string) { t.Helper(); testutil.WriteFile(t, filepath.Join(r.ws, p), data) }
	read := func(p string) string { t.Helper(); return testutil.ReadFile(t, r.ws, p) }
	write("main.go", "package main\n\nfunc main() { println(\"one\") }\n")
	write("notes.txt", "keep me\n")
	r.run("session", "new", "-t", "demo", "--id", "s1")
	r.run("turn", "begin", "-m", "rename one to two")
	write("main.go", "package main\n\nfunc main() { println(\"two\") }\n")
	r.run("turn", "end")
	r.run("turn", "begin", "-m", "clean up and build")
	os.Remove(filepath.Join(r.ws, "notes.txt"))
	write("bin/app", "built\n")
	r.run("turn", "end")
	r.run("turn", "begin", "-m", "add a README")
	write("README.md", "# demo\n")
	r.run("turn", "end")

	rewind := "CKPT_STORE=" + shq(r.store) + " XDG_STATE_HOME=" + shq(filepath.Dir(r.store)) + " " + shq(r.bin) + " rewind"

	// The list, newest first; Down, Enter: the menu of turn 2; Down Down:
	// [code], with what it will change; Enter: the rewind.
	x.start("code", r.ws, rewind)
	screen := x.waitFor("code", "Rewind to the start of which turn? (newest first)", "rename one to two")
	l3, l2, l1 := lineOf(screen, "add a README"), lineOf(screen, "clean up and build"), lineOf(screen, "rename one to two")
	if !(l3 < l2 && l2 < l1) || !strings.Contains(screen, "> 3  ") {
		t.Fatalf("the list is not newest first with the cursor on turn 3:\n%s", screen)
	}
	if !strings.Contains(screen, "+1 ~0 -1  clean up and build") || !strings.Contains(screen, "esc esc quit") {
		t.Errorf("the list does not show the files changed and the keys:\n%s", screen)
	}
	x.keys("code", "Down")
	x.waitFor("code", "> 2  ")
	x.keys("code", "Enter")
	x.waitFor("code", "> [code+conversation]", "[fork from here]", "Conversation: 2 message(s) of turns 2-3 leave it")
	x.keys("code", "Down", "Down")
	screen = x.waitFor("code", "> [code]", "Code: undo what turn 2 and later changed, keeping edits made between turns; 3 file(s) to change:")
	for _, want := range []string{"  delete README.md", "  delete bin/app", "  create notes.txt", "enter rewind"} {
		if !strings.Contains(screen, want) {
			t.Errorf("the preview does not show %q:\n%s", want, screen)
		}
	}
	if read("bin/app") != "built\n" || read("notes.txt") != "<absent>" {
		t.Fatal("the preview changed the files")
	}
	x.keys("code", "Enter")
	screen = x.waitFor("code", "exit status 0")
	for _, want := range []string{
		"rewound code to the start of turn 2 (3 file(s) changed)",
		"delete README.md", "delete bin/app", "create notes.txt",
		"ckpt undo takes the rewind back",
	} {
		if !strings.Contains(screen, want) {
			t.Errorf("after the rewind the terminal does not show %q:\n%s", want, screen)
		}
	}
	for p, want := range map[string]string{
		"main.go": "package main\n\nfunc main() { println(\"two\") }\n", "notes.txt": "keep me\n",
		"bin/app": "<absent>", "README.md": "<absent>",
	} {
		if got := read(p); got != want {
			t.Errorf("after the rewind %s = %q, want %q", p, got, want)
		}
	}
	if out := r.run("session", "show"); !strings.Contains(out, "   3  ") {
		t.Errorf("a code rewind changed the conversation:\n%s", out)
	}

	// Esc shows the hint, Esc again quits; nothing changes.
	x.start("esc", r.ws, rewind)
	x.waitFor("esc", "rename one to two")
	x.keys("esc", "Escape")
	x.waitFor("esc", "press Esc again to quit")
	x.keys("esc", "Escape")
	screen = x.waitFor("esc", "exit status 0")
	if strings.TrimSpace(screen) != "exit status 0" {
		t.Errorf("Esc Esc printed something:\n%s", screen)
	}
	if read("notes.txt") != "keep me\n" {
		t.Error("Esc Esc changed the files")
	}

	// --dry-run needs a TURN: the picker previews by itself.
	x.start("dry", r.ws, rewind+" --dry-run")
	x.waitFor("dry", "--dry-run needs a TURN", "exit status 2")

	// The conversation: the prompt comes back, printed to send again.
	x.start("conv", r.ws, rewind)
	x.waitFor("conv", "rename one to two")
	x.keys("conv", "Enter", "Down")
	x.waitFor("conv", "> [conversation]", "Its prompt comes back, to send again:", "  add a README")
	x.keys("conv", "Enter")
	screen = x.waitFor("conv", "exit status 0")
	if !strings.Contains(screen, "rewound the conversation to before turn 3 (1 message(s), 1 turn(s) removed); its prompt, to send again:\nadd a README\n") {
		t.Errorf("after the conversation rewind the terminal shows:\n%s", screen)
	}
	if out := r.run("session", "show"); strings.Contains(out, "   3  ") || !strings.Contains(out, "   2  ") {
		t.Errorf("the conversation was not rewound to before turn 3:\n%s", out)
	}

	// Two more turns: the session is 1 rename, 2 clean up, 3 docs, 4 ship.
	r.run("turn", "begin", "-m", "write the docs")
	write("docs.md", "# docs\n")
	r.run("turn", "message", "--role", "assistant", "-m", "Wrote docs.md.")
	r.run("turn", "end")
	r.run("turn", "begin", "-m", "ship it")
	r.run("turn", "message", "--role", "assistant", "-m", "Shipped.")
	r.run("turn", "end")
	// turns is what session show lists under "turns:", as "N prompt".
	turns := func(out string) string {
		_, list, _ := strings.Cut(out, "turns:\n")
		list, _, _ = strings.Cut(list, "conversation:")
		var ts []string
		for _, l := range strings.Split(strings.TrimSpace(list), "\n") {
			if f := strings.Fields(l); len(f) >= 6 {
				ts = append(ts, f[0]+" "+strings.Join(f[6:], " "))
			}
		}
		return strings.Join(ts, "; ")
	}
	files := func() string { return read("main.go") + read("notes.txt") + read("bin/app") + read("docs.md") }
	before := files()

	// [summarize up to here] on turn 2: the preview names the turns, Enter
	// runs the (built-in) summarizer, the picker prints the summary.
	x.start("upto", r.ws, rewind)
	x.waitFor("upto", "> 4  ", "ship it")
	x.keys("upto", "Down", "Down")
	x.waitFor("upto", "> 2  ")
	x.keys("upto", "Enter")
	x.waitFor("upto", "[summarize up to here]")
	x.keys("upto", "End", "Up")
	screen = x.waitFor("upto", "> [summarize up to here]", "Summary: turns 1-2 (2 message(s)) become one summary message, in turn 1:",
		"Turns 3-4 become turns 2-3.", "The built-in summarizer writes it", "enter summarize")
	if lineOf(screen, "  1  rename one to two") < 0 || lineOf(screen, "  2  clean up and build") < 0 {
		t.Errorf("the preview does not list turns 1 and 2:\n%s", screen)
	}
	x.keys("upto", "Enter")
	screen = x.waitFor("upto", "exit status 0")
	if !strings.Contains(screen, "summarized turns 1-2 into turn 1:\nSummary of turns 1-2:\n- Turn 1: rename one to two") {
		t.Errorf("after summarize up to here the terminal shows:\n%s", screen)
	}
	out := r.run("session", "show")
	if got, want := turns(out), "1 (summary of turns 1-2); 2 write the docs; 3 ship it"; got != want || !strings.Contains(out, "[1] summary: Summary of turns 1-2:") {
		t.Errorf("after summarize up to here the turns are %q, want %q, and the summary:\n%s", got, want, out)
	}

	// [summarize from here] on turn 2 (write the docs): turns 2-3 go.
	x.start("from", r.ws, rewind)
	x.waitFor("from", "> 3  ", "ship it")
	x.keys("from", "Down")
	x.waitFor("from", "> 2  ")
	x.keys("from", "Enter")
	x.waitFor("from", "[summarize from here]")
	x.keys("from", "End", "Up", "Up")
	x.waitFor("from", "> [summarize from here]", "Summary: turns 2-3 (4 message(s)) become one summary message, in turn 2:",
		"  2  write the docs", "  3  ship it")
	x.keys("from", "Enter")
	screen = x.waitFor("from", "exit status 0")
	if !strings.Contains(screen, "summarized turns 2-3 into turn 2:\nSummary of turns 2-3:\n- Turn 2: write the docs") {
		t.Errorf("after summarize from here the terminal shows:\n%s", screen)
	}
	out = r.run("session", "show")
	if got, want := turns(out), "1 (summary of turns 1-2); 2 (summary of turns 2-3)"; got != want || !strings.Contains(out, "[2] summary: Summary of turns 2-3:") {
		t.Errorf("after summarize from here the turns are %q, want %q, and the summary:\n%s", got, want, out)
	}
	if files() != before {
		t.Error("summarizing changed the files")
	}

	// A summarizer that fails: the picker shows the error, the session
	// stays, ckpt exits 1.
	r.run("config", "summarizer", "echo the model is down >&2; exit 3")
	x.start("fail", r.ws, rewind)
	x.waitFor("fail", "> 2  ")
	x.keys("fail", "Enter")
	x.waitFor("fail", "[summarize from here]")
	x.keys("fail", "End", "Up", "Up")
	x.waitFor("fail", "> [summarize from here]", "Your summarizer writes it, on Enter: echo the model is down >&2; exit 3")
	x.keys("fail", "Enter")
	x.waitFor("fail", `Error: summarizer "echo the model is down >&2; exit 3" failed: exit status 3: the model is down`,
		"hint: fix the command", "press any key to exit")
	x.keys("fail", "x")
	x.waitFor("fail", "exit status 1")
	// One nobody set on this machine (config.toml came with the files)
	// does not run.
	if err := os.WriteFile(filepath.Join(r.store, "config.toml"), []byte("summarizer = \"touch planted\"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	x.start("unapproved", r.ws, rewind)
	x.waitFor("unapproved", "> 2  ")
	x.keys("unapproved", "Enter")
	x.waitFor("unapproved", "[summarize up to here]")
	x.keys("unapproved", "End", "Up")
	x.waitFor("unapproved", "> [summarize up to here]", "Your summarizer writes it, on Enter: touch planted")
	x.keys("unapproved", "Enter")
	x.waitFor("unapproved", "was not set with `ckpt config` on this machine", "press any key to exit")
	x.keys("unapproved", "x")
	x.waitFor("unapproved", "exit status 1")
	if read("planted") != "<absent>" {
		t.Error("the summarizer nobody approved ran")
	}
	if got := r.run("session", "show"); got != out {
		t.Errorf("a failed summary changed the session:\n%s\nwant:\n%s", got, out)
	}
}
