package tui

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/x/exp/teatest"
	"github.com/seed1cedbf7c/ckpt"
)

// The picker as a running Bubble Tea program (teatest): the dry run and
// the rewind run in the program's commands, asynchronously, as on a
// terminal.
func TestProgramRewindsCode(t *testing.T) {
	f := newFixture(t, 3)
	m := New(context.Background(), f.ctl, Options{Exact: true, Location: time.UTC, Renderer: plainRenderer()})
	tm := teatest.NewTestModel(t, m, teatest.WithInitialTermSize(100, 30))
	wait := func(what string) {
		t.Helper()
		teatest.WaitFor(t, tm.Output(), func(b []byte) bool { return bytes.Contains(b, []byte(what)) },
			teatest.WithDuration(20*time.Second), teatest.WithCheckInterval(10*time.Millisecond))
	}
	wait("rename one to two")
	tm.Send(tea.KeyMsg{Type: tea.KeyDown})
	tm.Send(tea.KeyMsg{Type: tea.KeyEnter})
	wait("[fork from here]")
	tm.Send(tea.KeyMsg{Type: tea.KeyDown})
	tm.Send(tea.KeyMsg{Type: tea.KeyDown})
	wait("Code: back to the start of turn 2, 3 file(s) to change:")
	tm.Send(tea.KeyMsg{Type: tea.KeyEnter})
	fm := tm.FinalModel(t, teatest.WithFinalTimeout(20*time.Second)).(*Model)
	m.Close()
	r := fm.Result()
	if r.Err != nil || r.Rewind == nil || r.Rewind.Scope != ckpt.ScopeCode || r.Turn != 2 {
		t.Fatalf("result %+v, want turn 2's code rewound", r)
	}
	if f.read("notes.txt") != "keep me\n" || f.read("bin/app") != "<absent>" || f.read("README.md") != "<absent>" {
		t.Error("the files were not rewound to turn 2's start")
	}
}

// Summarize up to here, as a running program: the preview names the
// turns, Enter runs the summarizer, and the result is the summary.
func TestProgramSummarizes(t *testing.T) {
	f := newFixture(t, 3)
	m := New(context.Background(), f.ctl, Options{Exact: true, Location: time.UTC, Renderer: plainRenderer()})
	tm := teatest.NewTestModel(t, m, teatest.WithInitialTermSize(100, 30))
	wait := func(what string) {
		t.Helper()
		teatest.WaitFor(t, tm.Output(), func(b []byte) bool { return bytes.Contains(b, []byte(what)) },
			teatest.WithDuration(20*time.Second), teatest.WithCheckInterval(10*time.Millisecond))
	}
	wait("rename one to two")
	tm.Send(tea.KeyMsg{Type: tea.KeyDown})
	tm.Send(tea.KeyMsg{Type: tea.KeyEnter})
	wait("[summarize up to here]")
	tm.Send(tea.KeyMsg{Type: tea.KeyEnd})
	tm.Send(tea.KeyMsg{Type: tea.KeyUp})
	wait("Summary: turns 1-2 (4 message(s)) become one summary message, in turn 1:")
	tm.Send(tea.KeyMsg{Type: tea.KeyEnter})
	fm := tm.FinalModel(t, teatest.WithFinalTimeout(20*time.Second)).(*Model)
	m.Close()
	r := fm.Result()
	if r.Err != nil || r.Summary == nil || r.Item != ItemSummarizeUpto || r.Turn != 2 {
		t.Fatalf("result %+v, want turns 1-2 summarized", r)
	}
	if r.Summary.First != 1 || r.Summary.Last != 2 || !strings.HasPrefix(r.Summary.Summary, "Summary of turns 1-2:") {
		t.Errorf("summary %+v", r.Summary)
	}
	if s := f.session(); len(s.Turns) != 2 || !s.Turns[0].Summary {
		t.Errorf("turns %+v, want the summary and turn 3 renumbered 2", s.Turns)
	}
}

// Quitting while a dry run is in flight waits for it: Close returns only
// once no Controller call runs (the caller closes the repository next).
func TestProgramQuitWhileComputing(t *testing.T) {
	f := newFixture(t, 3)
	m := New(context.Background(), f.ctl, Options{Exact: true, Location: time.UTC, Renderer: plainRenderer()})
	tm := teatest.NewTestModel(t, m, teatest.WithInitialTermSize(100, 30))
	teatest.WaitFor(t, tm.Output(), func(b []byte) bool { return bytes.Contains(b, []byte("rename one to two")) },
		teatest.WithDuration(20*time.Second))
	tm.Send(tea.KeyMsg{Type: tea.KeyEnter})
	tm.Send(tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune("q")})
	fm := tm.FinalModel(t, teatest.WithFinalTimeout(20*time.Second)).(*Model)
	m.Close()
	if r := fm.Result(); !r.Cancelled || r.Rewind != nil {
		t.Fatalf("result %+v, want cancelled", r)
	}
	f.unchanged()
}
