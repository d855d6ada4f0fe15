package session

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"
)

// Summarizing a session: turns replaced by one summary message, from the
// store's summarizer command or the built-in one.

// Direction says which turns [Controller.Summarize] replaces.
type Direction string

// Summarize directions.
const (
	SummarizeFrom Direction = "from" // the turn and every later one
	SummarizeUpto Direction = "upto" // every turn up to and including it
)

// SummarizeResult reports a summary.
type SummarizeResult struct {
	// First and Last are the turns summarized.
	First   int    `json:"first_turn"`
	Last    int    `json:"last_turn"`
	Summary string `json:"summary"`
	// Turn is the turn that now stands for them.
	Turn *Turn `json:"turn"`
}

// builtinSummary is deterministic and offline: per turn, its prompt, the
// files it changed and the last thing the agent said.
func builtinSummary(tr *transcript) string {
	var b strings.Builder
	if len(tr.Turns) == 1 {
		fmt.Fprintf(&b, "Summary of turn %d:\n", tr.Turns[0].N)
	} else if len(tr.Turns) > 1 {
		fmt.Fprintf(&b, "Summary of turns %d-%d:\n", tr.Turns[0].N, tr.Turns[len(tr.Turns)-1].N)
	}
	for _, t := range tr.Turns {
		fmt.Fprintf(&b, "- Turn %d: %s\n", t.N, firstLine(t.Prompt, 120))
		if len(t.Files) > 0 {
			var a, m, d []string
			for _, f := range t.Files {
				switch f.Status {
				case "added":
					a = append(a, string(f.Path))
				case "deleted":
					d = append(d, string(f.Path))
				default:
					m = append(m, string(f.Path))
				}
			}
			var parts []string
			for _, x := range []struct {
				verb  string
				paths []string
			}{{"added", a}, {"modified", m}, {"deleted", d}} {
				if len(x.paths) > 0 {
					ps := x.paths
					more := ""
					if len(ps) > 8 {
						more = fmt.Sprintf(" and %d more", len(ps)-8)
						ps = ps[:8]
					}
					parts = append(parts, x.verb+" "+strings.Join(ps, ", ")+more)
				}
			}
			fmt.Fprintf(&b, "  Files: %s.\n", strings.Join(parts, "; "))
		} else {
			fmt.Fprintf(&b, "  Files: none changed.\n")
		}
		outcome := "no reply recorded"
		for i := len(t.Messages) - 1; i >= 0; i-- {
			if m := t.Messages[i]; m.Role == "assistant" || m.Role == "summary" {
				outcome = firstLine(m.Content, 160)
				break
			}
		}
		fmt.Fprintf(&b, "  Outcome: %s\n", outcome)
	}
	return strings.TrimRight(b.String(), "\n")
}

// Summarize replaces the turns from a turn on (SummarizeFrom) or up to it
// (SummarizeUpto) with one summary message in one turn, which keeps the
// first turn's starting checkpoint (so rewinding to it still works). The
// summarizer is the store's `summarizer` setting — a command that reads
// the transcript as JSON on stdin and prints the summary — or the built-in
// one, deterministic and offline: per turn, its prompt, the files it
// changed and how it ended. The replaced messages are kept, hidden.
func (c *Controller[R, S]) Summarize(ctx context.Context, turn int, dir Direction) (*SummarizeResult, error) {
	s, unlock, err := c.lock(ctx)
	if err != nil {
		return nil, err
	}
	defer unlock()
	if _, err := c.turn(s, turn); err != nil {
		return nil, err
	}
	first, last := turn, len(s.Turns)
	switch dir {
	case SummarizeFrom:
	case SummarizeUpto:
		first, last = 1, turn
	default:
		return nil, fmt.Errorf("summarize: unknown direction %q (want from or upto)", dir)
	}
	msgs, err := c.Messages(ctx, true)
	if err != nil {
		return nil, err
	}
	var tr transcript
	tr.Session.ID, tr.Session.Title = s.ID, s.Title
	for _, t := range s.Turns[first-1 : last] {
		tt := transcriptTurn{N: t.N, Prompt: t.Prompt, Time: t.Started, Files: t.Files, Messages: []*Message{}, Summary: t.Summary}
		for _, m := range msgs {
			if m.Turn == t.N && m.Hidden == "" {
				tt.Messages = append(tt.Messages, m)
			}
		}
		tr.Turns = append(tr.Turns, tt)
	}
	text, err := c.summarize(ctx, &tr)
	if err != nil {
		return nil, err
	}
	// The turn that stands for them.
	ft, lt := s.Turns[first-1], s.Turns[last-1]
	st := &Turn{N: first, Prompt: fmt.Sprintf("(summary of turns %d-%d)", first, last), Started: ft.Started, Ended: lt.Ended,
		Begin: ft.Begin, End: lt.End, Summary: true, Files: []TurnFile{}}
	if first == last {
		st.Prompt = fmt.Sprintf("(summary of turn %d)", first)
	}
	for _, t := range s.Turns[first-1 : last] {
		st.Parts = append(st.Parts, t.parts()...)
	}
	// The ignored files the turns' edit tools changed: the parts' ends
	// hold them, and a rewind must capture and put them back.
	st.Ignored = ignoredOf(s.Turns[first-1 : last])
	seen := map[Path]int{}
	for _, t := range s.Turns[first-1 : last] {
		for _, f := range t.Files {
			if i, ok := seen[f.Path]; ok {
				st.Files[i].Status = "modified"
				continue
			}
			seen[f.Path] = len(st.Files)
			st.Files = append(st.Files, f)
		}
	}
	shift := last - first // later turns move down by this much
	var turns []*Turn
	turns = append(turns, s.Turns[:first-1]...)
	turns = append(turns, st)
	for _, t := range s.Turns[last:] {
		t.N -= shift
		turns = append(turns, t)
	}
	var data [][]byte
	addMsg := func(m *Message) {
		b, _ := json.Marshal(m)
		data = append(data, b)
	}
	placed := false
	for _, m := range msgs {
		switch {
		case m.Hidden != "":
			addMsg(m)
		case m.Turn >= first && m.Turn <= last:
			if !placed {
				addMsg(&Message{Turn: first, Role: "summary", Content: text, Time: c.e.Now().UTC()})
				placed = true
			}
			m.Hidden, m.Turn = "summarized", first
			addMsg(m)
		case m.Turn > last:
			m.Turn -= shift
			addMsg(m)
		default:
			addMsg(m)
		}
	}
	if !placed {
		addMsg(&Message{Turn: first, Role: "summary", Content: text, Time: c.e.Now().UTC()})
	}
	s.Turns = turns
	if err := replace(ctx, c.e, s, data); err != nil {
		return nil, err
	}
	c.e.Emit(Event{Kind: EventSummarized, Session: s.ID, Turn: first, Message: fmt.Sprintf("turns %d-%d", first, last)})
	return &SummarizeResult{First: first, Last: last, Summary: text, Turn: st}, nil
}

// summarize runs the configured summarizer, or the built-in one.
func (c *Controller[R, S]) summarize(ctx context.Context, tr *transcript) (string, error) {
	if strings.TrimSpace(c.e.Summarizer()) == "" {
		return builtinSummary(tr), nil
	}
	return c.e.RunSummarizer(ctx, marshalIndent(tr))
}

// transcript renders turns (and their messages) as the JSON a summarizer
// reads.
type transcript struct {
	Session struct {
		ID    string `json:"id"`
		Title string `json:"title"`
	} `json:"session"`
	Turns []transcriptTurn `json:"turns"`
}

type transcriptTurn struct {
	N        int        `json:"n"`
	Prompt   string     `json:"prompt"`
	Time     time.Time  `json:"time"`
	Files    []TurnFile `json:"files"`
	Messages []*Message `json:"messages"`
	Summary  bool       `json:"summary,omitempty"`
}

func marshalIndent(v any) []byte {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetIndent("", "  ")
	enc.Encode(v)
	return b.Bytes()
}
