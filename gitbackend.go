package ckpt

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/seed1cedbf7c/ckpt/internal/gitmirror"
	"github.com/seed1cedbf7c/ckpt/internal/object"
	"github.com/seed1cedbf7c/ckpt/internal/restore"
	"github.com/seed1cedbf7c/ckpt/internal/scan"
	"github.com/seed1cedbf7c/ckpt/internal/store"
)

// The git backend keeps the engine's own store (the SQLite store, the same
// as the sqlite backend's) inside the workspace's git directory, in
// <gitdir>/ckpt, and mirrors into the repository itself every checkpoint
// that a snapshot names and the newest checkpoints of the timeline, as
// detached commits under a ref namespace (refs/ckpt by default). See
// docs/git-backend.md and package internal/gitmirror.

// GitStoreDir is the directory of the git backend's store inside a work
// tree's git directory.
const GitStoreDir = "ckpt"

// EventGitSync reports that bringing the git refs in line with the store
// failed after an operation (Message holds the error; [Repo.GitSyncError]
// returns it). The operation itself succeeded; the next one retries.
const EventGitSync EventKind = "git-sync-failed"

// gitBackend is the state of a Repo on the git backend.
type gitBackend struct {
	m     *gitmirror.Mirror
	notes []string

	// The gitlinks of the latest capture (under r.mu): a checkpoint of
	// that tree records them.
	capTree  object.ID
	capLinks string

	lastErr error // of the latest automatic sync (under r.mu)
}

// detectBackend picks the backend when Options.Backend is empty: the
// "backend" key of the sqlite store's config.toml (the default store, or
// Options.Store) if set; else git if the workspace's git directory already
// holds a git-backend store (an error if a sqlite store exists too: which
// one the user means is not ours to guess); else sqlite.
func detectBackend(root string, opts Options) (string, error) {
	if opts.Config != nil {
		return opts.Config.Backend, nil
	}
	sd, err := sqliteStoreDir(root, opts)
	if err != nil {
		return "", err
	}
	set, err := ConfigSet(sd)
	if err != nil {
		return "", err
	}
	if b := set["backend"]; b != "" {
		return b, nil
	}
	if HasGitStore(root) {
		if _, err := os.Stat(filepath.Join(sd, store.DBName)); err == nil {
			gd, _ := GitStoreLocation(root)
			return "", withHint(fmt.Errorf("this workspace has two stores, a sqlite one (%s) and a git backend one (%s), and no backend setting", sd, gd),
				"choose one with --backend sqlite|git, or for good with: ckpt config backend sqlite|git")
		}
		return BackendGit, nil
	}
	return BackendSQLite, nil
}

// HasGitStore reports whether the work tree whose top is workspace has a
// git-backend store in its git directory.
func HasGitStore(workspace string) bool {
	lay, err := gitmirror.Find(workspace)
	if err != nil {
		return false
	}
	_, err = os.Stat(filepath.Join(lay.GitDir, GitStoreDir, store.DBName))
	return err == nil
}

// GitStoreLocation returns the store directory the git backend uses for a
// workspace (<gitdir>/ckpt), without creating anything. It fails when the
// workspace is not the top of a git work tree (the git backend initialises
// one on first use).
func GitStoreLocation(workspace string) (string, error) {
	lay, err := gitmirror.Find(workspace)
	if err != nil {
		return "", err
	}
	return filepath.Join(lay.GitDir, GitStoreDir), nil
}

// openGit opens the git backend: it finds (or initialises) the repository,
// opens the store in its git directory and the mirror of its refs.
func (r *Repo) openGit(ctx context.Context) error {
	g := &gitBackend{}
	lay, err := gitmirror.Find(r.root)
	if errors.Is(err, gitmirror.ErrNoRepository) {
		prefix := r.opts.GitRefPrefix
		if prefix == "" && r.opts.Config != nil {
			prefix = r.opts.Config.GitRefPrefix
		}
		if prefix != "" {
			if err := gitmirror.CheckPrefix(prefix); err != nil {
				return err
			}
		}
		lay, err = gitmirror.Init(r.root, "main")
		if err == nil {
			g.notes = append(g.notes, fmt.Sprintf("%s was not a git repository: initialised one (branch main) to hold the git backend's snapshots; your files are not committed", r.root))
		}
	}
	if errors.Is(err, gitmirror.ErrUnsupported) {
		return withHint(fmt.Errorf("git backend: %w", err), "the sqlite backend (--backend sqlite) works with any repository")
	}
	if err != nil {
		return withHint(fmt.Errorf("git backend: %w", err), "use the sqlite backend (--backend sqlite) for a workspace that is not the top of a git work tree")
	}
	sd := filepath.Join(lay.GitDir, GitStoreDir)
	if err := checkStoreOwner(sd); err != nil {
		return err
	}
	if err := store.MkdirPrivate(sd); err != nil {
		return fmt.Errorf("create store %s: %w", sd, err)
	}
	if r.opts.Config == nil {
		if err := r.seedGitConfig(sd); err != nil {
			return err
		}
	}
	if r.opts.Config != nil {
		r.cfg = *r.opts.Config
	} else if r.cfg, err = LoadConfig(sd); err != nil {
		return err
	}
	r.cfg.Backend = BackendGit
	if p := r.opts.GitRefPrefix; p != "" && p != r.cfg.GitRefPrefix {
		if err := gitmirror.CheckPrefix(p); err != nil {
			return err
		}
		if r.opts.Config == nil {
			// Remembered, so later commands without the option keep the refs
			// where they are.
			if err := WriteConfig(sd, "git_ref_prefix", &p); err != nil {
				return err
			}
		}
		r.cfg.GitRefPrefix = p
	}
	if err := gitmirror.CheckPrefix(r.cfg.GitRefPrefix); err != nil {
		return withHint(err, "set another with: ckpt config git_ref_prefix refs/ckpt")
	}
	s, err := store.OpenSQLite(ctx, sd, r.root)
	if err != nil {
		return err
	}
	g.m, err = gitmirror.Open(ctx, lay, filepath.Join(sd, gitmirror.MapFile), r.cfg.GitRefPrefix)
	if err != nil {
		s.Close()
		return err
	}
	r.st, r.storeDir, r.git = s, sd, g
	return nil
}

func (r *Repo) closeGit() error {
	if r.git == nil {
		return nil
	}
	return r.git.m.Close()
}

// endOp wraps the unlock of a mutating operation (see begin): on the git
// backend it first brings the git refs in line with the store, still under
// the lock. Every mutating operation, whatever it changed (checkpoints,
// HEAD, snapshots), ends here, so none can leave the refs behind. A failure
// does not undo the operation (its data is safe in the store); it is kept
// for [Repo.GitSyncError], recorded for `ckpt status`, and delivered as an
// [EventGitSync] event, and the next operation's sync retries.
func (r *Repo) endOp(ctx context.Context, unlock func()) func() {
	if r.git == nil {
		return unlock
	}
	return func() {
		defer unlock()
		err := r.syncGit(context.WithoutCancel(ctx))
		r.mu.Lock()
		r.git.lastErr = err
		r.mu.Unlock()
		if err != nil {
			r.emit(Event{Kind: EventGitSync, Message: err.Error()})
		}
	}
}

func (r *Repo) syncGit(ctx context.Context) error {
	m := r.git.m
	_, err := m.Sync(ctx, r.st, r.cfg.TimelineMax)
	msg := ""
	if err != nil {
		err = &GitSyncError{Prefix: m.Prefix(), Repository: m.Layout().CommonDir, Err: err}
		msg = err.Error()
	}
	if rerr := m.SetLastError(ctx, msg); err == nil && rerr != nil {
		err = &GitSyncError{Prefix: m.Prefix(), Repository: m.Layout().CommonDir, Err: rerr}
	}
	return err
}

// GitSyncError returns the error of the git sync that ended the latest
// mutating operation of this Repo (nil if it succeeded, or on another
// backend). Operations themselves succeed when only the sync fails.
func (r *Repo) GitSyncError() error {
	if r.git == nil {
		return nil
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.git.lastErr
}

// SyncGit brings the git refs in line with the store now (every mutating
// operation does this when it ends). It returns [ErrNotGit] on another
// backend.
func (r *Repo) SyncGit(ctx context.Context) error {
	if r.git == nil {
		return ErrNotGit
	}
	unlock, err := r.lock(ctx)
	if err != nil {
		return err
	}
	defer unlock()
	err = r.syncGit(ctx)
	r.mu.Lock()
	r.git.lastErr = err
	r.mu.Unlock()
	return err
}

// GitCommit returns the id (40 hex) of the git commit a checkpoint is
// exported as on the git backend, exporting it first if needed (without
// setting a ref). Snapshot responses use it to show the commit.
func (r *Repo) GitCommit(ctx context.Context, id ID) (string, error) {
	if r.git == nil {
		return "", ErrNotGit
	}
	h, err := r.git.m.Commit(ctx, r.st, id)
	if err != nil {
		return "", fmt.Errorf("git backend: export checkpoint %s: %w", id.Short(), err)
	}
	return h.String(), nil
}

// GitRef returns the git ref of a snapshot on the git backend
// ("refs/ckpt/snapshots/NAME" with the default prefix).
func (r *Repo) GitRef(snapshot string) (string, error) {
	if r.git == nil {
		return "", ErrNotGit
	}
	return r.git.m.SnapshotRef(snapshot), nil
}

// Notes returns what Open did that the user should be told once (the git
// backend initialising a repository). The engine never prints; the CLI
// prints each as "ckpt: note: ...".
func (r *Repo) Notes() []string {
	if r.git == nil {
		return nil
	}
	return r.git.notes
}

// GitInfo describes the git backend of a workspace.
type GitInfo struct {
	// RefPrefix is the ref namespace (refs/ckpt by default).
	RefPrefix string `json:"ref_prefix"`
	// Repository is the git directory holding the objects and refs (the
	// common directory of a linked worktree).
	Repository string `json:"repository"`
	// GitDir is the work tree's own git directory (holding the store).
	GitDir string `json:"git_dir"`
	// Snapshots and Timeline count the refs under the prefix.
	Snapshots int `json:"snapshots"`
	Timeline  int `json:"timeline"`
	// TimelineMax is how many timeline refs are kept.
	TimelineMax int `json:"timeline_max"`
	// LastError is the error of the last sync ("" when it succeeded).
	LastError string `json:"last_error,omitempty"`
}

// GitInfo reports the git backend's repository and refs; [ErrNotGit] on
// another backend.
func (r *Repo) GitInfo(ctx context.Context) (*GitInfo, error) {
	if r.git == nil {
		return nil, ErrNotGit
	}
	in, err := r.git.m.Info(ctx)
	if err != nil {
		return nil, err
	}
	return &GitInfo{RefPrefix: in.Prefix, Repository: in.CommonDir, GitDir: in.GitDir,
		Snapshots: in.Snapshots, Timeline: in.Timeline, TimelineMax: r.cfg.TimelineMax, LastError: in.LastError}, nil
}

// gitStatus is GitInfo for Status: a problem reading the refs is reported
// in LastError rather than failing the status.
func (r *Repo) gitStatus(ctx context.Context) *GitInfo {
	in, err := r.GitInfo(ctx)
	if err != nil {
		m := r.git.m
		return &GitInfo{RefPrefix: m.Prefix(), Repository: m.Layout().CommonDir, GitDir: m.Layout().GitDir,
			TimelineMax: r.cfg.TimelineMax, LastError: err.Error()}
	}
	return in
}

// gitScanOptions makes the git backend's scans treat nested repositories
// (submodules) as gitlinks, never descended.
func (r *Repo) gitScanOptions(o *scan.Options) {
	if r.git != nil {
		o.NestedRepos = true
	}
}

// noteCapture records the gitlinks of a capture: the commit each nested
// repository has checked out (one without commits cannot be recorded).
func (r *Repo) noteCapture(res *scan.Result) {
	if r.git == nil || res == nil {
		return
	}
	var links []gitmirror.Gitlink
	for _, p := range res.Nested {
		h, err := gitmirror.HeadCommit(filepath.Join(r.root, filepath.FromSlash(p)))
		if err != nil {
			continue
		}
		links = append(links, gitmirror.Gitlink{Path: p, Commit: h})
	}
	r.mu.Lock()
	r.git.capTree, r.git.capLinks = res.Root, gitmirror.FormatGitlinks(links)
	r.mu.Unlock()
}

// stampGitlinks records in cp's metadata the gitlinks of the workspace
// state it holds: those of the capture of its tree, or else its parent's
// (a partial checkpoint or a partial restore changes no nested repository).
func (r *Repo) stampGitlinks(cp *object.Checkpoint, parent *store.Record) {
	if r.git == nil {
		return
	}
	r.mu.Lock()
	links, ok := r.git.capLinks, r.git.capTree == cp.Tree
	r.mu.Unlock()
	if !ok {
		links = ""
		if parent != nil {
			links = parent.Meta[gitmirror.MetaGitlinks]
		}
	}
	if links == "" {
		return
	}
	meta := make(map[string]string, len(cp.Meta)+1)
	for k, v := range cp.Meta {
		meta[k] = v
	}
	meta[gitmirror.MetaGitlinks] = links
	cp.Meta = meta
}

// keepNested stops a restore plan from touching nested repositories and
// the store (when it lies inside the workspace).
func keepNested(plan *restore.Plan, res *scan.Result) {
	if plan != nil && res != nil {
		plan.KeepBelow(res.Nested, "a nested git repository (submodule); restores never touch it")
		keepStore(plan, res.Excluded)
	}
}

// keepStore makes every action at or below the store's paths a Keep: a
// restore never writes or deletes the store, whatever an old or crafted
// checkpoint holds there.
func keepStore(plan *restore.Plan, excluded []string) {
	plan.KeepBelow(excluded, "ckpt's store is here; restores never write it")
}

// checkGitOptions rejects git-only options on another backend.
func checkGitOptions(opts Options) error {
	if opts.GitRefPrefix != "" && opts.Backend != BackendGit {
		return withHint(fmt.Errorf("a git ref prefix (%s) applies to the git backend only, and this workspace uses %s", opts.GitRefPrefix, opts.Backend),
			"add --backend git (or set CKPT_BACKEND=git)")
	}
	return nil
}

// sqliteStoreDir is the sqlite backend's store directory for a workspace:
// opts.Store or the default. Its config.toml's "backend" key selects the
// backend.
func sqliteStoreDir(root string, opts Options) (string, error) {
	if opts.Store != "" {
		return filepath.Abs(opts.Store)
	}
	return DefaultStoreDir(root)
}

// seedGitConfig gives a new git store the settings of the sqlite store's
// config.toml (all but "backend"), so that settings made before the git
// store existed (ckpt config backend git; ckpt config git_ref_prefix ...)
// apply to it.
func (r *Repo) seedGitConfig(sd string) error {
	if _, err := os.Stat(filepath.Join(sd, store.DBName)); err == nil {
		return nil // not new
	}
	if _, err := os.Stat(filepath.Join(sd, ConfigFile)); err == nil {
		return nil
	}
	src, err := sqliteStoreDir(r.root, r.opts)
	if err != nil {
		return err
	}
	set, err := ConfigSet(src)
	if err != nil {
		return err
	}
	for _, k := range sortedKeys(set) {
		if k == "backend" {
			continue
		}
		v := set[k]
		if err := WriteConfig(sd, k, &v); err != nil {
			return err
		}
	}
	return nil
}

// ConfigDir returns the directory whose config.toml holds the setting key
// of a workspace, as Open would resolve the backend (opts.Backend, else the
// sqlite store's "backend" setting, else an existing git store). The
// "backend" key always lives with the sqlite store (the default store
// directory, or opts.Store), which selects the backend; on the git backend
// every other key lives in <gitdir>/ckpt once that store exists, and with
// the sqlite store's settings until then (they seed it). Nothing is created.
func ConfigDir(workspace string, opts Options, key string) (string, error) {
	sd, err := sqliteStoreDir(workspace, opts)
	if err != nil {
		return "", err
	}
	if key == "backend" {
		return sd, nil
	}
	if opts.Backend == "" {
		if opts.Backend, err = detectBackend(workspace, opts); err != nil {
			return "", err
		}
	}
	if opts.Backend != BackendGit {
		return sd, nil
	}
	gd, err := GitStoreLocation(workspace)
	if err != nil {
		return sd, nil // not a repository yet
	}
	for _, f := range []string{store.DBName, ConfigFile} {
		if _, err := os.Stat(filepath.Join(gd, f)); err == nil {
			return gd, nil
		}
	}
	return sd, nil
}
