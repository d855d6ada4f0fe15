package session

import (
	"context"
	"encoding/json"
	"fmt"
	"path"
	"slices"
	"sort"

	"github.com/seed1cedbf7c/ckpt/internal/diff"
	"github.com/seed1cedbf7c/ckpt/internal/object"
	"github.com/seed1cedbf7c/ckpt/internal/tree"
)

// Scope says what a rewind takes back.
type Scope string

// Rewind scopes.
const (
	ScopeCode         Scope = "code"         // the workspace's files
	ScopeConversation Scope = "conversation" // the session's messages
	ScopeBoth         Scope = "both"
)

// RewindOptions configure [Controller.Rewind].
type RewindOptions struct {
	// Exact makes the workspace exactly what it was when the turn began,
	// edits made between turns included. Without it a code rewind undoes
	// only what the agent's turns changed: edits made between turns (by
	// the user or another session) survive; where both touched a file the
	// three are merged, and conflicting hunks keep the user's side.
	Exact bool
	// DryRun reports what the rewind would do and changes nothing.
	DryRun bool

	// pending is this rewind's mark on the turns it takes back until it
	// knows its operation-log number (see rewindPending).
	pending int64
}

// RewindResult reports a rewind. R is the engine's restore result.
type RewindResult[R any] struct {
	Scope  Scope `json:"scope"`
	Turn   int   `json:"turn"`
	DryRun bool  `json:"dry_run,omitempty"`
	// Restore is the code rewind (its pre-restore checkpoint keeps the
	// state before, so `ckpt undo` takes the rewind back).
	Restore *R `json:"restore,omitempty"`
	// Conflicts are paths where the user's edits and the turns' changes
	// overlapped; the user's side was kept.
	Conflicts []Path `json:"conflicts"`
	// Kept are paths whose user edits were kept (merged or untouched).
	Kept []Path `json:"kept"`
	// Shared are paths another session's turn, running at the same time
	// as a rewound turn, changed too, and that cannot be shown to be the
	// rewound turn's alone: they stay as they are.
	Shared []Path `json:"shared"`
	// InProgress are rewound turns that had not ended: everything changed
	// since such a turn began counted as the agent's (edits made since
	// then by hand too, which only 'ckpt undo' brings back).
	InProgress []int `json:"in_progress,omitempty"`
	// Prompt is the rewound turn's prompt, for re-sending (conversation).
	Prompt string `json:"prompt,omitempty"`
	// Messages is the number of messages removed from the conversation.
	Messages int `json:"messages"`
	// Turns is the number of turns removed from the conversation.
	Turns int `json:"turns"`
}

// Rewind takes the session back to the start of a turn: its code (the
// workspace as it was when the turn began, through the engine's verified,
// undoable restore), its conversation (the messages from the turn's prompt
// on, hidden; the prompt is returned to be sent again), or both.
func (c *Controller[R, S]) Rewind(ctx context.Context, turn int, scope Scope, opts RewindOptions) (*RewindResult[R], error) {
	switch scope {
	case ScopeCode, ScopeConversation, ScopeBoth:
	default:
		return nil, fmt.Errorf("rewind: unknown scope %q (want code, conversation or both)", scope)
	}
	s, unlock, err := c.lock(ctx)
	if err != nil {
		return nil, err
	}
	defer unlock()
	t, err := c.turn(s, turn)
	if err != nil {
		return nil, err
	}
	out := &RewindResult[R]{Scope: scope, Turn: turn, DryRun: opts.DryRun, Conflicts: []Path{}, Kept: []Path{}, Shared: []Path{}}
	if scope != ScopeConversation {
		// The turns this rewind takes back: ended ones (a turn in progress
		// goes on, and its end, once it has one, holds only what it did
		// from its start on).
		var undone []*Turn
		for _, u := range undoneTurns(s, turn) {
			if !u.Open() {
				undone = append(undone, u)
			}
		}
		// Marked before the restore as taken back by a rewind not yet
		// recorded (0): a rewind killed midway and finished by recovery
		// still counts (see rewindPending).
		if !opts.DryRun && len(undone) > 0 {
			opts.pending = -c.e.Now().UnixNano()
			for _, u := range undone {
				u.UndoneBy = append(u.UndoneBy, opts.pending)
			}
			if err := put(ctx, c.e, s); err != nil {
				return nil, err
			}
		}
		err := c.rewindCodeLocked(ctx, s, t, opts, out)
		if !opts.DryRun && len(undone) > 0 {
			op := int64(0)
			if err == nil {
				op, err = c.e.LastOp(ctx)
			}
			for _, u := range undone {
				u.UndoneBy = slices.DeleteFunc(u.UndoneBy, func(x int64) bool { return x == opts.pending })
				if err == nil {
					u.UndoneBy = append(u.UndoneBy, op)
				}
			}
			if perr := put(ctx, c.e, s); err == nil {
				err = perr
			}
		}
		if err != nil {
			return nil, err
		}
	}
	if scope != ScopeCode {
		msgs, err := c.Messages(ctx, true)
		if err != nil {
			return nil, err
		}
		out.Prompt = t.Prompt
		out.Turns = len(s.Turns) - turn + 1
		var data [][]byte
		for _, m := range msgs {
			if m.Turn >= turn && m.Hidden == "" {
				out.Messages++
				m.Hidden = "rewound"
			}
			b, _ := json.Marshal(m)
			data = append(data, b)
		}
		if !opts.DryRun {
			// A turn removed in progress is over (it has no end to undo
			// from): it runs at the same time as no later turn.
			for _, rt := range s.Turns[turn-1:] {
				if rt.Open() && rt.Ended.IsZero() {
					rt.Ended = c.e.Now().UTC()
				}
			}
			s.Rewound = append(s.Rewound, s.Turns[turn-1:]...)
			s.Turns = s.Turns[:turn-1]
			if err := replace(ctx, c.e, s, data); err != nil {
				return nil, err
			}
		}
	}
	if !opts.DryRun {
		c.e.Emit(Event{Kind: EventRewound, Session: s.ID, Turn: turn, Message: string(scope)})
	}
	return out, nil
}

// A negative number in Turn.UndoneBy marks a rewind that was taking the
// turn back and had not recorded its operation-log number yet: one whose
// process ended (killed, crashed) midway. Recovery may have finished that
// rewind, so it counts as in effect: a later rewind leaves the turn's
// paths as they are, which loses nothing (at worst it does not take the
// turn back again; --exact does). The rewind in progress ignores its own
// mark.
func rewindPending(x int64) bool { return x < 0 }

// rewindCodeLocked undoes the changes of the turns from t on, keeping
// the user's edits between turns, or with Exact restores the workspace to
// the turn's start.
func (c *Controller[R, S]) rewindCodeLocked(ctx context.Context, s *Session, t *Turn, opts RewindOptions, out *RewindResult[R]) error {
	var err error
	if opts.Exact {
		later, err := c.exactIgnored(ctx, s, t)
		if err != nil {
			return err
		}
		if len(later) == 0 {
			out.Restore, err = c.e.Restore(ctx, t.Begin, opts.DryRun)
			return err
		}
		return c.rewindExactIgnored(ctx, s, t, later, opts, out)
	}
	// The merge is computed from the workspace as it is; an edit made
	// before the restore starts makes the engine scan and plan again (the
	// restore would otherwise undo that edit).
	msg := fmt.Sprintf("rewind session %s to turn %d, keeping user edits", s.ID, t.N)
	meta := map[string]string{"session": s.ID, "turn": fmt.Sprint(t.N)}
	out.Restore, err = c.e.RestoreEdited(ctx, opts.DryRun, msg, meta, ignoredOf(undoneTurns(s, t.N)), func(ws *Workspace) (*Edits, error) {
		p, err := c.planKeepEdits(ctx, ws, s, t.N, opts)
		if err != nil {
			return nil, err
		}
		out.Conflicts, out.Kept, out.Shared = sortedPaths(p.conflicts), sortedPaths(p.kept), sortedPaths(p.shared)
		out.InProgress = p.open
		return &Edits{Paths: coveringEdits(p.cur), Blobs: p.blobs}, nil
	})
	return err
}

func sortedPaths(set map[string]bool) []Path {
	out := []Path{}
	for p := range set {
		out = append(out, Path(p))
	}
	sort.Slice(out, func(i, j int) bool { return out[i] < out[j] })
	return out
}

// keepEditsPlan is the three-way plan: the paths the rewind changes (nil:
// absent), the merged contents they name, the conflicts (the user's side
// stays) and the paths where the user's edits are kept.
type keepEditsPlan struct {
	cur                     map[string]*object.Entry
	blobs                   map[ID][]byte
	conflicts, kept, shared map[string]bool
	open                    []int // turns in progress
}

// planKeepEdits computes what undoes the changes of turns n..last (each
// part of a summary turn separately) on top of the workspace ws, from the
// last turn back. Turns a conversation rewind removed that began after
// turn n did count: their changes are the agent's, not the user's, even
// though the conversation no longer shows them. For each path a turn changed: base is its state at the
// turn's end, theirs at the turn's start, ours the state so far (starting
// from the workspace now). Ours equal to base: the path goes back to
// theirs. Ours equal to theirs: nothing to do. Both changed: a line merge
// of text files, and anything else — a conflict, a binary file, a file the
// user deleted or turned into a directory, a directory above the path
// whose type the user changed — keeps ours and is reported. Directories
// are compared by their tree ids, so a directory the user added to is
// never replaced wholesale. It writes nothing.
func (c *Controller[R, S]) planKeepEdits(ctx context.Context, ws *Workspace, s *Session, n int, opts RewindOptions) (*keepEditsPlan, error) {
	v := &mergeView{ctx: ctx, ws: ws, pending: map[ID][]byte{}}
	var spans []span
	turns := undoneTurns(s, n)
	now := c.e.Now()
	var open []int
	sc := &sideCache{}
	live := map[*Turn]bool{}
	for _, t := range s.Turns {
		live[t] = true
	}
	logged, err := c.e.InEffect(ctx)
	if err != nil {
		return nil, err
	}
	inEffect := func(by []int64) bool {
		return slices.ContainsFunc(by, func(x int64) bool { return rewindPending(x) && x != opts.pending }) || logged(by)
	}
	for k := len(turns) - 1; k >= 0; k-- {
		if inEffect(turns[k].UndoneBy) {
			continue // taken back already
		}
		shared, err := c.sharedPaths(ctx, ws, s, turns[k], live[turns[k]], now, sc)
		if err != nil {
			return nil, err
		}
		above := dirsAbove(shared)
		parts := turns[k].parts()
		for pi := len(parts) - 1; pi >= 0; pi-- {
			part := parts[pi]
			if inEffect(part.UndoneBy) {
				continue // a summarized turn a rewind took back
			}
			sp := span{end: ws.Tree, shared: shared, sharedAbove: above}
			if part.End == nil && !slices.Contains(open, turns[k].N) {
				open = append(open, turns[k].N)
			}
			if part.End != nil {
				tr, err := c.e.Tree(ctx, *part.End)
				if err != nil {
					return nil, err
				}
				sp.end = tr
			}
			tr, err := c.e.Tree(ctx, part.Begin)
			if err != nil {
				return nil, err
			}
			sp.begin = tr
			spans = append(spans, sp)
		}
	}
	kp, err := v.plan(spans)
	if kp != nil {
		slices.Sort(open)
		kp.open = open
	}
	return kp, err
}

// undoneTurns returns the turns a code rewind to turn n undoes, oldest
// first: turn n and every later one, and the turns conversation rewinds
// removed that began at or after turn n and had ended.
func undoneTurns(s *Session, n int) []*Turn {
	from := s.Turns[n-1].Started
	turns := append([]*Turn{}, s.Turns[n-1:]...)
	for _, t := range s.Rewound {
		// One removed while in progress has no end to undo from.
		if t.End != nil && !t.Started.Before(from) {
			turns = append(turns, t)
		}
	}
	sort.SliceStable(turns, func(i, j int) bool { return turns[i].Started.Before(turns[j].Started) })
	return turns
}

// span is one part of a turn the rewind undoes: the trees at its start
// and end.
type span struct {
	begin, end ID
	// shared are paths another session's overlapping turn changed too
	// (see sharedPaths): they stay.
	shared map[string]bool
	// sharedAbove are the directories above the shared paths.
	sharedAbove map[string]bool
}

// mergeView reads the three sides of a rewind that keeps the user's
// edits: the turns' trees, and the workspace now with the changes planned
// so far.
type mergeView struct {
	ctx     context.Context
	ws      *Workspace
	pending map[ID][]byte // merged contents
}

func (v *mergeView) lookup(root ID, p string) (*object.Entry, error) {
	e, ok, err := tree.Lookup(v.ctx, v.ws.ReadTree, root, p)
	if err != nil || !ok {
		return nil, err
	}
	return &e, nil
}

// state reads p through the changes m holds, falling back on the
// workspace's tree.
func (v *mergeView) state(m map[string]*object.Entry, p string) (*object.Entry, error) {
	if e, ok := m[p]; ok {
		return e, nil
	}
	for q := path.Dir(p); q != "."; q = path.Dir(q) {
		if e, ok := m[q]; ok {
			if e == nil || !object.IsDir(e.Mode) {
				return nil, nil // below a file or a removed path: absent
			}
			return v.lookup(e.ID, p[len(q)+1:])
		}
	}
	return v.lookup(v.ws.Tree, p)
}

// content reads a side's file content.
func (v *mergeView) content(e *object.Entry, p string) ([]byte, error) {
	if b, ok := v.pending[e.ID]; ok {
		return b, nil
	}
	return v.ws.ReadFile(v.ctx, e, p)
}

// plan undoes the spans in order (newest part first) against the
// workspace: a path the user left as a turn made it goes back, one the
// user changed is merged three ways (the turn's end as the base), and a
// conflict keeps the user's side. It writes nothing (merged contents wait
// in the plan's blobs).
func (v *mergeView) plan(spans []span) (*keepEditsPlan, error) {
	ctx := v.ctx
	kp := &keepEditsPlan{cur: map[string]*object.Entry{}, blobs: v.pending, conflicts: map[string]bool{}, kept: map[string]bool{}, shared: map[string]bool{}}
	cur, conflicts, kept := kp.cur, kp.conflicts, kp.kept
	for _, sp := range spans {
		begin, end := sp.begin, sp.end
		// Every lookup of this part sees the state before it.
		prev := make(map[string]*object.Entry, len(cur))
		// Directories the changes planned so far put files back into:
		// directories in the state so far, even where the workspace has
		// none (a later turn emptied them).
		plannedDirs := map[string]bool{}
		for p, e := range cur {
			prev[p] = e
			if e != nil {
				for q := path.Dir(p); q != "." && !plannedDirs[q]; q = path.Dir(q) {
					plannedDirs[q] = true
				}
			}
		}
		// Paths of this part whose user side stays (conflicts): what the
		// part changed below one stays too, since putting it back would
		// replace the user's file with a directory. Changes are taken
		// parents first for this.
		keptHere := map[string]bool{}
		var changes []tree.Change
		if err := tree.Diff(ctx, v.ws.ReadTree, begin, end, nil, func(ch tree.Change) error {
			changes = append(changes, ch)
			return nil
		}); err != nil {
			return nil, err
		}
		sort.SliceStable(changes, func(i, j int) bool { return changes[i].Path < changes[j].Path })
		handle := func(ch tree.Change) error {
			p := ch.Path
			if sharedHit(sp.shared, sp.sharedAbove, p) {
				kp.shared[p], keptHere[p] = true, true
				return nil
			}
			// A directory above p whose type the user changed (a file
			// where the turn left a directory, or the reverse), or a
			// path above p kept as the user's: the user's side stays.
			for q := path.Dir(p); q != "."; q = path.Dir(q) {
				if keptHere[q] {
					conflicts[p], kept[p], keptHere[p] = true, true, true
					return nil
				}
				o, err := v.state(prev, q)
				if err != nil {
					return err
				}
				b, err := v.lookup(end, q)
				if err != nil {
					return err
				}
				ok := kindOf(o)
				if ok == 0 && plannedDirs[q] {
					ok = 1
				}
				if ok != kindOf(b) {
					conflicts[p], kept[p], keptHere[p] = true, true, true
					return nil
				}
			}
			base, err := v.lookup(end, p)
			if err != nil {
				return err
			}
			theirs, err := v.lookup(begin, p)
			if err != nil {
				return err
			}
			ours, err := v.state(prev, p)
			if err != nil {
				return err
			}
			switch {
			case sameEntry(ours, base): // untouched since: take it back
				cur[p] = theirs
			case sameEntry(ours, theirs): // already as before the turn
			default:
				kept[p] = true
				merged, ok, err := merge3(p, base, ours, theirs, v.content)
				if err != nil {
					return err
				}
				if !ok {
					conflicts[p], keptHere[p] = true, true
					return nil // keep ours
				}
				id := object.Sum(merged)
				v.pending[id] = merged
				mode := ours.Mode
				if ours.Mode == base.Mode {
					mode = theirs.Mode
				}
				cur[p] = &object.Entry{Name: path.Base(p), Mode: mode, ID: id, Size: int64(len(merged))}
			}
			return nil
		}
		for _, ch := range changes {
			if err := handle(ch); err != nil {
				return nil, err
			}
		}
	}
	return kp, nil
}

// coveringEdits turns the planned changes into tree edits: a path set to
// a file, symlink or directory covers everything below it.
func coveringEdits(cur map[string]*object.Entry) map[string]*object.Entry {
	edits := map[string]*object.Entry{}
	for p, e := range cur {
		covered := false
		for q := path.Dir(p); q != "." && !covered; q = path.Dir(q) {
			if ae, ok := cur[q]; ok && ae != nil {
				covered = true
			}
		}
		if !covered {
			if e != nil {
				ee := *e
				ee.Name = path.Base(p)
				e = &ee
			}
			edits[p] = e
		}
	}
	return edits
}

// kindOf is an entry's kind for comparing directory structure: absent,
// directory, or anything else (file, symlink).
func kindOf(e *object.Entry) int {
	switch {
	case e == nil:
		return 0
	case object.IsDir(e.Mode):
		return 1
	}
	return 2
}

// sameEntry compares two states of a path (a directory by its tree id).
func sameEntry(a, b *object.Entry) bool {
	if a == nil || b == nil {
		return a == nil && b == nil
	}
	return a.Mode == b.Mode && a.ID == b.ID
}

// merge3 merges one file: false when the two sides conflict (or are not
// all text files).
func merge3(p string, base, ours, theirs *object.Entry, content func(*object.Entry, string) ([]byte, error)) ([]byte, bool, error) {
	if base == nil || ours == nil || theirs == nil ||
		!object.IsFile(base.Mode) || !object.IsFile(ours.Mode) || !object.IsFile(theirs.Mode) {
		return nil, false, nil
	}
	var texts [3]string
	for i, e := range []*object.Entry{base, ours, theirs} {
		b, err := content(e, p)
		if err != nil {
			return nil, false, err
		}
		if diff.IsBinary(b) {
			return nil, false, nil // binary: no line merge
		}
		texts[i] = string(b)
	}
	merged, conflicts := diff.Merge3(texts[0], texts[1], texts[2])
	if conflicts > 0 {
		return nil, false, nil
	}
	return []byte(merged), true, nil
}

// exactIgnored works out what an exact rewind to turn t does with the
// ignored files the undone turns' edit tools changed: each goes back as
// the earliest start that holds it (t's own, or a later turn's, or a
// summarized part's: it was not tracked before). It returns those paths
// (nil when t's start holds them all: a plain restore to it does) and the
// starts to read them from.
func (c *Controller[R, S]) exactIgnored(ctx context.Context, s *Session, t *Turn) (map[Path]ID, error) {
	all := ignoredOf(undoneTurns(s, t.N))
	if len(all) == 0 {
		return nil, nil
	}
	held, err := c.e.Tracked(ctx, t.Begin)
	if err != nil {
		return nil, err
	}
	out := map[Path]ID{}
	for _, u := range undoneTurns(s, t.N) {
		for _, part := range u.parts() {
			var listed []Path
			for _, p := range all {
				if _, ok := out[p]; !ok && !slices.Contains(held, p) {
					listed = append(listed, p)
				}
			}
			if len(listed) == 0 {
				break
			}
			have, err := c.e.Tracked(ctx, part.Begin)
			if err != nil {
				return nil, err
			}
			for _, p := range listed {
				if slices.Contains(have, p) {
					out[p] = part.Begin
				}
			}
		}
	}
	if len(out) == 0 {
		return nil, nil
	}
	return out, nil
}

// rewindExactIgnored makes the workspace turn t's start, as --exact does,
// and puts back the ignored files later turns' edit tools changed as the
// first start that held them found them (see exactIgnored): t's start
// does not hold them (they were not tracked yet), but they are the
// agent's doing all the same. Other ignored files the workspace tracks
// (HEAD lists them) and t's start does not are left alone, as a plain
// restore to t's start leaves them.
func (c *Controller[R, S]) rewindExactIgnored(ctx context.Context, s *Session, t *Turn, later map[Path]ID, opts RewindOptions, out *RewindResult[R]) error {
	begin, err := c.e.Tree(ctx, t.Begin)
	if err != nil {
		return err
	}
	held, err := c.e.Tracked(ctx, t.Begin)
	if err != nil {
		return err
	}
	var headList []Path
	if head, err := c.e.Head(ctx); err != nil {
		return err
	} else if !head.IsZero() {
		if headList, err = c.e.Tracked(ctx, head); err != nil {
			return err
		}
	}
	var track []Path
	for p := range later {
		track = append(track, p)
	}
	track = append(track, held...)
	slices.Sort(track)
	track = slices.Compact(track)
	msg := fmt.Sprintf("rewind session %s to turn %d (exact)", s.ID, t.N)
	meta := map[string]string{"session": s.ID, "turn": fmt.Sprint(t.N)}
	out.Restore, err = c.e.RestoreEdited(ctx, opts.DryRun, msg, meta, track, func(ws *Workspace) (*Edits, error) {
		v := &mergeView{ctx: ctx, ws: ws}
		cur := map[string]*object.Entry{}
		if err := tree.Diff(ctx, ws.ReadTree, ws.Tree, begin, nil, func(ch tree.Change) error {
			cur[ch.Path] = ch.New
			return nil
		}); err != nil {
			return nil, err
		}
		for _, p := range headList {
			if _, ok := later[p]; !ok && !slices.Contains(held, p) {
				delete(cur, string(p)) // not t's start's to speak for
			}
		}
		for p, from := range later {
			ub, err := c.e.Tree(ctx, from)
			if err != nil {
				return nil, err
			}
			e, err := v.lookup(ub, string(p))
			if err != nil {
				return nil, err
			}
			cur[string(p)] = e
		}
		return &Edits{Paths: coveringEdits(cur)}, nil
	})
	return err
}
