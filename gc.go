package ckpt

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/seed1cedbf7c/ckpt/internal/failpoint"
	"github.com/seed1cedbf7c/ckpt/internal/object"
	"github.com/seed1cedbf7c/ckpt/internal/session"
	"github.com/seed1cedbf7c/ckpt/internal/store"
)

// Retention says which checkpoints gc keeps. Checkpoints that a ref names
// (HEAD, branch tips, tags, unexpired snapshots) are always kept. Per
// branch, a checkpoint is kept if any policy keeps it: Keep (with MaxAge)
// or one of the buckets (KeepHourly, KeepDaily, KeepWeekly, KeepMonthly);
// then MaxSize drops the oldest of those until the store fits. The
// operation log loses the steps that refer to removed checkpoints, so undo
// reaches back as far as the kept checkpoints go.
type Retention struct {
	// Keep is how many checkpoints to keep per branch, newest first
	// (restic's keep-last), among those younger than MaxAge.
	Keep int `json:"keep"`
	// MaxAge bounds Keep: older checkpoints are not kept by it (0: no
	// limit). The buckets reach past it.
	MaxAge time.Duration `json:"max_age"`
	// MaxSize drops the oldest further checkpoints until the store's data
	// fits in this many bytes (0: no limit).
	MaxSize int64 `json:"max_size"`
	// KeepHourly, KeepDaily, KeepWeekly and KeepMonthly keep, per branch,
	// the newest checkpoint of each of the last N hours, days, ISO weeks
	// and months that have a checkpoint (0: none), counted in
	// [GCOptions.Location].
	KeepHourly  int `json:"keep_hourly"`
	KeepDaily   int `json:"keep_daily"`
	KeepWeekly  int `json:"keep_weekly"`
	KeepMonthly int `json:"keep_monthly"`
}

// MarshalJSON writes MaxAge as config.toml and `ckpt config` write it
// ("30d", "0"), not as nanoseconds.
func (r Retention) MarshalJSON() ([]byte, error) {
	return json.Marshal(retentionJSON{Keep: r.Keep, MaxAge: FormatDuration(r.MaxAge), MaxSize: r.MaxSize,
		KeepHourly: r.KeepHourly, KeepDaily: r.KeepDaily, KeepWeekly: r.KeepWeekly, KeepMonthly: r.KeepMonthly})
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
	*r = Retention{Keep: j.Keep, MaxAge: d, MaxSize: j.MaxSize,
		KeepHourly: j.KeepHourly, KeepDaily: j.KeepDaily, KeepWeekly: j.KeepWeekly, KeepMonthly: j.KeepMonthly}
	return nil
}

type retentionJSON struct {
	Keep        int    `json:"keep"`
	MaxAge      string `json:"max_age"`
	MaxSize     int64  `json:"max_size"`
	KeepHourly  int    `json:"keep_hourly"`
	KeepDaily   int    `json:"keep_daily"`
	KeepWeekly  int    `json:"keep_weekly"`
	KeepMonthly int    `json:"keep_monthly"`
}

// Retention returns the store's retention settings.
func (c Config) Retention() Retention {
	return Retention{Keep: c.Keep, MaxAge: c.MaxAge, MaxSize: c.MaxSize,
		KeepHourly: c.KeepHourly, KeepDaily: c.KeepDaily, KeepWeekly: c.KeepWeekly, KeepMonthly: c.KeepMonthly}
}

// Why gc keeps a checkpoint (see [KeptCheckpoint]): a ref names it, a
// session needs it, or a retention policy keeps it.
const (
	KeptByHead     = "head"     // HEAD
	KeptByBranch   = "branch"   // a branch's tip
	KeptByTag      = "tag"      // a tag
	KeptBySnapshot = "snapshot" // an unexpired snapshot
	KeptByRemote   = "remote"   // a remote-tracking ref
	KeptBySession  = "session"  // a session's turn
	KeptByLast     = "last"     // Retention.Keep (within MaxAge)
	KeptByHourly   = "hourly"   // Retention.KeepHourly
	KeptByDaily    = "daily"    // Retention.KeepDaily
	KeptByWeekly   = "weekly"   // Retention.KeepWeekly
	KeptByMonthly  = "monthly"  // Retention.KeepMonthly
)

// KeptCheckpoint is a checkpoint gc keeps, and why.
type KeptCheckpoint struct {
	*Checkpoint
	// KeptBy are the reasons, in the order of the KeptBy constants.
	KeptBy []string `json:"kept_by"`
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
	// Location is the time zone the hourly, daily, weekly and monthly
	// buckets are counted in; nil: local time (time.Local).
	Location *time.Location
	// sizeIfReachable: when the checkpoints gc must keep exceed MaxSize
	// on their own, remove nothing for size (automatic gc; see
	// GCResult.SizeUnreachable).
	sizeIfReachable bool
}

// GCResult reports a garbage collection.
type GCResult struct {
	DryRun    bool      `json:"dry_run"`
	Retention Retention `json:"retention"`
	// Removed are the checkpoints removed (or that would be), oldest first.
	Removed []*Checkpoint `json:"removed"`
	// Kept is the number of checkpoints kept.
	Kept int `json:"kept"`
	// KeptCheckpoints are the checkpoints kept, oldest first, each with
	// why.
	KeptCheckpoints []KeptCheckpoint `json:"kept_checkpoints"`
	// DroppedForSize is how many of the removed checkpoints a policy
	// kept but MaxSize had no room for.
	DroppedForSize int `json:"dropped_for_size"`
	// SizeUnreachable: what gc must keep (HEAD, branch tips, tags,
	// snapshots, sessions' turns, the stat cache's trees) takes more
	// than MaxSize on its own, so the store cannot be brought under it.
	// An explicit gc still removes every checkpoint the size leaves no
	// room for; automatic gc then removes none for size, keeping the
	// history the count and age policies keep.
	SizeUnreachable bool `json:"size_unreachable,omitempty"`
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
	loc := opts.Location
	if loc == nil {
		loc = time.Local
	}
	p, err := r.planGC(ctx, ret, loc, opts.sizeIfReachable)
	if err != nil {
		return nil, err
	}
	p.out.DryRun = opts.DryRun
	if opts.DryRun {
		return p.out, nil
	}
	return r.executeGC(ctx, p, opts)
}

// gcPlan is what a gc will do, computed without changing anything.
type gcPlan struct {
	out      *GCResult
	expired  []store.Ref // snapshots whose TTL passed
	sessions []string    // sessions idle for longer than MaxAge
	sweep    *store.SweepPlan
	why      map[ID]keepReasons // why each protected checkpoint stays
}

// planGC works out a gc under ret: the snapshots and sessions that go, the
// checkpoints nothing protects and no policy keeps (by count and age, and
// by hour, day, week and month in loc, per branch — retentionKeeps — then
// by size), and every object only they refer to. It reads the store and
// changes nothing.
func (r *Repo) planGC(ctx context.Context, ret Retention, loc *time.Location, sizeIfReachable bool) (*gcPlan, error) {
	if err := failpoint.Hit("gc/plan", ""); err != nil {
		return nil, err
	}
	now := r.now()
	p := &gcPlan{out: &GCResult{Retention: ret, Removed: []*Checkpoint{}, KeptCheckpoints: []KeptCheckpoint{},
		ExpiredSnapshots: []string{}, Sessions: []string{}}, why: map[ID]keepReasons{}}
	usage, err := r.st.Usage(ctx)
	if err != nil {
		return nil, err
	}
	p.out.SizeBefore, p.out.SizeAfter = usage.File, usage.File
	protected, err := r.gcProtected(ctx, ret, now, p)
	if err != nil {
		return nil, err
	}
	recs, err := r.st.Checkpoints(ctx, store.ListFilter{}) // newest first
	if err != nil {
		return nil, err
	}
	kept := retentionKeeps(recs, ret, now, loc)
	candidates := retentionCandidates(recs, kept, protected)
	ops, err := r.st.Ops(ctx, 0)
	if err != nil {
		return nil, err
	}
	idx, err := r.st.Index(ctx)
	if err != nil {
		return nil, err
	}
	m, unreachable, err := r.markWithin(ctx, idx, usage, ret.MaxSize, recs, protected, candidates, sizeIfReachable)
	if err != nil {
		return nil, err
	}
	p.out.SizeUnreachable = unreachable
	plan := m.Plan()
	plan.OpsBefore = opsCutoff(ops, func(id ID) bool { return id.IsZero() || m.Marked(id) })
	p.sweep = plan

	removed := map[ID]bool{}
	for _, id := range plan.Checkpoints {
		removed[id] = true
	}
	names, _ := r.refNames(ctx)
	for i := len(recs) - 1; i >= 0; i-- {
		rec := recs[i]
		if removed[rec.ID] {
			p.out.Removed = append(p.out.Removed, toCheckpoint(rec, names))
			if kept[rec.ID] != 0 {
				p.out.DroppedForSize++
			}
			continue
		}
		p.out.KeptCheckpoints = append(p.out.KeptCheckpoints,
			KeptCheckpoint{Checkpoint: toCheckpoint(rec, names), KeptBy: (p.why[rec.ID] | kept[rec.ID]).names()})
	}
	p.out.Kept = len(recs) - len(p.out.Removed)
	p.out.Objects = len(plan.Trees) + len(plan.Blobs) + len(plan.Chunks)
	p.out.Freed = plan.Bytes
	for _, op := range ops {
		if op.Seq < plan.OpsBefore {
			p.out.Ops++
		}
	}
	return p, nil
}

// gcProtected returns the checkpoints a gc never removes: those a ref
// names (but expired snapshots, which it lists in p), and those sessions
// keep (but sessions idle for longer than ret.MaxAge, which it lists in
// p: they go, and their turns are no longer kept for them). It notes why
// in p.why.
func (r *Repo) gcProtected(ctx context.Context, ret Retention, now time.Time, p *gcPlan) (map[ID]bool, error) {
	refs, err := r.st.Refs(ctx, "")
	if err != nil {
		return nil, err
	}
	protected := map[ID]bool{}
	for _, ref := range refs {
		if strings.HasPrefix(ref.Name, snapshotPrefix) && r.expired(ref) {
			p.expired = append(p.expired, ref)
			p.out.ExpiredSnapshots = append(p.out.ExpiredSnapshots, strings.TrimPrefix(ref.Name, snapshotPrefix))
			continue
		}
		protected[ref.ID] = true
		p.why[ref.ID] |= refReason(ref.Name)
	}
	skip := map[string]bool{}
	if ret.MaxAge > 0 {
		all, err := r.Sessions(ctx)
		if err != nil {
			return nil, err
		}
		for _, sess := range all {
			if now.Sub(sess.Updated) > ret.MaxAge {
				p.sessions = append(p.sessions, sess.ID)
				skip[sess.ID] = true
			}
		}
		p.out.Sessions = append(p.out.Sessions, p.sessions...)
	}
	roots, err := r.extraRoots(ctx, skip)
	if err != nil {
		return nil, err // never collect what an unreadable session may need
	}
	for _, id := range roots {
		protected[id] = true
		p.why[id] |= keptBySession
	}
	return protected, nil
}

// keepReasons is a set of reasons to keep a checkpoint, one bit per
// KeptBy constant, in their order.
type keepReasons uint16

const (
	keptByHead keepReasons = 1 << iota
	keptByBranch
	keptByTag
	keptBySnapshot
	keptByRemote
	keptBySession
	keptByLast
	keptByHourly
	keptByDaily
	keptByWeekly
	keptByMonthly
)

var keepReasonNames = []string{KeptByHead, KeptByBranch, KeptByTag, KeptBySnapshot, KeptByRemote,
	KeptBySession, KeptByLast, KeptByHourly, KeptByDaily, KeptByWeekly, KeptByMonthly}

// names returns the set's KeptBy constants, in order.
func (k keepReasons) names() []string {
	out := []string{}
	for i, n := range keepReasonNames {
		if k&(1<<i) != 0 {
			out = append(out, n)
		}
	}
	return out
}

// refReason says why a ref keeps the checkpoint it names.
func refReason(name string) keepReasons {
	switch {
	case name == headName:
		return keptByHead
	case strings.HasPrefix(name, branchPrefix):
		return keptByBranch
	case strings.HasPrefix(name, tagPrefix):
		return keptByTag
	case strings.HasPrefix(name, snapshotPrefix):
		return keptBySnapshot
	}
	return keptByRemote
}

// bucketPolicy is one of the hourly, daily, weekly and monthly policies:
// it keeps the newest checkpoint of each of the last n buckets.
type bucketPolicy struct {
	reason keepReasons
	n      int
	bucket func(t time.Time) int // a number per hour, day, ISO week or month
}

func bucketPolicies(ret Retention) []bucketPolicy {
	return []bucketPolicy{
		{keptByHourly, ret.KeepHourly, func(t time.Time) int {
			return ((t.Year()*100+int(t.Month()))*100+t.Day())*100 + t.Hour()
		}},
		{keptByDaily, ret.KeepDaily, func(t time.Time) int { return (t.Year()*100+int(t.Month()))*100 + t.Day() }},
		{keptByWeekly, ret.KeepWeekly, func(t time.Time) int { y, w := t.ISOWeek(); return y*100 + w }},
		{keptByMonthly, ret.KeepMonthly, func(t time.Time) int { return t.Year()*100 + int(t.Month()) }},
	}
}

// retentionKeeps applies the policies per branch to the checkpoints
// (newest first, as the store lists them) and says which keep each one.
// Keep takes the first ret.Keep in that order that are younger than
// ret.MaxAge. Each bucket policy walks them newest first by time (the
// list's order among equal times) and keeps a checkpoint whose hour, day,
// ISO week or month in loc it has not met yet, until it has kept n. It
// is pure.
func retentionKeeps(recs []*store.Record, ret Retention, now time.Time, loc *time.Location) map[ID]keepReasons {
	out := map[ID]keepReasons{}
	perBranch := map[string]int{}
	for _, rec := range recs {
		n := perBranch[rec.Branch]
		if n < ret.Keep && (ret.MaxAge <= 0 || now.Sub(rec.Time) <= ret.MaxAge) {
			perBranch[rec.Branch] = n + 1
			out[rec.ID] |= keptByLast
		}
	}
	byTime := slices.Clone(recs)
	slices.SortStableFunc(byTime, func(a, b *store.Record) int { return b.Time.Compare(a.Time) })
	for _, pol := range bucketPolicies(ret) {
		if pol.n <= 0 {
			continue
		}
		left := map[string]int{}
		seen := map[string]map[int]bool{}
		for _, rec := range byTime {
			if seen[rec.Branch] == nil {
				seen[rec.Branch], left[rec.Branch] = map[int]bool{}, pol.n
			}
			b := pol.bucket(rec.Time.In(loc))
			if left[rec.Branch] > 0 && !seen[rec.Branch][b] {
				seen[rec.Branch][b] = true
				left[rec.Branch]--
				out[rec.ID] |= pol.reason
			}
		}
	}
	return out
}

// retentionCandidates returns the checkpoints (newest first) a policy
// keeps that nothing protects: the ones a size limit may still drop. It
// is pure.
func retentionCandidates(recs []*store.Record, kept map[ID]keepReasons, protected map[ID]bool) []ID {
	var out []ID
	for _, rec := range recs {
		if kept[rec.ID] != 0 && !protected[rec.ID] {
			out = append(out, rec.ID)
		}
	}
	return out
}

// markWithin marks what stays: the protected checkpoints, the trees a
// trusted stat cache refers to, and the newest candidates — all of them,
// or with maxSize as many as fit (counting what re-encoding kept objects
// whose delta bases go will add). unreachable: the protected ones alone do
// not fit; then, with sizeIfReachable, every candidate stays.
func (r *Repo) markWithin(ctx context.Context, idx *store.Index, usage store.Usage, maxSize int64, recs []*store.Record, protected map[ID]bool, candidates []ID, sizeIfReachable bool) (m *store.Marker, unreachable bool, err error) {
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
	// markKept marks what must stay whatever the size, and the newest n
	// candidates.
	markKept := func(n int) (*store.Marker, error) {
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
		for _, id := range candidates[:n] {
			if _, err := m.Checkpoint(ctx, id); err != nil {
				return nil, err
			}
		}
		return m, nil
	}
	if maxSize <= 0 {
		m, err := markKept(len(candidates))
		return m, false, err
	}
	m, err = markKept(0)
	if err != nil {
		return nil, false, err
	}
	// Stored bytes understate the file (pages, indexes): scale the
	// budget by how the store's used size compares to its objects.
	factor := 1.0
	if idx.Total > 0 && usage.Used > idx.Total {
		factor = float64(usage.Used) / float64(idx.Total)
	}
	budget := int64(float64(maxSize) / factor)
	if m.Live() > budget || m.Live()+m.ReencodeCost(m.Plan()) > budget {
		// What must stay does not fit on its own (stored as deltas, it
		// may fit only until the bases that go are counted).
		if sizeIfReachable {
			m, err := markKept(len(candidates))
			return m, true, err
		}
		return m, true, nil
	}
	// Add candidates newest first while they fit...
	keepN := len(candidates)
	for i, id := range candidates {
		if _, err := m.Checkpoint(ctx, id); err != nil {
			return nil, false, err
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
	m, ok, err := fits(keepN)
	if err != nil || ok {
		return m, false, err
	}
	lo, hi := 0, keepN // lo fits (or is the floor), hi does not
	for lo+1 < hi {
		mid := (lo + hi) / 2
		_, ok, err := fits(mid)
		if err != nil {
			return nil, false, err
		}
		if ok {
			lo = mid
		} else {
			hi = mid
		}
	}
	m, err = markKept(lo)
	return m, false, err
}

// executeGC carries out a plan: expired snapshots and idle sessions are
// deleted, then the objects, checkpoints and operation-log entries the
// plan names, and the store is compacted.
func (r *Repo) executeGC(ctx context.Context, p *gcPlan, opts GCOptions) (*GCResult, error) {
	out := p.out
	if len(p.expired) > 0 {
		if err := r.deleteSnapshots(ctx, p.expired, "expire"); err != nil {
			return nil, fmt.Errorf("gc: expire snapshots: %w", err)
		}
	}
	for _, id := range p.sessions {
		if err := r.sessions().DeleteSession(ctx, id); err != nil {
			return nil, err
		}
	}
	if p.sweep.Empty() {
		r.emit(Event{Kind: EventGC, Message: "nothing to remove"})
		return out, nil
	}
	if _, err := r.st.Sweep(ctx, p.sweep); err != nil {
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
	ids, err := session.Roots(ctx, r.sessions(), skip)
	if err != nil {
		return nil, fmt.Errorf("gc: %w", err)
	}
	return ids, nil
}

// autoGC runs gc after a save when the store is well over its limits, so
// each automatic gc removes a batch and the cost is spread over many saves:
// count and age get a slack of a tenth of keep (at least 10) and a day, and
// a branch is over them once it has more checkpoints past them than the
// hourly to monthly buckets could keep; size triggers above max_size, and
// only once the store has grown by a tenth of it since the last automatic
// gc (which aims at 90% of max_size), so a store whose named checkpoints
// alone exceed the limit is not collected on every save.
// checkpointSpanner is a store that counts its checkpoints without
// reading them (sqlite).
type checkpointSpanner interface {
	CheckpointSpan(ctx context.Context) (int, time.Time, error)
}

// pastRetentionMaybe reports whether some checkpoint may be past ret:
// false only when none can be, because no branch holds more than
// Keep+slack checkpoints (the store holds no more than that) and none is
// older than MaxAge and grace. Then autoGC need not read them all, which
// it would otherwise do after every save.
func (r *Repo) pastRetentionMaybe(ctx context.Context, ret Retention, slack int, grace time.Duration, now time.Time) bool {
	sp, ok := r.st.(checkpointSpanner)
	if !ok {
		return true
	}
	n, oldest, err := sp.CheckpointSpan(ctx)
	if err != nil {
		return true
	}
	if ret.Keep > 0 && n > ret.Keep+slack {
		return true
	}
	if ret.MaxAge > 0 && n > 0 && now.Sub(oldest) > ret.MaxAge+grace {
		return true
	}
	return false
}

// pastRetention reports whether, in some branch, more checkpoints than
// the bucket settings keep are past Keep+slack or older than MaxAge and
// grace (recs newest first): enough to run gc for.
func pastRetention(recs []*store.Record, ret Retention, slack int, grace time.Duration, now time.Time) bool {
	buckets := ret.KeepHourly + ret.KeepDaily + ret.KeepWeekly + ret.KeepMonthly
	perBranch, past := map[string]int{}, map[string]int{}
	for _, rec := range recs {
		perBranch[rec.Branch]++
		if (ret.Keep > 0 && perBranch[rec.Branch] > ret.Keep+slack) ||
			(ret.MaxAge > 0 && now.Sub(rec.Time) > ret.MaxAge+grace) {
			past[rec.Branch]++
			if past[rec.Branch] > buckets {
				return true
			}
		}
	}
	return false
}

// autoGC runs gc after a save once the store is well past its retention
// (docs/history.md). It returns a warning for the user when the size limit
// cannot be met: what gc must keep exceeds it on its own, so gc keeps the
// history the count and age policies keep, and tries the size again only
// once the store grew by a whole max_size.
//
// lag > 1 runs it only when the store is that many times further past its
// limits (a client whose save the watcher served: see gcLag).
func (r *Repo) autoGC(ctx context.Context, lag int) (warning string) {
	return r.autoGCWith(ctx, r.cfg.Retention(), lag)
}

// autoGCWith is autoGC under the retention ret.
func (r *Repo) autoGCWith(ctx context.Context, ret Retention, lag int) (warning string) {
	if ret.Keep <= 0 && ret.MaxAge <= 0 && ret.MaxSize <= 0 {
		return ""
	}
	over := false
	if ret.MaxSize > 0 {
		if u, err := r.st.Usage(ctx); err == nil && u.Used > ret.MaxSize {
			var floor int64
			if v, err := r.st.Meta(ctx, "gc_floor"); err == nil && v != "" {
				fmt.Sscan(v, &floor)
			}
			over = u.Used > floor+max(ret.MaxSize/10, 1<<20)*int64(lag)
		}
	}
	slack := max(10, ret.Keep/10) * lag
	// The slack past max_age is a day; with lag, lag days.
	grace, now := time.Duration(lag)*24*time.Hour, r.now()
	if !over && (ret.Keep > 0 || ret.MaxAge > 0) && !r.pastRetentionMaybe(ctx, ret, slack, grace, now) {
		return ""
	}
	if !over && (ret.Keep > 0 || ret.MaxAge > 0) {
		recs, err := r.st.Checkpoints(ctx, store.ListFilter{})
		if err != nil {
			return ""
		}
		over = pastRetention(recs, ret, slack, grace, now)
	}
	if !over {
		return ""
	}
	if recs, err := r.st.Checkpoints(ctx, store.ListFilter{Limit: 2}); err != nil || len(recs) < 2 {
		// The save just made is the only checkpoint, and HEAD: no gc
		// can remove it, and planning one indexes every object (more
		// memory than the save itself at a million files). The floor
		// below makes the next save look again once the store grew.
		if err == nil {
			r.setGCFloor(ctx, 0)
		}
		return ""
	}
	target := ret
	target.MaxSize = ret.MaxSize / 10 * 9
	res, err := r.gcLocked(ctx, GCOptions{Retention: &target, NoCompact: true, sizeIfReachable: true})
	if err != nil {
		return "" // the save succeeded; gc will be tried again after the next one
	}
	if !res.SizeUnreachable {
		r.setGCFloor(ctx, 0)
		return ""
	}
	r.setGCFloor(ctx, ret.MaxSize)
	return fmt.Sprintf("the checkpoints gc must keep (HEAD, branch tips, tags, snapshots, sessions) take more than max_size (%s) on their own, "+
		"so automatic gc keeps the history by count and age only; raise the limit: ckpt config max_size SIZE (0: none)", FormatSize(ret.MaxSize))
}

// setGCFloor records the store's size after an automatic gc (or one it
// skipped), plus extra: the next save runs one for size only once the
// store grew past it.
func (r *Repo) setGCFloor(ctx context.Context, extra int64) {
	if u, err := r.st.Usage(ctx); err == nil {
		r.st.Update(ctx, func(tx store.Tx) error { return tx.SetMeta("gc_floor", fmt.Sprint(u.Used+extra)) })
	}
}
