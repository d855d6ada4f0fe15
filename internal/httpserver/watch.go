package httpserver

import (
	"context"
	"fmt"
	"maps"
	"os"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/seed1cedbf7c/ckpt"
)

// The watcher finds what other processes (the CLI in another terminal,
// an agent's hooks) did to the workspace's store and publishes it as
// events, within a poll interval. It stats the store's files at every
// tick and reads the state (HEAD, the newest checkpoints, refs, sessions)
// only when they changed, or every fullPoll anyway.
//
// The server's own changes hold the operation lock, and so does a poll:
// the engine's events of a change are all published before the poll that
// sees it, which leaves out what they already told (see key).

const fullPoll = 2 * time.Second

// recentN is how many of the newest checkpoints a poll reads: more new
// ones between two polls are reported as a resync.
const recentN = 64

type watcher struct {
	s     *Server
	stamp string
	last  time.Time
	st    *storeState
	// told are the keys of the engine events published since the last
	// poll.
	mu   sync.Mutex
	told map[string]bool
	// ops are the times of the changes this server made since the last
	// poll: a checkpoint made then is its own (the store's lock keeps
	// other processes from making one meanwhile), told or not (a restore's
	// pre-restore checkpoint has no event of its own).
	ops [][2]time.Time
}

type sessionState struct {
	turns   int
	open    bool // the last turn is in progress
	summary int  // summary turns
	updated time.Time
}

type storeState struct {
	// used is the store's size read just before the state (-1: unknown):
	// a gc found in a later state ran after it.
	used     int64
	head     ckpt.ID
	branch   string
	recent   []*ckpt.Checkpoint // newest first
	snaps    map[string]ckpt.ID
	tags     map[string]ckpt.ID
	branches map[string]ckpt.ID
	sessions map[string]sessionState
	parents  map[string]*ckpt.Session // sessions by id, for forks
}

func newWatcher(s *Server) *watcher {
	w := &watcher{s: s, told: map[string]bool{}}
	s.tell, s.watch = w.tellKey, w
	return w
}

func (w *watcher) run(ctx context.Context) {
	w.stamp = w.fingerprint(ctx)
	w.st, _ = w.read(ctx)
	w.last = time.Now()
	t := time.NewTicker(w.s.opts.PollInterval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		w.s.opMu.Lock()
		w.poll(ctx)
		w.mu.Lock()
		clear(w.told)
		w.ops = w.ops[:0]
		w.mu.Unlock()
		w.s.opMu.Unlock()
	}
}

// serverOp runs fn, a change made by this server, under the operation
// lock and records when it ran.
func (s *Server) serverOp(fn func()) {
	s.opMu.Lock()
	defer s.opMu.Unlock()
	start := time.Now()
	defer func() {
		s.watch.mu.Lock()
		s.watch.ops = append(s.watch.ops, [2]time.Time{start, time.Now()})
		s.watch.mu.Unlock()
	}()
	fn()
}

// tellKey records an engine event's key (called with the event, under
// the broker's publish).
func (w *watcher) tellKey(e ckpt.Event) {
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, k := range keys(e) {
		w.told[k] = true
	}
}

// keys name what an event tells, so that the poll that sees the same
// change does not tell it again.
func keys(e ckpt.Event) []string {
	id := e.Checkpoint.String()
	switch e.Kind {
	case ckpt.EventCheckpoint:
		// The first save on a branch makes the branch.
		return []string{"checkpoint:" + id, "head:" + id, "branch:" + id}
	case ckpt.EventRestored, ckpt.EventUndone, ckpt.EventRedone, ckpt.EventRecovered, ckpt.EventSwitched:
		return []string{"head:" + id}
	case ckpt.EventBranch:
		return []string{"branch:" + id}
	case ckpt.EventTag:
		return []string{"tag:" + id}
	case ckpt.EventSnapshotCreated, ckpt.EventSnapshotDeleted:
		return []string{"snapshot:" + e.Name}
	case ckpt.EventGC, ckpt.EventCleared:
		return []string{"removed"}
	case ckpt.EventForked:
		return []string{"session:" + e.Session, "forked"}
	case ckpt.EventTurnBegan, ckpt.EventTurnEnded, ckpt.EventMessage, ckpt.EventRewound, ckpt.EventSummarized:
		return []string{"session:" + e.Session}
	}
	return nil
}

// fingerprint is the names, sizes and modification times of the store's
// files, and the store's data version: any change another process makes
// to the store changes it. Sizes and times alone can miss a commit: after
// a checkpoint SQLite writes the WAL from its start again, so its size
// stays, and two commits within one tick of the file system's clock leave
// one modification time. The data version changes with every commit.
//
// It opens none of the store's files: this process has the database open
// through SQLite, and closing any descriptor of a file drops every POSIX
// lock the process holds on it, SQLite's too.
func (w *watcher) fingerprint(ctx context.Context) string {
	fp := storeFingerprint(w.s.repo.StoreDir())
	if v, ok := w.s.repo.StoreVersion(ctx); ok {
		fp += fmt.Sprintf("data version %d\n", v)
	}
	return fp
}

// storeFingerprint is the names, sizes and modification times of the
// files in the store directory dir, taken without opening any.
func storeFingerprint(dir string) string {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return ""
	}
	var b strings.Builder
	for _, e := range ents {
		if fi, err := e.Info(); err == nil {
			fmt.Fprintf(&b, "%s %d %d\n", e.Name(), fi.Size(), fi.ModTime().UnixNano())
		}
	}
	return b.String()
}

func (w *watcher) poll(ctx context.Context) {
	stamp := w.fingerprint(ctx)
	if stamp == w.stamp && time.Since(w.last) < fullPoll {
		return
	}
	if stamp != w.stamp {
		// After the changes are told: a gc's run takes the size before.
		defer w.s.sizes.sample()
	}
	w.stamp, w.last = stamp, time.Now()
	st, err := w.read(ctx)
	if err != nil {
		return // the store is busy or changing: the next tick reads again
	}
	old := w.st
	w.st = st
	if old == nil {
		return
	}
	w.mu.Lock()
	told, ops := maps.Clone(w.told), slices.Clone(w.ops)
	w.mu.Unlock()
	for _, e := range changes(old, st) {
		if slices.ContainsFunc(e.keys, func(k string) bool { return told[k] }) {
			continue
		}
		if e.Kind == ckpt.EventCheckpoint && slices.ContainsFunc(ops, func(op [2]time.Time) bool {
			return !e.Time.Before(op[0]) && !e.Time.After(op[1])
		}) {
			continue
		}
		if e.Kind == ckpt.EventGC {
			// Its size before is the one read with the last state: a
			// request may have sampled the size since the gc ran.
			w.s.sizes.gcRan(e.Event, "other", old.used)
		}
		w.s.events.publish(e.Event, "other")
	}
}

// read reads the state the watcher compares.
func (w *watcher) read(ctx context.Context) (*storeState, error) {
	r := w.s.repo
	st := &storeState{used: w.s.sizes.used(), snaps: map[string]ckpt.ID{}, tags: map[string]ckpt.ID{}, branches: map[string]ckpt.ID{},
		sessions: map[string]sessionState{}, parents: map[string]*ckpt.Session{}}
	head, branch, err := r.Head(ctx)
	if err != nil {
		return nil, err
	}
	if head != nil {
		st.head = head.ID
	}
	st.branch = branch
	if st.recent, err = r.List(ctx, ckpt.ListOptions{Limit: recentN}); err != nil {
		return nil, err
	}
	snaps, err := r.Snapshots(ctx)
	if err != nil {
		return nil, err
	}
	for _, s := range snaps {
		st.snaps[s.Name] = s.Checkpoint
	}
	tags, err := r.Tags(ctx)
	if err != nil {
		return nil, err
	}
	for _, t := range tags {
		st.tags[t.Name] = t.Checkpoint
	}
	bs, err := r.Branches(ctx)
	if err != nil {
		return nil, err
	}
	for _, b := range bs {
		st.branches[b.Name] = b.Checkpoint
	}
	ss, err := r.Sessions(ctx)
	if err != nil {
		return nil, err
	}
	for _, s := range ss {
		n := len(s.Turns)
		x := sessionState{turns: n, updated: s.Updated}
		if n > 0 && s.Turns[n-1].Open() {
			x.open = true
		}
		for _, t := range s.Turns {
			if t.Summary {
				x.summary++
			}
		}
		st.sessions[s.ID] = x
		st.parents[s.ID] = s
	}
	return st, nil
}

// change is an event found by comparing states, with its keys.
type change struct {
	ckpt.Event
	keys []string
}

// changes compares two states and returns what happened between them,
// in the order it most likely happened: checkpoints, HEAD, refs,
// sessions.
func changes(old, cur *storeState) []change {
	var out []change
	add := func(e ckpt.Event, keys ...string) { out = append(out, change{e, keys}) }
	known := map[ckpt.ID]bool{}
	for _, c := range old.recent {
		known[c.ID] = true
	}
	var fresh []*ckpt.Checkpoint
	for _, c := range cur.recent {
		if known[c.ID] {
			break
		}
		if len(old.recent) > 0 && c.Time.Before(old.recent[0].Time) {
			break // an older one: gc's doing or a gap, not new
		}
		fresh = append(fresh, c)
	}
	if len(fresh) == len(cur.recent) && len(old.recent) > 0 && len(cur.recent) == recentN {
		add(ckpt.Event{Kind: EventResync, Message: "more checkpoints were made than the server could follow: read the state again"})
	}
	isFresh := map[ckpt.ID]bool{}
	for i := len(fresh) - 1; i >= 0; i-- {
		c := fresh[i]
		isFresh[c.ID] = true
		add(ckpt.Event{Kind: ckpt.EventCheckpoint, Time: c.Time, Checkpoint: c.ID, CheckpointKind: c.Kind, Message: c.Message}, "checkpoint:"+c.ID.String())
	}
	switch {
	case cur.head == old.head && cur.branch == old.branch:
	case cur.head.IsZero() && !old.head.IsZero():
		add(ckpt.Event{Kind: ckpt.EventCleared, Message: "history cleared"}, "removed")
	case cur.branch != old.branch:
		add(ckpt.Event{Kind: ckpt.EventSwitched, Checkpoint: cur.head, Message: "switched to " + cur.branch}, "head:"+cur.head.String())
	case !isFresh[cur.head]:
		add(ckpt.Event{Kind: ckpt.EventRestored, Checkpoint: cur.head, Message: "HEAD moved"}, "head:"+cur.head.String())
	}
	if len(old.recent) > 0 && len(cur.recent) < recentN {
		for _, c := range old.recent {
			if !slices.ContainsFunc(cur.recent, func(x *ckpt.Checkpoint) bool { return x.ID == c.ID }) && !cur.head.IsZero() {
				add(ckpt.Event{Kind: ckpt.EventGC, Message: "checkpoints were removed"}, "removed")
				break
			}
		}
	}
	refs := func(kind ckpt.EventKind, prefix string, o, c map[string]ckpt.ID) {
		for _, name := range sortedKeys(c) {
			id := c[name]
			// A branch's tip moves at every save: only a new branch is
			// news.
			if oid, ok := o[name]; !ok || (oid != id && kind != ckpt.EventBranch) {
				e := ckpt.Event{Kind: kind, Checkpoint: id, Name: name, Message: prefix + " " + name}
				if kind == ckpt.EventSnapshotCreated {
					add(e, "snapshot:"+name)
				} else {
					add(e, prefix+":"+id.String())
				}
			}
		}
		for _, name := range sortedKeys(o) {
			if _, ok := c[name]; !ok {
				id := o[name]
				switch kind {
				case ckpt.EventSnapshotCreated:
					add(ckpt.Event{Kind: ckpt.EventSnapshotDeleted, Checkpoint: id, Name: name, Message: "deleted snapshot " + name}, "snapshot:"+name)
				default:
					add(ckpt.Event{Kind: kind, Checkpoint: id, Name: name, Message: "deleted " + prefix + " " + name}, prefix+":"+id.String())
				}
			}
		}
	}
	refs(ckpt.EventBranch, "branch", old.branches, cur.branches)
	refs(ckpt.EventTag, "tag", old.tags, cur.tags)
	refs(ckpt.EventSnapshotCreated, "snapshot", old.snaps, cur.snaps)
	for _, id := range sortedKeys(cur.sessions) {
		out = append(out, sessionChanges(id, old.sessions[id], cur.sessions[id], cur.parents[id], old.sessions)...)
	}
	return out
}

func sessionChanges(id string, o, c sessionState, s *ckpt.Session, oldSessions map[string]sessionState) []change {
	var out []change
	key := "session:" + id
	add := func(e ckpt.Event, keys ...string) {
		e.Session = id
		out = append(out, change{e, append(keys, key)})
	}
	if _, existed := oldSessions[id]; !existed && s.Parent != "" {
		add(ckpt.Event{Kind: ckpt.EventForked, Turn: s.ForkTurn, Message: "forked from session " + s.Parent}, "forked")
		o = c // its turns are the parent's: nothing else to tell
	}
	switch {
	case c.summary > o.summary && c.turns <= o.turns:
		add(ckpt.Event{Kind: ckpt.EventSummarized, Message: "turns summarized"})
	case c.turns < o.turns:
		add(ckpt.Event{Kind: ckpt.EventRewound, Turn: c.turns + 1, Message: "conversation rewound"})
	case c.turns > o.turns:
		if o.open {
			add(ckpt.Event{Kind: ckpt.EventTurnEnded, Turn: o.turns})
		}
		for n := o.turns + 1; n <= c.turns; n++ {
			var t *ckpt.Turn
			if s != nil && n <= len(s.Turns) {
				t = s.Turns[n-1]
			}
			e := ckpt.Event{Kind: ckpt.EventTurnBegan, Turn: n}
			if t != nil {
				e.Checkpoint, e.Message = t.Begin, t.Prompt
			}
			add(e)
			if n < c.turns || !c.open {
				add(ckpt.Event{Kind: ckpt.EventTurnEnded, Turn: n})
			}
		}
	case o.open && !c.open:
		add(ckpt.Event{Kind: ckpt.EventTurnEnded, Turn: c.turns})
	case !c.updated.Equal(o.updated):
		add(ckpt.Event{Kind: ckpt.EventMessage, Turn: c.turns})
	}
	return out
}

func sortedKeys[V any](m map[string]V) []string {
	ks := make([]string, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	slices.Sort(ks)
	return ks
}
