package ckpt

import (
	"context"

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
// it and the lines changed between it and the turn before.
func (r *Repo) SessionStat(ctx context.Context, s *Session) (*SessionStat, error) {
	out := &SessionStat{Session: s.ID, Turns: []TurnStat{}}
	var prevEnd *ID
	for _, t := range s.Turns {
		ts := TurnStat{Turn: t.N, InProgress: t.Open()}
		parts := t.Parts
		if len(parts) == 0 {
			parts = []TurnPart{{Begin: t.Begin, End: t.End}}
		}
		for _, p := range parts {
			if prevEnd != nil && *prevEnd != p.Begin {
				c, err := r.lineCount(ctx, prevEnd.String(), p.Begin.String())
				if err != nil {
					return nil, err
				}
				ts.UserBefore.add(c)
			}
			to := "" // in progress: to the working tree
			if p.End != nil {
				to = p.End.String()
			}
			c, err := r.lineCount(ctx, p.Begin.String(), to)
			if err != nil {
				return nil, err
			}
			ts.Agent.add(c)
			prevEnd = p.End
		}
		out.Agent.add(ts.Agent)
		out.User.add(ts.UserBefore)
		out.Turns = append(out.Turns, ts)
	}
	return out, nil
}

// lineCount is what changed from one revision to another ("" to: the
// working tree).
func (r *Repo) lineCount(ctx context.Context, from, to string) (LineCount, error) {
	d, err := r.Diff(ctx, DiffOptions{From: from, To: to})
	if err != nil {
		return LineCount{}, err
	}
	var c LineCount
	for _, fc := range d.Files {
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
