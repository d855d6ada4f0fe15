package ckpt

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/seed1cedbf7c/ckpt/internal/testutil"
)

func TestControllerCreatesThenResumes(t *testing.T) {
	ctx := context.Background()
	ws := t.TempDir()
	writeFile(t, ws, "a.txt", "a\n")
	r, err := Open(ctx, ws, Options{Store: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if _, _, err := r.Controller(ctx, ControllerOptions{ID: "", Exact: true, Create: &SessionOptions{}}); err == nil {
		t.Fatal("Controller{Exact, Create} without an id succeeded")
	}
	c, s, err := r.Controller(ctx, ControllerOptions{ID: "agent-1", Exact: true, Create: &SessionOptions{Agent: "codex"}})
	if err != nil {
		t.Fatal(err)
	}
	if c.ID() != "agent-1" || s.Agent != "codex" || len(s.Turns) != 0 {
		t.Fatalf("got %s %+v", c.ID(), s)
	}
	if _, err := c.BeginTurn(ctx, "p"); err != nil {
		t.Fatal(err)
	}
	c2, s2, err := r.Controller(ctx, ControllerOptions{ID: "agent-1", Exact: true, Create: &SessionOptions{}})
	if err != nil {
		t.Fatal(err)
	}
	if c2.ID() != "agent-1" || len(s2.Turns) != 1 {
		t.Fatalf("resumed %s with %d turns, want agent-1 with 1", c2.ID(), len(s2.Turns))
	}
}

// A turn recorded after the fact begins at HEAD (the last checkpoint) and
// ends now: its files are what changed in between, and rewinding to it
// takes them back.
func TestRecordTurn(t *testing.T) {
	ctx := context.Background()
	ws := t.TempDir()
	writeFile(t, ws, "a.txt", "one\n")
	writeFile(t, ws, "b.txt", "keep\n")
	r, err := Open(ctx, ws, Options{Store: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	c, _, err := r.Controller(ctx, ControllerOptions{ID: "thread-1", Exact: true, Create: &SessionOptions{Agent: "codex"}})
	if err != nil {
		t.Fatal(err)
	}

	// No checkpoint yet: the first turn begins where it ends.
	writeFile(t, ws, "a.txt", "two\n")
	t1, err := c.RecordTurn(ctx, "first")
	if err != nil {
		t.Fatal(err)
	}
	if t1.N != 1 || t1.Open() || t1.Begin != *t1.End || len(t1.Files) != 0 {
		t.Fatalf("turn 1: %+v", t1)
	}

	// The second begins at the first's end.
	writeFile(t, ws, "a.txt", "three\n")
	if err := os.Remove(filepath.Join(ws, "b.txt")); err != nil {
		t.Fatal(err)
	}
	t2, err := c.RecordTurn(ctx, "second")
	if err != nil {
		t.Fatal(err)
	}
	if t2.N != 2 || t2.Begin != *t1.End || len(t2.Files) != 2 ||
		t2.Files[0] != (TurnFile{Path: "a.txt", Status: "modified"}) || t2.Files[1] != (TurnFile{Path: "b.txt", Status: "deleted"}) {
		t.Fatalf("turn 2: %+v", t2)
	}
	msgs, err := c.Messages(ctx, false)
	if err != nil {
		t.Fatal(err)
	}
	if len(msgs) != 2 || msgs[1].Turn != 2 || msgs[1].Role != "user" || msgs[1].Content != "second" {
		t.Fatalf("messages %+v", msgs)
	}
	if _, err := c.Rewind(ctx, 2, ScopeCode, RewindOptions{Exact: true}); err != nil {
		t.Fatal(err)
	}
	if got := testutil.ReadFile(t, ws, "a.txt"); got != "two\n" {
		t.Fatalf("a.txt after rewind = %q", got)
	}
	if got := testutil.ReadFile(t, ws, "b.txt"); got != "keep\n" {
		t.Fatalf("b.txt after rewind = %q", got)
	}

	// A turn in progress is ended first.
	if _, err := c.BeginTurn(ctx, "open"); err != nil {
		t.Fatal(err)
	}
	t4, err := c.RecordTurn(ctx, "after")
	if err != nil {
		t.Fatal(err)
	}
	s, err := c.Session(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if t4.N != 4 || s.Turns[2].Open() {
		t.Fatalf("turn 4 %+v, turn 3 open %v", t4, s.Turns[2].Open())
	}
}

func TestControllerExactAndAddMessages(t *testing.T) {
	ctx := context.Background()
	ws := t.TempDir()
	writeFile(t, ws, "a.txt", "a\n")
	r, err := Open(ctx, ws, Options{Store: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if _, _, err := r.Controller(ctx, ControllerOptions{ID: "nosuch", Exact: true}); !errors.Is(err, ErrNotFound) {
		t.Fatalf("err %v, want not found", err)
	}
	if _, _, err := r.Controller(ctx, ControllerOptions{ID: "s1", Exact: true, Create: &SessionOptions{}}); err != nil {
		t.Fatal(err)
	}
	c, s, err := r.Controller(ctx, ControllerOptions{ID: "s1", Exact: true})
	if err != nil || c.ID() != "s1" || s.ID != "s1" {
		t.Fatalf("%v %+v %v", c, s, err)
	}
	if _, err := c.BeginTurn(ctx, "p"); err != nil {
		t.Fatal(err)
	}
	if _, err := c.AddMessages(ctx, []Message{{Role: "assistant", Content: "a"}, {Role: "bogus"}}); err == nil {
		t.Fatal("bad role accepted")
	}
	var events []Event
	cancel := r.Subscribe(func(e Event) { events = append(events, e) })
	defer cancel()
	added, err := c.AddMessages(ctx, []Message{{Role: "assistant", Content: "on it"}, {Role: "tool", Tool: "Bash", Content: "rm x"}})
	if err != nil || len(added) != 2 || added[0].Turn != 1 || added[1].Seq != added[0].Seq+1 {
		t.Fatalf("%+v, %v", added, err)
	}
	msgs, _ := c.Messages(ctx, false)
	if len(msgs) != 3 || msgs[2].Tool != "Bash" || msgs[2].Turn != 1 {
		t.Fatalf("%+v", msgs)
	}
	if len(events) != 2 || events[0].Kind != EventMessage {
		t.Fatalf("events %+v", events)
	}
}

func TestEndTurnIfOpen(t *testing.T) {
	ctx := context.Background()
	ws := t.TempDir()
	writeFile(t, ws, "a.txt", "a\n")
	r, err := Open(ctx, ws, Options{Store: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	c, _, err := r.Controller(ctx, ControllerOptions{ID: "s", Exact: true, Create: &SessionOptions{}})
	if err != nil {
		t.Fatal(err)
	}
	if _, ok, err := c.EndTurnIfOpen(ctx, 1); ok || err != nil {
		t.Fatalf("ended a turn that does not exist: %v %v", ok, err)
	}
	c.BeginTurn(ctx, "one")
	writeFile(t, ws, "a.txt", "b\n")
	c.BeginTurn(ctx, "two") // ends turn 1
	if _, ok, err := c.EndTurnIfOpen(ctx, 1); ok || err != nil {
		t.Fatalf("ended turn 1 again, or turn 2: %v %v", ok, err)
	}
	tt, ok, err := c.EndTurnIfOpen(ctx, 2)
	if !ok || err != nil || tt.N != 2 || tt.Open() {
		t.Fatalf("%+v %v %v", tt, ok, err)
	}
	s, _ := c.Session(ctx)
	if len(s.Turns[0].Files) != 1 || s.Turns[1].Open() {
		t.Fatalf("%+v", s.Turns)
	}
}
