package store

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/seed1cedbf7c/ckpt/internal/flock"
)

// fileLock is an inter-process exclusive lock (flock, LockFileEx) on a file in the store
// directory. The kernel releases it when the holder dies, so a crashed
// process never leaves the store locked. The file holds the holder's pid and
// command for the "waiting for" message.
type fileLock struct {
	path string
	mu   sync.Mutex // serializes holders within this process
}

func newFileLock(path string) *fileLock { return &fileLock{path: path} }

func (l *fileLock) acquire(ctx context.Context, timeout time.Duration, waiting func(string)) (func(), error) {
	deadline := time.Now().Add(timeout)
	// In-process first.
	got := make(chan struct{})
	go func() { l.mu.Lock(); close(got) }()
	select {
	case <-got:
	case <-ctx.Done():
		go func() { <-got; l.mu.Unlock() }()
		return nil, ctx.Err()
	}
	f, err := os.OpenFile(l.path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		l.mu.Unlock()
		return nil, fmt.Errorf("open lock %s: %w", l.path, err)
	}
	told := false
	delay := 2 * time.Millisecond
	for {
		ok, err := flock.TryLock(f)
		if ok {
			break
		}
		if err != nil {
			f.Close()
			l.mu.Unlock()
			return nil, fmt.Errorf("lock %s: %w", l.path, err)
		}
		if time.Now().After(deadline) {
			holder := readHolder(l.path)
			f.Close()
			l.mu.Unlock()
			return nil, &LockedError{Path: l.path, Holder: holder, Waited: timeout}
		}
		if !told && waiting != nil && delay >= 100*time.Millisecond {
			waiting(readHolder(l.path))
			told = true
		}
		select {
		case <-ctx.Done():
			f.Close()
			l.mu.Unlock()
			return nil, ctx.Err()
		case <-time.After(delay):
		}
		if delay < 100*time.Millisecond {
			delay *= 2
		}
	}
	f.Truncate(0)
	f.WriteAt([]byte(strconv.Itoa(os.Getpid())+" "+strings.Join(os.Args, " ")+"\n"), 0)
	return func() {
		f.Truncate(0)
		flock.Unlock(f)
		f.Close()
		l.mu.Unlock()
	}, nil
}

func readHolder(path string) string {
	b, _ := os.ReadFile(path)
	s := strings.TrimSpace(string(b))
	if s == "" {
		return "another process"
	}
	if len(s) > 200 {
		s = s[:200]
	}
	return "pid " + s
}

// LockedError: the lock was not free before the timeout. Wraps ErrLocked.
type LockedError struct {
	Path   string
	Holder string
	Waited time.Duration
}

// Error implements error.
func (e *LockedError) Error() string {
	return fmt.Sprintf("store is locked by %s (waited %s for %s)", e.Holder, e.Waited.Round(time.Millisecond), e.Path)
}

// Unwrap returns ErrLocked.
func (e *LockedError) Unwrap() error { return ErrLocked }

// Hint suggests what to do.
func (e *LockedError) Hint() string {
	return "another ckpt command is working on this store; wait for it to finish (or stop that process), or wait longer with CKPT_LOCK_TIMEOUT=30m"
}

// TryNamedLock takes a second, independent lock in the store directory
// (e.g. "process", so two `ckpt process` never work on one inbox) without
// waiting; it fails at once, naming the holder, when it is taken.
func (s *SQLite) TryNamedLock(name string) (func(), error) {
	if err := s.Writable(); err != nil {
		return nil, err
	}
	l := newFileLock(filepath.Join(s.dir, name+".lock"))
	unlock, err := l.acquire(context.Background(), 0, nil)
	if err != nil {
		var le *LockedError
		if errors.As(err, &le) {
			return nil, fmt.Errorf("another ckpt is already running %s here (%s)", name, le.Holder)
		}
		return nil, err
	}
	return unlock, nil
}

// heldBy reports whether the lock is held by process pid: its file names
// pid, and another descriptor cannot take it.
func (l *fileLock) heldBy(pid int) bool {
	if pid <= 0 {
		return false
	}
	b, err := os.ReadFile(l.path)
	if err != nil {
		return false
	}
	first, _, _ := strings.Cut(string(b), " ")
	if first != strconv.Itoa(pid) {
		return false
	}
	f, err := os.Open(l.path)
	if err != nil {
		return false
	}
	defer f.Close()
	ok, err := flock.TryLock(f)
	if ok {
		flock.Unlock(f)
		return false
	}
	return err == nil
}

// LockHeldBy reports whether process pid holds the store's operation
// lock (a watcher checks it before saving for that process).
func (s *SQLite) LockHeldBy(pid int) bool { return s.lock.heldBy(pid) }
