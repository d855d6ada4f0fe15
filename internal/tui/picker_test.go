package tui

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"charm.land/lipgloss/v2"
	"github.com/seed1cedbf7c/ckpt"
	"github.com/seed1cedbf7c/ckpt/internal/testutil"
)

// fixture is a real workspace and store with a session "s1" of three
// turns:
//
//  1. "rename one to two"       modifies main.go
//  2. "clean up and build"      deletes notes.txt, creates bin/app (a
//     prompt of two lines)
//  3. a long prompt             creates README.md
type fixture struct {
	t     *testing.T
	ws    string
	store string
	repo  *ckpt.Repo
	ctl   *ckpt.Controller
	clock time.Time
	keys  time.Time // the picker's clock, for Esc Esc
}

var t0 = time.Date(2026, 4, 23, 12, 0, 0, 0, time.UTC)

const longPrompt = "add a README that explains what the project does, how to build it, how to test it, and how to contribute, in great detail"

func newFixture(t *testing.T, turns int) *fixture {
	t.Helper()
	ctx := context.Background()
	f := &fixture{t: t, ws: t.TempDir(), store: filepath.Join(t.TempDir(), "store"), clock: t0, keys: t0}
	f.write("main.go", "package main\n\nfunc main() { println(\"one\") }\n")
	f.write("notes.txt", "keep me\n")
	r, err := ckpt.Open(ctx, f.ws, ckpt.Options{Store: f.store, Now: func() time.Time { return f.clock }})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close() })
	f.repo = r
	if _, err := r.NewSession(ctx, ckpt.SessionOptions{ID: "s1", Title: "demo"}); err != nil {
		t.Fatal(err)
	}
	if f.ctl, _, err = r.Controller(ctx, ckpt.ControllerOptions{ID: "s1"}); err != nil {
		t.Fatal(err)
	}
	steps := []struct {
		prompt string
		work   func()
	}{
		{"rename one to two", func() { f.write("main.go", "package main\n\nfunc main() { println(\"two\") }\n") }},
		{"clean up and build\nthen run the tests", func() {
			f.remove("notes.txt")
			f.write("bin/app", "built\n")
		}},
		{longPrompt, func() { f.write("README.md", "# demo\n") }},
	}
	for i := 0; i < turns; i++ {
		s := steps[i%len(steps)]
		prompt := s.prompt
		if i >= len(steps) {
			prompt = fmt.Sprintf("turn %d: touch file %d", i+1, i)
			s.work = func() { f.write(fmt.Sprintf("more/f%d.txt", i), "x\n") }
		}
		f.turn(prompt, s.work)
	}
	return f
}

func (f *fixture) write(p, data string) {
	f.t.Helper()
	testutil.WriteFile(f.t, filepath.Join(f.ws, p), data)
}

func (f *fixture) remove(p string) {
	f.t.Helper()
	if err := os.Remove(filepath.Join(f.ws, p)); err != nil {
		f.t.Fatal(err)
	}
}

func (f *fixture) read(p string) string {
	f.t.Helper()
	return testutil.ReadFile(f.t, f.ws, p)
}

// turn runs one turn through the Controller, around real file edits.
func (f *fixture) turn(prompt string, work func()) {
	f.t.Helper()
	ctx := context.Background()
	f.clock = f.clock.Add(time.Minute)
	if _, err := f.ctl.BeginTurn(ctx, prompt); err != nil {
		f.t.Fatal(err)
	}
	work()
	if _, err := f.ctl.AddMessage(ctx, ckpt.Message{Role: "assistant", Content: "done: " + prompt}); err != nil {
		f.t.Fatal(err)
	}
	f.clock = f.clock.Add(30 * time.Second)
	if _, err := f.ctl.EndTurn(ctx); err != nil {
		f.t.Fatal(err)
	}
}

// plain makes m render without styles, as on a terminal without colours
// (its views are compared as text).
func plain(m *Model) *Model {
	m.st = styles{}
	return m
}

// picker returns a loaded picker of w×h cells.
func (f *fixture) picker(w, h int, opts Options) *Model {
	f.t.Helper()
	opts.Now = func() time.Time { return f.keys }
	opts.Location = time.UTC
	m := plain(New(context.Background(), f.ctl, opts))
	f.t.Cleanup(m.Close)
	f.run(m, m.Init())
	f.send(m, tea.WindowSizeMsg{Width: w, Height: h})
	return m
}

// run executes a command and feeds its messages back, as the program
// does, synchronously: the Controller calls finish before run returns.
func (f *fixture) run(m *Model, cmd tea.Cmd) {
	f.t.Helper()
	if cmd == nil {
		return
	}
	switch msg := cmd().(type) {
	case nil:
	case tea.QuitMsg:
	case tea.BatchMsg:
		for _, c := range msg {
			f.run(m, c)
		}
	default:
		f.send(m, msg)
	}
}

// send delivers a message and runs what it starts — except the timer an
// Esc starts (escExpiredMsg is sent by the test when it wants it).
func (f *fixture) send(m *Model, msg tea.Msg) {
	f.t.Helper()
	_, cmd := m.Update(msg)
	if k, ok := msg.(tea.KeyPressMsg); ok && k.Code == tea.KeyEscape && m.state == stateList {
		return
	}
	f.run(m, cmd)
}

var keyNames = map[string]tea.Key{
	"up": {Code: tea.KeyUp}, "down": {Code: tea.KeyDown}, "enter": {Code: tea.KeyEnter},
	"esc": {Code: tea.KeyEscape}, "alt+esc": {Code: tea.KeyEscape, Mod: tea.ModAlt},
	"ctrl+c": {Code: 'c', Mod: tea.ModCtrl}, "home": {Code: tea.KeyHome}, "end": {Code: tea.KeyEnd},
	"tab": {Code: tea.KeyTab}, "shift+tab": {Code: tea.KeyTab, Mod: tea.ModShift},
	"pgup": {Code: tea.KeyPgUp}, "pgdown": {Code: tea.KeyPgDown}, "space": {Code: tea.KeySpace, Text: " "},
}

// key is the key press named as Key.String names it ("G" is shift+g).
func key(name string) tea.KeyPressMsg {
	if k, ok := keyNames[name]; ok {
		return tea.KeyPressMsg(k)
	}
	r := []rune(name)[0]
	k := tea.Key{Code: r, Text: name}
	if lower := []rune(strings.ToLower(name))[0]; lower != r {
		k.Code, k.ShiftedCode, k.Mod = lower, r, tea.ModShift
	}
	return tea.KeyPressMsg(k)
}

// press sends keys by name: "down", "enter", "esc", "j", "u", ...
func (f *fixture) press(m *Model, names ...string) {
	f.t.Helper()
	for _, n := range names {
		f.send(m, key(n))
	}
}

// golden compares a view with testdata/views/NAME.golden (see
// testutil.Golden; refresh with go test ./internal/tui -update).
func golden(t *testing.T, name, view string) {
	t.Helper()
	if strings.Contains(view, "\x1b") {
		t.Errorf("view %s holds escape sequences with the plain renderer", name)
	}
	// Trailing spaces are invisible in the files; keep them out.
	lines := strings.Split(view, "\n")
	for i, l := range lines {
		lines[i] = strings.TrimRight(l, " ")
	}
	got := strings.Join(lines, "\n") + "\n"
	testutil.Golden(t, filepath.Join("testdata", "views", name+".golden"), []byte(got))
}

func (f *fixture) messages() []*ckpt.Message {
	f.t.Helper()
	msgs, err := f.ctl.Messages(context.Background(), false)
	if err != nil {
		f.t.Fatal(err)
	}
	return msgs
}

func (f *fixture) session() *ckpt.Session {
	f.t.Helper()
	s, err := f.ctl.Session(context.Background())
	if err != nil {
		f.t.Fatal(err)
	}
	return s
}

// unchanged checks that the files and the session are as the three turns
// left them.
func (f *fixture) unchanged() {
	f.t.Helper()
	for p, want := range map[string]string{
		"main.go":   "package main\n\nfunc main() { println(\"two\") }\n",
		"notes.txt": "<absent>", "bin/app": "built\n", "README.md": "# demo\n",
	} {
		if got := f.read(p); got != want {
			f.t.Errorf("%s = %q, want %q (nothing should have changed)", p, got, want)
		}
	}
	if n := len(f.session().Turns); n != 3 {
		f.t.Errorf("session has %d turns, want 3", n)
	}
	if n := len(f.messages()); n != 6 {
		f.t.Errorf("conversation has %d messages, want 6", n)
	}
}

func TestListNewestFirst(t *testing.T) {
	f := newFixture(t, 3)
	m := f.picker(100, 30, Options{Exact: true})
	if m.state != stateList {
		t.Fatalf("state %d, want the list", m.state)
	}
	var order []int
	for _, ti := range m.turns {
		order = append(order, ti.N)
	}
	if fmt.Sprint(order) != "[3 2 1]" {
		t.Errorf("turns %v, want newest first [3 2 1]", order)
	}
	golden(t, "list", m.content())
}

func TestNavigation(t *testing.T) {
	f := newFixture(t, 3)
	m := f.picker(100, 30, Options{Exact: true})
	for _, c := range []struct {
		key  string
		want int // the turn under the cursor
	}{
		{"down", 2}, {"j", 1}, {"down", 1}, {"up", 2}, {"k", 3}, {"k", 3},
		{"end", 1}, {"home", 3}, {"G", 1}, {"g", 3}, {"pgdown", 1}, {"pgup", 3}, {"space", 1}, {"pgup", 3},
	} {
		f.press(m, c.key)
		if got := m.turns[m.cursor].N; got != c.want {
			t.Fatalf("after %s: cursor on turn %d, want %d", c.key, got, c.want)
		}
	}
	f.press(m, "down")
	if v := m.content(); !strings.Contains(v, "> 2  2026-04-23 12:02:30  +1 ~0 -1  clean up and build …") {
		t.Errorf("the cursor's row is not marked:\n%s", v)
	}
	// The menu moves the same way and stops at its ends.
	f.press(m, "enter")
	for _, c := range []struct {
		key  string
		want Item
	}{
		{"up", ItemBoth}, {"down", ItemConversation}, {"j", ItemCode}, {"tab", ItemFork},
		{"down", ItemSummarizeFrom}, {"l", ItemSummarizeUpto}, {"down", ItemCancel}, {"down", ItemCancel},
		{"k", ItemSummarizeUpto}, {"h", ItemSummarizeFrom}, {"shift+tab", ItemFork}, {"home", ItemBoth},
		{"end", ItemCancel}, {"up", ItemSummarizeUpto}, {"left", ItemSummarizeFrom}, {"right", ItemSummarizeUpto},
	} {
		f.press(m, c.key)
		if m.item != c.want {
			t.Fatalf("after %s: %s highlighted, want %s", c.key, m.item, c.want)
		}
	}
	f.unchanged()
}

func TestMenuShowsWhatWillChange(t *testing.T) {
	f := newFixture(t, 3)
	m := f.picker(100, 30, Options{Exact: true})
	f.press(m, "down", "enter")
	if m.state != stateMenu || m.item != ItemBoth {
		t.Fatalf("state %d item %s, want the menu on %s", m.state, m.item, ItemBoth)
	}
	golden(t, "menu_both", m.content())
	f.press(m, "down")
	golden(t, "menu_conversation", m.content())
	f.press(m, "down")
	golden(t, "menu_code", m.content())
	f.press(m, "down")
	golden(t, "menu_fork", m.content())
	f.press(m, "down")
	golden(t, "menu_summarize_from", m.content())
	f.press(m, "down")
	golden(t, "menu_summarize_upto", m.content())
	f.press(m, "down")
	golden(t, "menu_cancel", m.content())
	// Previews are dry runs: nothing changed.
	f.unchanged()
}

func TestMenuKeepUserEdits(t *testing.T) {
	f := newFixture(t, 3)
	// The user edits a file turn 3 created, and one no turn touched.
	f.write("README.md", "# demo\n\nmy notes\n")
	f.write("mine.txt", "mine\n")
	m := f.picker(100, 30, Options{Exact: true})
	f.press(m, "down", "enter", "down", "down") // turn 2, [code]
	off := m.content()
	f.press(m, "u")
	if !m.keep {
		t.Fatal("u did not turn keep-user-edits on")
	}
	golden(t, "menu_code_keep", m.content())
	if off == m.content() {
		t.Error("the preview did not change with keep-user-edits")
	}
	f.press(m, "enter")
	if m.state != stateDone || m.result.Rewind == nil {
		t.Fatalf("state %d, result %+v: want a rewind", m.state, m.result)
	}
	// Turn 2's and 3's changes are undone except where the user edited.
	for p, want := range map[string]string{
		"notes.txt": "keep me\n", "bin/app": "<absent>", "README.md": "# demo\n\nmy notes\n", "mine.txt": "mine\n",
		"main.go": "package main\n\nfunc main() { println(\"two\") }\n",
	} {
		if got := f.read(p); got != want {
			t.Errorf("%s = %q, want %q", p, got, want)
		}
	}
	if fmt.Sprint(m.result.Rewind.Conflicts) != "[README.md]" {
		t.Errorf("conflicts %v, want [README.md]", m.result.Rewind.Conflicts)
	}
}

// TestPickerKeepsUserEditsByDefault: without Exact the picker starts
// with the toggle on, as a code rewind keeps the user's edits by default.
func TestPickerKeepsUserEditsByDefault(t *testing.T) {
	f := newFixture(t, 3)
	m := f.picker(100, 30, Options{})
	if !m.keep {
		t.Fatal("the picker started with keep-user-edits off")
	}
	f.press(m, "down", "enter", "down", "down") // turn 2, [code]
	if !strings.Contains(m.content(), "u keep user edits: on") {
		t.Errorf("the menu does not say edits are kept:\n%s", m.content())
	}
}

func TestEscGoesBackFromMenu(t *testing.T) {
	f := newFixture(t, 3)
	m := f.picker(100, 30, Options{Exact: true})
	f.press(m, "down", "enter", "down", "esc")
	if m.state != stateList {
		t.Fatalf("state %d after esc in the menu, want the list", m.state)
	}
	if m.turns[m.cursor].N != 2 {
		t.Errorf("cursor on turn %d after esc, want 2 (where it was)", m.turns[m.cursor].N)
	}
	golden(t, "after_esc_back", m.content())
	// Enter again opens the menu anew, on the first action.
	f.press(m, "enter")
	if m.state != stateMenu || m.item != ItemBoth {
		t.Errorf("state %d item %s, want the menu on %s", m.state, m.item, ItemBoth)
	}
	f.unchanged()
}

func TestEscEscQuits(t *testing.T) {
	f := newFixture(t, 3)
	m := f.picker(100, 30, Options{Exact: true})
	f.press(m, "esc")
	if m.state != stateList || !m.escHint {
		t.Fatalf("one esc: state %d, hint %v; want the list with the hint", m.state, m.escHint)
	}
	golden(t, "list_after_esc", m.content())
	f.keys = f.keys.Add(EscInterval / 2)
	f.press(m, "esc")
	if m.state != stateDone || !m.result.Cancelled {
		t.Fatalf("esc esc: state %d, result %+v; want quit, cancelled", m.state, m.result)
	}
	f.unchanged()
}

func TestEscEscSlowDoesNotQuit(t *testing.T) {
	f := newFixture(t, 3)
	m := f.picker(100, 30, Options{Exact: true})
	f.press(m, "esc")
	f.keys = f.keys.Add(EscInterval + time.Millisecond)
	f.press(m, "esc")
	if m.state != stateList {
		t.Fatalf("two escs %s apart quit the picker", EscInterval+time.Millisecond)
	}
	// The hint goes when its timer fires (only the latest timer counts).
	f.send(m, escExpiredMsg{seq: m.escSeq - 1})
	if !m.escHint {
		t.Error("a stale timer cleared the hint")
	}
	f.send(m, escExpiredMsg{seq: m.escSeq})
	if m.escHint || strings.Contains(m.content(), "press Esc again") {
		t.Error("the hint stayed after its timer")
	}
	// Another key in between also resets it.
	f.press(m, "esc", "down")
	f.press(m, "esc")
	if m.state != stateList {
		t.Error("esc, down, esc quit the picker")
	}
	// Two Escs read at once arrive as alt+esc.
	f.press(m, "alt+esc")
	if m.state != stateDone || !m.result.Cancelled {
		t.Errorf("alt+esc: state %d; want quit", m.state)
	}
}

func TestQuitKeys(t *testing.T) {
	for _, keys := range [][]string{{"q"}, {"ctrl+c"}, {"enter", "q"}, {"enter", "ctrl+c"}, {"down", "enter", "end", "enter"}} {
		t.Run(strings.Join(keys, ","), func(t *testing.T) {
			f := newFixture(t, 3)
			m := f.picker(100, 30, Options{Exact: true})
			f.press(m, keys...)
			if m.state != stateDone || !m.result.Cancelled || m.result.Rewind != nil || m.result.Fork != nil || m.result.Summary != nil {
				t.Fatalf("state %d, result %+v; want quit, cancelled", m.state, m.result)
			}
			f.unchanged()
		})
	}
}

func TestRewindCode(t *testing.T) {
	f := newFixture(t, 3)
	m := f.picker(100, 30, Options{Exact: true})
	f.press(m, "down", "enter", "down", "down", "enter")
	r := m.Result()
	if r.Cancelled || r.Rewind == nil || r.Turn != 2 || r.Item != ItemCode || r.Err != nil {
		t.Fatalf("result %+v, want a code rewind of turn 2", r)
	}
	if r.Rewind.Scope != ckpt.ScopeCode || r.Rewind.DryRun || r.Rewind.Restore == nil {
		t.Errorf("rewind %+v, want a real code rewind", r.Rewind)
	}
	for p, want := range map[string]string{
		"main.go":   "package main\n\nfunc main() { println(\"two\") }\n",
		"notes.txt": "keep me\n", "bin/app": "<absent>", "README.md": "<absent>",
	} {
		if got := f.read(p); got != want {
			t.Errorf("%s = %q, want %q", p, got, want)
		}
	}
	// The conversation stays.
	if n := len(f.session().Turns); n != 3 {
		t.Errorf("%d turns, want 3", n)
	}
	if n := len(f.messages()); n != 6 {
		t.Errorf("%d messages, want 6", n)
	}
}

func TestRewindConversation(t *testing.T) {
	f := newFixture(t, 3)
	m := f.picker(100, 30, Options{Exact: true})
	f.press(m, "down", "enter", "down", "enter")
	r := m.Result()
	if r.Rewind == nil || r.Rewind.Scope != ckpt.ScopeConversation || r.Turn != 2 {
		t.Fatalf("result %+v, want a conversation rewind of turn 2", r)
	}
	if r.Rewind.Prompt != "clean up and build\nthen run the tests" || r.Rewind.Messages != 4 || r.Rewind.Turns != 2 {
		t.Errorf("rewind prompt %q, %d messages, %d turns; want turn 2's prompt, 4, 2", r.Rewind.Prompt, r.Rewind.Messages, r.Rewind.Turns)
	}
	if n := len(f.session().Turns); n != 1 {
		t.Errorf("%d turns left, want 1", n)
	}
	if n := len(f.messages()); n != 2 {
		t.Errorf("%d messages left, want 2", n)
	}
	// The files stay.
	if got := f.read("README.md"); got != "# demo\n" {
		t.Errorf("README.md = %q: a conversation rewind changed the code", got)
	}
}

func TestRewindBoth(t *testing.T) {
	f := newFixture(t, 3)
	m := f.picker(100, 30, Options{Exact: true})
	f.press(m, "end", "enter", "enter") // turn 1, [code+conversation]
	r := m.Result()
	if r.Rewind == nil || r.Rewind.Scope != ckpt.ScopeBoth || r.Turn != 1 {
		t.Fatalf("result %+v, want both rewound to turn 1", r)
	}
	if got := f.read("main.go"); !strings.Contains(got, "one") {
		t.Errorf("main.go = %q, want turn 1's start", got)
	}
	if n := len(f.session().Turns); n != 0 {
		t.Errorf("%d turns left, want 0", n)
	}
}

func TestFork(t *testing.T) {
	f := newFixture(t, 3)
	m := f.picker(100, 30, Options{Exact: true})
	f.press(m, "down", "enter", "end", "up", "up", "up", "enter") // turn 2, [fork from here]
	r := m.Result()
	if r.Fork == nil || r.Item != ItemFork || r.Turn != 2 || r.Rewind != nil {
		t.Fatalf("result %+v, want a fork from turn 2", r)
	}
	ns := r.Fork.Session
	if ns.Parent != "s1" || ns.ForkTurn != 2 || len(ns.Turns) != 1 || !strings.HasPrefix(ns.Branch, "fork/") {
		t.Errorf("fork session %+v, want parent s1, fork turn 2, 1 turn, a fork/ branch", ns)
	}
	cur, _, err := f.repo.Controller(context.Background(), ckpt.ControllerOptions{ID: ""})
	if err != nil {
		t.Fatal(err)
	}
	if cur.ID() != ns.ID {
		t.Errorf("current session %s, want the fork %s", cur.ID(), ns.ID)
	}
	if got := f.read("notes.txt"); got != "keep me\n" {
		t.Errorf("notes.txt = %q: the workspace did not move to turn 2's start", got)
	}
	// The original session is untouched.
	if n := len(f.session().Turns); n != 3 {
		t.Errorf("the original session has %d turns, want 3", n)
	}
}

// prompts lists the session's turns as "N:prompt".
func (f *fixture) prompts() []string {
	var out []string
	for _, t := range f.session().Turns {
		out = append(out, fmt.Sprintf("%d:%s", t.N, t.Prompt))
	}
	return out
}

// unchangedFiles checks that the files are as the three turns left them.
func (f *fixture) unchangedFiles() {
	f.t.Helper()
	for p, want := range map[string]string{
		"main.go":   "package main\n\nfunc main() { println(\"two\") }\n",
		"notes.txt": "<absent>", "bin/app": "built\n", "README.md": "# demo\n",
	} {
		if got := f.read(p); got != want {
			f.t.Errorf("%s = %q, want %q (a summary changes no file)", p, got, want)
		}
	}
}

func TestSummarizeFrom(t *testing.T) {
	f := newFixture(t, 3)
	m := f.picker(100, 30, Options{Exact: true})
	f.press(m, "down", "enter", "end", "up", "up") // turn 2, [summarize from here]
	if m.item != ItemSummarizeFrom {
		t.Fatalf("%s highlighted, want %s", m.item, ItemSummarizeFrom)
	}
	f.press(m, "enter")
	r := m.Result()
	if r.Err != nil || r.Cancelled || r.Summary == nil || r.Item != ItemSummarizeFrom || r.Turn != 2 || r.Rewind != nil || r.Fork != nil {
		t.Fatalf("result %+v, want turns 2-3 summarized", r)
	}
	if r.Summary.First != 2 || r.Summary.Last != 3 || r.Summary.Turn.N != 2 || !strings.HasPrefix(r.Summary.Summary, "Summary of turns 2-3:") {
		t.Errorf("summary %+v, want turns 2-3 into turn 2 by the built-in summarizer", r.Summary)
	}
	if got := fmt.Sprint(f.prompts()); got != "[1:rename one to two 2:(summary of turns 2-3)]" {
		t.Errorf("turns %s, want turn 1 and the summary of 2-3", got)
	}
	var roles []string
	for _, msg := range f.messages() {
		roles = append(roles, fmt.Sprintf("%d:%s", msg.Turn, msg.Role))
	}
	if got := fmt.Sprint(roles); got != "[1:user 1:assistant 2:summary]" {
		t.Errorf("conversation %s, want turn 1's messages and the summary", got)
	}
	f.unchangedFiles()
}

func TestSummarizeUpto(t *testing.T) {
	f := newFixture(t, 3)
	m := f.picker(100, 30, Options{Exact: true})
	f.press(m, "down", "enter", "end", "up", "enter") // turn 2, [summarize up to here]
	r := m.Result()
	if r.Err != nil || r.Summary == nil || r.Item != ItemSummarizeUpto || r.Turn != 2 {
		t.Fatalf("result %+v, want turns 1-2 summarized", r)
	}
	if r.Summary.First != 1 || r.Summary.Last != 2 || !strings.Contains(r.Summary.Summary, "- Turn 2: clean up and build") {
		t.Errorf("summary %+v, want turns 1-2", r.Summary)
	}
	if got := fmt.Sprint(f.prompts()); got != "[1:(summary of turns 1-2) 2:"+longPrompt+"]" {
		t.Errorf("turns %s, want the summary of 1-2 and turn 3 renumbered 2", got)
	}
	if n := len(f.messages()); n != 3 {
		t.Errorf("%d messages, want 3 (the summary, turn 3's two)", n)
	}
	f.unchangedFiles()
}

// A summarizer that fails, or that the user did not set on this machine,
// is an error the picker shows (and returns); the session stays as it was.
func TestSummarizerErrors(t *testing.T) {
	t.Setenv("XDG_STATE_HOME", t.TempDir()) // where approvals live
	for _, c := range []struct {
		name, golden string
		setup        func(f *fixture, cmd string)
		want         string
	}{
		{"fails", "error_summarizer", func(f *fixture, cmd string) {
			if err := ckpt.WriteConfig(f.store, "summarizer", &cmd); err != nil { // set by the user: approved
				t.Fatal(err)
			}
		}, `summarizer "echo the model is down >&2; touch ran; exit 3" failed: exit status 3: the model is down`},
		{"not approved", "", func(f *fixture, cmd string) {
			// A config.toml that came with the files, not set with ckpt config.
			if err := os.WriteFile(filepath.Join(f.store, ckpt.ConfigFile), []byte("summarizer = "+fmt.Sprintf("%q", cmd)+"\n"), 0o644); err != nil {
				t.Fatal(err)
			}
		}, "was not set with `ckpt config` on this machine"},
	} {
		t.Run(c.name, func(t *testing.T) {
			f := newFixture(t, 3)
			const cmd = "echo the model is down >&2; touch ran; exit 3"
			c.setup(f, cmd)
			// The picker's process reads the store's config as it starts.
			r, err := ckpt.Open(context.Background(), f.ws, ckpt.Options{Store: f.store, Now: func() time.Time { return f.clock }})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { r.Close() })
			if f.ctl, _, err = r.Controller(context.Background(), ckpt.ControllerOptions{ID: "s1"}); err != nil {
				t.Fatal(err)
			}
			m := f.picker(100, 30, Options{Exact: true})
			f.press(m, "down", "enter", "end", "up", "up")
			if v := m.content(); !strings.Contains(v, "Your summarizer writes it, on Enter: "+cmd) {
				t.Errorf("the preview does not name the summarizer:\n%s", v)
			}
			f.press(m, "enter")
			if m.state != stateFailed {
				t.Fatalf("state %d, want the error shown", m.state)
			}
			v := m.content()
			if !strings.Contains(strings.ReplaceAll(v, "\n", " "), c.want) || !strings.Contains(v, "hint: ") {
				t.Errorf("the view does not show the error %q and its hint:\n%s", c.want, v)
			}
			if c.golden != "" {
				golden(t, c.golden, v)
			}
			f.press(m, "x")
			res := m.Result()
			if m.state != stateDone || res.Err == nil || !res.Cancelled || res.Summary != nil {
				t.Errorf("state %d, result %+v; want quit with the error", m.state, res)
			}
			if c.name == "not approved" {
				if !errors.Is(res.Err, ckpt.ErrUnapprovedCommand) {
					t.Errorf("error %v, want ErrUnapprovedCommand", res.Err)
				}
				if _, err := os.Stat(filepath.Join(f.ws, "ran")); err == nil {
					t.Error("the summarizer nobody approved ran")
				}
			}
			os.Remove(filepath.Join(f.ws, "ran"))
			f.unchanged()
		})
	}
}

func TestActsOnlyAfterPreview(t *testing.T) {
	f := newFixture(t, 3)
	m := f.picker(100, 30, Options{Item: ItemCode})
	// Open the menu without running the dry run it starts.
	m.Update(key("enter"))
	if m.state != stateMenu || m.computing == nil {
		t.Fatalf("state %d, computing %v: want the menu computing its preview", m.state, m.computing)
	}
	if v := m.content(); !strings.Contains(v, "computing what would change") {
		t.Errorf("the footer does not say the preview is being computed:\n%s", v)
	}
	_, cmd := m.Update(key("enter"))
	if cmd != nil || m.state != stateMenu {
		t.Fatalf("enter acted before the preview was shown (state %d)", m.state)
	}
	f.unchanged()
}

func TestControllerErrorShownAndReturned(t *testing.T) {
	f := newFixture(t, 3)
	m := f.picker(100, 30, Options{Item: ItemCode})
	f.press(m, "down", "enter")
	// The session goes away (another process deleted it) before Enter.
	if err := f.repo.DeleteSession(context.Background(), "s1"); err != nil {
		t.Fatal(err)
	}
	f.press(m, "enter")
	if m.state != stateFailed {
		t.Fatalf("state %d, want the error shown", m.state)
	}
	golden(t, "error", m.content())
	f.press(m, "x")
	r := m.Result()
	if m.state != stateDone || r.Err == nil || !strings.Contains(r.Err.Error(), "s1") || !r.Cancelled {
		t.Errorf("state %d, result %+v; want quit with the Controller's error", m.state, r)
	}
	// A preview that fails says so and does not act.
	f2 := newFixture(t, 3)
	m2 := f2.picker(100, 30, Options{})
	f2.repo.DeleteSession(context.Background(), "s1")
	f2.press(m2, "enter", "down")
	if p := m2.currentPreview(); p == nil || p.err == nil {
		t.Fatalf("preview %+v, want its error", p)
	}
	if v := m2.content(); !strings.Contains(v, "Cannot tell: ") {
		t.Errorf("the preview's error is not shown:\n%s", v)
	}
	f2.press(m2, "enter")
	if m2.state != stateMenu {
		t.Errorf("enter acted on a failed preview (state %d)", m2.state)
	}
}

func TestNoTurns(t *testing.T) {
	f := newFixture(t, 0)
	m := f.picker(100, 30, Options{Exact: true})
	if m.state != stateEmpty {
		t.Fatalf("state %d, want the no-turns message", m.state)
	}
	golden(t, "no_turns", m.content())
	f.press(m, "down")
	r := m.Result()
	if m.state != stateDone || !r.NoTurns || !r.Cancelled {
		t.Errorf("state %d, result %+v; want quit, no turns", m.state, r)
	}
}

func TestInProgressTurn(t *testing.T) {
	f := newFixture(t, 1)
	f.clock = f.clock.Add(time.Minute)
	if _, err := f.ctl.BeginTurn(context.Background(), "still working"); err != nil {
		t.Fatal(err)
	}
	f.write("wip.txt", "wip\n")
	m := f.picker(100, 12, Options{})
	v := m.content()
	if !strings.Contains(v, "> 2  2026-04-23 12:02:30  in progress  still working") {
		t.Errorf("the open turn is not shown in progress:\n%s", v)
	}
	f.press(m, "enter", "down", "down")
	if v := m.content(); !strings.Contains(v, "in progress, so far +1 ~0 -0") || !strings.Contains(v, "delete wip.txt") {
		t.Errorf("the menu does not show the open turn's files so far:\n%s", v)
	}
}

func TestSmallTerminalAndResize(t *testing.T) {
	f := newFixture(t, 12)
	m := f.picker(40, 10, Options{})
	golden(t, "small_list", m.content())
	for _, l := range strings.Split(m.content(), "\n") {
		if w := lipgloss.Width(l); w > 40 {
			t.Errorf("line wider than the window (%d): %q", w, l)
		}
	}
	f.press(m, "end")
	if v := m.content(); !strings.Contains(v, ">  1 ") {
		t.Errorf("the cursor's row scrolled out of view:\n%s", v)
	}
	f.press(m, "enter", "down", "down")
	golden(t, "small_menu", m.content())
	if n := strings.Count(m.content(), "\n") + 1; n != 10 {
		t.Errorf("the view has %d lines, want the window's 10", n)
	}
	f.press(m, "down", "down")
	golden(t, "small_menu_summarize", m.content())
	f.press(m, "up", "up")
	// Growing the window shows everything; shrinking keeps the cursor.
	f.press(m, "esc")
	f.send(m, tea.WindowSizeMsg{Width: 100, Height: 30})
	if v := m.content(); !strings.Contains(v, ">  1 ") || !strings.Contains(v, "  12  ") || strings.Contains(v, " of 12)") {
		t.Errorf("after growing, not every turn is shown:\n%s", v)
	}
	f.send(m, tea.WindowSizeMsg{Width: 30, Height: 6})
	if v := m.content(); !strings.Contains(v, ">  1 ") {
		t.Errorf("after shrinking, the cursor's row is out of view:\n%s", v)
	}
	// Tiny windows still render, and only what fits.
	for _, size := range [][2]int{{1, 1}, {5, 2}, {10, 3}} {
		f.send(m, tea.WindowSizeMsg{Width: size[0], Height: size[1]})
		v := m.content()
		if n := strings.Count(v, "\n") + 1; n > size[1] {
			t.Errorf("%dx%d: %d lines", size[0], size[1], n)
		}
	}
}

func TestUntrustedTextIsPrintable(t *testing.T) {
	if got := promptLine("\x1b[2Jclear\tthe screen\nsecond"); got != "?[2Jclear the screen …" {
		t.Errorf("promptLine = %q", got)
	}
	if got := clean("a\nb.txt"); got != `"a\nb.txt"` {
		t.Errorf("clean = %q", got)
	}
	if got := clean("ok/path.go"); got != "ok/path.go" {
		t.Errorf("clean = %q", got)
	}
}

// Ctrl-C while the summarizer runs stops it; the session stays as it was.
func TestCtrlCWhileSummarizing(t *testing.T) {
	t.Setenv("XDG_STATE_HOME", t.TempDir()) // where approvals live
	f := newFixture(t, 3)
	cmd := "touch started; sleep 60; echo never"
	if err := ckpt.WriteConfig(f.store, "summarizer", &cmd); err != nil {
		t.Fatal(err)
	}
	r, err := ckpt.Open(context.Background(), f.ws, ckpt.Options{Store: f.store})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close() })
	if f.ctl, _, err = r.Controller(context.Background(), ckpt.ControllerOptions{ID: "s1"}); err != nil {
		t.Fatal(err)
	}
	m := f.picker(100, 30, Options{Item: ItemSummarizeUpto})
	f.press(m, "down", "enter")
	_, run := m.Update(key("enter"))
	if m.state != stateBusy || run == nil {
		t.Fatalf("state %d: want busy", m.state)
	}
	if v := m.content(); !strings.Contains(v, "Summarizing turns 1-2: running touch started; sleep 60; echo never…") || !strings.Contains(v, "ctrl+c stop") {
		t.Errorf("the busy view:\n%s", v)
	}
	done := make(chan tea.Msg, 1)
	go func() { done <- run() }()
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		if _, err := os.Stat(filepath.Join(f.ws, "started")); err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the summarizer did not start")
		}
	}
	f.press(m, "ctrl+c")
	select {
	case msg := <-done:
		f.send(m, msg)
	case <-time.After(20 * time.Second):
		t.Fatal("the summarizer ran on 20s after ctrl+c")
	}
	os.Remove(filepath.Join(f.ws, "started"))
	if m.state != stateFailed || m.result.Err == nil || m.result.Summary != nil {
		t.Fatalf("state %d, result %+v: want the summarizer's error", m.state, m.result)
	}
	f.unchanged()
}

// Ctrl-C while a rewind runs asks the engine to stop (it stops where it is
// safe); the rewind then either finished or failed, never half-way.
func TestCtrlCWhileRewinding(t *testing.T) {
	f := newFixture(t, 3)
	m := f.picker(100, 30, Options{Item: ItemCode})
	f.press(m, "down", "enter")
	_, cmd := m.Update(key("enter")) // the rewind starts; its command has not run yet
	if m.state != stateBusy || cmd == nil {
		t.Fatalf("state %d: want busy", m.state)
	}
	if v := m.content(); !strings.Contains(v, "Rewinding the code to the start of turn 2…") || !strings.Contains(v, "ctrl+c stop") {
		t.Errorf("the busy view:\n%s", v)
	}
	f.press(m, "q", "esc") // other keys wait
	if m.state != stateBusy {
		t.Fatalf("a key other than ctrl+c interrupted the rewind (state %d)", m.state)
	}
	f.press(m, "ctrl+c")
	if v := m.content(); !m.cancelling || !strings.Contains(v, "stopping…") {
		t.Errorf("ctrl+c: cancelling %v, view:\n%s", m.cancelling, v)
	}
	f.run(m, cmd)
	switch r := m.Result(); {
	case m.state == stateFailed && r.Err != nil:
		f.unchanged()
	case m.state == stateDone && r.Rewind != nil:
		if f.read("notes.txt") != "keep me\n" {
			t.Error("the rewind reported done but the files were not rewound")
		}
	default:
		t.Errorf("state %d, result %+v: want failed or done", m.state, r)
	}
}
