package ckpt

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/seed1cedbf7c/ckpt/internal/object"
	"github.com/seed1cedbf7c/ckpt/internal/scan"
	"github.com/seed1cedbf7c/ckpt/internal/store"
	"github.com/seed1cedbf7c/ckpt/internal/watch"
)

// ID identifies a checkpoint (or any object): the SHA-256 of its encoding.
type ID = object.ID

// ParseID parses a full 64-hex id.
func ParseID(s string) (ID, error) { return object.ParseID(s) }

// Backend names.
const (
	BackendSQLite = "sqlite"
	BackendMemory = "memory"
	BackendGit    = "git"
)

// Options configure [Open].
type Options struct {
	// Store is the store directory. Empty: [DefaultStoreDir] of the workspace.
	Store string
	// Backend is "sqlite", "git" or "memory". Empty: the "backend" setting
	// of the sqlite store's config.toml if set, else "git" when the
	// workspace's git directory already holds a git-backend store (and no
	// sqlite store exists: with both, Open asks to choose), else "sqlite".
	// The git backend keeps its store in <gitdir>/ckpt (Store then only
	// names the config.toml that may select it) and mirrors checkpoints
	// into the repository (see docs/git-backend.md).
	Backend string
	// GitRefPrefix, for the git backend, sets the ref namespace (default
	// refs/ckpt; "refs/sandbox" gives the sandbox snapshot tools' refs). It is saved in the
	// store's config.toml.
	GitRefPrefix string
	// MaxFileSize: files larger are skipped and reported (0: 100 MiB).
	MaxFileSize int64
	// LockTimeout bounds the wait for another process's operation (0: 10 minutes).
	LockTimeout time.Duration
	// Progress receives progress reports of long operations. The engine
	// never prints; frontends render these.
	Progress func(Progress)
	// Waiting is called once when an operation starts waiting for the
	// store's lock, with a description of the holder.
	Waiting func(holder string)
	// Now returns the current time (tests); nil: time.Now.
	Now func() time.Time
	// NoRecover stops Open from finishing an interrupted operation (for
	// tools that report on it, like `ckpt recover`). Mutating operations
	// still recover first.
	NoRecover bool
	// Config, if not nil, replaces the store's config.toml (the memory
	// backend has none).
	Config *Config
	// NoCreate makes Open fail with a [*NoStoreError] instead of creating
	// a store (or, for the git backend, a repository) that does not exist
	// yet: for commands that only look, which must leave no trace.
	NoCreate bool
}

// absentStore reports whether the store directory sd does not exist or is
// empty (a directory holding something else is no store either, but Open
// says so itself).
func absentStore(sd string) bool {
	ents, err := os.ReadDir(sd)
	return errors.Is(err, fs.ErrNotExist) || (err == nil && len(ents) == 0)
}

// Progress is a report from a running operation.
//
// Files never exceeds TotalFiles. While Counting, the operation is still
// finding its work (a save's scan reads directories while it hashes the
// files found so far): TotalFiles and TotalBytes are what it has found,
// and grow. Once a report has Counting false its totals are final: the
// operation's later reports carry the same ones. An operation that runs
// again (a scan that starts over) begins again with Counting true.
type Progress struct {
	// Op is "scan", "restore", "fsck", "push" or "pull".
	Op string `json:"op"`
	// Files (for push and pull: objects) and Bytes done so far, and the
	// totals. Push and pull report the bytes sent or received, without
	// a TotalBytes.
	Files      int64 `json:"files"`
	TotalFiles int64 `json:"total_files"`
	Bytes      int64 `json:"bytes"`
	TotalBytes int64 `json:"total_bytes"`
	// Counting: the totals are not final yet.
	Counting bool `json:"counting,omitempty"`
}

// Repo is an open workspace and its store. Its methods are safe for
// concurrent use; mutating operations serialize through the store's lock,
// across processes too.
type Repo struct {
	root     string // absolute, symlinks resolved
	storeDir string // "" for memory
	st       store.Store
	opts     Options
	cfg      Config
	exclude  []string // workspace-relative paths never captured

	git *gitBackend // git backend only

	// warnings are what Open found wrong but did not stop on (see
	// Warnings).
	warnings []string

	// served is set in a watcher's own Repo, which saves for clients
	// (see served.go): it asks the watcher in its process, and keeps the
	// stat cache in memory.
	served watch.Server
	trees  *treeMemo // a watcher's Repo: trees its saves read
	// forClient, in a watcher's Repo saving for a client, fails once the
	// client no longer holds the store's lock (checked again inside the
	// save's transaction).
	forClient func() error

	mu    sync.Mutex
	cache *scan.Cache // memory backend, and a watcher's Repo
	// saved is what the last checkpoint this Repo made changed against
	// its parent (see lastChanges).
	saved *savedChanges
	// noCache: the stat cache names trees the store lacks and could not
	// be removed (a read-only store); scans do without it.
	noCache atomic.Bool
	subs    map[int]func(Event)
	next    int
}

// Open opens the workspace at dir with its store, creating the store on
// first use. If an earlier operation was interrupted (a crash during a
// restore), Open finishes it first when the store is free.
func Open(ctx context.Context, dir string, opts Options) (*Repo, error) {
	root, err := canonicalDir(dir)
	if err != nil {
		return nil, err
	}
	if opts.LockTimeout <= 0 {
		opts.LockTimeout = 10 * time.Minute
	}
	if opts.MaxFileSize <= 0 {
		opts.MaxFileSize = scan.DefaultMaxFileSize
	}
	r := &Repo{root: root, opts: opts, subs: map[int]func(Event){}}
	if opts.Backend == "" {
		if opts.Backend, err = detectBackend(root, opts); err != nil {
			return nil, err
		}
	}
	if err := checkGitOptions(opts); err != nil {
		return nil, err
	}
	switch opts.Backend {
	case "", BackendSQLite:
		sd := opts.Store
		if sd == "" {
			if sd, err = DefaultStoreDir(root); err != nil {
				return nil, err
			}
		}
		sd, err = filepath.Abs(sd)
		if err != nil {
			return nil, err
		}
		if err := checkStorePlace(root, sd); err != nil {
			return nil, err
		}
		if err := checkStoreOwner(sd); err != nil {
			return nil, err
		}
		if opts.NoCreate && absentStore(sd) {
			return nil, &NoStoreError{Workspace: root, Store: sd, Backend: BackendSQLite}
		}
		if err := store.MkdirPrivate(sd); err != nil {
			return nil, fmt.Errorf("create store %s: %w", sd, err)
		}
		if real, err := filepath.EvalSymlinks(sd); err == nil {
			sd = real
		}
		if opts.Config != nil {
			r.cfg = *opts.Config
		} else if r.cfg, err = LoadConfig(sd); err != nil {
			return nil, err
		}
		s, err := store.OpenSQLite(ctx, sd, root)
		if err != nil {
			return nil, err
		}
		r.st, r.storeDir = s, sd
		if rel, err := filepath.Rel(root, sd); err == nil && rel != "." && !strings.HasPrefix(rel, "..") {
			r.exclude = append(r.exclude, filepath.ToSlash(rel))
		}
	case BackendGit:
		if opts.NoCreate && !HasGitStore(root) {
			gd, err := GitStoreLocation(root)
			if err != nil {
				gd = filepath.Join(root, ".git", GitStoreDir)
			}
			return nil, &NoStoreError{Workspace: root, Store: gd, Backend: BackendGit}
		}
		if err := r.openGit(ctx); err != nil {
			return nil, err
		}
	case BackendMemory:
		r.st = store.NewMemory(root)
		r.cfg = DefaultConfig()
		if opts.Config != nil {
			r.cfg = *opts.Config
		}
	default:
		return nil, fmt.Errorf("unknown backend %q (want sqlite, git or memory)", opts.Backend)
	}
	if !opts.NoRecover {
		if err := r.recoverIfFree(ctx); err != nil {
			// Reading needs no recovery: say so, and let every mutating
			// operation try again (and fail with this error) first.
			msg := err.Error()
			if h := Hint(err); h != "" {
				msg += " (" + h + ")"
			}
			r.warnings = append(r.warnings, msg)
		}
	}
	return r, nil
}

// checkStorePlace refuses a store directory that is the workspace itself:
// its saves would capture the store, and a restore would overwrite the
// database with an old copy of itself. (A store below the workspace is
// allowed: scans leave it out and restores never write it.)
func checkStorePlace(root, sd string) error {
	if resolvePath(sd) != root {
		return nil
	}
	return withHint(fmt.Errorf("store %s is the workspace itself; ckpt keeps its store apart from the files it protects", sd),
		fmt.Sprintf("drop --store and CKPT_STORE (the default store lives under $XDG_STATE_HOME/ckpt), or name a directory outside the workspace, e.g. --store %s",
			filepath.Join(filepath.Dir(root), filepath.Base(root)+".ckpt")))
}

// resolvePath resolves the symlinks of p's longest existing prefix (p
// itself may not exist yet).
func resolvePath(p string) string {
	rest := ""
	for d := p; ; d = filepath.Dir(d) {
		if real, err := filepath.EvalSymlinks(d); err == nil {
			return filepath.Join(real, rest)
		}
		if d == filepath.Dir(d) {
			return p
		}
		rest = filepath.Join(filepath.Base(d), rest)
	}
}

func canonicalDir(dir string) (string, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", err
	}
	real, err := filepath.EvalSymlinks(abs)
	if err != nil {
		return "", fmt.Errorf("workspace %s: %w", abs, unwrapPath(err))
	}
	fi, err := os.Stat(real)
	if err != nil {
		return "", fmt.Errorf("workspace %s: %w", abs, unwrapPath(err))
	}
	if !fi.IsDir() {
		return "", fmt.Errorf("workspace %s is not a directory", abs)
	}
	return real, nil
}

func unwrapPath(err error) error {
	var pe *os.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// Warnings returns what Open found wrong without failing: an interrupted
// operation it could not finish (a full disk, a directory made read-only).
// Reading works regardless; every mutating operation first tries to finish
// it again. The CLI prints each as "ckpt: warning: ...".
func (r *Repo) Warnings() []string { return r.warnings }

// Close releases the store.
func (r *Repo) Close() error { return errors.Join(r.closeGit(), r.st.Close()) }

// Root returns the workspace's absolute path.
func (r *Repo) Root() string { return r.root }

// StoreDir returns the store directory ("" for the memory backend).
func (r *Repo) StoreDir() string { return r.storeDir }

// Config returns the store's settings (config.toml, with defaults).
func (r *Repo) Config() Config { return r.cfg }

func (r *Repo) now() time.Time {
	if r.opts.Now != nil {
		return r.opts.Now()
	}
	return time.Now()
}

// lock takes the store's operation lock.
func (r *Repo) lock(ctx context.Context) (func(), error) {
	timeout := r.opts.LockTimeout
	if r.served == nil && r.storeDir != "" && watch.Supported {
		// Held: perhaps by the watcher's automatic gc, which stops for a
		// client that asks (see saveServer.yield). The asking counts
		// against the lock's timeout: a watcher that does not answer
		// must not make a hook wait longer than its budget.
		unlock, err := r.st.Lock(ctx, 0, nil)
		if err == nil || !errors.Is(err, store.ErrLocked) {
			return unlock, err
		}
		start := time.Now()
		r.yieldWatcher(ctx, min(yieldTimeout, timeout))
		timeout = max(0, timeout-time.Since(start))
	}
	unlock, err := r.st.Lock(ctx, timeout, r.opts.Waiting)
	if le := (*store.LockedError)(nil); errors.As(err, &le) {
		le.Waited = r.opts.LockTimeout
	}
	return unlock, err
}

// yieldTimeout bounds the wait for the watcher's answer to a yield.
const yieldTimeout = 2 * time.Second

// yieldWatcher asks the workspace's watcher, if one runs, to stop its
// automatic gc (which holds the store's lock), waiting at most timeout
// for its answer.
func (r *Repo) yieldWatcher(ctx context.Context, timeout time.Duration) {
	sock := r.WatchSocket()
	if _, err := os.Stat(sock); err != nil {
		return
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	body, _ := json.Marshal(yieldRequest{Op: "yield"})
	watch.Serve(ctx, sock, body, nil, nil)
}

// begin starts a mutating operation: it takes the lock and first finishes
// any operation a crash interrupted. The caller must call the returned
// function when done (on the git backend it also syncs the git refs).
func (r *Repo) begin(ctx context.Context) (func(), error) {
	unlock, err := r.lock(ctx)
	if err != nil {
		return nil, err
	}
	if err := r.recoverLocked(ctx); err != nil {
		unlock()
		return nil, err
	}
	return r.endOp(ctx, unlock), nil
}

// StateDir returns the directory under which default stores live:
// $XDG_STATE_HOME/ckpt, or ~/.local/state/ckpt.
func StateDir() (string, error) {
	if d := os.Getenv("XDG_STATE_HOME"); d != "" && filepath.IsAbs(d) {
		return filepath.Join(d, "ckpt"), nil
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return "", fmt.Errorf("no store location: set XDG_STATE_HOME, HOME or use --store: %w", err)
	}
	return filepath.Join(home, ".local", "state", "ckpt"), nil
}

// DefaultStoreDir returns the default store of a workspace: outside it, in
// [StateDir]/<basename>-<first 16 hex of SHA-256 of its absolute path>, so
// that nothing run inside the workspace (rm -rf, git clean -fdx) can reach it.
func DefaultStoreDir(workspace string) (string, error) {
	sd, err := StateDir()
	if err != nil {
		return "", err
	}
	base := filepath.Base(workspace)
	if base == "/" || base == "." {
		base = "root"
	}
	return filepath.Join(sd, base+"-"+WorkspaceKey(workspace)), nil
}

// WorkspaceKey is a short, stable name of the workspace at the absolute
// path workspace: the first 16 hex digits of the SHA-256 of the path, as
// its default store's name ends (ckpt serve --all serves it under
// /w/KEY/).
func WorkspaceKey(workspace string) string {
	h := sha256.Sum256([]byte(workspace))
	return hex.EncodeToString(h[:8])
}

// FindWorkspace finds the workspace for a directory the way git finds a
// repository: if storeDir names an existing store whose workspace contains
// dir, that workspace; else the nearest ancestor whose default store holds
// checkpoints; else the top of the enclosing git work tree; else dir
// itself.
//
// A store found for an ancestor of dir is used only if that ancestor is
// the top of a git work tree (it has a .git), where a repository marks
// the tree as one project. Any other ancestor — a home directory an agent
// once ran in, "/" — is not taken to be dir's workspace: the error, an
// [*AncestorStoreError], names it and says how to go on (-C ANCESTOR to
// use its store, or open dir itself as a workspace).
func FindWorkspace(dir, storeDir string) (string, error) {
	start, err := canonicalDir(dir)
	if err != nil {
		return "", err
	}
	if storeDir != "" {
		if ws := store.RecordedWorkspace(storeDir); ws != "" &&
			(start == ws || strings.HasPrefix(start, ws+string(filepath.Separator))) {
			if err := checkAncestor(start, ws, storeDir); err != nil {
				return "", err
			}
			return ws, nil
		}
	}
	for d := start; ; d = filepath.Dir(d) {
		// Only a store with history claims the directories below it: one
		// that a command created by just looking (ckpt status in ~) must
		// not turn every project below into part of it.
		if sd, err := DefaultStoreDir(d); err == nil && store.HasHistory(sd) {
			if err := checkAncestor(start, d, sd); err != nil {
				return "", err
			}
			return d, nil
		}
		if d == filepath.Dir(d) {
			break
		}
	}
	for d := start; ; d = filepath.Dir(d) {
		if isRepoTop(d) {
			return d, nil
		}
		if d == filepath.Dir(d) {
			break
		}
	}
	return start, nil
}

// isRepoTop reports whether dir is the top of a git work tree (it has a
// .git directory or file).
func isRepoTop(dir string) bool {
	_, err := os.Lstat(filepath.Join(dir, ".git"))
	return err == nil
}

// checkAncestor allows the workspace ws, found for the directory start
// through the store sd, if it is start itself or the top of a git work
// tree.
func checkAncestor(start, ws, sd string) error {
	if ws == start || isRepoTop(ws) {
		return nil
	}
	return &AncestorStoreError{Dir: start, Workspace: ws, Store: sd}
}

// HoldLock runs fn while holding the store's operation lock (for tools and
// tests that must keep other ckpt processes waiting).
func (r *Repo) HoldLock(ctx context.Context, fn func()) error {
	unlock, err := r.lock(ctx)
	if err != nil {
		return err
	}
	defer unlock()
	fn()
	return nil
}
