package ckpt

import (
	"context"
	"errors"
	"fmt"
)

// This file holds the session API agent hooks need beyond the controller's
// turn-by-turn calls: opening a session's controller by its exact id
// without listing every session, and recording a turn an agent reports
// only once it is over.

// OpenController opens the session with opts.ID, creating it if there is
// none (as [Repo.OpenSession] does), and returns its controller. Unlike
// [Repo.Controller] it does not list the other sessions, so its cost does
// not grow with the number of sessions in the store. opts.ID is required.
func (r *Repo) OpenController(ctx context.Context, opts SessionOptions) (*Controller, *Session, error) {
	if opts.ID == "" {
		return nil, nil, errors.New("open session: an id is required")
	}
	s, err := r.OpenSession(ctx, opts)
	if err != nil {
		return nil, nil, err
	}
	return &Controller{r: r, id: s.ID}, s, nil
}

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
func (c *Controller) RecordTurn(ctx context.Context, prompt string) (*Turn, error) {
	unlock, err := c.r.begin(ctx)
	if err != nil {
		return nil, err
	}
	defer unlock()
	s, err := c.r.loadSession(ctx, c.id)
	if err != nil {
		return nil, err
	}
	if n := len(s.Turns); n > 0 && s.Turns[n-1].Open() {
		if err := c.endTurnLocked(ctx, s, s.Turns[n-1]); err != nil {
			return nil, err
		}
	}
	_, headRec, err := c.r.head(ctx)
	if err != nil {
		return nil, err
	}
	n := len(s.Turns) + 1
	res, err := c.r.saveLocked(ctx, SaveOptions{Kind: KindTurn, Message: fmt.Sprintf("turn %d ended: %s", n, firstLine(prompt, 64)),
		Meta: map[string]string{"session": s.ID, "turn": fmt.Sprint(n), "at": "end", "recorded": "after"}}, nil)
	if err != nil {
		return nil, err
	}
	end := res.Checkpoint.ID
	begin := end
	if headRec != nil {
		begin = headRec.ID
	}
	now := c.r.now().UTC()
	t := &Turn{N: n, Prompt: prompt, Started: now, Ended: now, Begin: begin, End: &end, Files: []TurnFile{}}
	if begin != end {
		if t.Files, err = c.r.turnFiles(ctx, begin, end); err != nil {
			return nil, err
		}
	}
	s.Turns = append(s.Turns, t)
	if err := c.r.putSession(ctx, s); err != nil {
		return nil, err
	}
	if _, err := c.appendMessage(ctx, Message{Turn: n, Role: "user", Content: prompt}); err != nil {
		return nil, err
	}
	c.r.emit(Event{Kind: EventTurnBegan, Checkpoint: begin, Session: s.ID, Turn: n, Message: firstLine(prompt, 200)})
	c.r.emit(Event{Kind: EventTurnEnded, Checkpoint: end, Session: s.ID, Turn: n, Paths: turnPaths(t.Files)})
	return t, nil
}
