package ckpt

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path"
	"sort"
	"strings"
	"syscall"
	"time"

	"github.com/seed1cedbf7c/ckpt/internal/diff"
	"github.com/seed1cedbf7c/ckpt/internal/fsroot"
	"github.com/seed1cedbf7c/ckpt/internal/object"
	"github.com/seed1cedbf7c/ckpt/internal/restore"
	"github.com/seed1cedbf7c/ckpt/internal/scan"
	"github.com/seed1cedbf7c/ckpt/internal/store"
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
	// KeepUserEdits undoes only what the agent's turns changed: edits made
	// between turns (by the user or another session) survive; where both
	// touched a file the three are merged, and conflicting hunks keep the
	// user's side.
	KeepUserEdits bool
	// DryRun reports what the rewind would do and changes nothing.
	DryRun bool
}

// RewindResult reports a rewind.
type RewindResult struct {
	Scope  Scope `json:"scope"`
	Turn   int   `json:"turn"`
	DryRun bool  `json:"dry_run,omitempty"`
	// Restore is the code rewind (its pre-restore checkpoint keeps the
	// state before, so `ckpt undo` takes the rewind back).
	Restore *RestoreResult `json:"restore,omitempty"`
	// Conflicts are paths where the user's edits and the turns' changes
	// overlapped; the user's side was kept.
	Conflicts []Path `json:"conflicts"`
	// Kept are paths whose user edits were kept (merged or untouched).
	Kept []Path `json:"kept"`
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
func (c *Controller) Rewind(ctx context.Context, turn int, scope Scope, opts RewindOptions) (*RewindResult, error) {
	switch scope {
	case ScopeCode, ScopeConversation, ScopeBoth:
	default:
		return nil, fmt.Errorf("rewind: unknown scope %q (want code, conversation or both)", scope)
	}
	s, unlock, err := c.lockSession(ctx)
	if err != nil {
		return nil, err
	}
	defer unlock()
	t, err := c.turn(s, turn)
	if err != nil {
		return nil, err
	}
	out := &RewindResult{Scope: scope, Turn: turn, DryRun: opts.DryRun, Conflicts: []Path{}, Kept: []Path{}}
	if scope != ScopeConversation {
		if err := c.rewindCode(ctx, s, t, opts, out); err != nil {
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
			s.Rewound = append(s.Rewound, s.Turns[turn-1:]...)
			s.Turns = s.Turns[:turn-1]
			s.Updated = c.r.now().UTC()
			doc, err := json.Marshal(s)
			if err != nil {
				return nil, err
			}
			if err := c.r.sessions().ReplaceMessages(ctx, s.ID, data, &store.SessionRow{ID: s.ID, Updated: s.Updated, Data: doc}); err != nil {
				return nil, err
			}
		}
	}
	if !opts.DryRun {
		c.r.emit(Event{Kind: EventRewound, Session: s.ID, Turn: turn, Message: string(scope)})
	}
	return out, nil
}

// rewindCode restores the workspace to the turn's start, or with
// KeepUserEdits undoes only the changes of the turns from t on.
func (c *Controller) rewindCode(ctx context.Context, s *Session, t *Turn, opts RewindOptions, out *RewindResult) error {
	target := t.Begin
	if opts.KeepUserEdits {
		if opts.DryRun {
			_, _, err := c.keepUserEdits(ctx, s, t.N, true, out)
			return err // keepUserEdits planned it, storing nothing
		}
		// The merge is computed from the workspace as it is; an edit made
		// before the restore starts makes it compute again (the restore
		// would otherwise undo that edit).
		res, err := c.r.computeAndRestore(ctx, journalData{Op: OpRewind}, func() (ID, ID, error) {
			out.Conflicts, out.Kept = nil, nil
			return c.keepUserEdits(ctx, s, t.N, false, out)
		})
		if err != nil {
			return err
		}
		out.Restore = res
		return nil
	}
	if opts.DryRun {
		res, err := c.r.dryRun(ctx, target, nil)
		if err != nil {
			return err
		}
		out.Restore = res
		return nil
	}
	res, err := c.r.restoreLocked(ctx, journalData{Op: OpRewind, Target: target}, false)
	if err != nil {
		return err
	}
	out.Restore = res
	return nil
}

// keepUserEdits computes the state that undoes the changes of turns n..last
// (each part of a summary turn separately) on top of the current
// workspace, from the last turn back. For each path a turn changed: base
// is its state at the turn's end, theirs at the turn's start, ours the
// state so far (starting from the workspace now). Ours equal to base: the
// path goes back to theirs. Ours equal to theirs: nothing to do. Both
// changed: a line merge of text files, and anything else — a conflict, a
// binary file, a file the user deleted or turned into a directory, a
// directory above the path whose type the user changed — keeps ours and is
// reported. Directories are compared by their tree ids, so a directory the
// user added to is never replaced wholesale. The result is stored as a
// checkpoint (kind restore) whose id is returned; a dry run stores nothing
// and fills out.Restore with the plan.
//
// It returns the merged checkpoint and the workspace tree it merged.
func (c *Controller) keepUserEdits(ctx context.Context, s *Session, n int, dryRun bool, out *RewindResult) (result, base ID, err error) {
	// The current state. Its objects are committed first (not a dry run),
	// so the merge reads the user's files from the store.
	var (
		nowTree   object.ID
		untracked map[string]bool
		memTrees  map[ID][]byte
	)
	if dryRun {
		cache := c.r.loadCache(ctx)
		res, err := scan.Scan(ctx, c.r.scanOptions(ctx, nil, cache))
		cache.Close()
		if err != nil {
			return ID{}, ID{}, scanError(err)
		}
		nowTree, untracked, memTrees = res.Root, res.Untracked, res.Trees
	} else {
		c0, err := c.r.captureStored(ctx, nil)
		if err != nil {
			return ID{}, ID{}, err
		}
		nowTree, untracked = c0.res.Root, c0.res.Untracked
	}
	load := func(ctx context.Context, id object.ID) (*object.Tree, error) {
		if data, ok := memTrees[id]; ok {
			return object.DecodeTree(data)
		}
		return c.r.st.ReadTree(ctx, id)
	}
	lookup := func(root object.ID, p string) (*object.Entry, error) {
		e, ok, err := tree.Lookup(ctx, load, root, p)
		if err != nil || !ok {
			return nil, err
		}
		return &e, nil
	}
	// cur holds the paths changed so far (nil: absent); state reads a path
	// through it, falling back on the workspace's tree.
	cur := map[string]*object.Entry{}
	state := func(m map[string]*object.Entry, p string) (*object.Entry, error) {
		if e, ok := m[p]; ok {
			return e, nil
		}
		for q := path.Dir(p); q != "."; q = path.Dir(q) {
			if e, ok := m[q]; ok {
				if e == nil || !object.IsDir(e.Mode) {
					return nil, nil // below a file or a removed path: absent
				}
				return lookup(e.ID, p[len(q)+1:])
			}
		}
		return lookup(nowTree, p)
	}
	pending := map[ID][]byte{} // merged contents, stored at the end
	content := func(e *object.Entry, p string) ([]byte, error) {
		if b, ok := pending[e.ID]; ok {
			return b, nil
		}
		b, err := c.r.st.ReadBlob(ctx, e.ID)
		if errors.Is(err, ErrNotFound) && dryRun {
			// A dry run did not store the workspace's files: read it.
			if b, err = c.r.readWorking(p, e.Mode); err == nil && object.Sum(b) != e.ID {
				err = fmt.Errorf("%s changed while the rewind was planned", p)
			}
		}
		return b, err
	}
	conflicts, kept := map[string]bool{}, map[string]bool{}
	for k := len(s.Turns); k >= n; k-- {
		parts := s.Turns[k-1].parts()
		for pi := len(parts) - 1; pi >= 0; pi-- {
			part := parts[pi]
			end := nowTree
			if part.End != nil {
				rec, err := c.r.st.Checkpoint(ctx, *part.End)
				if err != nil {
					return ID{}, ID{}, err
				}
				end = rec.Tree
			}
			beginRec, err := c.r.st.Checkpoint(ctx, part.Begin)
			if err != nil {
				return ID{}, ID{}, err
			}
			begin := beginRec.Tree
			// Every lookup of this part sees the state before it.
			prev := make(map[string]*object.Entry, len(cur))
			for p, e := range cur {
				prev[p] = e
			}
			err = tree.Diff(ctx, load, begin, end, nil, func(ch tree.Change) error {
				p := ch.Path
				// A directory above p whose type the user changed (a file
				// where the turn left a directory, or the reverse): the
				// user's side stays.
				for q := path.Dir(p); q != "."; q = path.Dir(q) {
					o, err := state(prev, q)
					if err != nil {
						return err
					}
					b, err := lookup(end, q)
					if err != nil {
						return err
					}
					if kindOf(o) != kindOf(b) {
						conflicts[p], kept[p] = true, true
						return nil
					}
				}
				base, err := lookup(end, p)
				if err != nil {
					return err
				}
				theirs, err := lookup(begin, p)
				if err != nil {
					return err
				}
				ours, err := state(prev, p)
				if err != nil {
					return err
				}
				switch {
				case sameEntry(ours, base): // untouched since: take it back
					cur[p] = theirs
				case sameEntry(ours, theirs): // already as before the turn
				default:
					kept[p] = true
					merged, ok, err := c.merge3(p, base, ours, theirs, content)
					if err != nil {
						return err
					}
					if !ok {
						conflicts[p] = true
						return nil // keep ours
					}
					id := object.Sum(merged)
					pending[id] = merged
					mode := ours.Mode
					if ours.Mode == base.Mode {
						mode = theirs.Mode
					}
					cur[p] = &object.Entry{Name: path.Base(p), Mode: mode, ID: id, Size: int64(len(merged))}
				}
				return nil
			})
			if err != nil {
				return ID{}, ID{}, err
			}
		}
	}
	for p := range conflicts {
		out.Conflicts = append(out.Conflicts, Path(p))
	}
	for p := range kept {
		out.Kept = append(out.Kept, Path(p))
	}
	sortPaths(out.Conflicts)
	sortPaths(out.Kept)
	// The edits: a path set to a file, symlink or directory covers
	// everything below it.
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
	err = c.r.st.Update(ctx, func(tx store.Tx) error {
		for id, data := range pending {
			if err := tx.PutBlob(id, data); err != nil {
				return err
			}
		}
		for id, data := range memTrees {
			if err := tx.PutTree(id, data); err != nil {
				return err
			}
		}
		txload := func(ctx context.Context, id object.ID) (*object.Tree, error) { return tx.ReadTree(id) }
		root, err := tree.Overlay(ctx, txload, tx.PutTree, nowTree, edits)
		if err != nil {
			return err
		}
		headRef, headRec, err := c.r.head(ctx)
		if err != nil {
			return err
		}
		var bytes int64
		if t, err := txload(ctx, root); err == nil {
			bytes = t.Size()
		}
		cp := &object.Checkpoint{Tree: root, Kind: KindRestore,
			Message: fmt.Sprintf("rewind session %s to turn %d, keeping user edits", s.ID, n),
			Meta:    map[string]string{"session": s.ID, "turn": fmt.Sprint(n)}}
		rec, err := c.r.newCheckpoint(ctx, tx, cp, headRec, -1, bytes, false, headRef)
		if err != nil {
			return err
		}
		result = rec.ID
		if !dryRun {
			return nil
		}
		// A dry run plans the restore inside the transaction, then rolls
		// it back: nothing is stored.
		plan, err := restore.MakePlan(ctx, txload, nowTree, root, nil, untracked)
		if err != nil {
			return err
		}
		keepStore(plan, c.r.exclude)
		osroot, err := fsroot.Open(c.r.root)
		if err != nil {
			return err
		}
		defer osroot.Close()
		checked, err := (&restore.Applier{Root: osroot}).Check(plan)
		if err != nil {
			return err
		}
		dry := &RestoreResult{DryRun: true, Actions: []Action{}, Target: toCheckpoint(rec, nil)}
		if headRec != nil {
			dry.Head = headRec.ID
		}
		for _, a := range checked {
			dry.Actions = append(dry.Actions, Action{Path: Path(a.Path), Op: string(a.Op), Reason: a.Reason})
		}
		out.Restore = dry
		return errDryRun
	})
	if errors.Is(err, errDryRun) {
		return ID{}, ID{}, nil
	}
	if err != nil {
		return ID{}, ID{}, err
	}
	return result, nowTree, nil
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
func (c *Controller) merge3(p string, base, ours, theirs *object.Entry, content func(*object.Entry, string) ([]byte, error)) ([]byte, bool, error) {
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

func sortPaths(ps []Path) { sort.Slice(ps, func(i, j int) bool { return ps[i] < ps[j] }) }

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

// Summarize replaces the turns from a turn on (SummarizeFrom) or up to it
// (SummarizeUpto) with one summary message in one turn, which keeps the
// first turn's starting checkpoint (so rewinding to it still works). The
// summarizer is the store's `summarizer` setting — a command that reads
// the transcript as JSON on stdin and prints the summary — or the built-in
// one, deterministic and offline: per turn, its prompt, the files it
// changed and how it ended. The replaced messages are kept, hidden.
func (c *Controller) Summarize(ctx context.Context, turn int, dir Direction) (*SummarizeResult, error) {
	s, unlock, err := c.lockSession(ctx)
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
	text, err := c.r.summarize(ctx, &tr)
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
				addMsg(&Message{Turn: first, Role: "summary", Content: text, Time: c.r.now().UTC()})
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
		addMsg(&Message{Turn: first, Role: "summary", Content: text, Time: c.r.now().UTC()})
	}
	s.Turns = turns
	s.Updated = c.r.now().UTC()
	doc, err := json.Marshal(s)
	if err != nil {
		return nil, err
	}
	if err := c.r.sessions().ReplaceMessages(ctx, s.ID, data, &store.SessionRow{ID: s.ID, Updated: s.Updated, Data: doc}); err != nil {
		return nil, err
	}
	c.r.emit(Event{Kind: EventSummarized, Session: s.ID, Turn: first, Message: fmt.Sprintf("turns %d-%d", first, last)})
	return &SummarizeResult{First: first, Last: last, Summary: text, Turn: st}, nil
}

// summarize runs the configured summarizer, or the built-in one.
func (r *Repo) summarize(ctx context.Context, tr *transcript) (string, error) {
	cmdline := strings.TrimSpace(r.cfg.Summarizer)
	if cmdline == "" {
		return builtinSummary(tr), nil
	}
	if r.opts.Config == nil && r.storeDir != "" {
		if err := checkApproved(r.storeDir, "summarizer", cmdline); err != nil {
			return "", err
		}
	}
	parent := ctx
	ctx, cancel := context.WithTimeout(ctx, 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "sh", "-c", cmdline)
	cmd.Dir = r.root
	cmd.Stdin = bytes.NewReader(marshalIndent(tr))
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	cmd.Env = append(os.Environ(), "CKPT_WORKSPACE="+r.root)
	// Stopping it stops what the shell started too (a pipeline, a model's
	// client), which would otherwise hold its output open and keep Run
	// waiting: it runs in its own process group, killed as a whole.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = time.Second
	if err := cmd.Run(); err != nil {
		if parent.Err() != nil {
			return "", fmt.Errorf("summarizer %q stopped: %w", cmdline, parent.Err())
		}
		msg := strings.TrimSpace(stderr.String())
		if msg != "" {
			msg = ": " + firstLine(msg, 300)
		}
		return "", withHint(fmt.Errorf("summarizer %q failed: %v%s", cmdline, err, msg),
			"fix the command, or go back to the built-in summarizer with `ckpt config --unset summarizer`")
	}
	out := strings.TrimSpace(stdout.String())
	if out == "" {
		return "", errors.New("summarizer " + cmdline + " printed nothing")
	}
	return out, nil
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
