// Package scan walks a workspace in parallel and produces its Merkle tree.
//
// A scan reads every directory, applies the ignore rules (package ignore),
// lstat()s every remaining entry and compares it with the stat cache: a file
// whose type, permission bits, size, mtime, ctime, inode and device all match
// its cache entry, and whose mtime is older than the clock of the scan that
// wrote the cache, is not read again. Everything else is read, hashed
// (SHA-256) and, when a [Sink] is given, stored. Directories whose entries all
// match the cache keep their cached tree id without being re-encoded, so the
// cost of a scan grows with the change, not with the tree.
//
// Symlinks are recorded with their target and never followed. FIFOs, sockets
// and devices are reported as skipped and never opened; so are files over the
// size limit. Names are arbitrary bytes.
package scan

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"runtime"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/seed1cedbf7c/ckpt/internal/failpoint"
	"github.com/seed1cedbf7c/ckpt/internal/fsroot"
	"github.com/seed1cedbf7c/ckpt/internal/ignore"
	"github.com/seed1cedbf7c/ckpt/internal/object"
	"github.com/seed1cedbf7c/ckpt/internal/store"
)

// TempPrefix starts the names of ckpt's temporary files and directories in a
// workspace: a restore's staging directory (named in its journal) and the
// watcher's sync files. A scan skips only those it is told are ckpt's own
// ([Options.Temp], and [CookiePrefix] names in the root) and reports them
// in [Result.Temp]; any other name, a user's ".ckpt-tmp-notes" included,
// is captured like every file.
const TempPrefix = ".ckpt-tmp-"

// CookiePrefix starts the names of the watcher's sync files, which it
// creates in the workspace root and removes at once.
const CookiePrefix = TempPrefix + "watch-"

// own reports whether name (in directory rel) is one of ckpt's own
// temporary entries.
func (o *Options) own(rel, name string) bool {
	if !strings.HasPrefix(name, TempPrefix) {
		return false
	}
	if rel == "" && strings.HasPrefix(name, CookiePrefix) {
		return true
	}
	for _, t := range o.Temp {
		if OwnTemp(t, name) {
			return true
		}
	}
	return false
}

// OwnTemp reports whether name is one of the entries a restore with
// staging directory stage makes: the stage itself, its rollback's
// stage+"-back", and the copies either places next to a destination on
// another file system, stage+"-N" and stage+"-back-N". Nothing else —
// a user's "<stage>.md" included — is ckpt's.
func OwnTemp(stage, name string) bool {
	rest, ok := strings.CutPrefix(name, stage)
	if !ok {
		return false
	}
	rest = strings.TrimPrefix(rest, "-back")
	if rest == "" {
		return true
	}
	digits, ok := strings.CutPrefix(rest, "-")
	if !ok || digits == "" {
		return false
	}
	for _, c := range digits {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

// DefaultMaxFileSize is the default size limit (100 MiB).
const DefaultMaxFileSize = 100 << 20

// Sink receives the objects a scan creates. store.Tx implements it.
type Sink interface {
	HasBlob(id object.ID) (bool, error)
	// PutBlobFrom stores a blob; base, if not zero, is the previous
	// version of the same file (the store may keep a delta against it).
	PutBlobFrom(id object.ID, data []byte, base object.ID) error
	NewBlobWriter() store.BlobWriter
	HasTree(id object.ID) (bool, error)
	// PutTreeFrom stores a tree; base is the directory's previous tree.
	PutTreeFrom(id object.ID, data []byte, base object.ID) error
}

// Options configure a scan.
type Options struct {
	// Root is the absolute path of the workspace.
	Root string
	// MaxFileSize: larger files are skipped and reported (0: default).
	MaxFileSize int64
	// Exclude lists relative paths never captured (the store, if inside).
	Exclude []string
	// Temp lists the staging directories of ckpt's own restores (an
	// interrupted one's, from its journal): the entries [OwnTemp] names
	// are skipped at any depth and reported in Result.Temp.
	Temp []string
	// Cache is the previous stat cache (nil: hash everything).
	Cache *Cache
	// CacheOut, if not nil, receives the new cache.
	CacheOut *CacheWriter
	// Sink stores new blobs and trees. Nil: hash only; new trees are
	// returned in Result.Trees.
	Sink Sink
	// Progress is called about every 100 ms while the scan runs.
	Progress func(Progress)
	// Workers is the number of goroutines (0: a default for the machine).
	Workers int
	// LoadTree reads a tree from the store. A scan with a Cache needs it:
	// the cache holds no file ids, which come from a changed directory's
	// previous tree.
	LoadTree func(object.ID) (*object.Tree, error)
	// NestedRepos makes a directory below the root that contains a .git
	// entry (a submodule or another repository's work tree) a nested
	// repository: it is never descended nor captured, and it is reported
	// in Result.Nested and Result.Skipped, so restores never touch it. The
	// git backend records it as a gitlink. Without it (the sqlite backend)
	// such a directory is captured like any other, its .git excluded.
	NestedRepos bool
	// Unchanged, if set, reports that a directory and everything below it
	// are known not to have changed since Cache was written (a file-system
	// watcher says so). Such a directory that the cache holds is taken from
	// the cache whole: its tree is the cached tree and its cache blocks are
	// copied, without reading it. Skipped and untracked entries below it are
	// not reported again, and Result.Files is then -1 (unknown), so only
	// saves use it, never restores. An ignore file of a directory read
	// that is not what the cache saw changed unseen by the watcher (one
	// written through a hard link, or in a directory it cannot watch):
	// the scan then starts over without Unchanged (Result.RulesChanged).
	Unchanged func(rel string) bool
	// Changed, if set (with Unchanged), reports for a directory the scan
	// reads which of its entries may have changed since Cache was
	// written: the listed names (sorted), and no others when ok. The
	// others' stat data is taken from the cache without a stat, unless
	// the cache has none for them, saw them racily clean, flags the
	// directory (a hard-linked file, a nested repository), or a rule or
	// Include touches them. The directory itself is still listed (its
	// entries' names and types come from the disk).
	Changed func(rel string) (names []string, ok bool)
	// Unvouched lists directories (relative) whose past the watcher
	// behind Unchanged cannot vouch for: created, moved in or moved away
	// while it did not watch them. A hard link made in one, written
	// through and removed again changes a file elsewhere without an
	// event, so taking directories whole from the cache is only sound
	// when no save reads any of them: each is, or is below, a directory
	// left out by a rule (ignored, reserved, excluded, ckpt's own) that
	// the scan checked in its parent, whether it exists or not. When one
	// is not, the scan starts over without Unchanged and says why in
	// Result.Unvouched. Their parents must be dirty (not Unchanged).
	Unvouched []string
	// GoneTemp lists the staging directories of ckpt's finished restores
	// (see Options.Temp): a directory of Unvouched that is one of their
	// entries (OwnTemp) and is no longer there counts as left out.
	GoneTemp []string
	// OnTree, if set, is given every tree the scan stores through Sink,
	// decoded (a caller that reads them again, to list what changed,
	// need not decode them). It is called from the scan's workers; the
	// tree is the caller's.
	OnTree func(id object.ID, t *object.Tree)
	// OnStaleCache, if set, is called when Cache turns out to name trees
	// the store does not have (the store's database was replaced by an
	// older copy): the scan then starts over without the cache (and with
	// CacheOut emptied), and the caller should drop the cache file.
	OnStaleCache func()
	// IgnoreFiles, if set, gives the content of the ignore files
	// (.gitignore, .ckptignore, .decreeignore; rel is the file's path)
	// instead of the disk: a scan under another tree's ignore rules (a
	// revert checks what the rules it puts back would show).
	IgnoreFiles func(rel string) ([]byte, bool)
	// Include lists paths captured, with everything below them, whatever
	// the ignore rules say (a run's revert puts back files its routine's
	// new ignore rules cover). An ignored directory on the way to one is
	// entered, but only the included paths and the directories leading to
	// them are captured there. Files and symlinks captured only because of
	// it are reported in Result.Forced.
	Include []string
	// Tracked lists more paths captured like Include's (the ignored
	// files a checkpoint holds), except that an ignored file or symlink
	// on the way to one is not: the path is absent below it, and that
	// entry is none of the tracked paths.
	Tracked []string
}

// Progress is a snapshot of a running scan's counters. The scan reads
// directories and hashes files at the same time, so ToHash grows until
// Listed; from then on it is final, and Done reaches it when the scan
// ends. Done never exceeds ToHash.
type Progress struct {
	Files       int64 // files and symlinks seen
	Bytes       int64 // their total size
	Hashed      int64 // files and symlinks read and hashed
	HashedBytes int64
	ToHash      int64 // files found to need hashing so far
	ToHashBytes int64 // their size when listed
	// Done and DoneBytes count the files of ToHash whose turn is over
	// (hashed, or found gone), with their size when listed.
	Done      int64
	DoneBytes int64
	// Listed: every directory has been read, so ToHash and ToHashBytes
	// are final.
	Listed bool
}

// Skipped is a path a scan saw but did not capture.
type Skipped struct {
	Path   string `json:"path"`
	Reason string `json:"reason"`
	Size   int64  `json:"size,omitempty"`
}

// Result is what a scan found.
type Result struct {
	Root   object.ID
	Files  int64 // regular files and symlinks captured
	Bytes  int64
	Hashed int64
	HBytes int64
	// FromCache counts the entries of directories read whose stat data
	// came from the cache without a stat (see Options.Changed).
	FromCache int64
	Skipped   []Skipped
	// Trees holds the encodings of trees computed by a scan without a Sink
	// that may not be in the store.
	Trees map[object.ID][]byte
	// Untracked holds directories that directly contain ignored or skipped
	// entries (so a restore must not remove them wholesale).
	Untracked map[string]bool
	// Temp lists ckpt temporary entries found (relative paths).
	Temp []string
	// Nested lists the nested repositories found (with
	// Options.NestedRepos), sorted.
	Nested []string
	// Excluded is Options.Exclude: paths a restore must never write.
	Excluded []string
	// Forced lists the files and symlinks captured only because of
	// Options.Include (the ignore rules leave them out), sorted.
	Forced []string
	// Unvouched, when set, is a directory of Options.Unvouched that a
	// save reads (or one whose parent the scan did not read): the scan
	// then read everything, taking no directory whole from the cache.
	Unvouched string
	// RulesChanged, when set, is a directory whose ignore file changed
	// unseen by the watcher behind Options.Unchanged (see
	// scanner.rulesChanged): the scan then read everything too.
	RulesChanged string
}

// PathError is a failure to read a path of the workspace.
type PathError struct {
	Op   string
	Path string // relative to the workspace
	Err  error
}

// Error implements error.
func (e *PathError) Error() string {
	p := e.Path
	if p == "" {
		p = "."
	}
	return fmt.Sprintf("%s %s: %v", e.Op, p, e.Err)
}

// Unwrap returns the underlying error.
func (e *PathError) Unwrap() error { return e.Err }

type node struct {
	rel     string
	parent  *node
	idx     int
	m       *ignore.Matcher
	entries []ent
	pending atomic.Int64

	cacheTree object.ID
	cached    []cachedEntry
	hasCache  bool
	oldTree   *object.Tree // cacheTree, once loaded
	// unchanged: every entry matched its cache entry, stat data included,
	// so the directory's cache block can be copied as is.
	unchanged bool
	// nested: a nested repository (no cache block); hasNested: holds one.
	nested    bool
	hasNested atomic.Bool
	// ignored: the ignore rules leave the directory out, and it was
	// entered for Options.Include; includeAll: everything below it is
	// captured whatever the rules say (else, in an ignored directory, only
	// the included paths and the ways to them).
	ignored, includeAll bool
}

type ent struct {
	name  string
	mode  uint32 // object mode; 0 = dropped
	size  int64
	id    object.ID
	base  object.ID // previous version (from the cache) of a changed file
	st    statInfo
	child *node
	// clean: the stat data matches the cache, so the id is the one in the
	// directory's previous tree (filled in only if the directory changed).
	clean bool
}

type job struct {
	n *node
	i int // -1: read directory n; else hash n.entries[i]
}

type scanner struct {
	opts    Options
	ctx     context.Context
	cancel  context.CancelCauseFunc
	exclude map[string]bool
	max     int64
	// include: Options.Include (true) and the directories leading to
	// those paths (false).
	include map[string]bool
	// viaTracked: directories of include leading only to Options.Tracked
	// paths.
	viaTracked map[string]bool

	mu       sync.Mutex
	cond     *sync.Cond
	stack    []job
	active   int
	finished bool

	rmu    sync.Mutex
	res    Result
	files  atomic.Int64
	bytes  atomic.Int64
	hashed atomic.Int64
	hbytes atomic.Int64
	// unstated counts the entries taken from the cache without a stat
	// (Options.Changed).
	unstated atomic.Int64
	toHash   atomic.Int64
	toHB     atomic.Int64
	// settled counts the hash jobs over (of toHash), settledB their
	// listed sizes.
	settled  atomic.Int64
	settledB atomic.Int64
	// dirs counts the directories queued or being read: none left means
	// toHash is final.
	dirs atomic.Int64

	reused map[string]bool // directories taken whole from the cache
	// unvouchedIn: for each directory, the names in it that are
	// Options.Unvouched directories or lead to one; leftOut: those of
	// them the rules leave out (see checkUnvouched).
	unvouchedIn map[string][]string
	leftOut     map[string]bool
	// rulesChanged: in a scan with Options.Unchanged, an ignore file of
	// a directory read (rulesDir) is not the one the cache saw. The
	// watcher loses track when one changes, so it changed unseen
	// (written through a hard link, or in a directory it cannot watch):
	// the directories below taken from the cache were made under the old
	// rules, and the rules that leave an unvouched directory out now may
	// not be the ones when it was made.
	rulesChanged bool
	rulesDir     string
	rootTotal    int64
	// fromCache lists the directories whose tree id was taken from the
	// cache (unchanged), to check they are in the store.
	fromCache []cachedTree

	// root is the workspace, opened once: every directory and file is
	// opened relative to it without following any symlink, so a directory
	// swapped for a symlink while the scan runs is never entered.
	root *fsroot.Root
}

type cachedTree struct {
	rel string
	id  object.ID
}

// Scan walks opts.Root and returns its tree.
func Scan(ctx context.Context, opts Options) (*Result, error) {
	return scanFrom(ctx, opts, &node{rel: "", m: ignore.New(loadInfoExclude(opts.Root))})
}

func newScanner(ctx context.Context, opts Options) *scanner {
	if opts.MaxFileSize <= 0 {
		opts.MaxFileSize = DefaultMaxFileSize
	}
	if opts.Workers <= 0 {
		opts.Workers = max(4, 2*runtime.GOMAXPROCS(0))
	}
	s := &scanner{opts: opts, exclude: map[string]bool{}, max: opts.MaxFileSize}
	for _, e := range opts.Exclude {
		s.exclude[e] = true
	}
	if len(opts.Include)+len(opts.Tracked) > 0 {
		s.include, s.viaTracked = map[string]bool{}, map[string]bool{}
		for i, p := range append(slices.Clone(opts.Include), opts.Tracked...) {
			s.include[p] = true
			for d := path.Dir(p); d != "." && d != "/"; d = path.Dir(d) {
				if _, ok := s.include[d]; ok {
					break
				}
				s.include[d] = false
				s.viaTracked[d] = i >= len(opts.Include)
			}
		}
	}
	s.ctx, s.cancel = context.WithCancelCause(ctx)
	s.cond = sync.NewCond(&s.mu)
	s.res.Untracked = map[string]bool{}
	s.res.Excluded = opts.Exclude
	s.reused = map[string]bool{}
	if opts.Unchanged != nil && len(opts.Unvouched) > 0 {
		s.unvouchedIn, s.leftOut = map[string][]string{}, map[string]bool{}
		seen := map[string]bool{}
		for _, u := range opts.Unvouched {
			for p := u; p != "" && p != "." && !seen[p]; p = parentDir(p) {
				seen[p] = true
				dir := parentDir(p)
				s.unvouchedIn[dir] = append(s.unvouchedIn[dir], path.Base(p))
			}
		}
	}
	if opts.Sink == nil {
		s.res.Trees = map[object.ID][]byte{}
	}
	return s
}

// scanFrom walks the tree below start (whose matcher is its parent's). If
// the cache names trees the store lacks, it walks again without it; if a
// save reads one of Options.Unvouched, again without Options.Unchanged.
func scanFrom(ctx context.Context, opts Options, start *node) (*Result, error) {
	rel, m := start.rel, start.m
	unvouched, rulesChanged := "", ""
	for {
		res, stale, err := scanOnce(ctx, opts, start)
		switch {
		case err != nil:
			return nil, err
		case stale:
			opts.CacheOut.reset()
			if opts.OnStaleCache != nil {
				opts.OnStaleCache()
			}
			opts.Cache, opts.Unchanged = nil, nil
		case opts.Unchanged != nil && (res.Unvouched != "" || res.RulesChanged != ""):
			unvouched, rulesChanged = res.Unvouched, res.RulesChanged
			opts.CacheOut.reset()
			opts.Unchanged = nil
		default:
			res.Unvouched, res.RulesChanged = unvouched, rulesChanged
			return res, nil
		}
		start = &node{rel: rel, m: m}
	}
}

// scanOnce is one walk; stale reports that the cache named trees the store
// does not have (the result is then not to be used).
func scanOnce(ctx context.Context, opts Options, start *node) (res *Result, stale bool, err error) {
	opts.CacheOut.sizeFor(opts.Cache)
	s := newScanner(ctx, opts)
	defer s.cancel(nil)
	if err := s.open(); err != nil {
		return nil, false, err
	}
	defer s.root.Close()
	s.dirs.Add(1)
	s.push(job{n: start, i: -1})

	var wg sync.WaitGroup
	for range s.opts.Workers {
		wg.Add(1)
		go func() { defer wg.Done(); s.work() }()
	}
	stopTick := make(chan struct{})
	var tickWG sync.WaitGroup
	if opts.Progress != nil {
		tickWG.Add(1)
		go func() {
			defer tickWG.Done()
			t := time.NewTicker(100 * time.Millisecond)
			defer t.Stop()
			for {
				select {
				case <-stopTick:
					return
				case <-t.C:
					opts.Progress(s.progress())
				}
			}
		}()
	}
	wg.Wait()
	close(stopTick)
	tickWG.Wait()
	if opts.Progress != nil {
		opts.Progress(s.progress())
	}
	if err := context.Cause(s.ctx); err != nil {
		return nil, false, err
	}
	if !s.finished {
		return nil, false, errors.New("scan ended early")
	}
	if u, ok := s.checkUnvouched(); !ok {
		s.res.Unvouched = u
		return &s.res, false, nil
	}
	if s.rulesChanged {
		s.res.RulesChanged = orDot(s.rulesDir)
		return &s.res, false, nil
	}
	if stale, err := s.staleCache(); err != nil || stale {
		return nil, stale, err
	}
	s.res.Files, s.res.Bytes = s.files.Load(), s.bytes.Load()
	if len(s.reused) > 0 {
		s.copyReused()
		s.res.Files, s.res.Bytes = -1, s.rootTotal
	}
	s.res.Hashed, s.res.HBytes = s.hashed.Load(), s.hbytes.Load()
	s.res.FromCache = s.unstated.Load()
	sort.Slice(s.res.Skipped, func(i, j int) bool { return s.res.Skipped[i].Path < s.res.Skipped[j].Path })
	sort.Strings(s.res.Temp)
	sort.Strings(s.res.Nested)
	sort.Strings(s.res.Forced)
	return &s.res, false, nil
}

// noteLeftOut records which of the names in n that are, or lead to,
// Options.Unvouched directories the rules leave out of a save, as a
// directory, whether or not it is there now (n's matcher is made; des is
// n's listing, sorted).
func (s *scanner) noteLeftOut(n *node, des []dirent) {
	names := s.unvouchedIn[n.rel]
	if len(names) == 0 {
		return
	}
	var out []string
	for _, name := range names {
		if s.leftOutDir(n, name) || s.goneTemp(name, des) {
			out = append(out, join(n.rel, name))
		}
	}
	s.rmu.Lock()
	for _, p := range out {
		s.leftOut[p] = true
	}
	s.rmu.Unlock()
}

// leftOutDir reports whether readDir leaves out a directory named name in
// n: reserved, excluded, ckpt's own, or ignored and not included.
func (s *scanner) leftOutDir(n *node, name string) bool {
	p := join(n.rel, name)
	if excludedName(name) || s.exclude[p] || s.opts.own(n.rel, name) {
		return true
	}
	if n.includeAll {
		return false
	}
	if _, listed := s.include[p]; listed {
		return false
	}
	return n.ignored || n.m.IgnoredIn(n.rel, name, true)
}

// goneTemp reports whether name is an entry of a finished restore's
// staging directory (Options.GoneTemp) that is not in des.
func (s *scanner) goneTemp(name string, des []dirent) bool {
	if !slices.ContainsFunc(s.opts.GoneTemp, func(stage string) bool { return OwnTemp(stage, name) }) {
		return false
	}
	_, there := slices.BinarySearchFunc(des, name, func(d dirent, name string) int { return strings.Compare(d.name, name) })
	return !there
}

// checkRules records whether an ignore file read in n (st, in the order
// of ignoreFiles; nil where there is none) differs from what the cache
// has for it (see scanner.rulesChanged).
func (s *scanner) checkRules(n *node, st [3]*statInfo) {
	for i, fst := range st {
		if fst == nil {
			continue
		}
		j, found := slices.BinarySearchFunc(n.cached, ignoreFiles[i], func(c cachedEntry, name string) int { return strings.Compare(c.name, name) })
		if n.hasCache && found && s.clean(&n.cached[j], *fst, object.ModeFile|fst.mode&0o777) {
			continue
		}
		s.rmu.Lock()
		if !s.rulesChanged {
			s.rulesChanged, s.rulesDir = true, n.rel
		}
		s.rmu.Unlock()
		return
	}
}

// checkUnvouched reports whether every Options.Unvouched directory is, or
// is below, one the scan found left out; if not, it returns the first
// that is not.
func (s *scanner) checkUnvouched() (string, bool) {
	if s.unvouchedIn == nil {
		return "", true
	}
	for _, u := range s.opts.Unvouched {
		if !cleanRel(u) {
			// Not a directory of the workspace as the scan names them
			// (empty, absolute, "." or ".." in it, doubled or trailing
			// slash): never accepted, and never "" (which says all
			// were).
			if u == "" {
				u = "."
			}
			return u, false
		}
		ok := false
		for p := u; p != "" && p != "." && !ok; p = parentDir(p) {
			ok = s.leftOut[p]
		}
		if !ok {
			return u, false
		}
	}
	return "", true
}

// cleanRel reports whether p is a clean relative slash-separated path:
// not empty, no empty, "." or ".." component, no NUL. Unlike
// [object.ValidPath] (for paths stored in trees) it accepts reserved
// names (".git", ".ckpt"): a directory named so, or below one, is one a
// scan leaves out, which is what checkUnvouched asks of it.
func cleanRel(p string) bool {
	if p == "" || strings.IndexByte(p, 0) >= 0 {
		return false
	}
	for _, c := range strings.Split(p, "/") {
		if c == "" || c == "." || c == ".." {
			return false
		}
	}
	return true
}

// staleCache reports whether a tree taken from the cache is missing from
// the store. Only the topmost such trees are looked up: a tree is stored
// only with every tree below it.
func (s *scanner) staleCache() (bool, error) {
	if len(s.fromCache) == 0 {
		return false, nil
	}
	taken := make(map[string]bool, len(s.fromCache))
	for _, t := range s.fromCache {
		taken[t.rel] = true
	}
	batch, _ := s.opts.Sink.(treesLooker)
	var top []object.ID
	for _, t := range s.fromCache {
		if i := strings.LastIndexByte(t.rel, '/'); t.rel != "" && taken[t.rel[:max(i, 0)]] {
			continue // below another one taken from the cache
		}
		switch {
		case batch != nil:
			top = append(top, t.id)
		case s.opts.Sink != nil:
			ok, err := s.opts.Sink.HasTree(t.id)
			if err != nil {
				return false, err
			}
			if !ok {
				return true, nil
			}
		case s.opts.LoadTree != nil:
			if _, err := s.opts.LoadTree(t.id); err != nil {
				return true, nil // a read error shows again, and is reported, without the cache
			}
		}
	}
	if batch != nil {
		all, err := batch.HasTrees(top)
		return !all, err
	}
	return false, nil
}

// treesLooker is a Sink that looks up many trees at once.
type treesLooker interface {
	HasTrees(ids []object.ID) (bool, error)
}

// open opens the workspace's root directory.
func (s *scanner) open() error {
	if errPlatform != nil {
		return fmt.Errorf("scan %s: %w", s.opts.Root, errPlatform)
	}
	r, err := fsroot.Open(s.opts.Root)
	if err != nil {
		return &PathError{Op: "open workspace", Path: "", Err: unwrapErr(err)}
	}
	s.root = r
	return nil
}

// vanished reports whether an error opening a path below the root means it
// is no longer what its parent's listing said: gone, or replaced by a file
// or a symlink (which is never followed).
func vanished(err error) bool {
	return errors.Is(err, syscall.ENOENT) || errors.Is(err, syscall.ENOTDIR) || errors.Is(err, syscall.ELOOP)
}

// progress reads the counters in an order that keeps the report true
// while workers run: Listed before the totals (so a listed total is the
// final one), Done before ToHash (so Done never exceeds it).
func (s *scanner) progress() Progress {
	p := Progress{Listed: s.dirs.Load() == 0}
	p.Done, p.DoneBytes = s.settled.Load(), s.settledB.Load()
	p.ToHash, p.ToHashBytes = s.toHash.Load(), s.toHB.Load()
	p.Files, p.Bytes = s.files.Load(), s.bytes.Load()
	p.Hashed, p.HashedBytes = s.hashed.Load(), s.hbytes.Load()
	return p
}

func (s *scanner) push(jobs ...job) {
	s.mu.Lock()
	s.stack = append(s.stack, jobs...)
	s.mu.Unlock()
	if len(jobs) == 1 {
		s.cond.Signal()
	} else {
		s.cond.Broadcast()
	}
}

func (s *scanner) work() {
	for {
		s.mu.Lock()
		for len(s.stack) == 0 && !s.finished && s.ctx.Err() == nil {
			if s.active == 0 {
				// Nothing queued and nobody working: the walk is over.
				s.cond.Broadcast()
				s.mu.Unlock()
				return
			}
			s.cond.Wait()
		}
		if s.finished || s.ctx.Err() != nil {
			s.cond.Broadcast()
			s.mu.Unlock()
			return
		}
		j := s.stack[len(s.stack)-1]
		s.stack = s.stack[:len(s.stack)-1]
		s.active++
		s.mu.Unlock()

		var err error
		if j.i < 0 {
			err = s.readDir(j.n)
			s.dirs.Add(-1)
		} else {
			listed := j.n.entries[j.i].size
			err = s.hashEntry(j.n, j.i)
			if err == nil {
				s.settledB.Add(listed)
				s.settled.Add(1)
				s.done(j.n)
			}
		}
		if err != nil {
			s.cancel(err)
		}
		s.mu.Lock()
		s.active--
		if s.active == 0 && len(s.stack) == 0 {
			s.cond.Broadcast()
		}
		s.mu.Unlock()
	}
}

func (s *scanner) fail(err error) { s.cancel(err) }

func join(dir, name string) string {
	if dir == "" {
		return name
	}
	return dir + "/" + name
}

// notThere settles a directory that vanished while the scan read it as
// empty; the next scan sees it gone.
func (s *scanner) notThere(n *node) error {
	n.entries = nil
	s.finalize(n)
	return nil
}

func (s *scanner) readDir(n *node) error {
	if err := s.ctx.Err(); err != nil {
		return nil
	}
	if err := failpoint.Hit("scan/read-dir", n.rel); err != nil {
		return err
	}
	fd, err := s.root.OpenDirFD(n.rel)
	if err != nil {
		if n.parent != nil && vanished(err) {
			// Vanished or replaced since its parent was read: not there.
			return s.notThere(n)
		}
		return &PathError{Op: "read directory", Path: n.rel, Err: unwrapErr(err)}
	}
	defer closeFD(fd)
	if err := failpoint.Hit("scan/dir-opened", n.rel); err != nil {
		return err
	}
	bp := direntPool.Get().(*[]byte)
	des, err := readDirents(fd, *bp)
	direntPool.Put(bp)
	if err != nil {
		if n.parent != nil && vanished(err) {
			// Removed after the open (Linux's getdents then says
			// ENOENT): not there, as when it is gone before it.
			return s.notThere(n)
		}
		return &PathError{Op: "read directory", Path: n.rel, Err: err}
	}
	slices.SortFunc(des, func(a, b dirent) int { return strings.Compare(a.name, b.name) })
	if s.opts.NestedRepos && n.rel != "" && hasDotGit(des) {
		s.nestedRepo(n)
		return nil
	}

	// Ignore files of this directory: .gitignore, .ckptignore,
	// .decreeignore, from IgnoreFiles or else the disk.
	var lists [3]*ignore.List
	var ignSt [3]*statInfo
	if s.opts.IgnoreFiles != nil {
		for i, name := range ignoreFiles {
			if data, ok := s.opts.IgnoreFiles(join(n.rel, name)); ok {
				lists[i] = ignore.ParseList(n.rel, join(n.rel, name), data)
			}
		}
	}
	for _, de := range des {
		i := slices.Index(ignoreFiles[:], de.name)
		if i < 0 || s.opts.IgnoreFiles != nil {
			continue
		}
		st, err := lstatAt(fd, de.name)
		if err != nil || st.mode&sIFMT != sIFREG {
			continue // git does not follow a symlinked .gitignore
		}
		data, err := readFileAt(fd, de.name)
		if err != nil {
			if vanished(err) {
				continue
			}
			return &PathError{Op: "read", Path: join(n.rel, de.name), Err: unwrapErr(err)}
		}
		lists[i] = ignore.ParseList(n.rel, join(n.rel, de.name), data)
		ignSt[i] = &st
	}
	parentM := n.m
	n.m = parentM.Child(n.rel, lists[0], lists[1], lists[2])
	if s.unvouchedIn != nil {
		s.noteLeftOut(n, des)
	}
	n.cacheTree, n.cached, n.hasCache = s.opts.Cache.block(n.rel)
	if s.opts.Unchanged != nil {
		s.checkRules(n, ignSt)
	}

	dirfd := fd
	ci2 := 0 // merge cursor into n.cached
	// The watcher's list of the entries that may have changed: the
	// others need no stat (Options.Changed).
	var changed []string
	known := false
	if s.opts.Changed != nil && s.opts.Unchanged != nil && n.hasCache && s.opts.Cache.blockFlags(n.rel) == 0 {
		changed, known = s.opts.Changed(n.rel)
	}
	n.unchanged = n.hasCache
	var hashJobs []job
	var dirJobs []job
	n.entries = make([]ent, 0, len(des))
	for _, de := range des {
		name := de.name
		if excludedName(name) {
			continue
		}
		if len(s.exclude) > 0 && s.exclude[join(n.rel, name)] {
			s.markUntracked(n.rel) // the directory is not empty
			continue
		}
		if s.opts.own(n.rel, name) {
			s.rmu.Lock()
			s.res.Temp = append(s.res.Temp, join(n.rel, name))
			s.rmu.Unlock()
			continue
		}
		// The type from readdir is enough to apply the ignore rules, so
		// ignored entries cost no stat. Options.Include overrides them:
		// listed paths (and all below them) are captured, and an ignored
		// directory on the way to one is entered for it alone.
		var incl, listed bool
		if s.include != nil {
			incl, listed = s.include[join(n.rel, name)]
		}
		all := n.includeAll || incl
		ignored := n.ignored || de.typeKnown && n.m.IgnoredIn(n.rel, name, de.isDir)
		if ignored && !all && !listed {
			s.markUntracked(n.rel)
			continue
		}
		var st statInfo
		if known && !ignored && !all && !listed && de.typeKnown && !listedIn(changed, name) {
			if de.isDir {
				st.mode = sIFDIR // a directory's stat data is never compared
			} else if c, ok := s.lookup(n, &ci2, name); ok && s.unchangedEntry(c, de) {
				n.entries = append(n.entries, s.cachedEnt(c, name))
				continue
			}
		}
		if st.mode == 0 {
			var err error
			st, err = lstatAt(dirfd, name)
			if err != nil {
				if err == syscall.ENOENT {
					continue // vanished
				}
				return &PathError{Op: "stat", Path: join(n.rel, name), Err: err}
			}
		}
		if isDir := st.mode&sIFMT == sIFDIR; !n.ignored && (!de.typeKnown || isDir != de.isDir) {
			// Type unknown to readdir, or replaced since.
			if ignored = n.m.IgnoredIn(n.rel, name, isDir); ignored && !all && !listed {
				s.markUntracked(n.rel)
				continue
			}
		}
		if ignored && !all && st.mode&sIFMT != sIFDIR && s.viaTracked[join(n.rel, name)] {
			// On the way to a tracked path, but a file or symlink (never
			// followed): that path is absent, and this entry stays out.
			s.markUntracked(n.rel)
			continue
		}
		if ignored && st.mode&sIFMT != sIFDIR {
			s.rmu.Lock()
			s.res.Forced = append(s.res.Forced, join(n.rel, name))
			s.rmu.Unlock()
		}
		switch st.mode & sIFMT {
		case sIFDIR:
			// A directory on the way to an included path is read: the
			// watcher does not watch the ignored ones below it.
			if id, size, ok := s.reuse(join(n.rel, name)); !ignored && !all && !listed && ok {
				n.entries = append(n.entries, ent{name: name, mode: object.ModeDir, id: id, size: size})
				continue
			}
			child := &node{rel: join(n.rel, name), parent: n, idx: len(n.entries), m: n.m, ignored: ignored, includeAll: all}
			n.entries = append(n.entries, ent{name: name, mode: object.ModeDir, child: child})
			dirJobs = append(dirJobs, job{n: child, i: -1})
		case sIFREG:
			if st.size > s.max {
				s.skip(n.rel, Skipped{Path: join(n.rel, name), Reason: fmt.Sprintf("larger than the %s limit", humanBytes(s.max)), Size: st.size})
				continue
			}
			e := ent{name: name, mode: object.ModeFile | st.mode&0o777, size: st.size, st: st}
			s.files.Add(1)
			s.bytes.Add(st.size)
			c, ok := s.lookup(n, &ci2, name)
			if ok && s.clean(c, st, e.mode) {
				e.clean = true
				n.entries = append(n.entries, e)
				continue
			}
			if ok && object.IsFile(c.mode) {
				e.base = s.previousID(n, name)
			}
			n.unchanged = false
			n.entries = append(n.entries, e)
			s.toHash.Add(1)
			s.toHB.Add(st.size)
			hashJobs = append(hashJobs, job{n: n, i: len(n.entries) - 1})
		case sIFLNK:
			e := ent{name: name, mode: object.ModeSymlink, size: st.size, st: st}
			s.files.Add(1)
			s.bytes.Add(st.size)
			if c, ok := s.lookup(n, &ci2, name); ok && s.clean(c, st, e.mode) {
				e.clean = true
				n.entries = append(n.entries, e)
				continue
			}
			n.unchanged = false
			target, err := readlinkAt(dirfd, name)
			if err != nil {
				if err == syscall.ENOENT {
					continue
				}
				return &PathError{Op: "read symlink", Path: join(n.rel, name), Err: err}
			}
			e.size = int64(len(target))
			e.id = object.Sum(target)
			if err := s.putBlob(e.id, target, object.ZeroID); err != nil {
				return err
			}
			s.hashed.Add(1)
			n.entries = append(n.entries, e)
		default:
			s.skip(n.rel, Skipped{Path: join(n.rel, name), Reason: fileType(st.mode)})
		}
	}
	n.pending.Store(int64(len(dirJobs) + len(hashJobs) + 1))
	s.dirs.Add(int64(len(dirJobs)))
	if len(hashJobs)+len(dirJobs) > 0 {
		s.push(append(hashJobs, dirJobs...)...)
	}
	s.done(n)
	return nil
}

func hasDotGit(des []dirent) bool {
	_, found := slices.BinarySearchFunc(des, ".git", func(d dirent, name string) int { return strings.Compare(d.name, name) })
	return found
}

// NestedReason is the Skipped reason of a nested repository.
const NestedReason = "nested git repository (submodule): recorded as a gitlink, its files never captured"

// nestedRepo records n as a nested repository: reported, not captured,
// and marked so that restores leave it and its parent directory alone.
func (s *scanner) nestedRepo(n *node) {
	parent := ""
	if i := strings.LastIndexByte(n.rel, '/'); i >= 0 {
		parent = n.rel[:i]
	}
	s.skip(parent, Skipped{Path: n.rel, Reason: NestedReason})
	s.rmu.Lock()
	s.res.Nested = append(s.res.Nested, n.rel)
	s.res.Untracked[n.rel] = true
	s.rmu.Unlock()
	n.nested = true
	if n.parent != nil {
		n.parent.hasNested.Store(true)
	}
	n.entries = nil
	n.pending.Store(1)
	s.done(n)
}

func unwrapErr(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// ignoreFiles are the ignore files a directory may hold, in the order
// ignore.Matcher.Child takes them.
var ignoreFiles = [3]string{".gitignore", ".ckptignore", ".decreeignore"}

// excludedName: .git, .ckpt and .decree in any letter case.
func excludedName(name string) bool { return object.Reserved(name) }

// lookup finds name among the cached entries, advancing the merge cursor
// (both lists are sorted).
func (s *scanner) lookup(n *node, cur *int, name string) (*cachedEntry, bool) {
	if !n.hasCache {
		return nil, false
	}
	for *cur < len(n.cached) && n.cached[*cur].name < name {
		*cur++
	}
	if *cur < len(n.cached) && n.cached[*cur].name == name {
		return &n.cached[*cur], true
	}
	return nil, false
}

// previousID returns the id name had in the directory's previous tree
// (zero if unknown), loading that tree once.
func (s *scanner) previousID(n *node, name string) object.ID {
	if !n.hasCache || s.opts.LoadTree == nil {
		return object.ID{}
	}
	if n.oldTree == nil {
		t, err := s.opts.LoadTree(n.cacheTree)
		if err != nil {
			return object.ID{}
		}
		n.oldTree = t
	}
	e, _ := n.oldTree.Find(name)
	return e.ID
}

// listedIn reports whether name is in the sorted list names.
func listedIn(names []string, name string) bool {
	_, found := slices.BinarySearch(names, name)
	return found
}

// unchangedEntry reports whether a cached entry whose name the watcher
// saw no event for can stand for the entry readdir found: the same type,
// clean when the cache was written (not racy), and within the size limit.
func (s *scanner) unchangedEntry(c *cachedEntry, de dirent) bool {
	switch {
	case c.mtime >= s.opts.Cache.Clock || c.size > s.max:
		return false
	case object.IsFile(c.mode):
		return de.isReg
	case object.IsSymlink(c.mode):
		return de.isLink
	}
	return false
}

// cachedEnt is the entry of an unchanged file or symlink, from the cache:
// clean, its id filled from the previous tree like any clean entry's. Its
// name is readdir's: c.name points into the cache, which may be unmapped
// once the scan is over, while the entry's name lives on in trees.
func (s *scanner) cachedEnt(c *cachedEntry, name string) ent {
	s.files.Add(1)
	s.bytes.Add(c.size)
	s.unstated.Add(1)
	mode := uint32(sIFREG)
	if object.IsSymlink(c.mode) {
		mode = sIFLNK
	}
	return ent{name: name, mode: c.mode, size: c.size, clean: true,
		st: statInfo{mode: mode | c.mode&0o777, size: c.size, mtime: c.mtime, ctime: c.ctime, ino: c.ino, dev: c.dev, nlink: 1}}
}

func (s *scanner) clean(c *cachedEntry, st statInfo, mode uint32) bool {
	return c.mode == mode && c.size == st.size && c.mtime == st.mtime && c.ctime == st.ctime &&
		c.ino == st.ino && c.dev == st.dev && st.mtime < s.opts.Cache.Clock
}

func (s *scanner) markUntracked(dir string) {
	s.rmu.Lock()
	s.res.Untracked[dir] = true
	s.rmu.Unlock()
}

func (s *scanner) skip(dir string, sk Skipped) {
	s.rmu.Lock()
	s.res.Skipped = append(s.res.Skipped, sk)
	s.res.Untracked[dir] = true
	s.rmu.Unlock()
}

func (s *scanner) putBlob(id object.ID, data []byte, base object.ID) error {
	if s.opts.Sink == nil {
		return nil
	}
	ok, err := s.opts.Sink.HasBlob(id)
	if err != nil || ok {
		return err
	}
	return s.opts.Sink.PutBlobFrom(id, data, base)
}

func fileType(mode uint32) string {
	switch mode & sIFMT {
	case syscall.S_IFIFO:
		return "named pipe (FIFO)"
	case syscall.S_IFSOCK:
		return "socket"
	case syscall.S_IFCHR:
		return "character device"
	case syscall.S_IFBLK:
		return "block device"
	}
	return fmt.Sprintf("unsupported file type %o", mode&sIFMT)
}

var direntPool = sync.Pool{New: func() any { b := make([]byte, 32<<10); return &b }}

var bufPool = sync.Pool{New: func() any { b := make([]byte, 0, 64<<10); return &b }}

// hashEntry reads, hashes and stores one file. It re-stats the open file
// after reading and reads again if the file changed meanwhile.
func (s *scanner) hashEntry(n *node, i int) error {
	if err := s.ctx.Err(); err != nil {
		return err
	}
	e := &n.entries[i]
	rel := join(n.rel, e.name)
	fd, err := s.root.OpenFD(rel, os.O_RDONLY|fsroot.ONonblock, 0)
	if err != nil {
		if vanished(err) {
			e.mode = 0 // vanished or replaced by a symlink: the next scan sees it
			return nil
		}
		return &PathError{Op: "read", Path: rel, Err: unwrapErr(err)}
	}
	f := os.NewFile(uintptr(fd), rel)
	defer f.Close()
	for attempt := 0; ; attempt++ {
		before, err := fstat(fd)
		if err != nil {
			return &PathError{Op: "stat", Path: rel, Err: err}
		}
		if before.mode&sIFMT != sIFREG {
			e.mode = 0
			return nil
		}
		if before.size > s.max {
			e.mode = 0
			s.skip(n.rel, Skipped{Path: rel, Reason: fmt.Sprintf("larger than the %s limit", humanBytes(s.max)), Size: before.size})
			return nil
		}
		id, size, err := s.hashFile(f, rel, before.size, e.base)
		if err != nil {
			return err
		}
		after, err := fstat(fd)
		if err != nil {
			return &PathError{Op: "stat", Path: rel, Err: err}
		}
		if after != before || size != after.size {
			if attempt < 5 {
				continue
			}
			return &PathError{Op: "read", Path: rel, Err: errors.New("file keeps changing while it is read")}
		}
		s.bytes.Add(size - e.size)
		e.id, e.size, e.st = id, size, after
		e.mode = object.ModeFile | after.mode&0o777
		s.hashed.Add(1)
		s.hbytes.Add(size)
		return nil
	}
}

func (s *scanner) hashFile(f *os.File, rel string, size int64, base object.ID) (object.ID, int64, error) {
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		return object.ID{}, 0, &PathError{Op: "read", Path: rel, Err: err}
	}
	if size < store.ChunkThreshold {
		bp := bufPool.Get().(*[]byte)
		defer bufPool.Put(bp)
		buf := (*bp)[:0]
		if int64(cap(buf)) < size+1 {
			buf = make([]byte, 0, size+1)
		}
		for {
			if len(buf) == cap(buf) {
				buf = append(buf, 0)[:len(buf)]
			}
			m, err := f.Read(buf[len(buf):cap(buf)])
			buf = buf[:len(buf)+m]
			if err == io.EOF {
				break
			}
			if err != nil {
				return object.ID{}, 0, &PathError{Op: "read", Path: rel, Err: unwrapErr(err)}
			}
			if int64(len(buf)) > s.max {
				break
			}
		}
		if cap(buf) <= 1<<20 {
			*bp = buf[:0]
		}
		id := object.Sum(buf)
		if err := s.putBlob(id, buf, base); err != nil {
			return object.ID{}, 0, err
		}
		return id, int64(len(buf)), nil
	}
	// Large file: hash first; store (in chunks) only if new.
	h := sha256.New()
	n, err := io.Copy(h, f)
	if err != nil {
		return object.ID{}, 0, &PathError{Op: "read", Path: rel, Err: unwrapErr(err)}
	}
	var id object.ID
	h.Sum(id[:0])
	if s.opts.Sink == nil {
		return id, n, nil
	}
	if ok, err := s.opts.Sink.HasBlob(id); err != nil || ok {
		return id, n, err
	}
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		return object.ID{}, 0, &PathError{Op: "read", Path: rel, Err: err}
	}
	w := s.opts.Sink.NewBlobWriter()
	h2 := sha256.New()
	n2, err := io.Copy(io.MultiWriter(w, h2), f)
	if err != nil {
		w.Abort()
		return object.ID{}, 0, &PathError{Op: "read", Path: rel, Err: unwrapErr(err)}
	}
	var id2 object.ID
	h2.Sum(id2[:0])
	if id2 != id || n2 != n {
		w.Abort()
		return id2, n2, nil // changed meanwhile; the caller's re-stat retries
	}
	return id, n, w.Commit(id)
}

// done records that one of n's pending parts finished.
func (s *scanner) done(n *node) {
	if n.pending.Add(-1) == 0 {
		s.finalize(n)
	}
}

// finalize computes n's tree once all its entries are known.
func (s *scanner) finalize(n *node) {
	live := n.entries[:0]
	var total int64
	for _, e := range n.entries {
		if e.mode != 0 {
			live = append(live, e)
			total += e.size
		}
	}
	n.entries = live
	var id object.ID
	same := n.hasCache && sameEntries(live, n.cached)
	if !same && len(live) > 0 {
		// The directory changed: unchanged files take their ids from its
		// previous tree.
		if err := s.fillClean(n, live); err != nil {
			s.fail(err)
			return
		}
		// A fallback read may have found a file gone meanwhile.
		kept := live[:0]
		total = 0
		for _, e := range live {
			if e.mode != 0 {
				kept = append(kept, e)
				total += e.size
			}
		}
		live = kept
		n.entries = live
	}
	switch {
	case len(live) == 0 && n.parent != nil:
		// Empty directories are not tracked.
	case same:
		id = n.cacheTree
		s.rmu.Lock()
		s.fromCache = append(s.fromCache, cachedTree{n.rel, id})
		s.rmu.Unlock()
	default:
		t := object.Tree{Entries: make([]object.Entry, len(live))}
		for i, e := range live {
			t.Entries[i] = object.Entry{Name: e.name, Mode: e.mode, Size: e.size, ID: e.id}
		}
		data := t.Encode()
		id = object.Sum(data)
		if s.opts.Sink != nil {
			base := object.ZeroID
			if n.hasCache {
				base = n.cacheTree
			}
			// A changed directory's new tree is new, unless the directory
			// went back to an earlier state: storing it then costs an
			// encoding and an insert the store ignores, less than a
			// lookup for every changed directory of every save. A new
			// directory (no base) may well be stored already (moved, or
			// made again): look it up first.
			ok, err := false, error(nil)
			if base.IsZero() || base == id {
				ok, err = s.opts.Sink.HasTree(id)
			}
			if err == nil && !ok {
				err = s.opts.Sink.PutTreeFrom(id, data, base)
			}
			if err != nil {
				s.fail(err)
				return
			}
			if s.opts.OnTree != nil {
				s.opts.OnTree(id, &t)
			}
		} else {
			s.rmu.Lock()
			s.res.Trees[id] = data
			s.rmu.Unlock()
		}
	}
	if s.opts.CacheOut != nil && n.unchanged && same && len(live) == len(n.cached) && !n.hasNested.Load() {
		// Nothing in this directory changed, not even stat data: its new
		// cache block is the old one, byte for byte.
		if raw, count, dev, ok := s.opts.Cache.rawBlock(n.rel); ok && count == len(live) {
			s.opts.CacheOut.copyBlock(s.opts.Cache, n.rel, id, dev, raw, count, s.opts.Cache.blockFlags(n.rel), total)
			n.entries, n.cached, n.oldTree = nil, nil, nil
			goto report
		}
	}
	// Every directory read has a block, an empty one too (a watcher
	// watches the directories the cache holds); a nested repository none.
	if s.opts.CacheOut != nil && !n.nested {
		ces := make([]cachedEntry, 0, len(live))
		var dev uint64
		var flags uint8
		if n.hasNested.Load() {
			flags |= flagNested
		}
		devSet := false
		for _, e := range live {
			if !object.IsDir(e.mode) && e.st.nlink > 1 {
				flags |= flagLinked
			}
			if !object.IsDir(e.mode) {
				if !devSet {
					dev, devSet = e.st.dev, true
				} else if e.st.dev != dev {
					continue // cannot happen within one directory; leave it uncached
				}
			}
			ces = append(ces, cachedEntry{name: e.name, mode: e.mode, size: e.size, id: e.id,
				mtime: e.st.mtime, ctime: e.st.ctime, ino: e.st.ino})
		}
		for i := range ces {
			if object.IsDir(ces[i].mode) {
				continue
			}
			ces[i].id = object.ID{} // files' ids live in the tree, not the cache
		}
		blockTree := id
		if len(live) == 0 {
			blockTree = object.EmptyTree
		}
		s.opts.CacheOut.Block(n.rel, blockTree, dev, ces, flags, total)
	}
	n.entries = nil
	n.cached = nil
	n.oldTree = nil
report:
	if n.parent == nil {
		if len(live) == 0 {
			id = object.EmptyTree
		}
		s.res.Root = id
		s.rootTotal = total
		s.mu.Lock()
		s.finished = true
		s.cond.Broadcast()
		s.mu.Unlock()
		return
	}
	p := n.parent
	pe := &p.entries[n.idx]
	if len(live) == 0 {
		pe.mode = 0
	} else {
		pe.id, pe.size = id, total
	}
	pe.child = nil
	s.done(p)
}

// reuse takes an unchanged directory whole from the cache (see
// Options.Unchanged): its cached tree id and its size.
func (s *scanner) reuse(rel string) (object.ID, int64, bool) {
	if s.opts.Unchanged == nil || s.opts.LoadTree == nil || !s.opts.Unchanged(rel) {
		return object.ID{}, 0, false
	}
	if s.opts.Cache.flaggedBelow(rel) {
		// A hard-linked file may change through a link elsewhere, which
		// the watcher does not see; a nested repository's commit must be
		// read: read it.
		return object.ID{}, 0, false
	}
	// The cache's index gives the tree and its size: no tree is read. It
	// is in the store: the cache belongs to the store's generation (no
	// object was deleted since it was written), and staleCache checks the
	// topmost trees taken from it anyway.
	// An empty directory (its block names no tree, or the empty tree) is
	// not taken: it is not part of the tree.
	ref, ok := s.opts.Cache.dirs[rel]
	if !ok || ref.tree.IsZero() || ref.tree == object.EmptyTree {
		return object.ID{}, 0, false
	}
	s.rmu.Lock()
	s.reused[rel] = true
	s.fromCache = append(s.fromCache, cachedTree{rel, ref.tree})
	s.rmu.Unlock()
	return ref.tree, ref.size, true
}

// copyReused copies the old cache's blocks of the reused directories (and
// everything below them) into the new cache.
func (s *scanner) copyReused() {
	if len(s.reused) == 0 || s.opts.CacheOut == nil {
		return
	}
	// under: dir or a directory above it was reused. From the top: the
	// reused directories hang off the few read ones along the changes.
	under := func(dir string) bool {
		for i := 0; ; {
			j := strings.IndexByte(dir[i:], '/')
			if j < 0 {
				return s.reused[dir]
			}
			if s.reused[dir[:i+j]] {
				return true
			}
			i += j + 1
		}
	}
	if s.opts.CacheOut.shareBlocks(s.opts.Cache, under) {
		return
	}
	for dir, ref := range s.opts.Cache.dirs {
		if !under(dir) {
			continue
		}
		if raw, count, dev, ok := s.opts.Cache.rawBlock(dir); ok {
			s.opts.CacheOut.copyBlock(s.opts.Cache, dir, ref.tree, dev, raw, count, ref.flags, ref.size)
		}
	}
}

// sameEntries reports whether a directory's entries are exactly the cached
// ones: same names, modes and sizes, files unchanged (clean), and
// subdirectories with the same tree ids. Its tree is then the cached tree.
func sameEntries(live []ent, cached []cachedEntry) bool {
	if len(live) != len(cached) {
		return false
	}
	for i := range live {
		a, b := &live[i], &cached[i]
		if a.name != b.name || a.mode != b.mode {
			return false
		}
		if object.IsDir(a.mode) {
			// The cache keeps a subdirectory's tree id, not its size (the id
			// determines it).
			if a.id != b.id {
				return false
			}
		} else if !a.clean || a.size != b.size {
			return false
		}
	}
	return true
}

// fillClean gives the clean (unchanged) files of a changed directory their
// ids from its previous tree. If that tree cannot be read (or lacks one),
// the files are hashed again.
func (s *scanner) fillClean(n *node, live []ent) error {
	for i := range live {
		e := &live[i]
		if !e.clean || !e.id.IsZero() {
			continue
		}
		if id := s.previousID(n, e.name); !id.IsZero() {
			if pe, _ := n.oldTree.Find(e.name); pe.Mode == e.mode && pe.Size == e.size {
				e.id = id
				continue
			}
		}
		// Fall back to reading the file (live aliases n.entries).
		if err := s.rehash(n, i); err != nil {
			return err
		}
	}
	return nil
}

// rehash reads and hashes an entry that the cache said was clean but whose
// id is not available.
func (s *scanner) rehash(n *node, i int) error {
	e := &n.entries[i]
	e.clean = false
	if object.IsSymlink(e.mode) {
		target, err := s.root.Readlink(join(n.rel, e.name))
		if err != nil {
			if vanished(err) {
				e.mode = 0
				return nil
			}
			return &PathError{Op: "read symlink", Path: join(n.rel, e.name), Err: unwrapErr(err)}
		}
		e.id = object.Sum([]byte(target))
		e.size = int64(len(target))
		return s.putBlob(e.id, []byte(target), object.ID{})
	}
	return s.hashEntry(n, i)
}

func humanBytes(n int64) string {
	switch {
	case n >= 1<<30 && n%(1<<30) == 0:
		return fmt.Sprintf("%d GiB", n>>30)
	case n >= 1<<20 && n%(1<<20) == 0:
		return fmt.Sprintf("%d MiB", n>>20)
	case n >= 1<<10 && n%(1<<10) == 0:
		return fmt.Sprintf("%d KiB", n>>10)
	}
	return fmt.Sprintf("%d bytes", n)
}

// maxInfoExclude bounds the size of .git/info/exclude.
const maxInfoExclude = 16 << 20

// loadInfoExclude reads .git/info/exclude of the repository at root (a .git
// directory, or a .git file pointing to a worktree's git dir).
func loadInfoExclude(root string) *ignore.List {
	path := InfoExcludePath(root)
	if path == "" {
		return nil
	}
	// Read only a regular file, bounded: a FIFO or a device planted there
	// must not hang or exhaust a save. One that is not readable has no
	// rules (git's own reading skips it too), so more is captured, never
	// less.
	data, err := fsroot.ReadRegular(path, maxInfoExclude)
	if err != nil {
		return nil
	}
	return ignore.ParseList("", ".git/info/exclude", data)
}

// InfoExcludePath returns the path of the info/exclude file that applies to
// a work tree rooted at root, or "".
func InfoExcludePath(root string) string {
	gitPath := filepath.Join(root, ".git")
	fi, err := os.Lstat(gitPath)
	if err != nil {
		return ""
	}
	gitDir := gitPath
	if fi.Mode().IsRegular() {
		data, err := fsroot.ReadRegular(gitPath, 64<<10)
		if err != nil {
			return ""
		}
		line := strings.TrimSpace(string(data))
		d, ok := strings.CutPrefix(line, "gitdir:")
		if !ok {
			return ""
		}
		gitDir = strings.TrimSpace(d)
		if !filepath.IsAbs(gitDir) {
			gitDir = filepath.Join(root, gitDir)
		}
		if c, err := fsroot.ReadRegular(filepath.Join(gitDir, "commondir"), 64<<10); err == nil {
			cd := strings.TrimSpace(string(c))
			if !filepath.IsAbs(cd) {
				cd = filepath.Join(gitDir, cd)
			}
			gitDir = cd
		}
	} else if !fi.IsDir() {
		return ""
	}
	return filepath.Join(gitDir, "info", "exclude")
}

func orDot(rel string) string {
	if rel == "" {
		return "."
	}
	return rel
}
