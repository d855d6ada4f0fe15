package ckpt

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/seed1cedbf7c/ckpt/internal/failpoint"
	"github.com/seed1cedbf7c/ckpt/internal/flock"
	"github.com/seed1cedbf7c/ckpt/internal/scan"
	"github.com/seed1cedbf7c/ckpt/internal/watch"
)

// # Watch mode
//
// A watcher ([Repo.Watch], `ckpt watch`) keeps an inotify watch on every
// directory a save reads and tells each save which directories changed
// since the previous one, so a save of a large, mostly unchanged workspace
// reads only those. Any doubt — no watcher, a restarted one, an overflowed
// event queue, a renamed directory, a changed ignore file — and the save
// reads everything, as without a watcher: the watcher only saves work.

// WatchStatus describes a running watcher.
type WatchStatus = watch.Status

// WatchOptions configure [Repo.Watch].
type WatchOptions struct {
	// Idle stops the watcher after this long without a save asking it
	// (0: 2 hours).
	Idle time.Duration
	// Log receives a line per notable event (nil: none).
	Log func(string)
	// NoServe: the watcher only tells saves what changed; it makes no
	// saves itself (see [Repo.Save]).
	NoServe bool
}

// WatchFullEvery is how long after the whole tree was last read (or found
// unchanged by the watcher's idle check; WatchStatus.LastFull) a save with
// the watcher reads everything again: a backstop for changes inotify
// cannot see.
func WatchFullEvery() time.Duration { return watch.MaxTrust }

// WatchSupported reports whether this system has watch mode.
const WatchSupported = watch.Supported

// WatchSocket is where the workspace's watcher listens ("" for the memory
// backend, which has none).
func (r *Repo) WatchSocket() string {
	if r.storeDir == "" {
		return ""
	}
	return watch.SocketPath(r.storeDir)
}

// Watch runs the workspace's watcher until ctx is done, [Repo.StopWatch]
// asks it to stop, the workspace goes away, or opts.Idle passes without a
// save. It fails at once if a watcher already runs.
func (r *Repo) Watch(ctx context.Context, opts WatchOptions) error {
	t, err := r.WatchTarget()
	if err != nil {
		return err
	}
	return RunWatcher(ctx, t, opts)
}

// WatchTarget is what a watcher watches: a workspace, its stat cache and
// the socket it answers on.
type WatchTarget struct {
	Root, Cache, Socket string
	// Store is the store directory: the watcher opens it to push to the
	// remotes set up with Continuous (see [Repo.Replicate]).
	Store string
}

// WatchTarget returns the workspace's watch target (for running the
// watcher in another process without opening the store).
func (r *Repo) WatchTarget() (WatchTarget, error) {
	if r.storeDir == "" {
		return WatchTarget{}, errors.New("watch: the memory backend has no watcher")
	}
	return WatchTarget{Root: r.root, Cache: r.cachePath(), Socket: r.WatchSocket(), Store: r.storeDir}, nil
}

// RunWatcher runs a watcher for a target (see [Repo.Watch]).
func RunWatcher(ctx context.Context, t WatchTarget, opts WatchOptions) error {
	defer holdWatcherLock(t.Socket)()
	wo := watch.Options{Root: t.Root, Cache: t.Cache, Socket: t.Socket, Idle: opts.Idle, Log: opts.Log}
	if opts.NoServe || t.Store == "" {
		return watch.Run(ctx, wo)
	}
	sv := &saveServer{t: t, log: opts.Log}
	fctx, cancel := context.WithCancel(ctx)
	flushed := make(chan struct{})
	go func() { sv.flusher(fctx, 2*time.Second); close(flushed) }()
	wo.Serve = sv.serve
	err := watch.Run(ctx, wo)
	// The socket is closed: what follows (the last flush of the stat
	// cache, closing the store) is what a stopping watcher's caller
	// waits for (see watch.Stop).
	failpoint.Hit("watch/stopped", "")
	cancel()
	<-flushed
	sv.close()
	return err
}

// WatchStatus returns the running watcher's status, or ErrNoWatcher.
func (r *Repo) WatchStatus(ctx context.Context) (*WatchStatus, error) {
	if r.storeDir == "" {
		return nil, ErrNoWatcher
	}
	return watch.GetStatus(ctx, r.WatchSocket())
}

// StopWatch stops the running watcher.
func (r *Repo) StopWatch(ctx context.Context) error {
	if r.storeDir == "" {
		return ErrNoWatcher
	}
	sock := r.WatchSocket()
	err := watch.Stop(ctx, sock)
	if err != nil && !errors.Is(err, watch.ErrNoDaemon) {
		return fmt.Errorf("stop watcher: %w", err)
	}
	// A watcher that no longer answers may still be stopping (another
	// stop, or its idle time, got there first): it writes its stat cache
	// and closes the store until it lets go of its lock.
	waited, werr := waitWatcherLock(ctx, sock)
	if werr != nil {
		return fmt.Errorf("stop watcher: %w", werr)
	}
	if err != nil && !waited {
		return fmt.Errorf("stop watcher: %w", err)
	}
	return nil
}

// watcherLockPath is the file a watcher holds locked (flock) from before
// it listens until it has closed the store, and then removes.
func watcherLockPath(sock string) string { return sock + ".lock" }

// holdWatcherLock takes the watcher's lock and returns its release. A
// watcher that cannot take it (a previous one is still stopping) runs
// without it.
func holdWatcherLock(sock string) func() {
	if sock == "" {
		return func() {}
	}
	f, err := os.OpenFile(watcherLockPath(sock), os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return func() {}
	}
	if ok, err := flock.TryLock(f); !ok || err != nil {
		f.Close()
		return func() {}
	}
	return func() {
		// Removed while still held: a --stop that opened it waits on it
		// until the unlock; one that comes later finds no file, and no
		// watcher to wait for. Nothing is left behind (in TMPDIR, when
		// the socket is there).
		os.Remove(f.Name())
		flock.Unlock(f)
		f.Close()
	}
}

// waitWatcherLock waits until no watcher holds the lock of the watcher at
// sock. waited: one did.
func waitWatcherLock(ctx context.Context, sock string) (waited bool, err error) {
	f, err := os.Open(watcherLockPath(sock))
	if err != nil {
		return false, nil
	}
	defer f.Close()
	deadline := time.Now().Add(time.Minute)
	for {
		ok, err := flock.TryLock(f)
		if err != nil {
			return waited, nil // no flock here: nothing to wait for
		}
		if ok {
			flock.Unlock(f)
			return waited, nil
		}
		waited = true
		if time.Now().After(deadline) {
			return true, fmt.Errorf("the watcher at %s no longer answers but still holds %s after a minute", sock, watcherLockPath(sock))
		}
		select {
		case <-ctx.Done():
			return true, ctx.Err()
		case <-time.After(5 * time.Millisecond):
		}
	}
}

// askWatcher asks a running watcher what changed since the cache was
// written (nil: no answer; scan everything).
func (r *Repo) askWatcher(ctx context.Context, cache *scan.Cache) *watch.Answer {
	if r.storeDir == "" || !watch.Supported {
		return nil
	}
	sock := r.WatchSocket()
	if _, err := os.Stat(sock); err != nil && r.served == nil {
		return nil
	}
	token, settings := "", ""
	if cache != nil {
		token, settings, _ = strings.Cut(cache.Watch, " ")
	}
	var ans *watch.Answer
	if r.served != nil {
		// A watcher's own save: ask it in this process.
		ans = r.served.Answer(ctx, token)
	} else if a, err := watch.Query(ctx, sock, token, 2*time.Second); err == nil {
		ans = a
	} else {
		return nil
	}
	if cache != nil && settings != r.scanSettings() {
		// The cache was written with other scan settings (a different
		// --max-file-size): what its directories hold may differ now.
		ans.Full, ans.Reason = true, "the scan settings changed"
	}
	ans.Token += " " + r.scanSettings()
	return ans
}

// scanSettings are the settings a scan's result depends on beyond the
// files themselves; the stat cache records them next to the watch token.
func (r *Repo) scanSettings() string {
	return "max=" + strconv.FormatInt(r.opts.MaxFileSize, 10)
}

// watchAccelOK reports whether a save may take unchanged directories from
// the cache: not for a first checkpoint (it counts its files). Directories
// holding nested repositories (git backend) are always read: the scan
// flags them in the cache.
func (r *Repo) watchAccelOK(ctx context.Context) bool {
	_, head, err := r.head(ctx)
	return err == nil && head != nil
}

var _ = filepath.Join
