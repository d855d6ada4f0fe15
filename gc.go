package ckpt

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/seed1cedbf7c/ckpt/internal/object"
	"github.com/seed1cedbf7c/ckpt/internal/store"
)

// Retention says which checkpoints gc keeps. Checkpoints that a ref names
// (HEAD, branch tips, tags, unexpired snapshots) are always kept. The
// operation log loses the steps that refer to removed checkpoints, so undo
// reaches back as far as the kept checkpoints go.
type Retention struct {
	// Keep is how many checkpoints to keep per branch, newest first.
	Keep int `json:"keep"`
	// MaxAge drops checkpoints older than this (0: no limit).
	MaxAge time.Duration `json:"max_age"`
	// MaxSize drops the oldest further checkpoints until the store's data
	// fits in this many bytes (0: no limit).
	MaxSize int64 `json:"max_size"`
}

// MarshalJSON writes MaxAge as config.toml and `ckpt config` write it
// ("30d", "0"), not as nanoseconds.
func (r Retention) MarshalJSON() ([]byte, error) {
	return json.Marshal(retentionJSON{Keep: r.Keep, MaxAge: FormatDuration(r.MaxAge), MaxSize: r.MaxSize})
}

// UnmarshalJSON reads what MarshalJSON writes.
func (r *Retention) UnmarshalJSON(b []byte) error {
	var j retentionJSON
	if err := json.Unmarshal(b, &j); err != nil {
		return err
	}
	d, err := ParseDuration(j.MaxAge)
	if err != nil {
		return err
	}
	*r = Retention{Keep: j.Keep, MaxAge: d, MaxSize: j.MaxSize}
	return nil
}

type retentionJSON struct {
	Keep    int    `json:"keep"`
	MaxAge  string `json:"max_age"`
	MaxSize int64  `json:"max_size"`
}

// Retention returns the store's retention settings.
func (c Config) Retention() Retention {
	return Retention{Keep: c.Keep, MaxAge: c.MaxAge, MaxSize: c.MaxSize}
}

// GCOptions configure [Repo.GC].
type GCOptions struct {
	// Retention, if nil, is the store's (see [Config.Retention]).
	Retention *Retention
	// DryRun reports what would be removed without removing it.
	DryRun bool
	// NoCompact skips giving the freed space back to the file system
	// (SQLite reuses it for new checkpoints); automatic gc does this.
	NoCompact bool
}

// GCResult reports a garbage collection.
type GCResult struct {
	DryRun    bool      `json:"dry_run"`
	Retention Retention `json:"retention"`
	// Removed are the checkpoints removed (or that would be), oldest first.
	Removed []*Checkpoint `json:"removed"`
	// Kept is the number of checkpoints kept.
	Kept int `json:"kept"`
	// ExpiredSnapshots are the snapshots whose TTL had passed.
	ExpiredSnapshots []string `json:"expired_snapshots"`
	// Sessions are the sessions idle for longer than MaxAge, removed.
	Sessions []string `json:"sessions"`
	// Objects is the number of trees, blobs and chunks removed.
	Objects int `json:"objects"`
	// Ops is the number of operation log entries dropped (undo no longer
	// reaches past them).
	Ops int `json:"ops"`
	// Freed is the number of stored bytes removed.
	Freed int64 `json:"freed"`
	// SizeBefore and SizeAfter are the store's size on disk.
	SizeBefore int64 `json:"size_before"`
	SizeAfter  int64 `json:"size_after"`
}

// GC removes checkpoints the retention no longer keeps, expired snapshots,
// and every object nothing kept refers to; then it compacts the store.
// Checkpoints named by a ref are never removed by count, age or size; the
// operation log keeps the window whose checkpoints are kept, so undo and
// redo never lead to a removed checkpoint.
func (r *Repo) GC(ctx context.Context, opts GCOptions) (*GCResult, error) {
	unlock, err := r.begin(ctx)
	if err != nil {
		return nil, err
	}
	defer unlock()
	return r.gcLocked(ctx, opts)
}

func (r *Repo) gcLocked(ctx context.Context, opts GCOptions) (*GCResult, error) {
	ret := r.cfg.Retention()
	if opts.Retention != nil {
		ret = *opts.Retention
	}
	now := r.now()
	out := &GCResult{DryRun: opts.DryRun, Retention: ret, Removed: []*Checkpoint{}, ExpiredSnapshots: []string{}, Sessions: []string{}}
	usage, err := r.st.Usage(ctx)
	if err != nil {
		return nil, err
	}
	out.SizeBefore, out.SizeAfter = usage.File, usage.File

	refs, err := r.st.Refs(ctx, "")
	if err != nil {
		return nil, err
	}
	protected := map[ID]bool{}
	var expired []store.Ref
	for _, ref := range refs {
		if strings.HasPrefix(ref.Name, snapshotPrefix) && r.expired(ref) {
			expired = append(expired, ref)
			out.ExpiredSnapshots = append(out.ExpiredSnapshots, strings.TrimPrefix(ref.Name, snapshotPrefix))
			continue
		}
		protected[ref.ID] = true
	}
	if len(expired) > 0 && !opts.DryRun {
		if err := r.deleteSnapshots(ctx, expired, "expire"); err != nil {
			return nil, fmt.Errorf("gc: expire snapshots: %w", err)
		}
	}
	// Sessions follow the same age limit: one idle for longer than MaxAge
	// is removed, and its turns' checkpoints are no longer kept for it.
	if ret.MaxAge > 0 {
		all, err := r.Sessions(ctx)
		if err != nil {
			return nil, err
		}
		for _, sess := range all {
			if now.Sub(sess.Updated) > ret.MaxAge {
				out.Sessions = append(out.Sessions, sess.ID)
				if !opts.DryRun {
					if err := r.sessions().DeleteSession(ctx, sess.ID); err != nil {
						return nil, err
					}
				}
			}
		}
	}
	skip := map[string]bool{}
	if opts.DryRun {
		for _, id := range out.Sessions {
			skip[id] = true
		}
	}
	roots, err := r.extraRoots(ctx, skip)
	if err != nil {
		return nil, err // never collect what an unreadable session may need
	}
	for _, id := range roots {
		protected[id] = true
	}

	recs, err := r.st.Checkpoints(ctx, store.ListFilter{}) // newest first
	if err != nil {
		return nil, err
	}
	byID := map[ID]*store.Record{}
	for _, rec := range recs {
		byID[rec.ID] = rec
	}
	// Count and age, per branch.
	retained := map[ID]bool{}
	perBranch := map[string]int{}
	for _, rec := range recs {
		n := perBranch[rec.Branch]
		if n < ret.Keep && (ret.MaxAge <= 0 || now.Sub(rec.Time) <= ret.MaxAge) {
			retained[rec.ID] = true
			perBranch[rec.Branch] = n + 1
		}
	}
	ops, err := r.st.Ops(ctx, 0)
	if err != nil {
		return nil, err
	}
	idx, err := r.st.Index(ctx)
	if err != nil {
		return nil, err
	}
	// Trees are read once: the size search marks the history several times.
	trees := map[ID]*object.Tree{}
	read := func(ctx context.Context, id object.ID) (*object.Tree, error) {
		if t, ok := trees[id]; ok {
			return t, nil
		}
		t, err := r.st.ReadTree(ctx, id)
		if err == nil {
			trees[id] = t
		}
		return t, err
	}
	// mark marks what must stay whatever the size: protected checkpoints
	// and the trees a trusted stat cache refers to.
	mark := func() (*store.Marker, error) {
		m := store.NewMarker(idx, read)
		if c := r.loadCache(ctx); c != nil {
			for _, t := range c.Trees() {
				if err := m.Tree(ctx, t); err != nil {
					c.Close()
					return nil, err
				}
			}
			c.Close()
		}
		for _, rec := range recs {
			if protected[rec.ID] {
				if _, err := m.Checkpoint(ctx, rec.ID); err != nil {
					return nil, err
				}
			}
		}
		return m, nil
	}
	m, err := mark()
	if err != nil {
		return nil, err
	}
	var candidates []ID // retained, not protected, newest first
	for _, rec := range recs {
		if retained[rec.ID] && !protected[rec.ID] {
			candidates = append(candidates, rec.ID)
		}
	}
	keepN := len(candidates)
	// markKept marks the protected checkpoints and the newest n candidates.
	markKept := func(n int) (*store.Marker, error) {
		m, err := mark()
		if err != nil {
			return nil, err
		}
		for _, id := range candidates[:n] {
			if _, err := m.Checkpoint(ctx, id); err != nil {
				return nil, err
			}
		}
		return m, nil
	}
	if ret.MaxSize > 0 {
		// Stored bytes understate the file (pages, indexes): scale the
		// budget by how the store's used size compares to its objects.
		factor := 1.0
		if idx.Total > 0 && usage.Used > idx.Total {
			factor = float64(usage.Used) / float64(idx.Total)
		}
		budget := int64(float64(ret.MaxSize) / factor)
		// Add candidates newest first while they fit...
		for i, id := range candidates {
			if _, err := m.Checkpoint(ctx, id); err != nil {
				return nil, err
			}
			if m.Live() > budget {
				keepN = i
				break
			}
		}
		// ...then count what re-encoding the kept objects whose delta bases
		// go will add, and keep fewer until that fits too (binary search).
		fits := func(n int) (*store.Marker, bool, error) {
			m, err := markKept(n)
			if err != nil {
				return nil, false, err
			}
			p := m.Plan()
			return m, m.Live()+m.ReencodeCost(p) <= budget, nil
		}
		var ok bool
		if m, ok, err = fits(keepN); err != nil {
			return nil, err
		}
		if !ok {
			lo, hi := 0, keepN // lo fits (or is the floor), hi does not
			for lo+1 < hi {
				mid := (lo + hi) / 2
				_, ok, err := fits(mid)
				if err != nil {
					return nil, err
				}
				if ok {
					lo = mid
				} else {
					hi = mid
				}
			}
			keepN = lo
			if m, err = markKept(keepN); err != nil {
				return nil, err
			}
		}
	} else {
		for _, id := range candidates {
			if _, err := m.Checkpoint(ctx, id); err != nil {
				return nil, err
			}
		}
	}
	plan := m.Plan()
	plan.OpsBefore = opsCutoff(ops, func(id ID) bool { return id.IsZero() || m.Marked(id) })

	removed := map[ID]bool{}
	for _, id := range plan.Checkpoints {
		removed[id] = true
	}
	names, _ := r.refNames(ctx)
	for i := len(recs) - 1; i >= 0; i-- {
		if removed[recs[i].ID] {
			out.Removed = append(out.Removed, toCheckpoint(recs[i], names))
		}
	}
	out.Kept = len(recs) - len(out.Removed)
	out.Objects = len(plan.Trees) + len(plan.Blobs) + len(plan.Chunks)
	out.Freed = plan.Bytes
	for _, op := range ops {
		if op.Seq < plan.OpsBefore {
			out.Ops++
		}
	}
	if opts.DryRun {
		return out, nil
	}
	if plan.Empty() {
		r.emit(Event{Kind: EventGC, Message: "nothing to remove"})
		return out, nil
	}
	if _, err := r.st.Sweep(ctx, plan); err != nil {
		return nil, err
	}
	if !opts.NoCompact {
		if err := r.st.Vacuum(ctx); err != nil {
			return nil, err
		}
	}
	if u, err := r.st.Usage(ctx); err == nil {
		out.SizeAfter = u.File
	}
	r.emit(Event{Kind: EventGC, Message: fmt.Sprintf("removed %d checkpoint(s), %d object(s), %d byte(s)", len(out.Removed), out.Objects, out.Freed)})
	return out, nil
}

// opsCutoff returns the seq before which the operation log is dropped: the
// kept suffix refers only to kept checkpoints (so undo and redo never lead
// to a removed one) and never holds an undo or redo of a dropped op
// (replaying it must give the same timeline).
func opsCutoff(ops []store.Op, kept func(ID) bool) int64 {
	if len(ops) == 0 {
		return 0
	}
	cut := int64(0)
	for _, op := range ops {
		timeline := undoable(op.Kind) || OpKind(op.Kind) == OpUndo || OpKind(op.Kind) == OpRedo
		if timeline && !(kept(op.Before) && kept(op.After) && kept(op.Checkpoint)) {
			cut = op.Seq + 1
		}
	}
	for changed := true; changed; {
		changed = false
		for _, op := range ops {
			if op.Seq >= cut && (OpKind(op.Kind) == OpUndo || OpKind(op.Kind) == OpRedo) && op.Target < cut {
				cut, changed = op.Seq+1, true
			}
		}
	}
	if cut <= ops[0].Seq {
		return 0
	}
	return cut
}

// extraRoots are checkpoints other parts of the engine keep: the turns of
// sessions (except those in skip).
func (r *Repo) extraRoots(ctx context.Context, skip map[string]bool) ([]ID, error) {
	ids, err := r.sessionRoots(ctx, skip)
	if err != nil {
		return nil, fmt.Errorf("gc: %w", err)
	}
	return ids, nil
}

// autoGC runs gc after a save when the store is well over its limits, so
// each automatic gc removes a batch and the cost is spread over many saves:
// count and age get a slack of a tenth of keep (at least 10) and a day;
// size triggers above max_size, and only once the store has grown by a
// tenth of it since the last automatic gc (which aims at 90% of max_size),
// so a store whose named checkpoints alone exceed the limit is not
// collected on every save.
func (r *Repo) autoGC(ctx context.Context) {
	ret := r.cfg.Retention()
	if ret.Keep <= 0 && ret.MaxAge <= 0 && ret.MaxSize <= 0 {
		return
	}
	over := false
	if ret.MaxSize > 0 {
		if u, err := r.st.Usage(ctx); err == nil && u.Used > ret.MaxSize {
			var floor int64
			if v, err := r.st.Meta(ctx, "gc_floor"); err == nil && v != "" {
				fmt.Sscan(v, &floor)
			}
			over = u.Used > floor+max(ret.MaxSize/10, 1<<20)
		}
	}
	if !over && (ret.Keep > 0 || ret.MaxAge > 0) {
		recs, err := r.st.Checkpoints(ctx, store.ListFilter{})
		if err != nil {
			return
		}
		slack := max(10, ret.Keep/10)
		perBranch := map[string]int{}
		now := r.now()
		for _, rec := range recs {
			perBranch[rec.Branch]++
			if ret.Keep > 0 && perBranch[rec.Branch] > ret.Keep+slack {
				over = true
				break
			}
			if ret.MaxAge > 0 && now.Sub(rec.Time) > ret.MaxAge+24*time.Hour {
				over = true
				break
			}
		}
	}
	if !over {
		return
	}
	target := ret
	target.MaxSize = ret.MaxSize / 10 * 9
	if _, err := r.gcLocked(ctx, GCOptions{Retention: &target, NoCompact: true}); err != nil {
		return // the save succeeded; gc will be tried again after the next one
	}
	if u, err := r.st.Usage(ctx); err == nil {
		r.st.Update(ctx, func(tx store.Tx) error { return tx.SetMeta("gc_floor", fmt.Sprint(u.Used)) })
	}
}
