package ckpt

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/seed1cedbf7c/ckpt/internal/failpoint"
	"github.com/seed1cedbf7c/ckpt/internal/object"
	"github.com/seed1cedbf7c/ckpt/internal/scan"
	"github.com/seed1cedbf7c/ckpt/internal/store"
	"github.com/seed1cedbf7c/ckpt/internal/watch"
)

// # Saves served by the watcher
//
// A whole-tree save asks a running watcher to do it (see [Repo.Save]): the
// watcher's process keeps the store open and the stat cache in memory, and
// knows which directories changed, so a save is connect, request, reply.
// The store stays the single source of truth:
//
//   - the client takes the store's lock as always and the watcher saves on
//     its behalf, only after checking (by the socket's peer credentials
//     and the lock file) that the asking process holds that lock;
//   - the watcher's stat cache is an accelerator: it is written to the
//     store directory when the watcher is idle or stops, and a cache that
//     was never written only makes the next save without the watcher read
//     more;
//   - anything the watcher cannot or does not do (other scan settings, an
//     error, no watcher) the client does itself, as without a watcher;
//   - if the connection breaks after the request was sent, the client
//     waits until the watcher is no longer saving (the "serve" lock in the
//     store directory, held while the watcher saves) and then looks at
//     HEAD: moved means the watcher's save committed; otherwise it saves
//     itself. The watcher never starts a save for a client that has hung
//     up (watch.Call.Accept).

// servedRequest is a save request to the watcher.
type servedRequest struct {
	Op         string            `json:"op"` // "save"
	Instance   string            `json:"instance"`
	Backend    string            `json:"backend"`
	Settings   string            `json:"settings"`
	Exclude    []string          `json:"exclude,omitempty"`
	Head       string            `json:"head,omitempty"`
	Kind       string            `json:"kind"`
	Message    string            `json:"message,omitempty"`
	Author     string            `json:"author,omitempty"`
	Meta       map[string]string `json:"meta,omitempty"`
	AllowEmpty bool              `json:"allow_empty,omitempty"`
	Progress   bool              `json:"progress,omitempty"`
}

type servedSkip struct {
	Path   []byte `json:"path"`
	Reason string `json:"reason"`
	Size   int64  `json:"size,omitempty"`
}

// servedReply is the watcher's answer. Refused: it did nothing, and says
// why; the client saves itself.
type servedReply struct {
	Refused    string       `json:"refused,omitempty"`
	Checkpoint string       `json:"checkpoint,omitempty"`
	Created    bool         `json:"created,omitempty"`
	Skipped    []servedSkip `json:"skipped,omitempty"`
	Scanned    int64        `json:"scanned"`
	Hashed     int64        `json:"hashed"`
	Warning    string       `json:"warning,omitempty"`
	// Parent and Changes: what the new checkpoint changed against its
	// parent, when the watcher kept it (see savedChanges).
	Parent  string         `json:"parent,omitempty"`
	Changes []servedChange `json:"changes,omitempty"`
}

type servedChange struct {
	Path   []byte `json:"path"`
	Status string `json:"status"`
}

// serveLock is the store-directory lock a watcher holds while it saves
// for a client.
const serveLock = "serve"

// recentKeeper is a store that can keep the content of new versions for
// the next save's delta bases (sqlite).
type recentKeeper interface{ KeepRecent(maxBytes int) }

// recentBytes is what a watcher's store keeps for delta bases: the last
// versions of the files and directories its saves changed.
const recentBytes = 16 << 20

// namedLocker is the store's second, independent lock (sqlite only).
type namedLocker interface {
	TryNamedLock(name string) (func(), error)
	LockHeldBy(pid int) bool
}

// servedOff turns served saves off (CKPT_WATCH_SERVE=0): saves ask the
// watcher only which directories changed.
func servedOff() bool { return os.Getenv("CKPT_WATCH_SERVE") == "0" }

// idleCheckOff turns the watcher's idle checks off
// (CKPT_WATCH_IDLE_CHECK=0 in its environment; see idleCheck).
func idleCheckOff() bool { return os.Getenv("CKPT_WATCH_IDLE_CHECK") == "0" }

// saveServed asks the workspace's watcher to make the save (the lock is
// held). ok false: no watcher did it; the caller saves itself.
func (r *Repo) saveServed(ctx context.Context, opts SaveOptions) (out *SaveResult, ok bool, err error) {
	if r.served != nil || r.storeDir == "" || r.git != nil || !watch.Supported || r.opts.Now != nil || servedOff() {
		return nil, false, nil
	}
	sock := r.WatchSocket()
	if _, err := os.Stat(sock); err != nil {
		return nil, false, nil
	}
	nl, isNamed := r.st.(namedLocker)
	if !isNamed {
		return nil, false, nil
	}
	info, err := r.st.Info(ctx)
	if err != nil {
		return nil, false, nil
	}
	_, headRec, err := r.head(ctx)
	if err != nil {
		return nil, false, nil
	}
	req := servedRequest{Op: "save", Instance: info.Instance, Backend: BackendSQLite, Settings: r.scanSettings(), Exclude: r.exclude,
		Kind: opts.Kind, Message: opts.Message, Author: opts.Author, Meta: opts.Meta, AllowEmpty: opts.AllowEmpty,
		Progress: r.opts.Progress != nil}
	if headRec != nil {
		req.Head = headRec.ID.String()
	}
	body, err := json.Marshal(req)
	if err != nil {
		return nil, false, nil
	}
	progress := func(b json.RawMessage) {
		var p Progress
		if json.Unmarshal(b, &p) == nil {
			r.progress(p)
		}
	}
	raw, err := watch.Serve(ctx, sock, body, progress, nil)
	if err != nil {
		var se *watch.ServeError
		if !errors.As(err, &se) || !se.Uncertain {
			return nil, false, nil
		}
		// The watcher may have saved, or may still be saving: wait until
		// it is not, then look at HEAD (the lock is ours: only the
		// watcher saving for us can have moved it). A cancelled client
		// waits too: the watcher stops soon after it hangs up, but may
		// commit first, and the answer must say whether it did.
		wctx := committedCtx(ctx)
		if err := r.waitServeLock(wctx, nl); err != nil {
			return nil, true, err
		}
		_, now, err := r.head(wctx)
		if err != nil {
			return nil, true, err
		}
		if now == nil || headRec != nil && now.ID == headRec.ID {
			if err := ctx.Err(); err != nil {
				return nil, true, err // cancelled, and nothing was saved
			}
			return nil, false, nil
		}
		cp, err := r.describe(wctx, now)
		if err != nil {
			return nil, true, err
		}
		r.emit(Event{Kind: EventCheckpoint, Checkpoint: now.ID, CheckpointKind: now.Kind, Message: now.Message})
		return &SaveResult{Checkpoint: cp, Created: true, Scanned: -1, Hashed: -1, Served: true}, true, nil
	}
	var rep servedReply
	if err := json.Unmarshal(raw, &rep); err != nil || rep.Refused != "" {
		return nil, false, nil
	}
	id, err := object.ParseID(rep.Checkpoint)
	if err != nil {
		return nil, false, nil
	}
	// The watcher committed: see committedCtx.
	ctx = committedCtx(ctx)
	rec, err := r.st.Checkpoint(ctx, id)
	if err != nil {
		// Not in this store (it was replaced under the watcher): save here.
		return nil, false, nil
	}
	out = &SaveResult{Created: rep.Created, Scanned: rep.Scanned, Hashed: rep.Hashed, Served: true, Warning: rep.Warning}
	for _, s := range rep.Skipped {
		out.Skipped = append(out.Skipped, Skipped{Path: string(s.Path), Reason: s.Reason, Size: s.Size})
	}
	if out.Checkpoint, err = r.describe(ctx, rec); err != nil {
		return nil, true, err
	}
	if out.Created {
		r.takeServedChanges(rec, rep)
	}
	if out.Created {
		r.emit(Event{Kind: EventCheckpoint, Checkpoint: rec.ID, CheckpointKind: rec.Kind, Message: rec.Message})
	}
	return out, true, nil
}

// waitServeLock waits until no watcher saves for this store (a watcher
// that hangs is reported after two minutes).
func (r *Repo) waitServeLock(ctx context.Context, nl namedLocker) error {
	deadline := time.Now().Add(2 * time.Minute)
	for {
		unlock, err := nl.TryNamedLock(serveLock)
		if err == nil {
			unlock()
			return nil
		}
		if time.Now().After(deadline) {
			return withHint(fmt.Errorf("the watcher stopped answering while saving: %w", err),
				"stop it with 'ckpt watch --stop' (or kill it), then save again")
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// saveServer is a watcher's side of served saves: it opens the store
// on the first request and keeps the stat cache in memory.
type saveServer struct {
	t   WatchTarget
	log func(string)

	mu        sync.Mutex
	r         *Repo
	lastSave  time.Time
	unflushed bool
	// srv is the daemon (known from the first request); checking ends
	// the idle check under way (see idleCheck); lastCheck is when the
	// last one ended.
	srv       watch.Server
	checking  context.CancelFunc
	lastCheck time.Time
	// gcDue: a served save made a checkpoint since the last automatic gc
	// the watcher ran (see idleGC); gcWarning is that gc's warning, for
	// the reply to the next save.
	gcDue     bool
	gcWarning string

	// gcMu guards gcCancel, which ends the automatic gc under way (a
	// client asked for the store's lock: see yield), and yielded, when a
	// client last asked: no gc starts for idle after it.
	gcMu     sync.Mutex
	gcCancel context.CancelFunc
	yielded  time.Time
}

func (sv *saveServer) logf(format string, a ...any) {
	if sv.log != nil {
		sv.log(fmt.Sprintf(format, a...))
	}
}

// repo returns the open store, opening it (again, if it was replaced:
// another instance) as needed (sv.mu held).
func (sv *saveServer) repo(ctx context.Context, instance string) (*Repo, error) {
	if sv.r != nil {
		if info, err := sv.r.st.Info(ctx); err == nil && info.Instance == instance {
			return sv.r, nil
		}
		sv.r.Close()
		sv.r = nil
	}
	r, err := Open(ctx, sv.t.Root, Options{Store: sv.t.Store, Backend: BackendSQLite, NoRecover: true, NoCreate: true})
	if err != nil {
		return nil, err
	}
	info, err := r.st.Info(ctx)
	if err != nil || info.Instance != instance {
		r.Close()
		return nil, errors.New("the store is not the one the watcher opens")
	}
	if k, ok := r.st.(recentKeeper); ok {
		k.KeepRecent(recentBytes)
	}
	sv.r = r
	return r, nil
}

func (sv *saveServer) serve(ctx context.Context, s watch.Server, c *watch.Call) (json.RawMessage, error) {
	if isYield(c.Body) {
		return sv.yield()
	}
	sv.mu.Lock()
	defer sv.mu.Unlock()
	sv.srv = s
	if sv.checking != nil {
		sv.checking() // the save reads what changed; the check waits
	}
	refuse := func(why string) (json.RawMessage, error) {
		sv.logf("save not served: %s", why)
		return json.Marshal(servedReply{Refused: why})
	}
	var req servedRequest
	if err := json.Unmarshal(c.Body, &req); err != nil || req.Op != "save" {
		return refuse("not a save request")
	}
	if !object.ValidKind(req.Kind) {
		return refuse(fmt.Sprintf("unknown checkpoint kind %q", req.Kind))
	}
	if req.Backend != BackendSQLite {
		return refuse("only the sqlite backend's saves are served")
	}
	r, err := sv.repo(ctx, req.Instance)
	if err != nil {
		return refuse("open the store: " + err.Error())
	}
	if req.Settings != r.scanSettings() || !slices.Equal(req.Exclude, r.exclude) {
		return refuse("the client scans with other settings")
	}
	nl, ok := r.st.(namedLocker)
	if !ok {
		return refuse("the store has no serve lock")
	}
	if !nl.LockHeldBy(c.Peer) {
		return refuse(fmt.Sprintf("process %d does not hold the store's lock", c.Peer))
	}
	unlock, err := nl.TryNamedLock(serveLock)
	if err != nil {
		return refuse(err.Error())
	}
	defer unlock()
	if err := c.Accept(); err != nil {
		return nil, err
	}
	if failpoint.Enabled() {
		if err := failpoint.Hit("serve/accepted", req.Message); err != nil {
			return nil, err
		}
	}
	_, headRec, err := r.head(ctx)
	if err != nil {
		return nil, err
	}
	head := ""
	if headRec != nil {
		head = headRec.ID.String()
	}
	if head != req.Head {
		return refuse(fmt.Sprintf("HEAD is %.12s here, %.12s for the client", head, req.Head))
	}
	r.served = s
	r.forClient = func() error {
		if !nl.LockHeldBy(c.Peer) {
			return fmt.Errorf("process %d no longer holds the store's lock", c.Peer)
		}
		return nil
	}
	defer func() { r.forClient = nil }()
	if r.trees == nil {
		r.trees = &treeMemo{m: map[object.ID]*object.Tree{}}
	}
	r.opts.Progress = nil
	if req.Progress {
		r.opts.Progress = func(p Progress) {
			if b, err := json.Marshal(p); err == nil {
				c.Progress(b)
			}
		}
	}
	res, err := r.saveLocked(ctx, SaveOptions{Kind: req.Kind, Message: req.Message, Author: req.Author, Meta: req.Meta, AllowEmpty: req.AllowEmpty}, nil)
	r.opts.Progress = nil
	if err != nil {
		// The client saves itself and reports the error as it would.
		return refuse("save: " + err.Error())
	}
	sv.lastSave, sv.unflushed = time.Now(), true
	if res.Created {
		sv.gcDue = true
	}
	rep := servedReply{Checkpoint: res.Checkpoint.ID.String(), Created: res.Created, Scanned: res.Scanned, Hashed: res.Hashed,
		Warning: joinWarnings(res.Warning, sv.gcWarning)}
	sv.gcWarning = ""
	for _, s := range res.Skipped {
		rep.Skipped = append(rep.Skipped, servedSkip{Path: []byte(s.Path), Reason: s.Reason, Size: s.Size})
	}
	if res.Created && len(res.Checkpoint.Parents) == 1 {
		if files, ok := r.lastChanges(res.Checkpoint.Parents[0], res.Checkpoint.ID); ok {
			rep.Parent = res.Checkpoint.Parents[0].String()
			rep.Changes = make([]servedChange, 0, len(files))
			for _, f := range files {
				rep.Changes = append(rep.Changes, servedChange{Path: []byte(f.Path), Status: f.Status})
			}
		}
	}
	if failpoint.Enabled() {
		if err := failpoint.Hit("serve/saved", req.Message); err != nil {
			return nil, err
		}
	}
	return json.Marshal(rep)
}

// flush writes the in-memory stat cache to the store directory, so a save
// without the watcher starts from it.
func (sv *saveServer) flush() {
	sv.mu.Lock()
	defer sv.mu.Unlock()
	if !sv.unflushed || sv.r == nil {
		return
	}
	sv.unflushed = false
	r := sv.r
	r.mu.Lock()
	c := r.cache
	r.mu.Unlock()
	if c == nil {
		return
	}
	// A store deleted (or replaced) under the watcher: the database it
	// has open is not the one at the store's path any more, and the
	// cache is not that store's.
	if store.RecordedMeta(r.storeDir)["instance"] != c.Instance {
		sv.logf("the store at %s is not the one the watcher opened: its stat cache is dropped", r.storeDir)
		r.Close()
		sv.r = nil
		return
	}
	// The file records a count of cache writes the store has (see
	// loadCache): bump it first, then write.
	ctx := context.Background()
	var seq int64
	err := r.st.Update(ctx, func(tx store.Tx) error {
		info, err := r.st.Info(ctx)
		if err != nil {
			return err
		}
		if info.Generation != c.Generation || info.Instance != c.Instance {
			return errors.New("the store changed since the cache was made")
		}
		seq = info.CacheSeq + 1
		return tx.SetMeta("cache_seq", strconv.FormatInt(seq, 10))
	})
	if err == nil {
		err = c.SetSeq(seq)
	}
	if err == nil {
		err = c.WriteFile(r.cachePath())
	}
	if err != nil {
		sv.logf("write the stat cache: %v", err)
	}
}

// flusher flushes the stat cache once saves pause for idle.
func (sv *saveServer) flusher(ctx context.Context, idle time.Duration) {
	t := time.NewTicker(idle / 2)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			sv.mu.Lock()
			due := sv.unflushed && time.Since(sv.lastSave) >= idle
			sv.mu.Unlock()
			if due {
				sv.flush()
			}
			sv.idleGC(ctx, idle)
			sv.idleCheck(ctx, idle)
		}
	}
}

// # Automatic gc in the watcher
//
// After a save the client runs gc once the store is well past its
// retention (autoGC). At a million files a gc reads every object's id and
// the kept checkpoints' trees, 4-8 s, and with the default retention it
// came every tenth turn: an agent's hook waited that long. A client whose
// save the watcher served leaves it to the watcher (it runs gc itself only
// when the store is ten times as far past its retention, so a watcher
// that never gets to it, turns coming back to back, does not let the
// store grow unbounded: at keep 100, every hundred turns instead of ten). The
// watcher runs it once saves pause (idleGC), holding the store's lock as
// any gc does. A client that then wants the lock asks the watcher to
// yield first (Repo.lock): the gc stops where it is, each of its steps
// being one transaction, so nothing is left half done, and it runs again
// at the next pause.

// gcLag is how many times further past its retention a store must be
// for a client whose save the watcher served to run gc itself.
const gcLag = 10

// yieldRequest asks the watcher to stop the automatic gc under way.
type yieldRequest struct {
	Op string `json:"op"` // "yield"
}

func isYield(body json.RawMessage) bool {
	var req yieldRequest
	return json.Unmarshal(body, &req) == nil && req.Op == "yield"
}

// yield stops the watcher's automatic gc under way, if any.
func (sv *saveServer) yield() (json.RawMessage, error) {
	if failpoint.Enabled() {
		failpoint.Hit("serve/yield", "")
	}
	sv.gcMu.Lock()
	cancel := sv.gcCancel
	sv.yielded = time.Now()
	sv.gcMu.Unlock()
	if cancel != nil {
		cancel()
		sv.logf("automatic gc stopped: a client wants the store")
	}
	return json.Marshal(struct {
		Stopped bool `json:"stopped"`
	}{cancel != nil})
}

// idleGC runs the automatic gc the served saves left to the watcher, once
// saves pause for idle, if the store's lock is free (and no interrupted
// operation waits to be finished: the next command does that first).
func (sv *saveServer) idleGC(ctx context.Context, idle time.Duration) {
	sv.mu.Lock()
	r := sv.r
	due := r != nil && sv.gcDue && time.Since(sv.lastSave) >= idle
	sv.mu.Unlock()
	if !due {
		return
	}
	// The gc can be stopped from here on, before it holds the lock: a
	// client that asks while the watcher takes it is heard. One that
	// asked lately is waiting for the lock, or about to: leave it be.
	gctx, cancel := context.WithCancel(ctx)
	defer cancel()
	sv.gcMu.Lock()
	recent := time.Since(sv.yielded) < idle
	if !recent {
		sv.gcCancel = cancel
	}
	sv.gcMu.Unlock()
	if recent {
		return
	}
	defer func() {
		sv.gcMu.Lock()
		sv.gcCancel = nil
		sv.gcMu.Unlock()
	}()
	unlock, err := r.st.Lock(gctx, 0, nil)
	if err != nil {
		return // a client's: it may be saving; try at the next pause
	}
	defer unlock()
	if j, err := r.st.Journal(ctx); err != nil || j != nil {
		return
	}
	// The settings as they are now (ckpt config may have changed them
	// since the watcher opened the store): a keep raised since must hold.
	cfg, err := LoadConfig(r.storeDir)
	if err != nil {
		sv.logf("automatic gc: %v", err)
		return
	}
	if failpoint.Enabled() {
		failpoint.Hit("serve/gc", "")
	}
	if gctx.Err() != nil {
		return // a client asked already: due still
	}
	warning := r.autoGCWith(gctx, cfg.Retention(), 1)
	if gctx.Err() != nil {
		return // yielded: due still
	}
	sv.mu.Lock()
	sv.gcDue, sv.gcWarning = false, warning
	sv.mu.Unlock()
	if warning != "" {
		sv.logf("automatic gc: %s", warning)
	}
}

// idleCheck reads the whole workspace while saves pause and tells the
// daemon whether the tree is as the in-memory stat cache has it. The
// daemon answers "full" MaxTrust after the last full read, a backstop
// for changes inotify cannot see (a file written through a hard link
// made outside the workspace, writes through mmap); that save reads
// everything, seconds at a million files, in the middle of an agent's
// turn. A check that finds the tree as the cache has it has seen
// whatever such a change happened before it began, so the backstop
// counts from there and the turn stays incremental; one that finds a
// difference (a change since, or one unseen) changes nothing, and the
// save after MaxTrust reads everything as before. It runs once the last
// full read is half MaxTrust old, at most every quarter MaxTrust, on
// one core, only when the watcher saw nothing happen since the last save
// and that save is at most three times MaxTrust old; it stores nothing,
// and a save that comes cancels it.
func (sv *saveServer) idleCheck(ctx context.Context, idle time.Duration) {
	if idleCheckOff() {
		return
	}
	sv.mu.Lock()
	r, srv := sv.r, sv.srv
	// Only while saves are likely to come: a watcher left running with
	// no save for three times MaxTrust stops reading the tree, and the
	// next save, whenever it comes, reads everything once.
	since := time.Since(sv.lastSave)
	if r == nil || srv == nil || since < idle || since > 3*watch.MaxTrust || time.Since(sv.lastCheck) < watch.MaxTrust/4 {
		sv.mu.Unlock()
		return
	}
	r.mu.Lock()
	c := r.cache
	r.mu.Unlock()
	token := watchToken(c)
	if time.Since(srv.Trust(token)) < watch.MaxTrust/2 {
		sv.mu.Unlock()
		return
	}
	want, ok := c.RootTree() // false for no cache (no save served yet)
	if ok && !srv.Quiet(token) {
		// Something changed since the last save: the tree would differ
		// from the cache, and the next save reads what changed anyway.
		sv.mu.Unlock()
		return
	}
	var headRec *store.Record
	var err error
	if ok {
		_, headRec, err = r.head(ctx)
	}
	if !ok || err != nil {
		sv.lastCheck = time.Now()
		sv.mu.Unlock()
		return
	}
	cctx, cancel := context.WithCancel(ctx)
	defer cancel()
	sv.checking = cancel
	// The options of the served saves' scan (captureTx, with the
	// ignored paths HEAD tracks), storing nothing.
	o := r.scanOptions(cctx, nil, c)
	o.Tracked = trackedOf(headRec)
	o.Workers = 1
	o.OnStaleCache = nil
	sv.mu.Unlock()

	at := time.Now()
	res, err := scan.Scan(cctx, o)

	sv.mu.Lock()
	defer sv.mu.Unlock()
	sv.checking = nil
	sv.lastCheck = time.Now()
	r.mu.Lock()
	same := sv.r == r && r.cache == c
	r.mu.Unlock()
	if err != nil || !same {
		// A save came (it reads what changed) or the store was opened
		// again: nothing to report.
		return
	}
	srv.Checked(token, at, res.Root == want)
}

// watchToken is the watcher token a stat cache records (nil: none).
func watchToken(c *scan.Cache) string {
	if c == nil {
		return ""
	}
	token, _, _ := strings.Cut(c.Watch, " ")
	return token
}

func (sv *saveServer) close() {
	sv.flush()
	sv.mu.Lock()
	defer sv.mu.Unlock()
	if sv.r != nil {
		sv.r.Close()
		sv.r = nil
	}
}

// servedClock is the file system's clock for an in-memory stat cache.
func (r *Repo) servedClock() int64 {
	if scan.SameDevice(r.root, r.storeDir) {
		return scan.FSClock(r.storeDir)
	}
	return scan.FSClock(r.root)
}

// treeMemo keeps the decoded trees a watcher's saves read again and again
// (a changed directory's previous tree, the parent checkpoint's trees
// along the changed paths). Trees are immutable, named by their hash.
type treeMemo struct {
	mu  sync.Mutex
	m   map[object.ID]*object.Tree
	gen int64 // the store's generation the trees were read in
	// built: the trees the save under way stored (its scan's); loads in
	// its transaction find them here, and they join m once it commits.
	built map[object.ID]*object.Tree
}

// maxBuilt bounds the trees a save keeps decoded for its own reads (a
// save that reads everything stores them all; such a save is rare, and
// reads them back from the store).
const maxBuilt = 1024

// startSave begins keeping the trees a save stores; nil when r keeps no
// memo.
func (m *treeMemo) startSave() func(object.ID, *object.Tree) {
	if m == nil {
		return nil
	}
	m.mu.Lock()
	m.built = map[object.ID]*object.Tree{}
	m.mu.Unlock()
	return func(id object.ID, t *object.Tree) {
		m.mu.Lock()
		if m.built != nil && len(m.built) < maxBuilt {
			m.built[id] = t
		}
		m.mu.Unlock()
	}
}

// endSave ends the save's keeping: committed, its trees are in the store
// and join the memo; otherwise they are dropped.
func (m *treeMemo) endSave(committed bool) {
	if m == nil {
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if committed {
		for id, t := range m.built {
			if len(m.m) >= memoLimit {
				clear(m.m)
			}
			m.m[id] = t
		}
	}
	m.built = nil
}

// forgetIfNot empties the memo when objects may have been deleted since
// it was filled (another generation).
func (m *treeMemo) forgetIfNot(gen int64) {
	if m == nil {
		return
	}
	m.mu.Lock()
	if m.gen != gen {
		clear(m.m)
		m.gen = gen
	}
	m.mu.Unlock()
}

// memoLimit bounds the trees kept (when full, it starts over).
const memoLimit = 8192

// loader returns load through the memo (load itself when r keeps none).
// The trees it returns are shared: callers only read them.
func (r *Repo) memoized(load func(object.ID) (*object.Tree, error)) func(object.ID) (*object.Tree, error) {
	m := r.trees
	if m == nil {
		return load
	}
	return func(id object.ID) (*object.Tree, error) {
		m.mu.Lock()
		t, ok := m.m[id]
		if !ok {
			t, ok = m.built[id]
		}
		m.mu.Unlock()
		if ok {
			return t, nil
		}
		t, err := load(id)
		if err != nil {
			return nil, err
		}
		m.mu.Lock()
		if len(m.m) >= memoLimit {
			clear(m.m)
		}
		m.m[id] = t
		m.mu.Unlock()
		return t, nil
	}
}
