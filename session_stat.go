package ckpt

import (
	"context"
	"sort"

	"github.com/seed1cedbf7c/ckpt/internal/diff"
)

// LineCount is what a span of history changed: files, and the lines
// inserted and deleted in text files, counted as git diff --numstat
// --no-renames counts them (a rename is a deletion and an addition).
type LineCount struct {
	Files      int `json:"files"`
	Insertions int `json:"insertions"`
	Deletions  int `json:"deletions"`
	// Binary is how many of the files are binary (they have no lines).
	Binary int `json:"binary,omitempty"`
}

func (c *LineCount) add(o LineCount) {
	c.Files += o.Files
	c.Insertions += o.Insertions
	c.Deletions += o.Deletions
	c.Binary += o.Binary
}

// TurnStat is who changed what around one turn.
type TurnStat struct {
	Turn int `json:"turn"`
	// Agent is what the turn changed, from its start to its end (a
	// summary turn: each original turn's span; a turn in progress: to
	// the working tree).
	Agent LineCount `json:"agent"`
	// UserBefore is what changed between the previous turn's end and this
	// turn's start (and, in a summary turn, between its original turns):
	// edits made between turns, by the user or another session.
	UserBefore LineCount `json:"user_before"`
	// Removed is what turns a conversation rewind removed changed between
	// the previous turn and this one: the agent's work, though the
	// conversation no longer shows it.
	Removed    LineCount `json:"removed,omitzero"`
	InProgress bool      `json:"in_progress,omitempty"`
}

// SessionStat is who changed what in a session, turn by turn: exact,
// since every turn has a checkpoint at both ends.
type SessionStat struct {
	Session string     `json:"session"`
	Turns   []TurnStat `json:"turns"`
	Agent   LineCount  `json:"agent"`
	User    LineCount  `json:"user"`
}

// SessionStat counts, for each turn of s, the lines the agent changed in
// it and the lines changed between it and the turn before. Turns a
// conversation rewind removed count as the agent's (TurnStat.Removed of
// the turn after them); their own spans are taken out of the changes
// between turns.
func (r *Repo) SessionStat(ctx context.Context, s *Session) (*SessionStat, error) {
	out := &SessionStat{Session: s.ID, Turns: []TurnStat{}}
	type span struct {
		t       *Turn
		removed bool
	}
	spans := make([]span, 0, len(s.Turns)+len(s.Rewound))
	for _, t := range s.Turns {
		spans = append(spans, span{t, false})
	}
	for _, t := range s.Rewound {
		if !t.Open() {
			spans = append(spans, span{t, true})
		}
	}
	sort.SliceStable(spans, func(i, j int) bool { return spans[i].t.Started.Before(spans[j].t.Started) })
	var prevEnd *ID
	var user, removed LineCount // since the last live turn
	for _, sp := range spans {
		t := sp.t
		parts := t.Parts
		if len(parts) == 0 {
			parts = []TurnPart{{Begin: t.Begin, End: t.End}}
		}
		var agent LineCount
		for _, p := range parts {
			if prevEnd != nil && *prevEnd != p.Begin {
				c, err := r.lineCount(ctx, prevEnd.String(), p.Begin.String())
				if err != nil {
					return nil, err
				}
				user.add(c)
			}
			to := "" // in progress: to the working tree
			if p.End != nil {
				to = p.End.String()
			}
			c, err := r.lineCount(ctx, p.Begin.String(), to)
			if err != nil {
				return nil, err
			}
			agent.add(c)
			prevEnd = p.End
		}
		if sp.removed {
			removed.add(agent)
			continue
		}
		ts := TurnStat{Turn: t.N, InProgress: t.Open(), Agent: agent, UserBefore: user, Removed: removed}
		out.Agent.add(ts.Agent)
		out.Agent.add(ts.Removed)
		out.User.add(ts.UserBefore)
		out.Turns = append(out.Turns, ts)
		user, removed = LineCount{}, LineCount{}
	}
	out.Agent.add(removed)
	out.User.add(user)
	return out, nil
}

// lineCount is what changed from one revision to another ("" to: the
// working tree).
func (r *Repo) lineCount(ctx context.Context, from, to string) (LineCount, error) {
	d, err := r.Diff(ctx, DiffOptions{From: from, To: to})
	if err != nil {
		return LineCount{}, err
	}
	// A path one side holds as a tracked ignored file (see MetaTracked)
	// and the other does not hold at all did not change: the other side
	// never looked at it.
	held := func(rev string) map[string]bool {
		m := map[string]bool{}
		if id, err := ParseID(rev); err == nil {
			if rec, err := r.st.Checkpoint(ctx, id); err == nil {
				for _, p := range trackedOf(rec) {
					m[p] = true
				}
			}
		}
		return m
	}
	// The working tree is scanned with from's tracked files.
	fromHeld, toHeld := held(from), held(from)
	if to != "" {
		toHeld = held(to)
	}
	var c LineCount
	for _, fc := range d.Files {
		if p := string(fc.Path); fc.Status == "deleted" && fromHeld[p] && !toHeld[p] || fc.Status == "added" && toHeld[p] && !fromHeld[p] {
			continue
		}
		ch, err := d.change(ctx, fc)
		if err != nil {
			return LineCount{}, err
		}
		st := diff.Stat(ch)
		c.Files++
		c.Insertions += st.Insertions
		c.Deletions += st.Deletions
		if st.Binary {
			c.Binary++
		}
	}
	return c, nil
}
