package ckpt

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/seed1cedbf7c/ckpt/internal/store"
)

// Forking a session: a new session from one of its turns, on a new
// branch.

// ForkResult reports a fork.
type ForkResult struct {
	// Session is the new session (now the current one).
	Session *Session `json:"session"`
	// Switch moved the workspace to the fork's branch.
	Switch *SwitchResult `json:"switch"`
}

// Fork starts a new session from a turn: the conversation before the turn,
// and a new history branch starting at the turn's checkpoint. The
// workspace moves to the fork (the current state is checkpointed first)
// and the new session becomes the current one; the original session and
// its branch are untouched.
func (c *Controller) Fork(ctx context.Context, turn int) (*ForkResult, error) {
	s, unlock, err := c.lockSession(ctx)
	if err != nil {
		return nil, err
	}
	defer unlock()
	t, err := c.turn(s, turn)
	if err != nil {
		return nil, err
	}
	msgs, err := c.Messages(ctx, false)
	if err != nil {
		return nil, err
	}
	ns, err := c.r.newSessionLocked(ctx, SessionOptions{Title: fmt.Sprintf("%s (fork at turn %d)", s.Title, turn), Agent: s.Agent})
	if err != nil {
		return nil, err
	}
	ns.Parent, ns.ForkTurn, ns.Branch = s.ID, turn, "fork/"+ns.ID
	ns.Turns = append([]*Turn{}, s.Turns[:turn-1]...)
	if _, err := c.r.createBranchLocked(ctx, ns.Branch, t.Begin.String()); err != nil {
		c.r.sessions().DeleteSession(ctx, ns.ID)
		return nil, err
	}
	sw, err := c.r.switchLocked(ctx, ns.Branch, SwitchOptions{})
	if err != nil {
		c.r.sessions().DeleteSession(ctx, ns.ID)
		return nil, err
	}
	var data [][]byte
	for _, m := range msgs {
		if m.Turn < turn {
			b, _ := json.Marshal(m)
			data = append(data, b)
		}
	}
	ns.Updated = c.r.now().UTC()
	doc, err := json.Marshal(ns)
	if err != nil {
		return nil, err
	}
	if err := c.r.sessions().ReplaceMessages(ctx, ns.ID, data, &store.SessionRow{ID: ns.ID, Updated: ns.Updated, Data: doc}); err != nil {
		return nil, err
	}
	c.r.emit(Event{Kind: EventForked, Session: ns.ID, Turn: turn, Checkpoint: t.Begin, Message: "forked from " + s.ID})
	return &ForkResult{Session: ns, Switch: sw}, nil
}
