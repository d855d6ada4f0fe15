package cli

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"time"

	"github.com/seed1cedbf7c/ckpt"
	"github.com/spf13/cobra"
)

type watchOptions struct {
	background, stop, status, json bool
	idle                           string
	target                         ckpt.WatchTarget // hidden: the background process's target
}

func newWatchCmd(e *env) *cobra.Command {
	o := &watchOptions{}
	c := &cobra.Command{
		Use:   "watch [-d] [--idle DUR] | --status | --stop",
		Short: "Watch the workspace so saves read only what changed (watch mode)",
		Long: `Watch runs a file-system watcher (Linux inotify) for the workspace. While it
runs, each save asks it which directories changed since the previous save and
reads only those, so a checkpoint of a large, mostly unchanged tree costs what
the change costs instead of a stat of every file. Agent hooks start it by
themselves.

It also makes the saves: ckpt save (and a hook's checkpoint) takes the store's
lock and asks the watcher's process, which has the store open and the stat
cache in memory, to save ("served": true in ckpt save --json). Whatever it
does not do, the save does itself; CKPT_WATCH_SERVE=0 turns this off.

Whenever the watcher cannot vouch for an answer — it just started, its event
queue overflowed, a directory a save reads was renamed or created, a hard link
was made, an ignore file changed — the save reads everything, exactly as
without it. New directories the ignore rules leave out (build output,
node_modules) and a finished restore's staging directory do not count.

Some changes make no inotify event (a write through a shared mmap, through a
hard link made outside the workspace), so 10 minutes after the whole tree was
last read a save reads it again. While saves pause and nothing happens, the
watcher reads the whole tree itself (one core, storing nothing); if it finds
the tree as the last save left it, the 10 minutes count from then, so that
read does not fall in the middle of an agent's turn (CKPT_WATCH_IDLE_CHECK=0
turns this off).

Each directory takes one inotify watch. At the kernel's limit
(fs.inotify.max_user_watches) the directories left unwatched are read by every
save, the rest still only when changed; --status and the log say so and how to
raise the limit.

While it runs it also pushes every new checkpoint, within seconds, to the
remotes added with --continuous (ckpt remote add --continuous); saves never
wait for a push.

It stops after --idle without a save asking it (default 2h), when the
workspace goes away, or with 'ckpt watch --stop', which returns once the
watcher's process has ended (its stat cache written, the store closed).
-d runs it in the background (log: watch.log in the store directory).`,
		Example: `  ckpt watch -d             # start in the background
  ckpt watch --status
  ckpt watch --stop
  ckpt watch --idle 30m     # in the foreground, until Ctrl-C`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error { return runWatch(e, o) },
	}
	c.Flags().BoolVarP(&o.background, "background", "d", false, "run in the background and return once it is ready")
	c.Flags().BoolVar(&o.stop, "stop", false, "stop the running watcher")
	c.Flags().BoolVar(&o.status, "status", false, "show the running watcher's status")
	c.Flags().StringVar(&o.idle, "idle", "2h", "stop after this long without a save (e.g. 30m, 8h)")
	jsonFlag(c, &o.json, "print JSON (--status, --stop)")
	c.Flags().StringVar(&o.target.Root, "daemon-root", "", "")
	c.Flags().StringVar(&o.target.Cache, "daemon-cache", "", "")
	c.Flags().StringVar(&o.target.Socket, "daemon-socket", "", "")
	c.Flags().StringVar(&o.target.Store, "daemon-store", "", "")
	for _, f := range []string{"daemon-root", "daemon-cache", "daemon-socket", "daemon-store"} {
		c.Flags().MarkHidden(f)
	}
	return c
}

func runWatch(e *env, o *watchOptions) error {
	idle, err := ckpt.ParseDuration(o.idle)
	if err != nil {
		return usagef("--idle: %v", err)
	}
	if o.target.Root != "" {
		// The background process: watch the target without opening the store.
		log := func(s string) { fmt.Fprintf(e.stderr, "%s ckpt watch: %s\n", time.Now().Format(time.RFC3339), s) }
		log("watching " + o.target.Root)
		ctx, cancel := context.WithCancel(e.ctx)
		defer cancel()
		if o.target.Store != "" {
			go replicate(ctx, o.target, log)
		}
		err := ckpt.RunWatcher(ctx, o.target, ckpt.WatchOptions{Idle: idle, Log: log})
		log("stopped")
		return err
	}
	r, err := e.open(o.json)
	if err != nil {
		return err
	}
	switch {
	case o.status:
		st, err := r.WatchStatus(e.ctx)
		if err != nil {
			if o.json {
				return e.printJSON(map[string]any{"running": false})
			}
			return withExit1(fmt.Errorf("no watcher runs for %s (ckpt watch -d starts one)", r.Root()))
		}
		if o.json {
			return e.printJSON(struct {
				Running bool `json:"running"`
				*ckpt.WatchStatus
			}{true, st})
		}
		e.printf("watching %s: pid %d since %s, %d directories, last asked %s\n", st.Root, st.PID, fmtTime(st.Started), st.Watches, fmtTime(st.LastQuery))
		if !st.LastFull.IsZero() {
			e.printf("whole tree last read or checked %s; a save reads it all again %s after\n", fmtTime(st.LastFull), ckpt.WatchFullEvery())
		}
		if st.Error != "" {
			e.printf("not trusted: %s (saves read everything)\n", st.Error)
		}
		if st.Warning != "" {
			e.printf("warning: %s\n", st.Warning)
		} else if st.Unwatched > 0 {
			e.printf("%d directories cannot be watched (saves read them in full); see the watcher's log\n", st.Unwatched)
		}
		return nil
	case o.stop:
		if err := r.StopWatch(e.ctx); err != nil {
			return err
		}
		e.sayf("stopped the watcher of %s\n", r.Root())
		return nil
	case o.background:
		if _, err := r.WatchStatus(e.ctx); err == nil {
			e.sayf("a watcher already runs for %s\n", r.Root())
			return nil
		}
		if err := startWatcher(e.ctx, r, idle); err != nil {
			return err
		}
		e.sayf("watching %s in the background\n", r.Root())
		if st, err := r.WatchStatus(e.ctx); err == nil && st.Warning != "" {
			e.warnf("warning: %s", st.Warning)
		}
		return nil
	}
	if !ckpt.WatchSupported {
		return errors.New("watch mode needs Linux's inotify; on this system every save scans the whole workspace")
	}
	logf := func(s string) {
		if !e.quiet {
			fmt.Fprintf(e.stderr, "ckpt watch: %s\n", s)
		}
	}
	logf("watching " + r.Root())
	ctx, cancel := context.WithCancel(e.ctx)
	defer cancel()
	go r.Replicate(ctx, ckpt.ReplicateOptions{Log: logf})
	return r.Watch(ctx, ckpt.WatchOptions{Idle: idle, Log: logf})
}

// replicate pushes to the workspace's continuous remotes while the
// background watcher runs (see ckpt.Repo.Replicate). It opens the store
// itself; a store it cannot open only means no replication.
func replicate(ctx context.Context, t ckpt.WatchTarget, log func(string)) {
	r, err := ckpt.Open(ctx, t.Root, ckpt.Options{Store: t.Store, Backend: ckpt.BackendSQLite, NoRecover: true})
	if err != nil {
		log("no replication: " + err.Error())
		return
	}
	defer r.Close()
	r.Replicate(ctx, ckpt.ReplicateOptions{Log: log})
}

// withExit1 is an error with status 1 (not a usage error).
func withExit1(err error) error { return err }

// startWatcher starts `ckpt watch` for r in the background (a new session,
// output to watch.log in the store) and waits until it answers.
func startWatcher(ctx context.Context, r *ckpt.Repo, idle time.Duration) error {
	if !ckpt.WatchSupported {
		return errors.New("watch mode needs Linux's inotify; on this system every save scans the whole workspace")
	}
	if r.StoreDir() == "" {
		return errors.New("watch: the memory backend has no watcher")
	}
	exe, err := os.Executable()
	if err != nil {
		return fmt.Errorf("watch: find the ckpt binary: %w", err)
	}
	logPath := filepath.Join(r.StoreDir(), "watch.log")
	logf, err := os.OpenFile(logPath, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o600)
	if err != nil {
		return fmt.Errorf("watch: %w", err)
	}
	defer logf.Close()
	t, err := r.WatchTarget()
	if err != nil {
		return err
	}
	cmd := exec.Command(exe, "watch", "--idle", ckpt.FormatDuration(idle),
		"--daemon-root", t.Root, "--daemon-cache", t.Cache, "--daemon-socket", t.Socket, "--daemon-store", t.Store)
	// The name ckpt was run under, as the hook guard does: a binary that
	// acts as ckpt only under that name (a test binary) stays ckpt.
	cmd.Args[0] = os.Args[0]
	cmd.Env = append(os.Environ(), "CKPT_PROGRESS=none")
	cmd.Stdin, cmd.Stdout, cmd.Stderr = nil, logf, logf
	cmd.SysProcAttr = detached()
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("watch: start %s: %w", exe, err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	deadline := time.Now().Add(5 * time.Second)
	for time.Now().Before(deadline) {
		if _, err := r.WatchStatus(ctx); err == nil {
			cmd.Process.Release()
			return nil
		}
		select {
		case err := <-done:
			return fmt.Errorf("watch: the watcher exited at once (%v); see %s", err, logPath)
		case <-time.After(20 * time.Millisecond):
		}
	}
	return fmt.Errorf("watch: the watcher did not answer within 5s; see %s", logPath)
}
