// Package failpoint opens windows for fault tests: named points in the
// engine where a test can kill the process, make the operation fail, or run
// its own code (edit a file, swap a directory for a symlink) at exactly the
// moment a race would need.
//
// In normal use nothing is armed and [Hit] costs one atomic load.
//
// In-process tests arm a point with [Set]. Tests that run ckpt as a child
// process arm points through the CKPT_FAILPOINT environment variable, read
// once per process:
//
//	CKPT_FAILPOINT=POINT=ACTION[;POINT=ACTION...]
//
// where ACTION is
//
//	kill       SIGKILL the process at the first hit
//	kill@N     ... at the N-th hit
//	fail       return an error from the first hit
//	fail@N     ... from the N-th hit
//	pause      at the first hit, create $CKPT_FAILPOINT_DIR/POINT.hit and
//	           wait (up to a minute) until $CKPT_FAILPOINT_DIR/POINT.go exists
//
// POINT may carry a path filter, POINT(PATH): only hits whose argument is
// PATH count. The older forms restore-kill:N and restore-fail:N mean
// restore/change=kill@N and restore/change=fail@N (N 0:
// restore/before-change).
//
// The points:
//
//	restore/staged          a restore staged its files and is about to confirm
//	                        that what it replaces is what its scan saw
//	restore/before-change   a restore confirmed; the workspace is untouched
//	restore/change          a restore changed one path (arg: the count so far)
//	restore/before-replace  a restore is about to replace or delete a path (arg: the path)
//	restore/placed          a restore put a path in place, before it looks at what it left (arg: the path)
//	scan/read-dir           a scan is about to open a directory (arg: its path)
//	scan/dir-opened         a scan opened a directory and is about to list it (arg: its path)
//	revert/before-change    a run revert computed its target; nothing written yet (arg: the run id)
//	save/before-tx          a save read HEAD and is about to begin its transaction
//	restore/before-tx       a restore (undo, redo, switch) read HEAD and is about to begin
//	                        its first transaction (arg: the op)
//	fsck/between            fsck read part of the store (arg: the table)
//	gc/plan                 a gc (asked for, or automatic after a save) starts planning
//	store/before-commit     a store transaction is about to commit
//	git/pack-renamed        the git backend renamed a new pack into place; its
//	                        index is not yet (arg: the pack's name)
//	git/before-refs         a git sync's objects are in a pack; no ref is set
//	                        yet (arg: the pack's name, "" if it wrote none)
//	watch/read              the watcher read a batch of events and is about to handle
//	                        them (arg: "")
//	watch/event             the watcher is about to handle an event (arg: the path it names)
//	watch/add               the watcher is about to add a directory's watch (arg: the
//	                        directory, workspace-relative); an error makes it fail as
//	                        at the inotify watch limit (ENOSPC)
//	watch/stopped           a watcher closed its socket; it has yet to write its
//	                        stat cache and close the store
package failpoint

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

var (
	armed   atomic.Bool
	mu      sync.Mutex
	points  = map[string][]*point{}
	envOnce sync.Once
)

type point struct {
	filter string // "" any argument
	fn     func(arg string) error
}

// Hit is called by the engine at a named point with an argument (a path, a
// count). It returns the error an armed failpoint injects, or nil.
func Hit(name, arg string) error {
	envOnce.Do(loadEnv)
	if !armed.Load() {
		return nil
	}
	mu.Lock()
	ps := points[name]
	mu.Unlock()
	for _, p := range ps {
		if p.filter != "" && p.filter != arg {
			continue
		}
		if err := p.fn(arg); err != nil {
			return err
		}
	}
	return nil
}

// Enabled reports whether any failpoint is armed (so a caller can skip
// work that only a failpoint needs, like formatting an argument).
func Enabled() bool {
	envOnce.Do(loadEnv)
	return armed.Load()
}

// Set arms a failpoint in this process: fn runs at every hit of name and
// its error is returned by [Hit]. It returns a function that disarms it.
// Some points (scan/read-dir) are hit from parallel workers: fn may run
// concurrently with itself and must guard what it shares.
func Set(name string, fn func(arg string) error) (disarm func()) {
	envOnce.Do(loadEnv)
	return set(name, fn)
}

func set(name string, fn func(arg string) error) (disarm func()) {
	p := &point{fn: fn}
	if i := strings.IndexByte(name, '('); i > 0 && strings.HasSuffix(name, ")") {
		name, p.filter = name[:i], name[i+1:len(name)-1]
	}
	mu.Lock()
	points[name] = append(points[name], p)
	armed.Store(true)
	mu.Unlock()
	return func() {
		mu.Lock()
		defer mu.Unlock()
		ps := points[name]
		for i, q := range ps {
			if q == p {
				points[name] = append(ps[:i:i], ps[i+1:]...)
				break
			}
		}
		if len(points[name]) == 0 {
			delete(points, name)
		}
		armed.Store(len(points) > 0)
	}
}

// ErrInjected is wrapped by the errors injected with the fail action.
var ErrInjected = errors.New("injected failure")

// Kill ends the process at once, as a crash would (SIGKILL on Unix,
// TerminateProcess on Windows).
func Kill() {
	killSelf()
	select {}
}

func loadEnv() {
	v := os.Getenv("CKPT_FAILPOINT")
	if v == "" {
		return
	}
	for spec := range strings.SplitSeq(v, ";") {
		name, fn, err := parse(spec)
		if err != nil {
			fmt.Fprintf(os.Stderr, "ckpt: CKPT_FAILPOINT: %v\n", err)
			continue
		}
		if fn != nil {
			set(name, fn)
		}
	}
}

func parse(spec string) (string, func(string) error, error) {
	spec = strings.TrimSpace(spec)
	if spec == "" {
		return "", nil, nil
	}
	// The older forms.
	for _, old := range []string{"restore-kill:", "restore-fail:"} {
		if n, ok := strings.CutPrefix(spec, old); ok {
			action := strings.TrimSuffix(strings.TrimPrefix(old, "restore-"), ":")
			if n == "0" {
				spec = "restore/before-change=" + action
			} else {
				spec = "restore/change=" + action + "@" + n
			}
		}
	}
	name, action, ok := strings.Cut(spec, "=")
	if !ok {
		return "", nil, fmt.Errorf("%q: want POINT=ACTION", spec)
	}
	verb, nth, _ := strings.Cut(action, "@")
	n := 1
	if nth != "" {
		var err error
		if n, err = strconv.Atoi(nth); err != nil || n < 1 {
			return "", nil, fmt.Errorf("%q: bad count %q", spec, nth)
		}
	}
	var hits atomic.Int64
	at := func() bool { return hits.Add(1) == int64(n) }
	switch verb {
	case "kill":
		return name, func(string) error {
			if at() {
				Kill()
			}
			return nil
		}, nil
	case "fail":
		return name, func(arg string) error {
			if at() {
				return fmt.Errorf("failpoint %s (%s): %w", name, arg, ErrInjected)
			}
			return nil
		}, nil
	case "pause":
		base := name
		if i := strings.IndexByte(base, '('); i > 0 {
			base = base[:i]
		}
		file := strings.ReplaceAll(base, "/", "-")
		dir := os.Getenv("CKPT_FAILPOINT_DIR")
		return name, func(string) error {
			if !at() || dir == "" {
				return nil
			}
			os.WriteFile(filepath.Join(dir, file+".hit"), nil, 0o600)
			for range 6000 {
				if _, err := os.Stat(filepath.Join(dir, file+".go")); err == nil {
					return nil
				}
				time.Sleep(10 * time.Millisecond)
			}
			return nil
		}, nil
	}
	return "", nil, fmt.Errorf("%q: unknown action %q (want kill, fail or pause)", spec, verb)
}
