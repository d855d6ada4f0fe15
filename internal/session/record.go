package session

import (
	"context"
	"encoding/json"
	"fmt"
)

// This file holds what agent hooks need beyond the controller's
// turn-by-turn calls: recording a turn an agent reports only once it is
// over, and a turn's messages at once.

// RecordTurn records a turn that has already happened, for agents that
// report a turn only when it is over (Codex's notify program): the turn
// begins at the workspace's HEAD checkpoint — the last state ckpt knows,
// normally the end of the session's previous turn — and ends with a
// checkpoint taken now. The files it lists are those that differ between
// the two, so edits made between the previous checkpoint and the turn are
// counted as the turn's. Without any checkpoint yet, the turn begins and
// ends at the checkpoint taken now and lists no files. A turn still in
// progress is ended first. The prompt is recorded as the turn's first
// message.
func (c *Controller[R, S]) RecordTurn(ctx context.Context, prompt string) (*Turn, error) {
	s, unlock, err := c.lockForTurn(ctx)
	if err != nil {
		return nil, err
	}
	defer unlock()
	head, err := c.e.Head(ctx)
	if err != nil {
		return nil, err
	}
	n := len(s.Turns) + 1
	end, err := c.e.Save(ctx, fmt.Sprintf("turn %d ended: %s", n, firstLine(prompt, 64)),
		map[string]string{"session": s.ID, "turn": fmt.Sprint(n), "at": "end", "recorded": "after"})
	if err != nil {
		return nil, err
	}
	begin := end
	if !head.IsZero() {
		begin = head
	}
	now := c.e.Now().UTC()
	t := &Turn{N: n, Prompt: prompt, Started: now, Ended: now, Begin: begin, End: &end, Files: []TurnFile{}}
	if begin != end {
		if t.Files, err = c.e.Changes(ctx, begin, end); err != nil {
			return nil, err
		}
	}
	if err := c.addTurnLocked(ctx, s, t); err != nil {
		return nil, err
	}
	c.e.Emit(Event{Kind: EventTurnBegan, Checkpoint: begin, Session: s.ID, Turn: n, Message: firstLine(prompt, 200)})
	c.e.Emit(Event{Kind: EventTurnEnded, Checkpoint: end, Session: s.ID, Turn: n, Paths: turnPaths(t.Files)})
	return t, nil
}

// AddMessages adds messages to the conversation as [Controller.AddMessage]
// does, under one lock and with one update of the session, for a frontend
// that records a turn's messages at once (an agent hook reading its
// transcript).
func (c *Controller[R, S]) AddMessages(ctx context.Context, msgs []Message) ([]*Message, error) {
	for _, m := range msgs {
		if !messageRoles[m.Role] {
			return nil, fmt.Errorf("message role %q: want user, assistant, tool, system or summary", m.Role)
		}
	}
	s, unlock, err := c.lock(ctx)
	if err != nil {
		return nil, err
	}
	defer unlock()
	out := make([]*Message, 0, len(msgs))
	data := make([][]byte, 0, len(msgs))
	for _, m := range msgs {
		if m.Turn == 0 {
			m.Turn = len(s.Turns)
		}
		if m.Time.IsZero() {
			m.Time = c.e.Now().UTC()
		}
		m.Seq = 0
		b, err := json.Marshal(m)
		if err != nil {
			return nil, err
		}
		data = append(data, b)
		mm := m
		out = append(out, &mm)
	}
	// One transaction (one fsync) for the whole turn's messages.
	first, err := c.e.Sessions().AppendMessages(ctx, c.id, data)
	if err != nil {
		return nil, err
	}
	for i, m := range out {
		m.Seq = first + int64(i)
	}
	if err := put(ctx, c.e, s); err != nil { // the session is now the current one
		return out, err
	}
	for _, m := range out {
		c.e.Emit(Event{Kind: EventMessage, Session: s.ID, Turn: m.Turn, Message: firstLine(m.Content, 200)})
	}
	return out, nil
}

// EndTurnIfOpen ends turn n if it is the turn in progress, as
// [Controller.EndTurn] does, and reports whether it did: a hook that runs
// in the background (or late) must not end a turn that began after it was
// called, nor fail because another call ended its turn already.
func (c *Controller[R, S]) EndTurnIfOpen(ctx context.Context, n int) (*Turn, bool, error) {
	s, unlock, err := c.lock(ctx)
	if err != nil {
		return nil, false, err
	}
	defer unlock()
	if n < 1 || n != len(s.Turns) || !s.Turns[n-1].Open() {
		return nil, false, nil
	}
	t := s.Turns[n-1]
	if err := c.endTurnLocked(ctx, s, t); err != nil {
		return nil, false, err
	}
	return t, true, nil
}
