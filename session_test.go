package ckpt

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/seed1cedbf7c/ckpt/internal/testutil"
)

func sh(t *testing.T, dir, script string) {
	t.Helper()
	cmd := exec.Command("sh", "-c", script)
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%s: %v\n%s", script, err, out)
	}
}

func newCtl(t *testing.T, r *Repo, title string) *Controller {
	t.Helper()
	ctx := context.Background()
	s, err := r.NewSession(ctx, SessionOptions{Title: title})
	if err != nil {
		t.Fatal(err)
	}
	c, _, err := r.Controller(ctx, ControllerOptions{ID: s.ID})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func turn(t *testing.T, c *Controller, prompt string, work func()) *Turn {
	t.Helper()
	ctx := context.Background()
	if _, err := c.BeginTurn(ctx, prompt); err != nil {
		t.Fatal(err)
	}
	work()
	if _, err := c.AddMessage(ctx, Message{Role: "assistant", Content: "done: " + prompt}); err != nil {
		t.Fatal(err)
	}
	tt, err := c.EndTurn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	return tt
}

func TestSessionTurnsPersistAndRewindShellChanges(t *testing.T) {
	ctx := context.Background()
	ws := t.TempDir()
	storeDir := t.TempDir()
	writeFile(t, ws, "main.go", "package main\n\nfunc main() {\n\tprintln(\"one\")\n}\n")
	writeFile(t, ws, "notes.txt", "keep\n")
	r, err := Open(ctx, ws, Options{Store: storeDir})
	if err != nil {
		t.Fatal(err)
	}
	c := newCtl(t, r, "demo")
	t1 := turn(t, c, "rename one to two", func() { sh(t, ws, "sed -i s/one/two/ main.go") })
	if len(t1.Files) != 1 || t1.Files[0].Path != "main.go" || t1.Files[0].Status != "modified" {
		t.Fatalf("turn 1 files %+v", t1.Files)
	}
	turn(t, c, "clean up and build", func() { sh(t, ws, "rm notes.txt && mkdir -p bin && echo binary > bin/app") })
	r.Close()

	// After a restart the session is still there and rewinds.
	r, err = Open(ctx, ws, Options{Store: storeDir})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	c, _, err = r.Controller(ctx, ControllerOptions{ID: ""})
	if err != nil {
		t.Fatal(err)
	}
	turns, err := c.Checkpoints(ctx)
	if err != nil || len(turns) != 2 || turns[1].Prompt != "clean up and build" || len(turns[1].Files) != 2 {
		t.Fatalf("turns after restart: %+v %v", turns, err)
	}
	res, err := c.Rewind(ctx, 2, ScopeCode, RewindOptions{Exact: true})
	if err != nil {
		t.Fatal(err)
	}
	if testutil.ReadFile(t, ws, "notes.txt") != "keep\n" || testutil.ReadFile(t, ws, "bin/app") != "<absent>" || !strings.Contains(testutil.ReadFile(t, ws, "main.go"), "two") {
		t.Fatalf("after rewinding turn 2: notes=%q app=%q", testutil.ReadFile(t, ws, "notes.txt"), testutil.ReadFile(t, ws, "bin/app"))
	}
	if _, err := os.Stat(filepath.Join(ws, "bin")); err == nil {
		t.Fatal("the directory the build made was left")
	}
	if res.Restore == nil || len(res.Restore.Changed()) != 2 {
		t.Fatalf("restore %+v", res.Restore)
	}
	// The code rewind is undoable; the conversation was not touched.
	if _, err := r.Undo(ctx); err != nil {
		t.Fatal(err)
	}
	if testutil.ReadFile(t, ws, "bin/app") != "binary\n" {
		t.Fatal("undo did not bring the rewound turn back")
	}
	msgs, _ := c.Messages(ctx, false)
	if len(msgs) != 4 {
		t.Fatalf("messages %d", len(msgs))
	}
	// Conversation: back to before turn 2's prompt, which is returned.
	res, err = c.Rewind(ctx, 2, ScopeConversation, RewindOptions{Exact: true})
	if err != nil {
		t.Fatal(err)
	}
	if res.Prompt != "clean up and build" || res.Messages != 2 || res.Turns != 1 || testutil.ReadFile(t, ws, "bin/app") != "binary\n" {
		t.Fatalf("conversation rewind %+v", res)
	}
	msgs, _ = c.Messages(ctx, false)
	all, _ := c.Messages(ctx, true)
	s, _ := c.Session(ctx)
	if len(msgs) != 2 || len(all) != 4 || len(s.Turns) != 1 || len(s.Rewound) != 1 {
		t.Fatalf("after conversation rewind: %d messages (%d with hidden), %d turns", len(msgs), len(all), len(s.Turns))
	}
	// Both, to turn 1.
	if _, err := c.Rewind(ctx, 1, ScopeBoth, RewindOptions{Exact: true}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(testutil.ReadFile(t, ws, "main.go"), "one") || testutil.ReadFile(t, ws, "bin/app") != "<absent>" {
		t.Fatal("both-rewind did not restore the code")
	}
	if s, _ := c.Session(ctx); len(s.Turns) != 0 {
		t.Fatalf("%d turns left", len(s.Turns))
	}
	if _, err := c.Rewind(ctx, 1, ScopeCode, RewindOptions{Exact: true}); err == nil || !strings.Contains(err.Error(), "has no turns yet") {
		t.Fatalf("rewind with no turns: %v", err)
	}
}

func TestRewindKeepUserEdits(t *testing.T) {
	ctx := context.Background()
	r, ws := openTest(t, map[string]string{
		"agent.txt":  "a\n",
		"shared.txt": "1\n2\n3\n4\n5\n6\n7\n8\n9\n",
		"clash.txt":  "x\ny\nz\n",
	})
	c := newCtl(t, r, "keep")
	turn(t, c, "agent edits", func() {
		writeFile(t, ws, "agent.txt", "a\nagent\n")
		writeFile(t, ws, "shared.txt", "1\nAGENT\n3\n4\n5\n6\n7\n8\n9\n")
		writeFile(t, ws, "clash.txt", "x\nAGENT\nz\n")
		writeFile(t, ws, "created.txt", "by the agent\n")
	})
	// The user edits between turns: their own file, another region of a
	// file the agent touched, and the very line the agent changed.
	writeFile(t, ws, "user.txt", "mine\n")
	writeFile(t, ws, "shared.txt", "1\nAGENT\n3\n4\n5\n6\n7\n8\nUSER\n")
	writeFile(t, ws, "clash.txt", "x\nUSER\nz\n")
	turn(t, c, "more agent", func() { writeFile(t, ws, "agent2.txt", "two\n") })

	dry, err := c.Rewind(ctx, 1, ScopeCode, RewindOptions{DryRun: true})
	if err != nil {
		t.Fatal(err)
	}
	if testutil.ReadFile(t, ws, "agent2.txt") != "two\n" || len(dry.Conflicts) != 1 {
		t.Fatalf("dry run changed things or found %v", dry.Conflicts)
	}
	if cps, _ := r.List(ctx, ListOptions{Kind: KindRestore}); len(cps) != 0 {
		t.Fatalf("the dry run stored %d checkpoint(s)", len(cps))
	}
	if len(dry.Restore.Changed()) != 4 {
		t.Fatalf("dry run plans %v", dry.Restore.Actions)
	}
	res, err := c.Rewind(ctx, 1, ScopeCode, RewindOptions{})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{
		"agent.txt":   "a\n",
		"agent2.txt":  "<absent>",
		"created.txt": "<absent>",
		"user.txt":    "mine\n",
		"shared.txt":  "1\n2\n3\n4\n5\n6\n7\n8\nUSER\n",
		"clash.txt":   "x\nUSER\nz\n",
	}
	for p, w := range want {
		if got := testutil.ReadFile(t, ws, p); got != w {
			t.Errorf("%s = %q, want %q", p, got, w)
		}
	}
	if len(res.Conflicts) != 1 || res.Conflicts[0] != "clash.txt" {
		t.Fatalf("conflicts %v", res.Conflicts)
	}
	// Nothing is lost: undo gives the state before the rewind.
	if _, err := r.Undo(ctx); err != nil {
		t.Fatal(err)
	}
	if testutil.ReadFile(t, ws, "agent2.txt") != "two\n" || testutil.ReadFile(t, ws, "clash.txt") != "x\nUSER\nz\n" {
		t.Fatal("undo of the rewind")
	}
}

// Two sessions in one workspace, in alternating turns: rewinding session A
// with KeepUserEdits keeps every change of session B.
func TestTwoSessionsKeepUserEdits(t *testing.T) {
	ctx := context.Background()
	r, ws := openTest(t, map[string]string{"a.txt": "a0\n", "b.txt": "b0\n", "common.txt": "1\n2\n3\n4\n5\n6\n7\n8\n"})
	a := newCtl(t, r, "A")
	b := newCtl(t, r, "B")
	turn(t, a, "A1", func() { writeFile(t, ws, "a.txt", "a1\n"); writeFile(t, ws, "common.txt", "A\n2\n3\n4\n5\n6\n7\n8\n") })
	turn(t, b, "B1", func() { writeFile(t, ws, "b.txt", "b1\n"); writeFile(t, ws, "common.txt", "A\n2\n3\n4\n5\n6\n7\nB\n") })
	turn(t, a, "A2", func() { writeFile(t, ws, "a-new.txt", "new\n") })
	turn(t, b, "B2", func() { writeFile(t, ws, "b-new.txt", "new\n"); os.Remove(filepath.Join(ws, "a.txt")) })
	if _, err := a.Rewind(ctx, 1, ScopeCode, RewindOptions{}); err != nil {
		t.Fatal(err)
	}
	want := map[string]string{
		"b.txt": "b1\n", "b-new.txt": "new\n", "a-new.txt": "<absent>",
		"common.txt": "1\n2\n3\n4\n5\n6\n7\nB\n",
		"a.txt":      "<absent>", // B deleted it after A changed it: B's change stands
	}
	for p, w := range want {
		if got := testutil.ReadFile(t, ws, p); got != w {
			t.Errorf("%s = %q, want %q", p, got, w)
		}
	}
}

func TestForkAndSummarize(t *testing.T) {
	ctx := context.Background()
	r, ws := openTest(t, map[string]string{"f.txt": "0\n"})
	c := newCtl(t, r, "orig")
	for i, p := range []string{"one", "two", "three"} {
		n := i
		turn(t, c, p, func() { writeFile(t, ws, "f.txt", strings.Repeat("x", n+1)+"\n") })
	}
	fr, err := c.Fork(ctx, 2)
	if err != nil {
		t.Fatal(err)
	}
	ns := fr.Session
	if ns.Parent != c.ID() || ns.ForkTurn != 2 || len(ns.Turns) != 1 || ns.Branch != "fork/"+ns.ID {
		t.Fatalf("fork %+v", ns)
	}
	if testutil.ReadFile(t, ws, "f.txt") != "x\n" {
		t.Fatalf("workspace at fork: %q", testutil.ReadFile(t, ws, "f.txt"))
	}
	cur, _ := r.ResolveSession(ctx, "")
	if cur.ID != ns.ID {
		t.Fatal("the fork is not the current session")
	}
	fc, _, _ := r.Controller(ctx, ControllerOptions{ID: ns.ID})
	msgs, _ := fc.Messages(ctx, false)
	if len(msgs) != 2 || msgs[0].Content != "one" {
		t.Fatalf("fork messages %+v", msgs)
	}
	_, branch, _ := r.Head(ctx)
	if branch != ns.Branch {
		t.Fatalf("HEAD on %s", branch)
	}
	// The original session is untouched.
	orig, _ := c.Session(ctx)
	if len(orig.Turns) != 3 {
		t.Fatal("original session changed")
	}
	// Summarize: up to turn 2 (built-in), then from turn 2 with a command.
	sr, err := c.Summarize(ctx, 2, SummarizeUpto)
	if err != nil {
		t.Fatal(err)
	}
	if sr.First != 1 || sr.Last != 2 || !strings.Contains(sr.Summary, "- Turn 1: one") || !strings.Contains(sr.Summary, "Files: modified f.txt.") ||
		!strings.Contains(sr.Summary, "Outcome: done: two") {
		t.Fatalf("summary:\n%s", sr.Summary)
	}
	s, _ := c.Session(ctx)
	if len(s.Turns) != 2 || !s.Turns[0].Summary || s.Turns[1].Prompt != "three" || s.Turns[1].N != 2 {
		t.Fatalf("turns after summary: %+v", s.Turns)
	}
	msgs, _ = c.Messages(ctx, false)
	if len(msgs) != 3 || msgs[0].Role != "summary" || msgs[1].Content != "three" || msgs[1].Turn != 2 {
		t.Fatalf("messages after summary: %+v", msgs)
	}
	// Rewinding to the summary turn still goes to the first turn's start.
	if _, err := c.Rewind(ctx, 1, ScopeCode, RewindOptions{Exact: true}); err != nil {
		t.Fatal(err)
	}
	if testutil.ReadFile(t, ws, "f.txt") != "0\n" {
		t.Fatalf("rewind to summary turn: %q", testutil.ReadFile(t, ws, "f.txt"))
	}
	// A summarizer the user sets with `ckpt config` (WriteConfig) runs.
	t.Setenv("XDG_STATE_HOME", t.TempDir())
	cmd := `python3 -c 'import json,sys; t=json.load(sys.stdin); print("custom:", ",".join(x["prompt"] for x in t["turns"]))'`
	if err := WriteConfig(r.StoreDir(), "summarizer", &cmd); err != nil {
		t.Fatal(err)
	}
	if r.cfg, err = LoadConfig(r.StoreDir()); err != nil {
		t.Fatal(err)
	}
	sr, err = c.Summarize(ctx, 2, SummarizeFrom)
	if err != nil {
		t.Fatal(err)
	}
	if sr.Summary != "custom: three" {
		t.Fatalf("command summary %q", sr.Summary)
	}
	// One that is only in config.toml — it came with the files — does not.
	r.cfg.Summarizer = "touch planted"
	if _, err := c.Summarize(ctx, 1, SummarizeFrom); !errors.Is(err, ErrUnapprovedCommand) || !strings.Contains(Hint(err), "ckpt config summarizer 'touch planted'") {
		t.Fatalf("unapproved summarizer: %v", err)
	}
	if _, err := os.Stat(filepath.Join(ws, "planted")); err == nil {
		t.Fatal("the unapproved summarizer ran")
	}
	fail := "exit 3"
	if err := WriteConfig(r.StoreDir(), "summarizer", &fail); err != nil {
		t.Fatal(err)
	}
	r.cfg.Summarizer = fail
	if _, err := c.Summarize(ctx, 1, SummarizeFrom); err == nil || !strings.Contains(err.Error(), `summarizer "exit 3" failed`) {
		t.Fatalf("failing summarizer: %v", err)
	}
}

// Cancelling a summary stops the summarizer and whatever it started (a
// child holding its output open would keep it waiting), and changes
// nothing.
func TestSummarizerStopsWithItsChildren(t *testing.T) {
	r, ws := openTest(t, map[string]string{"f.txt": "0\n"})
	c := newCtl(t, r, "s")
	turn(t, c, "one", func() { writeFile(t, ws, "f.txt", "1\n") })
	t.Setenv("XDG_STATE_HOME", t.TempDir())
	cmd := "touch started; sleep 60; echo never"
	if err := WriteConfig(r.StoreDir(), "summarizer", &cmd); err != nil {
		t.Fatal(err)
	}
	r.cfg.Summarizer = cmd
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		_, err := c.Summarize(ctx, 1, SummarizeFrom)
		done <- err
	}()
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		if _, err := os.Stat(filepath.Join(ws, "started")); err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the summarizer did not start")
		}
	}
	cancel()
	select {
	case err := <-done:
		if !errors.Is(err, context.Canceled) || !strings.Contains(err.Error(), "stopped") {
			t.Errorf("error %v, want the summarizer stopped, context.Canceled", err)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("Summarize still runs 20s after its context was cancelled")
	}
	s, err := c.Session(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if len(s.Turns) != 1 || s.Turns[0].Summary {
		t.Errorf("turns %+v, want turn 1 as it was", s.Turns)
	}
}

// gc keeps every turn checkpoint of a kept session, whatever --keep says,
// and removes sessions idle for longer than max_age (then their
// checkpoints follow the usual rules).
func TestSessionRetention(t *testing.T) {
	ctx := context.Background()
	now := time.Date(2026, 11, 1, 12, 0, 0, 0, time.UTC)
	ws := t.TempDir()
	writeFile(t, ws, "f.txt", "0\n")
	r, err := Open(ctx, ws, Options{Store: t.TempDir(), Now: func() time.Time { return now }})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	c := newCtl(t, r, "old")
	for i := 1; i <= 4; i++ {
		turn(t, c, fmt.Sprint("turn ", i), func() { writeFile(t, ws, "f.txt", fmt.Sprint(i, "\n")) })
	}
	res, err := r.GC(ctx, GCOptions{Retention: &Retention{Keep: 1}})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Removed) != 0 {
		t.Fatalf("gc removed %d checkpoint(s) a session needs", len(res.Removed))
	}
	if _, err := c.Rewind(ctx, 1, ScopeCode, RewindOptions{Exact: true}); err != nil {
		t.Fatal(err)
	}
	now = now.Add(40 * 24 * time.Hour)
	dry, err := r.GC(ctx, GCOptions{Retention: &Retention{Keep: 1, MaxAge: 30 * 24 * time.Hour}, DryRun: true})
	if err != nil || len(dry.Sessions) != 1 || len(dry.Removed) == 0 {
		t.Fatalf("dry run: %+v %v", dry, err)
	}
	if _, err := r.ResolveSession(ctx, c.ID()); err != nil {
		t.Fatal("a dry run removed the session")
	}
	res, err = r.GC(ctx, GCOptions{Retention: &Retention{Keep: 1, MaxAge: 30 * 24 * time.Hour}})
	if err != nil || len(res.Sessions) != 1 || len(res.Removed) == 0 {
		t.Fatalf("gc: %+v %v", res, err)
	}
	if _, err := r.ResolveSession(ctx, c.ID()); !errors.Is(err, ErrNotFound) {
		t.Fatalf("session still there: %v", err)
	}
	if fr, err := r.Fsck(ctx); err != nil || len(fr.Problems) != 0 {
		t.Fatalf("fsck: %+v %v", fr, err)
	}
}
