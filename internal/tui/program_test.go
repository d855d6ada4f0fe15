package tui

import (
	"bytes"
	"context"
	"io"
	"strings"
	"sync"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/seed1cedbf7c/ckpt"
)

// program is the picker running as a Bubble Tea program, as on a
// terminal: keys typed into its input as a terminal sends them, the dry
// runs and actions in the program's commands, asynchronously.
type program struct {
	t      *testing.T
	m      *Model
	keys   *io.PipeWriter
	out    bytes.Buffer
	done   chan tea.Model
	mu     sync.Mutex
	screen string // the last view the program rendered
	idle   bool   // no dry run was in flight when it rendered
}

// watched passes everything to the picker and keeps its last view.
type watched struct {
	*Model
	p *program
}

func (w watched) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	_, cmd := w.Model.Update(msg)
	return w, cmd
}

func (w watched) View() tea.View {
	v := w.Model.View()
	w.p.mu.Lock()
	w.p.screen, w.p.idle = v.Content, w.Model.computing == nil
	w.p.mu.Unlock()
	return v
}

func startProgram(t *testing.T, f *fixture) *program {
	t.Helper()
	in, keys := io.Pipe()
	p := &program{t: t, keys: keys, done: make(chan tea.Model, 1)}
	p.m = plain(New(context.Background(), f.ctl, Options{Exact: true, Location: time.UTC}))
	prog := tea.NewProgram(watched{p.m, p}, tea.WithInput(in), tea.WithOutput(&p.out),
		tea.WithWindowSize(100, 30), tea.WithEnvironment([]string{"TERM=xterm-256color"}))
	go func() {
		fm, err := prog.Run()
		if err != nil {
			t.Errorf("the program: %v", err)
		}
		p.done <- fm
	}()
	t.Cleanup(func() { keys.Close() })
	return p
}

// wait waits until the program shows all of what at once, with no dry run
// in flight: Enter acts only once the picker has shown what it will
// change, and a preview's text may be on the screen from the item the
// keys just left while the next item's is computed.
func (p *program) wait(what ...string) {
	p.t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		p.mu.Lock()
		screen, idle := p.screen, p.idle
		p.mu.Unlock()
		shown := idle
		for _, w := range what {
			shown = shown && strings.Contains(screen, w)
		}
		if shown {
			return
		}
		if time.Now().After(deadline) {
			p.t.Fatalf("the picker does not show %q after 20s; it shows:\n%s", what, screen)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// typeKeys writes keys to the program's input as a terminal sends them.
func (p *program) typeKeys(seqs ...string) {
	p.t.Helper()
	for _, s := range seqs {
		if _, err := io.WriteString(p.keys, s); err != nil {
			p.t.Fatal(err)
		}
	}
}

// result waits for the program to quit and returns what the picker did.
func (p *program) result() Result {
	p.t.Helper()
	select {
	case fm := <-p.done:
		p.m.Close()
		if !strings.Contains(p.out.String(), "\x1b[?1049h") {
			p.t.Errorf("the picker did not use the alternate screen; it wrote %q", p.out.String())
		}
		return fm.(watched).Result()
	case <-time.After(20 * time.Second):
		p.t.Fatal("the program did not quit after 20s")
	}
	return Result{}
}

// Keys as a terminal sends them.
const (
	keyUp    = "\x1b[A"
	keyDown  = "\x1b[B"
	keyEnd   = "\x1b[F"
	keyEnter = "\r"
)

func TestProgramRewindsCode(t *testing.T) {
	f := newFixture(t, 3)
	p := startProgram(t, f)
	p.wait("rename one to two")
	p.typeKeys(keyDown, keyEnter)
	p.wait("[fork from here]")
	p.typeKeys(keyDown, keyDown)
	p.wait("> [code]\n", "Code: back to the start of turn 2, 3 file(s) to change:")
	p.typeKeys(keyEnter)
	r := p.result()
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
	p := startProgram(t, f)
	p.wait("rename one to two")
	p.typeKeys(keyDown, keyEnter)
	p.wait("[summarize up to here]")
	p.typeKeys(keyEnd, keyUp)
	p.wait("> [summarize up to here]\n", "Summary: turns 1-2 (4 message(s)) become one summary message, in turn 1:")
	p.typeKeys(keyEnter)
	r := p.result()
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
	p := startProgram(t, f)
	p.wait("rename one to two")
	p.typeKeys(keyEnter, "q")
	if r := p.result(); !r.Cancelled || r.Rewind != nil {
		t.Fatalf("result %+v, want cancelled", r)
	}
	f.unchanged()
}
