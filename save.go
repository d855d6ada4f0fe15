package ckpt

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
	"sync/atomic"

	"github.com/seed1cedbf7c/ckpt/internal/failpoint"
	"github.com/seed1cedbf7c/ckpt/internal/object"
	"github.com/seed1cedbf7c/ckpt/internal/scan"
	"github.com/seed1cedbf7c/ckpt/internal/store"
	"github.com/seed1cedbf7c/ckpt/internal/tree"
	"github.com/seed1cedbf7c/ckpt/internal/watch"
)

// Checkpoint kinds.
const (
	KindManual     = object.KindManual     // ckpt save
	KindTurn       = object.KindTurn       // an agent turn
	KindRun        = object.KindRun        // a guarded run's pre-run state
	KindPreRestore = object.KindPreRestore // taken automatically before a destructive operation
	KindEdit       = object.KindEdit       // partial: only the paths named
	KindRestore    = object.KindRestore    // the state a partial restore produced
)

// SaveOptions configure [Repo.Save].
type SaveOptions struct {
	Message string
	// Kind of checkpoint (default manual; edit when Paths are given).
	Kind string
	// Paths, if set, make a partial checkpoint: it records the current
	// content of just these workspace-relative paths (an absent path is
	// recorded as absent, so restoring the checkpoint deletes it). HEAD
	// does not move.
	Paths []string
	// AllowEmpty records a checkpoint even if the workspace equals HEAD.
	AllowEmpty bool
	Author     string
	Meta       map[string]string
}

// SaveResult is what [Repo.Save] did.
type SaveResult struct {
	Checkpoint *Checkpoint
	// Created is false when the workspace already equals HEAD and no
	// checkpoint was recorded (Checkpoint is then HEAD).
	Created bool
	// Skipped lists paths not captured (FIFOs, devices, files over the limit).
	Skipped []Skipped
	// Scanned and Hashed count files seen and files read (-1: not known).
	Scanned, Hashed int64
	// Served: the workspace's watcher made the save (see [Repo.Save]).
	Served bool
	// Warning is what the watcher asks the user to fix (the inotify watch
	// limit is reached: directories it cannot watch are read in full).
	Warning string
}

// Save records a checkpoint of the whole workspace, or of opts.Paths. A
// whole-tree save of a workspace equal to HEAD records nothing (unless
// AllowEmpty) and returns HEAD with Created false.
//
// With a watcher running ([Repo.Watch], `ckpt watch`), a whole-tree save
// is made by the watcher's process, which keeps the stat cache in memory
// and knows what changed (Served in the result); this process keeps the
// store's lock meanwhile. Whatever the watcher cannot do, this process
// does, as without a watcher (CKPT_WATCH_SERVE=0 turns served saves off).
func (r *Repo) Save(ctx context.Context, opts SaveOptions) (*SaveResult, error) {
	if opts.Kind == "" {
		opts.Kind = KindManual
		if len(opts.Paths) > 0 {
			opts.Kind = KindEdit
		}
	}
	if !object.ValidKind(opts.Kind) {
		return nil, fmt.Errorf("save: unknown checkpoint kind %q", opts.Kind)
	}
	unlock, err := r.begin(ctx)
	if err != nil {
		return nil, err
	}
	defer unlock()
	if len(opts.Paths) > 0 {
		return r.savePathsLocked(ctx, opts)
	}
	res, err := r.saveLocked(ctx, opts, nil)
	if err != nil {
		return nil, err
	}
	if res.Created {
		lag := 1
		if res.Served {
			lag = gcLag // the watcher runs it when saves pause
		}
		if w := r.autoGC(ctx, lag); w != "" {
			res.Warning = joinWarnings(res.Warning, w)
		}
	}
	return res, nil
}

// joinWarnings joins two warnings for the user, either of them empty.
func joinWarnings(a, b string) string {
	if a == "" || b == "" {
		return a + b
	}
	return a + "; " + b
}

// SaveFiles records a partial checkpoint of paths (kind edit) — call it
// before an edit tool writes them, so a restore can put them back (and
// delete the ones that did not exist).
func (r *Repo) SaveFiles(ctx context.Context, message string, paths ...string) (*SaveResult, error) {
	return r.Save(ctx, SaveOptions{Message: message, Paths: paths, Kind: KindEdit})
}

// capture is a scan of the workspace into a transaction.
type capture struct {
	res *scan.Result
	cw  *scan.CacheWriter
	// cached: the scan's stat cache was installed (commitCache), so the
	// cache holds exactly what this scan saw.
	cached bool
	// tracked are the ignored paths it took as tracked (MetaTracked).
	tracked []string
	// full: the watcher did not vouch for unchanged directories.
	full bool
	// warning is the watcher's (see SaveResult.Warning).
	warning string
	// memo keeps the trees the scan stored until the transaction ends
	// (see treeMemo.startSave).
	memo *treeMemo
}

func (r *Repo) cachePath() string {
	if r.storeDir == "" {
		return ""
	}
	return filepath.Join(r.storeDir, "statcache")
}

// loadCache returns the stat cache if it belongs to this store: same
// instance and generation, and not written after the database's last cache
// write (a cache ahead of its database is left from a newer ckpt.db that
// was replaced by an older copy, and names trees this one never had: it is
// removed).
func (r *Repo) loadCache(ctx context.Context) *scan.Cache {
	if r.noCache.Load() {
		return nil
	}
	info, err := r.st.Info(ctx)
	if err != nil {
		return nil
	}
	r.trees.forgetIfNot(info.Generation)
	var c *scan.Cache
	if r.storeDir == "" || r.served != nil {
		r.mu.Lock()
		c = r.cache
		r.mu.Unlock()
	}
	if c == nil && r.storeDir != "" {
		c, _ = scan.LoadCache(r.cachePath())
	}
	if c == nil {
		return nil
	}
	// Close releases a mapped file; a cache in memory stays.
	if c.Instance != info.Instance || c.Generation != info.Generation {
		c.Close()
		return nil
	}
	if c.Seq > info.CacheSeq {
		c.Close()
		r.dropCache()
		return nil
	}
	return c
}

// dropCache removes the stat cache; if it cannot (a read-only store), this
// Repo stops using it. It reports whether the cache is gone.
func (r *Repo) dropCache() bool {
	r.mu.Lock()
	r.cache = nil
	r.mu.Unlock()
	if p := r.cachePath(); p != "" {
		if err := os.Remove(p); err != nil && !errors.Is(err, fs.ErrNotExist) {
			r.noCache.Store(true)
			return false
		}
	}
	return true
}

// fsClock reads the file system's clock next to the workspace. It returns
// 0 when the stat cache's own new file (in the store, on the workspace's
// file system) will provide it.
func (r *Repo) fsClock() int64 {
	if r.storeDir != "" && scan.SameDevice(r.root, r.storeDir) {
		return 0
	}
	return scan.FSClock(r.root)
}

func (r *Repo) scanOptions(ctx context.Context, sink scan.Sink, cache *scan.Cache) scan.Options {
	o := scan.Options{
		Root: r.root, MaxFileSize: r.opts.MaxFileSize, Exclude: r.exclude,
		Cache: cache, Sink: sink, Temp: r.ownTemps(ctx),
		LoadTree: func(id object.ID) (*object.Tree, error) { return r.st.ReadTree(ctx, id) },
		// A cache naming trees the store lacks (ckpt.db put back from an
		// older copy, its cache counter aside): the scan starts over
		// without it, and it goes.
		OnStaleCache: func() { r.dropCache() },
	}
	if tx, ok := sink.(store.Tx); ok {
		o.LoadTree = r.memoized(tx.ReadTree)
	}
	r.gitScanOptions(&o)
	if r.opts.Progress != nil {
		o.Progress = func(p scan.Progress) {
			r.progress(Progress{Op: "scan", Files: p.Done, TotalFiles: p.ToHash,
				Bytes: p.DoneBytes, TotalBytes: p.ToHashBytes, Counting: !p.Listed})
		}
	}
	return o
}

// captureTx scans the workspace, storing new objects in tx (nil: hash
// only) and preparing a new stat cache (when tx is not nil). With a
// watcher running (ckpt watch), the new cache records the watcher's token;
// with accel (saves only), directories the watcher saw unchanged are taken
// from the old cache without being read. A capture with other ignore
// rules (captureRules) writes no stat cache, whose entries must be what a
// plain scan sees.
func (r *Repo) captureTx(ctx context.Context, tx store.Tx, accel bool, rules *captureRules) (*capture, error) {
	cache := r.loadCache(ctx)
	defer cache.Close()
	var sink scan.Sink
	var cw *scan.CacheWriter
	o := r.scanOptions(ctx, nil, cache)
	var tracked []string
	if rules != nil {
		tracked = rules.tracked
	}
	full := true // the watcher's answer was "full" (or there was none)
	warning := ""
	if tx != nil && !rules.plain() {
		sink = tx
	} else if tx != nil {
		sink = tx
		info, err := r.st.Info(ctx)
		if err != nil {
			return nil, err
		}
		// A cache written while other ignored paths were tracked holds
		// directory trees with (or without) them: read its files' stat
		// data, but take no directory whole on the watcher's word.
		key := trackedKey(tracked)
		prev, _ := r.st.Meta(ctx, metaCacheTracked)
		token := ""
		if ans := r.askWatcher(ctx, cache); ans != nil {
			token = ans.Token
			if accel && !ans.Full && prev == key && r.watchAccelOK(ctx) {
				o.Unchanged = watch.Unchanged(ans.Dirty)
				o.Changed = watch.Changed(ans)
				o.Unvouched = ans.Unvouched
				if len(ans.Unvouched) > 0 {
					// A restore's staging directory is one of them.
					v, _ := r.st.Meta(ctx, metaRecentStages)
					o.GoneTemp = recentStages(v)
				}
			}
			full = ans.Full
			warning = ans.Warning
		}
		if prev != key {
			if err := tx.SetMeta(metaCacheTracked, key); err != nil {
				return nil, err
			}
		}
		// The new cache records the store's count of cache writes, bumped
		// in this transaction (see loadCache).
		seq := info.CacheSeq + 1
		path, clock := r.cachePath(), r.fsClock()
		if r.served != nil {
			// A watcher's save keeps the cache in memory: it records the
			// count as it is, and the count is bumped when the cache is
			// written out (saveServer.flush), so an unchanged save writes
			// nothing to the store.
			path, clock, seq = "", r.servedClock(), info.CacheSeq
		}
		cw, err = scan.NewCacheWriterSeq(path, clock, info.Generation, seq, info.Instance, token)
		if err != nil {
			cw = nil // the cache is an optimization; carry on without
		} else if r.served == nil {
			if err := tx.SetMeta("cache_seq", strconv.FormatInt(seq, 10)); err != nil {
				cw.Abort()
				return nil, err
			}
		}
	}
	unchanged, changed, unvouched, goneTemp := o.Unchanged, o.Changed, o.Unvouched, o.GoneTemp
	o = r.scanOptions(ctx, sink, cache)
	o.Unchanged, o.Changed, o.Unvouched, o.GoneTemp = unchanged, changed, unvouched, goneTemp
	o.CacheOut = cw
	if !rules.plain() {
		o.Include = rules.include
		if !rules.from.IsZero() {
			o.IgnoreFiles = r.treeFile(ctx, rules.from)
		}
	}
	o.Tracked = tracked
	var memo *treeMemo
	if tx != nil {
		memo = r.trees
		o.OnTree = memo.startSave()
	}
	res, err := scan.Scan(ctx, o)
	if err != nil {
		cw.Abort()
		memo.endSave(false)
		return nil, scanError(err)
	}
	r.noteCapture(res)
	unstatedEntries.Add(res.FromCache)
	if res.Unvouched != "" || res.RulesChanged != "" {
		// A directory created or moved unwatched is one saves read, or
		// an ignore file changed unseen: the scan read everything.
		full = true
	}
	return &capture{res: res, cw: cw, tracked: tracked, full: full, warning: warning, memo: memo}, nil
}

// unstatedEntries counts the entries of directories read that saves in
// this process took from the stat cache without a stat, on the watcher's
// word (scan.Options.Changed); tests check that it is used.
var unstatedEntries atomic.Int64

// commitCache installs the new stat cache after its transaction committed.
func (r *Repo) commitCache(c *capture) {
	if c == nil {
		return
	}
	c.memo.endSave(true)
	if c.cw == nil {
		return
	}
	if err := c.cw.Commit(); err != nil {
		return
	}
	if r.storeDir == "" || r.served != nil {
		mc, err := c.cw.Cache()
		if err != nil {
			return
		}
		r.mu.Lock()
		r.cache = mc
		r.mu.Unlock()
		if r.served != nil {
			// The directories this scan read are watched from now on
			// (one made in a directory the watcher cannot watch raised
			// no event), as the watcher does for a cache file it finds.
			dirs := c.cw.ReadDirs()
			if c.full {
				dirs = mc.DirList()
			}
			r.served.WatchDirs(dirs)
		}
	}
	c.cached = true
}

func (c *capture) abort() {
	if c == nil {
		return
	}
	c.memo.endSave(false)
	if c.cw != nil {
		c.cw.Abort()
	}
}

// captureRules changes what a capture takes: include lists paths taken
// whatever the ignore rules say (see scan.Options.Include); from, if not
// zero, is a stored tree whose ignore files replace the disk's.
type captureRules struct {
	include []string
	from    object.ID
	// tracked are the ignored paths the checkpoint compared with holds
	// (see MetaTracked): taken like include, but the capture stays plain.
	tracked []string
}

func (c *captureRules) plain() bool {
	return c == nil || len(c.include) == 0 && c.from.IsZero()
}

// tracking returns rules that take the ignored paths rec holds.
func tracking(rec *store.Record) *captureRules {
	if t := trackedOf(rec); len(t) > 0 {
		return &captureRules{tracked: t}
	}
	return nil
}

// captureStored scans the workspace and stores its objects (and the new
// stat cache) without recording a checkpoint, so that what follows can read
// the workspace's current files from the store. rules is as for
// captureTx. The lock must be held.
func (r *Repo) captureStored(ctx context.Context, rules *captureRules) (*capture, error) {
	var c *capture
	err := r.st.Update(ctx, func(tx store.Tx) error {
		var err error
		c, err = r.captureTx(ctx, tx, false, rules)
		return err
	})
	if err != nil {
		c.abort()
		return nil, err
	}
	r.commitCache(c)
	return c, nil
}

func scanError(err error) error {
	var pe *scan.PathError
	if errors.As(err, &pe) {
		if errors.Is(pe.Err, errPermission) {
			return withHint(err, fmt.Sprintf("ckpt cannot read %s; fix its permissions, or exclude it with a line in .ckptignore", orDot(pe.Path)))
		}
	}
	return err
}

func orDot(p string) string {
	if p == "" {
		return "."
	}
	return p
}

// newCheckpoint stores cp (its parent is parent, may be nil) and computes
// its stats. If moveHead, HEAD (and HEAD's branch) move to it.
func (r *Repo) newCheckpoint(ctx context.Context, tx store.Tx, cp *object.Checkpoint, parent *store.Record, files, bytes int64, moveHead bool, headRef *store.Ref) (*store.Record, error) {
	if cp.Time.IsZero() {
		cp.Time = r.now().UTC()
	}
	if cp.Branch == "" {
		cp.Branch = headBranch(headRef)
	}
	r.stampGitlinks(cp, parent)
	var st store.Stats
	var changes []FileChange
	if parent != nil {
		cp.Parents = []object.ID{parent.ID}
		read := r.memoized(tx.ReadTree)
		load := func(ctx context.Context, id object.ID) (*object.Tree, error) { return read(id) }
		err := tree.Diff(ctx, load, parent.Tree, cp.Tree, nil, func(c tree.Change) error {
			if len(changes) <= maxSavedChanges {
				changes = append(changes, newFileChange(c))
			}
			switch {
			case c.Old == nil:
				st.Added++
			case c.New == nil:
				st.Deleted++
			default:
				st.Modified++
			}
			return nil
		})
		if err != nil {
			return nil, err
		}
		if files < 0 {
			files = parent.Stats.Files + int64(st.Added-st.Deleted)
		}
	} else if files >= 0 {
		st.Added = int(files)
	}
	st.Files, st.Bytes = files, bytes
	id, err := tx.PutCheckpoint(cp, st)
	if err != nil {
		return nil, err
	}
	if moveHead {
		if err := r.setHead(tx, id, headRef); err != nil {
			return nil, err
		}
	}
	if parent != nil && len(changes) <= maxSavedChanges {
		r.rememberChanges(parent.ID, id, changes)
	}
	return &store.Record{Checkpoint: cp, ID: id, Stats: st}, nil
}

func headBranch(headRef *store.Ref) string {
	if headRef == nil {
		return "main"
	}
	return headRef.Symbolic
}

// setHead moves HEAD to id, keeping its branch, and advances the branch.
func (r *Repo) setHead(tx store.Tx, id object.ID, headRef *store.Ref) error {
	b := headBranch(headRef)
	if err := tx.SetRef(store.Ref{Name: headName, ID: id, Symbolic: b, Time: r.now()}); err != nil {
		return err
	}
	if b != "" {
		return tx.SetRef(store.Ref{Name: branchRef(b), ID: id, Time: r.now()})
	}
	return nil
}

// saveLocked records a whole-tree checkpoint. within, if set, runs inside
// the same transaction after the checkpoint (or after finding the workspace
// unchanged, with created false).
func (r *Repo) saveLocked(ctx context.Context, opts SaveOptions, within func(tx store.Tx, rec *store.Record, created bool, c *capture) error) (*SaveResult, error) {
	if within == nil {
		if out, ok, err := r.saveServed(ctx, opts); ok {
			return out, err
		}
	}
	headRef, headRec, err := r.head(ctx)
	if err != nil {
		return nil, err
	}
	if failpoint.Enabled() {
		if err := failpoint.Hit("save/before-tx", ""); err != nil {
			return nil, err
		}
	}
	var (
		c   *capture
		rec *store.Record
		out = &SaveResult{}
	)
	err = r.st.Update(ctx, func(tx store.Tx) error {
		// HEAD again, now that no other writer can commit until this
		// transaction ends: a watcher finishing a save for a client that
		// died may have moved it since. Build on that checkpoint, so it
		// stays on the branch. A watcher saving for a client leaves the
		// save to the client instead.
		ref, now, err := r.head(ctx)
		if err != nil {
			return err
		}
		if r.forClient != nil {
			if err := r.forClient(); err != nil {
				return err
			}
			if recID(now) != recID(headRec) {
				return fmt.Errorf("HEAD moved to %.12s since the save began", recID(now))
			}
		}
		headRef, headRec = ref, now
		c, err = r.captureTx(ctx, tx, true, tracking(headRec))
		if err != nil {
			return err
		}
		out.Skipped, out.Scanned, out.Hashed, out.Warning = c.res.Skipped, c.res.Files, c.res.Hashed, c.warning
		if headRec != nil && c.res.Root == headRec.Tree && !opts.AllowEmpty {
			// No checkpoint; the transaction still commits, with the
			// count of cache writes the new stat cache records.
			rec = headRec
			if within != nil {
				return within(tx, rec, false, c)
			}
			return nil
		}
		cp := &object.Checkpoint{Tree: c.res.Root, Kind: opts.Kind, Message: opts.Message, Author: opts.Author, Meta: withTracked(opts.Meta, c.tracked)}
		rec, err = r.newCheckpoint(ctx, tx, cp, headRec, c.res.Files, c.res.Bytes, true, headRef)
		if err != nil {
			return err
		}
		before := object.ZeroID
		if headRec != nil {
			before = headRec.ID
		}
		if _, err := tx.AppendOp(store.Op{Kind: string(OpSave), Before: before, After: rec.ID, Checkpoint: rec.ID, Detail: opts.Kind}); err != nil {
			return err
		}
		out.Created = true
		if within != nil {
			return within(tx, rec, true, c)
		}
		return nil
	})
	if err != nil {
		c.abort()
		return nil, err
	}
	r.commitCache(c)
	// Committed: a cancellation from here on must not make a save that
	// happened look failed (see committedCtx).
	out.Checkpoint, err = r.describe(committedCtx(ctx), rec)
	if err != nil {
		return nil, err
	}
	if out.Created {
		r.emit(Event{Kind: EventCheckpoint, Checkpoint: rec.ID, CheckpointKind: rec.Kind, Message: rec.Message})
	}
	return out, nil
}

// committedCtx is ctx for the steps that only find out and report what
// was done, after a commit (or a save the watcher may have committed):
// without its cancellation, so that a save cancelled once committed still
// returns the checkpoint it made rather than an error (the caller would
// take it for a save that did not happen).
func committedCtx(ctx context.Context) context.Context { return context.WithoutCancel(ctx) }

// cleanPaths validates and normalizes workspace-relative paths, dropping
// paths inside other listed paths.
func cleanPaths(paths []string) ([]string, error) {
	var out []string
	for _, p := range paths {
		q := filepath.ToSlash(filepath.Clean(p))
		if q == "." {
			return nil, fmt.Errorf("path %q names the whole workspace; save without paths instead", p)
		}
		for c := range strings.SplitSeq(q, "/") {
			if object.Reserved(c) {
				return nil, fmt.Errorf("path %s is never checkpointed (ckpt always excludes .git, .ckpt and .decree, in any letter case)", QuotePath(q))
			}
		}
		if !object.ValidPath(q) {
			return nil, fmt.Errorf("path %q is outside the workspace or not a valid relative path", p)
		}
		out = append(out, q)
	}
	sort.Strings(out)
	var kept []string
	for _, p := range out {
		if len(kept) > 0 {
			last := kept[len(kept)-1]
			if p == last || strings.HasPrefix(p, last+"/") {
				continue
			}
		}
		kept = append(kept, p)
	}
	return kept, nil
}

func (r *Repo) savePathsLocked(ctx context.Context, opts SaveOptions) (*SaveResult, error) {
	paths, err := cleanPaths(opts.Paths)
	if err != nil {
		return nil, err
	}
	headRef, headRec, err := r.head(ctx)
	if err != nil {
		return nil, err
	}
	if failpoint.Enabled() {
		if err := failpoint.Hit("save/before-tx", ""); err != nil {
			return nil, err
		}
	}
	out := &SaveResult{Created: true}
	var rec *store.Record
	err = r.st.Update(ctx, func(tx store.Tx) error {
		// HEAD again, now that no other writer can commit (see
		// saveLocked).
		var err error
		if headRef, headRec, err = r.head(ctx); err != nil {
			return err
		}
		cache := r.loadCache(ctx)
		defer cache.Close()
		edits := map[string]*object.Entry{}
		for _, p := range paths {
			e, res, err := scan.Path(ctx, r.scanOptions(ctx, tx, cache), p)
			if err != nil {
				var ie *scan.IgnoredError
				if errors.As(err, &ie) && ie.Excluded != "" {
					return withHint(err, "ckpt never checkpoints its own store; keep the store outside the workspace (the default) so it takes no room there")
				}
				if errors.As(err, &ie) {
					return withHint(err, "ckpt only checkpoints what it would capture in a whole-tree save; add !"+ie.Path+" to .ckptignore to include it")
				}
				return scanError(err)
			}
			edits[p] = e
			out.Skipped = append(out.Skipped, res.Skipped...)
			out.Scanned += res.Files
			out.Hashed += res.Hashed
		}
		base := object.EmptyTree
		if headRec != nil {
			base = headRec.Tree
		}
		load := func(ctx context.Context, id object.ID) (*object.Tree, error) { return tx.ReadTree(id) }
		root, err := tree.Overlay(ctx, load, tx.PutTree, base, edits)
		if err != nil {
			return err
		}
		var bytes int64
		if t, err := load(ctx, root); err == nil {
			bytes = t.Size()
		}
		cp := &object.Checkpoint{Tree: root, Kind: opts.Kind, Message: opts.Message, Author: opts.Author, Meta: opts.Meta, Paths: paths}
		files := int64(-1)
		if headRec == nil {
			files = 0
			tree.Walk(ctx, load, root, nil, func(string, object.Entry) error { files++; return nil })
		}
		rec, err = r.newCheckpoint(ctx, tx, cp, headRec, files, bytes, false, headRef)
		if err != nil {
			return err
		}
		head := object.ZeroID
		if headRec != nil {
			head = headRec.ID
		}
		_, err = tx.AppendOp(store.Op{Kind: string(OpSavePaths), Before: head, After: head, Checkpoint: rec.ID, Detail: opts.Kind})
		return err
	})
	if err != nil {
		return nil, err
	}
	out.Checkpoint, err = r.describe(committedCtx(ctx), rec)
	if err != nil {
		return nil, err
	}
	r.emit(Event{Kind: EventCheckpoint, Checkpoint: rec.ID, CheckpointKind: rec.Kind, Message: rec.Message, Paths: toPaths(paths)})
	return out, nil
}

// recID is a checkpoint record's id (zero for none).
func recID(rec *store.Record) object.ID {
	if rec == nil {
		return object.ZeroID
	}
	return rec.ID
}
