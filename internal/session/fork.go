package session

import (
	"context"
	"encoding/json"
)

// Forking a session: a new session from one of its turns, on a new
// branch.

// ForkResult reports a fork. S is the engine's result of switching
// branches.
type ForkResult[S any] struct {
	// Session is the new session (now the current one).
	Session *Session `json:"session"`
	// Switch moved the workspace to the fork's branch.
	Switch *S `json:"switch"`
}

// Fork starts a new session from a turn: the conversation before the turn,
// and a new history branch starting at the turn's checkpoint. The
// workspace moves to the fork (the current state is checkpointed first)
// and the new session becomes the current one; the original session and
// its branch are untouched.
func (c *Controller[R, S]) Fork(ctx context.Context, turn int) (*ForkResult[S], error) {
	s, unlock, err := c.lock(ctx)
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
	// The fork keeps its origin's title: Parent and ForkTurn say where it
	// came from, and every face shows them once (a title that said it too
	// showed it twice, and grew with each fork of a fork).
	ns, err := newLocked(ctx, c.e, Options{Title: s.Title, Agent: s.Agent})
	if err != nil {
		return nil, err
	}
	ns.Parent, ns.ForkTurn, ns.Branch = s.ID, turn, "fork/"+ns.ID
	// The fork starts with these turns' changes in place: no rewind of
	// the parent that took them back is in effect on its branch.
	ns.Turns = make([]*Turn, 0, turn-1)
	for _, pt := range s.Turns[:turn-1] {
		ct := *pt
		ct.UndoneBy = nil
		if len(ct.Parts) > 0 {
			ct.Parts = append([]TurnPart{}, ct.Parts...)
			for i := range ct.Parts {
				ct.Parts[i].UndoneBy = nil
			}
		}
		ns.Turns = append(ns.Turns, &ct)
	}
	sw, err := c.e.Fork(ctx, ns.Branch, t.Begin)
	if err != nil {
		c.e.Sessions().DeleteSession(ctx, ns.ID)
		return nil, err
	}
	var data [][]byte
	for _, m := range msgs {
		if m.Turn < turn {
			b, _ := json.Marshal(m)
			data = append(data, b)
		}
	}
	if err := replace(ctx, c.e, ns, data); err != nil {
		return nil, err
	}
	c.e.Emit(Event{Kind: EventForked, Session: ns.ID, Turn: turn, Checkpoint: t.Begin, Message: "forked from " + s.ID})
	return &ForkResult[S]{Session: ns, Switch: sw}, nil
}
