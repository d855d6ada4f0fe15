package session

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/seed1cedbf7c/ckpt/internal/object"
	"github.com/seed1cedbf7c/ckpt/internal/store"
)

// restored and switched stand for the engine's restore and switch results.
type restored struct{ Target ID }
type switched struct{ Branch string }

// fakeEngine is an engine without a workspace: checkpoints are numbers,
// and it checks the lock rule (methods that need the lock get it; no one
// takes it twice).
type fakeEngine struct {
	t          *testing.T
	tbl        *store.Memory
	held       bool
	saves      int
	head       ID
	events     []string
	summarizer string
}

var _ Engine[restored, switched] = (*fakeEngine)(nil)

func newFake(t *testing.T) *fakeEngine {
	return &fakeEngine{t: t, tbl: store.NewMemory(t.TempDir())}
}

func (f *fakeEngine) mustHold(what string) {
	if !f.held {
		f.t.Errorf("%s without the lock", what)
	}
}

func (f *fakeEngine) Lock(ctx context.Context) (func(), error) {
	if f.held {
		f.t.Error("lock taken while held")
	}
	f.held = true
	return func() { f.held = false }, nil
}
func (f *fakeEngine) Now() time.Time           { return time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC) }
func (f *fakeEngine) Sessions() store.Sessions { return f.tbl }
func (f *fakeEngine) Emit(e Event) {
	f.events = append(f.events, fmt.Sprintf("%s %s %d", e.Kind, e.Session, e.Turn))
}
func (f *fakeEngine) Head(ctx context.Context) (ID, error)        { return f.head, nil }
func (f *fakeEngine) Tree(ctx context.Context, cp ID) (ID, error) { return cp, nil }
func (f *fakeEngine) Summarizer() string                          { return f.summarizer }
func (f *fakeEngine) LastOp(ctx context.Context) (int64, error) {
	f.mustHold("LastOp")
	return int64(f.saves), nil
}
func (f *fakeEngine) InEffect(ctx context.Context) (func([]int64) bool, error) {
	return func([]int64) bool { return false }, nil
}
func (f *fakeEngine) RunSummarizer(ctx context.Context, tr []byte) (string, error) {
	return fmt.Sprintf("external summary of %d bytes", len(tr)), nil
}
func (f *fakeEngine) Save(ctx context.Context, msg string, meta map[string]string) (ID, error) {
	f.mustHold("Save")
	f.saves++
	f.head = object.Sum([]byte(fmt.Sprint(f.saves)))
	return f.head, nil
}
func (f *fakeEngine) Changes(ctx context.Context, from, to ID) ([]TurnFile, error) {
	return []TurnFile{{Path: "f.txt", Status: "modified"}}, nil
}
func (f *fakeEngine) Restore(ctx context.Context, target ID, dryRun bool) (*restored, error) {
	f.mustHold("Restore")
	return &restored{Target: target}, nil
}
func (f *fakeEngine) RestoreEdited(ctx context.Context, dryRun bool, msg string, meta map[string]string, track []Path, plan func(*Workspace) (*Edits, error)) (*restored, error) {
	return nil, errors.New("not in this test")
}
func (f *fakeEngine) Amend(ctx context.Context, base ID, paths []Path, msg string) (ID, []Path, error) {
	f.mustHold("Amend")
	return base, nil, nil
}
func (f *fakeEngine) Tracked(ctx context.Context, id ID) ([]Path, error) { return nil, nil }
func (f *fakeEngine) Fork(ctx context.Context, name string, at ID) (*switched, error) {
	f.mustHold("Fork")
	return &switched{Branch: name}, nil
}

// play records turns with a reply each.
func play(t *testing.T, c *Controller[restored, switched], prompts ...string) {
	ctx := context.Background()
	for _, p := range prompts {
		if _, err := c.BeginTurn(ctx, p); err != nil {
			t.Fatal(err)
		}
		if _, err := c.AddMessage(ctx, Message{Role: "assistant", Content: "done: " + p}); err != nil {
			t.Fatal(err)
		}
		if _, err := c.EndTurn(ctx); err != nil {
			t.Fatal(err)
		}
	}
}

// TestControllerOverEngine drives a session through the Engine interface
// alone: turns, a rewind of both scopes, a summary and a fork.
func TestControllerOverEngine(t *testing.T) {
	ctx := context.Background()
	f := newFake(t)
	if _, _, err := Control(ctx, f, ControllerOptions{}); !errors.Is(err, ErrNoSession) {
		t.Fatalf("no session yet: err %v, want ErrNoSession", err)
	}
	c, s, err := Control(ctx, f, ControllerOptions{ID: "s1", Exact: true, Create: &Options{Title: "t"}})
	if err != nil || s.ID != "s1" {
		t.Fatalf("%+v, %v", s, err)
	}
	play(t, c, "one", "two", "three")
	s, _ = c.Session(ctx)
	if len(s.Turns) != 3 || s.Turns[2].Open() || len(s.Turns[1].Files) != 1 {
		t.Fatalf("turns %+v", s.Turns)
	}

	rw, err := c.Rewind(ctx, 3, ScopeBoth, RewindOptions{Exact: true})
	if err != nil {
		t.Fatal(err)
	}
	if rw.Restore.Target != s.Turns[2].Begin || rw.Prompt != "three" || rw.Messages != 2 || rw.Turns != 1 {
		t.Errorf("rewind = %+v", rw)
	}

	sr, err := c.Summarize(ctx, 1, SummarizeUpto)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(sr.Summary, "- Turn 1: one") || !strings.Contains(sr.Summary, "Outcome: done: one") || !sr.Turn.Summary {
		t.Errorf("built-in summary %q", sr.Summary)
	}
	f.summarizer = "my-summarizer"
	if sr, err = c.Summarize(ctx, 2, SummarizeFrom); err != nil || !strings.HasPrefix(sr.Summary, "external summary of ") {
		t.Errorf("external summary %q, %v", sr.Summary, err)
	}

	fr, err := c.Fork(ctx, 2)
	if err != nil {
		t.Fatal(err)
	}
	if fr.Switch.Branch != "fork/"+fr.Session.ID || fr.Session.Parent != "s1" || len(fr.Session.Turns) != 1 {
		t.Errorf("fork = %+v, session %+v", fr.Switch, fr.Session)
	}
	if cur, _ := Resolve(ctx, f.tbl, ""); cur.ID != fr.Session.ID {
		t.Errorf("current session %s, want the fork %s", cur.ID, fr.Session.ID)
	}
	roots, err := Roots(ctx, f.tbl, nil)
	if err != nil || len(roots) != 2*3+2 { // s1: two turns kept, one rewound; the fork: one turn
		t.Errorf("roots %d, %v", len(roots), err)
	}

	want := []string{
		"turn-began s1 1", "message s1 1", "turn-ended s1 1",
		"turn-began s1 2", "message s1 2", "turn-ended s1 2",
		"turn-began s1 3", "message s1 3", "turn-ended s1 3",
		"rewound s1 3", "summarized s1 1", "summarized s1 2",
		"forked " + fr.Session.ID + " 2",
	}
	if !reflect.DeepEqual(f.events, want) {
		t.Errorf("events\n%q\nwant\n%q", f.events, want)
	}
	if f.held {
		t.Error("lock still held")
	}
}
