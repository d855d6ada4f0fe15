package ckpt

import (
	"context"
	"fmt"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/seed1cedbf7c/ckpt/internal/testutil"
)

// Two sessions side by side: A's turn is running when B's turn begins,
// changes b.txt and ends; A changes a.txt meanwhile, and c.txt after B's
// turn is over. Both turns' spans hold a.txt and b.txt. Rewinding A must
// never undo B's b.txt; a.txt is A's only when A's edit tool named it and
// B ran nothing that could have written it (a shell command could have).
func TestSessionsSideBySide(t *testing.T) {
	for _, tc := range []struct {
		name       string
		aTools     []Message // A's recorded tool calls
		bTools     []Message
		want       map[string]string
		wantShared []Path
	}{
		{
			name:       "no tool calls recorded: what both spans hold stays",
			want:       map[string]string{"a.txt": "A\n", "b.txt": "B\n", "c.txt": testutil.Absent},
			wantShared: []Path{"a.txt", "b.txt"},
		},
		{
			name:       "edit tools name the files: A's own write is undone",
			aTools:     []Message{{Role: "tool", Tool: "Write", Content: "WS/a.txt"}, {Role: "tool", Tool: "Write", Content: "c.txt"}},
			bTools:     []Message{{Role: "tool", Tool: "Edit", Content: "WS/b.txt"}, {Role: "tool", Tool: "Read", Content: "WS/a.txt"}},
			want:       map[string]string{"a.txt": "a0\n", "b.txt": "B\n", "c.txt": testutil.Absent},
			wantShared: []Path{"b.txt"},
		},
		{
			name:       "B ran a shell command: a.txt may be B's too, and stays",
			aTools:     []Message{{Role: "tool", Tool: "Write", Content: "WS/a.txt"}},
			bTools:     []Message{{Role: "tool", Tool: "Edit", Content: "WS/b.txt"}, {Role: "tool", Tool: "Bash", Content: "make"}},
			want:       map[string]string{"a.txt": "A\n", "b.txt": "B\n", "c.txt": testutil.Absent},
			wantShared: []Path{"a.txt", "b.txt"},
		},
		{
			name:       "B's agent compacted its context: a note, not a tool",
			aTools:     []Message{{Role: "tool", Tool: "Write", Content: "WS/a.txt"}},
			bTools:     []Message{{Role: "system", Content: "the agent compacted its context (auto)"}, {Role: "tool", Tool: "Edit", Content: "WS/b.txt"}},
			want:       map[string]string{"a.txt": "a0\n", "b.txt": "B\n", "c.txt": testutil.Absent},
			wantShared: []Path{"b.txt"},
		},
		{
			name:       "B's record was cut short: a.txt may be B's too",
			aTools:     []Message{{Role: "tool", Tool: "Write", Content: "WS/a.txt"}},
			bTools:     []Message{{Role: "tool", Tool: "Edit", Content: "WS/b.txt"}, {Role: "system", Content: "ckpt: 12 more messages of this turn are in the agent's transcript"}},
			want:       map[string]string{"a.txt": "A\n", "b.txt": "B\n", "c.txt": testutil.Absent},
			wantShared: []Path{"a.txt", "b.txt"},
		},
		{
			name:       "both name a.txt: it stays",
			aTools:     []Message{{Role: "tool", Tool: "Write", Content: "WS/a.txt"}},
			bTools:     []Message{{Role: "tool", Tool: "Edit", Content: "WS/b.txt"}, {Role: "tool", Tool: "Write", Content: "WS/a.txt"}},
			want:       map[string]string{"a.txt": "A\n", "b.txt": "B\n", "c.txt": testutil.Absent},
			wantShared: []Path{"a.txt", "b.txt"},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			r, ws := openTest(t, map[string]string{"a.txt": "a0\n", "b.txt": "b0\n"})
			a, b := newCtl(t, r, "A"), newCtl(t, r, "B")
			fix := func(ms []Message) []Message {
				out := append([]Message{{Role: "assistant", Content: "working"}}, ms...)
				for i := range out {
					if c := out[i].Content; len(c) > 3 && c[:3] == "WS/" {
						out[i].Content = filepath.Join(r.Root(), c[3:])
					}
				}
				return out
			}
			if _, err := a.BeginTurn(ctx, "A1"); err != nil {
				t.Fatal(err)
			}
			if _, err := b.BeginTurn(ctx, "B1"); err != nil {
				t.Fatal(err)
			}
			writeFile(t, ws, "a.txt", "A\n")
			writeFile(t, ws, "b.txt", "B\n")
			if _, err := b.AddMessages(ctx, fix(tc.bTools)); err != nil {
				t.Fatal(err)
			}
			if _, err := b.EndTurn(ctx); err != nil {
				t.Fatal(err)
			}
			writeFile(t, ws, "c.txt", "C\n")
			if _, err := a.AddMessages(ctx, fix(tc.aTools)); err != nil {
				t.Fatal(err)
			}
			if _, err := a.EndTurn(ctx); err != nil {
				t.Fatal(err)
			}
			res, err := a.Rewind(ctx, 1, ScopeCode, RewindOptions{})
			if err != nil {
				t.Fatal(err)
			}
			for p, w := range tc.want {
				if got := testutil.ReadFile(t, ws, p); got != w {
					t.Errorf("%s = %q, want %q", p, got, w)
				}
			}
			if !reflect.DeepEqual(res.Shared, tc.wantShared) {
				t.Errorf("shared %q, want %q", res.Shared, tc.wantShared)
			}
		})
	}
}

// A fork's turns before its fork point are its parent's own turns, copied
// (the same times, checkpoints and messages), not another session's work
// running at the same time: rewinding either session takes them back.
func TestSessionsSideBySideForkIsNotAnotherSession(t *testing.T) {
	ctx := context.Background()
	r, ws := openTest(t, map[string]string{"a.txt": "a0\n"})
	a := newCtl(t, r, "A")
	for i, content := range []string{"a1\n", "a2\n"} {
		if _, err := a.BeginTurn(ctx, fmt.Sprint("turn ", i+1)); err != nil {
			t.Fatal(err)
		}
		writeFile(t, ws, "a.txt", content)
		if _, err := a.AddMessages(ctx, []Message{{Role: "assistant", Content: "ok"}, {Role: "tool", Tool: "Write", Content: filepath.Join(r.Root(), "a.txt")}}); err != nil {
			t.Fatal(err)
		}
		if _, err := a.EndTurn(ctx); err != nil {
			t.Fatal(err)
		}
	}
	fr, err := a.Fork(ctx, 2)
	if err != nil {
		t.Fatal(err)
	}
	f, _, err := r.Controller(ctx, ControllerOptions{ID: fr.Session.ID})
	if err != nil {
		t.Fatal(err)
	}
	if got := testutil.ReadFile(t, ws, "a.txt"); got != "a1\n" {
		t.Fatalf("after the fork a.txt = %q", got)
	}
	res, err := f.Rewind(ctx, 1, ScopeCode, RewindOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got := testutil.ReadFile(t, ws, "a.txt"); got != "a0\n" || len(res.Shared) != 0 {
		t.Errorf("fork rewound to turn 1: a.txt = %q, shared %q; want %q, none", got, res.Shared, "a0\n")
	}
}

// A turn a conversation rewind removed while it was in progress is over:
// it must not count as running at the same time as every later turn of
// another session, keeping all they changed from ever being rewound.
func TestSessionsSideBySideRemovedOpenTurnEnds(t *testing.T) {
	ctx := context.Background()
	r, ws := openTest(t, map[string]string{"a.txt": "a0\n"})
	b := newCtl(t, r, "B")
	if _, err := b.BeginTurn(ctx, "B1"); err != nil {
		t.Fatal(err)
	}
	if _, err := b.Rewind(ctx, 1, ScopeConversation, RewindOptions{}); err != nil {
		t.Fatal(err)
	}
	a := newCtl(t, r, "A")
	if _, err := a.BeginTurn(ctx, "A1"); err != nil {
		t.Fatal(err)
	}
	writeFile(t, ws, "a.txt", "A\n")
	if _, err := a.AddMessages(ctx, []Message{{Role: "assistant", Content: "ok"}, {Role: "tool", Tool: "Write", Content: filepath.Join(r.Root(), "a.txt")}}); err != nil {
		t.Fatal(err)
	}
	if _, err := a.EndTurn(ctx); err != nil {
		t.Fatal(err)
	}
	res, err := a.Rewind(ctx, 1, ScopeCode, RewindOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got := testutil.ReadFile(t, ws, "a.txt"); got != "a0\n" || len(res.Shared) != 0 {
		t.Errorf("a.txt = %q, shared %q; want %q, none", got, res.Shared, "a0\n")
	}
}
