package gitmirror

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"

	"github.com/go-git/go-billy/v5/osfs"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/cache"
	gitobject "github.com/go-git/go-git/v5/plumbing/object"
	"github.com/go-git/go-git/v5/storage/filesystem"
	"github.com/seed1cedbf7c/ckpt/internal/failpoint"
	"github.com/seed1cedbf7c/ckpt/internal/object"
	"github.com/seed1cedbf7c/ckpt/internal/store"
)

// Mirror exports a store's checkpoints into a git repository and keeps the
// refs under its prefix in line with the store. Its methods are safe for
// concurrent use (they serialize: go-git's storage is not).
type Mirror struct {
	lay     Layout
	prefix  string
	mu      sync.Mutex
	st      *filesystem.Storage
	stale   bool // st's pack list may be out of date
	objects *objectIndex
	db      *gitmap
}

// reservedPrefixes are ref namespaces git gives a meaning to: refs there
// would show up as branches or tags, or change history (replace refs).
var reservedPrefixes = []string{"refs/heads", "refs/tags", "refs/remotes", "refs/notes",
	"refs/replace", "refs/stash", "refs/bisect", "refs/worktree", "refs/rewritten", "refs/prefetch"}

// CheckPrefix validates a ref prefix for the mirror ("refs/ckpt",
// "refs/sandbox", ...).
func CheckPrefix(prefix string) error {
	if !strings.HasPrefix(prefix, "refs/") || strings.HasSuffix(prefix, "/") {
		return fmt.Errorf("git ref prefix %q: want a namespace like refs/ckpt", prefix)
	}
	for _, r := range reservedPrefixes {
		if prefix == r || strings.HasPrefix(prefix, r+"/") {
			return fmt.Errorf("git ref prefix %q is inside %s, which git shows or uses itself; pick another, e.g. refs/ckpt", prefix, r)
		}
	}
	if err := checkRefFormat(prefix + "/snapshots/x"); err != nil {
		return fmt.Errorf("git ref prefix %q: %w", prefix, err)
	}
	return nil
}

// Open opens the mirror of the repository lay, with its cache at mapPath
// and its refs under prefix.
func Open(ctx context.Context, lay Layout, mapPath, prefix string) (*Mirror, error) {
	if err := CheckPrefix(prefix); err != nil {
		return nil, err
	}
	db, err := openMap(ctx, mapPath)
	if err != nil {
		return nil, err
	}
	fs := osfs.New(lay.CommonDir, osfs.WithBoundOS())
	st := filesystem.NewStorageWithOptions(fs, cache.NewObjectLRU(4<<20), filesystem.Options{})
	return &Mirror{lay: lay, prefix: prefix, st: st, db: db,
		objects: &objectIndex{dir: filepath.Join(lay.CommonDir, "objects", "pack")}}, nil
}

// Close releases the mirror's files.
func (m *Mirror) Close() error {
	m.mu.Lock()
	defer m.mu.Unlock()
	err := m.st.Close()
	if cerr := m.db.close(); err == nil {
		err = cerr
	}
	return err
}

// Prefix returns the ref namespace.
func (m *Mirror) Prefix() string { return m.prefix }

// Layout returns the repository's layout.
func (m *Mirror) Layout() Layout { return m.lay }

// SnapshotRef returns the git ref of a snapshot.
func (m *Mirror) SnapshotRef(name string) string { return m.prefix + "/snapshots/" + name }

// TimelineRef returns the git ref of a timeline checkpoint.
func (m *Mirror) TimelineRef(id object.ID) string { return m.prefix + "/timeline/" + id.Short() }

// Commit returns the commit a checkpoint is exported as, exporting it (and
// the objects it needs) if the repository does not have it yet. It does
// not set any ref.
func (m *Mirror) Commit(ctx context.Context, src Source, id object.ID) (plumbing.Hash, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if _, err := m.refresh(); err != nil {
		return plumbing.ZeroHash, err
	}
	x := m.newExporter(src)
	defer x.abort()
	h, err := x.commit(ctx, id)
	if err != nil {
		return h, err
	}
	_, err = x.flush(ctx)
	return h, err
}

// refresh lists the repository's packs (see objectIndex.refresh) at the
// start of an operation.
func (m *Mirror) refresh() ([]string, error) {
	m.stale = true
	return m.objects.refresh()
}

// SyncResult reports what [Mirror.Sync] changed.
type SyncResult struct {
	// Objects is the number of git objects written.
	Objects int
	// Pack is the pack they were written to ("pack-<hex>"; "" if none).
	Pack string
	// Verified is set when the sync checked every object the refs need,
	// because a pack it relied on was gone (git gc repacked).
	Verified bool
	// Consolidated is the pack the sync merged some of the mirror's own
	// packs into ("" if it did not), and Removed lists those packs.
	Consolidated string
	Removed      []string
	// Set and Deleted list the refs created or moved, and deleted.
	Set, Deleted []string
}

// Sync brings the refs under the prefix in line with the store: a ref
// <prefix>/snapshots/NAME for every store ref snapshots/NAME, and a ref
// <prefix>/timeline/<12-hex id> for each of the newest timelineMax
// checkpoints of the timeline (the states the operation log moved HEAD
// from and to), older ones deleted. Each named checkpoint is exported
// first, its new objects into one pack that is durable before any ref
// names them. Only refs the mirror wrote itself are moved or deleted; a
// ref in the way that it did not write is an error naming it.
//
// A pack the previous sync relied on that is gone means git's gc (or a
// repack) ran since, and may have pruned objects the refs need (a gc with
// --prune=now racing a sync can prune a new pack before its refs exist):
// that sync then rebuilds every tree and commit the refs name and writes
// whatever object is missing. Last, when the mirror has written more than
// a few packs, it consolidates the smaller ones (see planRollUp).
func (m *Mirror) Sync(ctx context.Context, st store.Store, timelineMax int) (*SyncResult, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := &SyncResult{}
	start, err := m.refresh()
	if err != nil {
		return nil, err
	}
	seen, err := m.db.meta(ctx, "packs_seen")
	if err != nil {
		return nil, err
	}
	out.Verified = anyGone(strings.Fields(seen), start)
	if err := m.adopt(ctx, st); err != nil {
		return nil, err
	}
	x := m.newExporter(st)
	x.deep = out.Verified
	defer x.abort()
	snaps, err := st.Refs(ctx, "snapshots/")
	if err != nil {
		return nil, err
	}
	// The timeline: read the op log from where the last sync stopped.
	tl, err := m.timeline(ctx, st, timelineMax)
	if err != nil {
		return nil, err
	}
	ids := make([]object.ID, 0, len(snaps)+len(tl))
	for _, ref := range snaps {
		ids = append(ids, ref.ID)
	}
	for _, e := range tl {
		ids = append(ids, e.id)
	}
	if err := x.prefetchCommits(ctx, ids); err != nil {
		return nil, err
	}
	want := map[string]plumbing.Hash{}
	for _, ref := range snaps {
		name := strings.TrimPrefix(ref.Name, "snapshots/")
		h, err := x.commit(ctx, ref.ID)
		if err != nil {
			return nil, fmt.Errorf("snapshot %s: %w", name, err)
		}
		want[m.SnapshotRef(name)] = h
	}
	names := timelineNames(tl)
	for i, e := range tl {
		h, err := x.commit(ctx, e.id)
		if errors.Is(err, store.ErrNotFound) {
			// Dropped from the store (gc): no longer on the timeline.
			if err := m.db.dropTimeline(ctx, e.id); err != nil {
				return nil, err
			}
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("timeline: %w", err)
		}
		want[m.prefix+"/timeline/"+names[i]] = h
	}
	out.Objects = x.written
	if out.Pack, err = x.flush(ctx); err != nil {
		return nil, fmt.Errorf("record git objects: %w", err)
	}
	if err := failpoint.Hit("git/before-refs", out.Pack); err != nil {
		return nil, err
	}
	// Refs.
	ledger, err := m.db.ledger(ctx)
	if err != nil {
		return nil, err
	}
	rr := &refReader{common: m.lay.CommonDir}
	wantNames := make([]string, 0, len(want))
	for n := range want {
		wantNames = append(wantNames, n)
	}
	sort.Strings(wantNames)
	var errs []error
	for _, name := range wantNames {
		h := want[name]
		cur, found, err := rr.read(name)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if found && cur == h {
			if ledger[name] != h {
				if err := m.db.setLedger(ctx, name, h); err != nil {
					return nil, err
				}
			}
			continue
		}
		old := plumbing.ZeroHash
		if found {
			if mine, err := m.owns(ctx, st, name, cur, ledger); err != nil {
				errs = append(errs, err)
				continue
			} else if !mine {
				errs = append(errs, &ForeignRefError{Ref: name, Commit: cur.String()})
				continue
			}
			old = cur
		}
		if err := updateRef(m.lay.CommonDir, name, old, h); err != nil {
			errs = append(errs, err)
			continue
		}
		if err := m.db.setLedger(ctx, name, h); err != nil {
			return nil, err
		}
		out.Set = append(out.Set, name)
	}
	// Refs the mirror wrote that the store no longer names.
	var stale []string
	for name := range ledger {
		if _, ok := want[name]; !ok {
			stale = append(stale, name)
		}
	}
	sort.Strings(stale)
	for _, name := range stale {
		cur, found, err := rr.read(name)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if found && cur == ledger[name] {
			if err := updateRef(m.lay.CommonDir, name, cur, plumbing.ZeroHash); err != nil {
				errs = append(errs, err)
				continue
			}
			out.Deleted = append(out.Deleted, name)
		}
		// Gone, or moved by someone else: no longer the mirror's.
		if err := m.db.setLedger(ctx, name, plumbing.ZeroHash); err != nil {
			return nil, err
		}
	}
	// The mirror's packs.
	rolled, removed, err := m.consolidate(ctx)
	if err != nil {
		errs = append(errs, fmt.Errorf("consolidate ckpt's git packs in %s: %w", m.objects.dir, err))
	}
	out.Consolidated, out.Removed = rolled, removed
	// What the next sync checks is still there: every pack this one
	// started from or wrote, but those it removed itself.
	if err := m.db.setMeta(ctx, "packs_seen", strings.Join(seenAfter(start, []string{out.Pack, rolled}, removed), " ")); err != nil {
		return nil, err
	}
	if err := errors.Join(errs...); err != nil {
		return out, err
	}
	return out, nil
}

// anyGone reports whether a name of seen is not in now (sorted).
func anyGone(seen, now []string) bool {
	for _, n := range seen {
		if i := sort.SearchStrings(now, n); i == len(now) || now[i] != n {
			return true
		}
	}
	return false
}

// seenAfter is start plus the packs written, minus those removed, sorted.
func seenAfter(start, written, removed []string) []string {
	set := map[string]bool{}
	for _, n := range start {
		set[n] = true
	}
	for _, n := range written {
		if n != "" {
			set[n] = true
		}
	}
	for _, n := range removed {
		delete(set, n)
	}
	out := make([]string, 0, len(set))
	for n := range set {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

// consolidate merges the mirror's own packs when they grow numerous (see
// planRollUp). Packs the map lists that are gone (git's gc repacked them)
// are forgotten; packs with a .keep file, which the user asked git to
// keep as they are, are left alone, and so is every pack while a
// multi-pack-index exists (its maintenance repacks them; removing a pack it
// lists would make git discard it). It returns the new pack and the packs
// it removed.
func (m *Mirror) consolidate(ctx context.Context) (string, []string, error) {
	recorded, err := m.db.packs(ctx)
	if err != nil {
		return "", nil, err
	}
	var live []packInfo
	var gone []string
	for _, p := range recorded {
		lp, ok := m.objects.lookup(p.Name)
		if !ok {
			// Gone, or written since this sync listed the packs (by a ckpt
			// of this store in another process): the next sync sees it.
			if _, err := os.Stat(filepath.Join(m.objects.dir, p.Name+".pack")); errors.Is(err, fs.ErrNotExist) {
				gone = append(gone, p.Name)
			}
			continue
		}
		if _, err := os.Lstat(filepath.Join(m.objects.dir, p.Name+".keep")); err == nil {
			continue
		}
		live = append(live, packInfo{Name: p.Name, Size: lp.size})
	}
	if err := m.db.dropPacks(ctx, gone); err != nil {
		return "", nil, err
	}
	plan := planRollUp(live)
	if len(plan) == 0 {
		return "", nil, nil
	}
	if _, err := os.Lstat(filepath.Join(m.objects.dir, "multi-pack-index")); err == nil {
		return "", nil, nil
	}
	written, removed, err := m.objects.rollUp(plan)
	if written.Name != "" {
		if aerr := m.db.addPack(ctx, written); err == nil {
			err = aerr
		}
	}
	if derr := m.db.dropPacks(ctx, removed); err == nil {
		err = derr
	}
	return written.Name, removed, err
}

// ForeignRefError reports a ref the mirror must set that it did not write.
type ForeignRefError struct {
	Ref    string
	Commit string
}

// Error implements error.
func (e *ForeignRefError) Error() string {
	return fmt.Sprintf("git ref %s already exists (commit %s) and was not written by this ckpt store", e.Ref, e.Commit[:12])
}

// Hint says how to resolve the conflict.
func (e *ForeignRefError) Hint() string {
	return "remove it with `git update-ref -d " + e.Ref + "` if it is not needed, or give this workspace another prefix: ckpt config git_ref_prefix refs/ckpt-other"
}

// owns reports whether the mirror may move the ref: it wrote its current
// value, or that value is a commit exported from a checkpoint this store has.
func (m *Mirror) owns(ctx context.Context, st store.Store, name string, cur plumbing.Hash, ledger map[string]plumbing.Hash) (bool, error) {
	if ledger[name] == cur {
		return true, nil
	}
	id, ok := m.checkpointOf(cur)
	if !ok {
		return false, nil
	}
	if _, err := st.Checkpoint(ctx, id); errors.Is(err, store.ErrNotFound) {
		return false, nil
	} else if err != nil {
		return false, err
	}
	return true, nil
}

// checkpointOf returns the checkpoint a commit was exported from (its
// Ckpt-Checkpoint trailer), if it is a ckpt commit.
func (m *Mirror) checkpointOf(h plumbing.Hash) (object.ID, bool) {
	if m.stale {
		m.st.Reindex() // packs may have come and gone since it last looked
		m.stale = false
	}
	c, err := gitobject.GetCommit(m.st, h)
	if err != nil || c.Author.Email != CommitterEmail {
		return object.ZeroID, false
	}
	return ParseTrailer(c.Message)
}

// adopt rebuilds the ledger when the map is new (lost or first use): refs
// under the prefix whose commits were exported from this store's
// checkpoints are the mirror's.
func (m *Mirror) adopt(ctx context.Context, st store.Store) error {
	key := "adopted:" + m.prefix
	if v, err := m.db.meta(ctx, key); err != nil || v != "" {
		return err
	}
	rr := &refReader{common: m.lay.CommonDir}
	for _, ns := range []string{m.prefix + "/snapshots/", m.prefix + "/timeline/"} {
		refs, err := rr.list(ns)
		if err != nil {
			return err
		}
		for name, h := range refs {
			id, ok := m.checkpointOf(h)
			if !ok {
				continue
			}
			if _, err := st.Checkpoint(ctx, id); err != nil {
				continue
			}
			if err := m.db.setLedger(ctx, name, h); err != nil {
				return err
			}
		}
	}
	return m.db.setMeta(ctx, key, "1")
}

// timeline reads the operation log from where the last sync stopped and
// returns the newest max timeline checkpoints, newest first.
func (m *Mirror) timeline(ctx context.Context, st store.Store, max int) ([]timelineEntry, error) {
	v, err := m.db.meta(ctx, "last_op")
	if err != nil {
		return nil, err
	}
	last, _ := strconv.ParseInt(v, 10, 64)
	ops, err := st.Ops(ctx, last)
	if err != nil {
		return nil, err
	}
	if len(ops) > 0 && ops[0].Seq <= last {
		ops = nil
	}
	var es []timelineEntry
	for _, op := range ops {
		if !op.Before.IsZero() {
			es = append(es, timelineEntry{op.Before, 2 * op.Seq})
		}
		if !op.After.IsZero() {
			es = append(es, timelineEntry{op.After, 2*op.Seq + 1})
		}
		last = op.Seq
	}
	return m.db.advanceTimeline(ctx, es, last, max)
}

// timelineNames gives each timeline checkpoint its ref name: the 12-hex
// short id, or the full id for checkpoints whose short ids collide.
func timelineNames(tl []timelineEntry) []string {
	count := map[string]int{}
	for _, e := range tl {
		count[e.id.Short()]++
	}
	out := make([]string, len(tl))
	for i, e := range tl {
		out[i] = e.id.Short()
		if count[out[i]] > 1 {
			out[i] = e.id.String()
		}
	}
	return out
}

// Info describes the mirror's refs as they are in the repository.
type Info struct {
	Prefix    string
	CommonDir string
	GitDir    string
	Snapshots int
	Timeline  int
	// LastError is the error of the last sync, "" if it succeeded.
	LastError string
}

// Info counts the refs under the prefix and reports the last sync's error.
func (m *Mirror) Info(ctx context.Context) (*Info, error) {
	in := &Info{Prefix: m.prefix, CommonDir: m.lay.CommonDir, GitDir: m.lay.GitDir}
	rr := &refReader{common: m.lay.CommonDir}
	s, err := rr.list(m.prefix + "/snapshots/")
	if err != nil {
		return nil, err
	}
	t, err := rr.list(m.prefix + "/timeline/")
	if err != nil {
		return nil, err
	}
	in.Snapshots, in.Timeline = len(s), len(t)
	in.LastError, err = m.db.meta(ctx, "last_error")
	return in, err
}

// SetLastError records the outcome of a sync for [Mirror.Info] ("" after
// a successful one).
func (m *Mirror) SetLastError(ctx context.Context, msg string) error {
	return m.db.setMeta(ctx, "last_error", msg)
}
