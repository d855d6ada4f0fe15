package session

import (
	"context"
	"fmt"
	"slices"
)

// TrackIgnored keeps ignored files that an agent's edit tool is about to
// change (its hook names them before the tool runs): the turn in
// progress then holds them at both ends, so rewinding it puts them back,
// though no whole-tree checkpoint holds an ignored file. Each file is
// taken as it is now, before the tool writes it: the best record of it at
// the turn's start (a shell command earlier in the turn may have changed
// it already). It returns the paths newly taken; without a turn in
// progress it does nothing.
func (c *Controller[R, S]) TrackIgnored(ctx context.Context, paths []Path) ([]Path, error) {
	s, unlock, err := c.lock(ctx)
	if err != nil {
		return nil, err
	}
	defer unlock()
	n := len(s.Turns)
	if n == 0 || !s.Turns[n-1].Open() {
		return nil, nil
	}
	t := s.Turns[n-1]
	var fresh []Path
	for _, p := range paths {
		if !slices.Contains(t.Ignored, p) && !slices.Contains(fresh, p) {
			fresh = append(fresh, p)
		}
	}
	if len(fresh) == 0 {
		return nil, nil
	}
	begin, taken, err := c.e.Amend(ctx, t.Begin, fresh, fmt.Sprintf("turn %d: %s (with the ignored files its edit tools changed)", t.N, firstLine(t.Prompt, 48)))
	if err != nil {
		return nil, err
	}
	if len(taken) == 0 {
		return nil, nil
	}
	t.Begin = begin
	t.Ignored = append(t.Ignored, taken...)
	slices.Sort(t.Ignored)
	t.Ignored = slices.Compact(t.Ignored)
	if err := put(ctx, c.e, s); err != nil {
		return nil, err
	}
	return taken, nil
}

// ignoredOf returns the ignored files the turns' edit tools changed.
func ignoredOf(turns []*Turn) []Path {
	var out []Path
	for _, t := range turns {
		out = append(out, t.Ignored...)
	}
	slices.Sort(out)
	return slices.Compact(out)
}
