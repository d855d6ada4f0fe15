package decree

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/seed1cedbf7c/ckpt/internal/restore"
	"github.com/seed1cedbf7c/ckpt/internal/run"
)

// fakeEngine is an Engine without checkpoints: it numbers the saves,
// reports no changes, and reverts as its test says. Like the real one, a
// revert that succeeds writes its mark with Finish.
type fakeEngine struct {
	root string

	mu       sync.Mutex
	saves    []Save
	reverts  []RevertRequest
	restores []RevertRequest
	revert   func(RevertRequest) (bool, error)
	restore  func(RevertRequest) error
	same     bool // WorkspaceIs
}

var _ Engine = (*fakeEngine)(nil)

func (e *fakeEngine) Root() string   { return e.root }
func (e *fakeEngine) Now() time.Time { return time.Now() }

func (e *fakeEngine) Save(ctx context.Context, s Save) (string, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.saves = append(e.saves, s)
	return fmt.Sprintf("%064x", len(e.saves)), nil
}

func (e *fakeEngine) WorkspaceIs(ctx context.Context, id string) (bool, error) { return e.same, nil }

func (e *fakeEngine) Changes(ctx context.Context, from, to string) (*Changes, error) {
	return &Changes{WritePatch: func(io.Writer) error { return nil }}, nil
}

func (e *fakeEngine) Manifest(ctx context.Context, id string) ([]byte, error) {
	return []byte(`{"files":{}}` + "\n"), nil
}

func (e *fakeEngine) ProcessLock() (func(), error) { return func() {}, nil }

func (e *fakeEngine) Revert(ctx context.Context, req RevertRequest) (bool, error) {
	e.reverts = append(e.reverts, req)
	ok, err := true, error(nil)
	if e.revert != nil {
		ok, err = e.revert(req)
	}
	if err == nil && ok && req.Mark != nil {
		m := *req.Mark
		if m.Result == "" {
			m.Result = fmt.Sprintf("%064x", 999)
		}
		return ok, Finish(e.root, &m)
	}
	return ok, err
}

func (e *fakeEngine) RestoreCheckpoint(ctx context.Context, req RevertRequest) error {
	e.restores = append(e.restores, req)
	if e.restore != nil {
		if err := e.restore(req); err != nil {
			return err
		}
	}
	if req.Mark != nil {
		m := *req.Mark
		if m.Result == "" {
			m.Result = req.Run.Checkpoint
		}
		return Finish(e.root, &m)
	}
	return nil
}

// workspace makes a workspace whose develop routine exits with status
// code, and one inbox message.
func workspace(t *testing.T, code int) string {
	t.Helper()
	ws := t.TempDir()
	for _, d := range []string{".decree/routines", ".decree/inbox"} {
		if err := os.MkdirAll(filepath.Join(ws, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	os.WriteFile(filepath.Join(ws, ".decree/config.yml"), []byte("max_retries: 2\n"), 0o644)
	os.WriteFile(filepath.Join(ws, ".decree/routines/develop.sh"), []byte(fmt.Sprintf("#!/usr/bin/env bash\nexit %d\n", code)), 0o755)
	os.WriteFile(filepath.Join(ws, ".decree/inbox/task.md"), []byte("Do the task.\n"), 0o644)
	return ws
}

func TestProcessSuccess(t *testing.T) {
	e := &fakeEngine{root: workspace(t, 0)}
	res, err := Process(context.Background(), e, ProcessOptions{})
	if err != nil || len(res.Errors) > 0 || len(res.Runs) != 1 {
		t.Fatalf("Process: %v, %+v", err, res)
	}
	rec := res.Runs[0]
	if rec.Status != run.StatusDone || len(rec.Attempts) != 1 || len(res.Dead()) != 0 {
		t.Fatalf("got status %s after %d attempt(s), want done after 1", rec.Status, len(rec.Attempts))
	}
	// The checkpoint before the run, and the one the attempt left.
	if len(e.saves) != 2 || e.saves[0].Run != rec.ID || rec.Checkpoint != fmt.Sprintf("%064x", 1) || rec.Result != fmt.Sprintf("%064x", 2) {
		t.Errorf("saves %+v, checkpoint %s, result %s", e.saves, rec.Checkpoint, rec.Result)
	}
	if len(e.reverts)+len(e.restores) != 0 {
		t.Errorf("a successful run was reverted: %d, %d", len(e.reverts), len(e.restores))
	}
	for _, f := range []string{"manifest.json", "changes.diff", "attempt-1.diff", "attempt-1.log", "message.md"} {
		if _, err := os.Stat(filepath.Join(run.RunDir(e.root, rec.ID), f)); err != nil {
			t.Errorf("run directory: %v", err)
		}
	}
	if _, err := os.Stat(filepath.Join(e.root, ".decree/inbox/done/task.md")); err != nil {
		t.Errorf("message not in inbox/done: %v", err)
	}
}

// TestProcessDeadLetter: every attempt failed — the run is undone before
// its last attempt (no mark) and after it (the dead mark, which the
// revert writes), and the message is dead-lettered.
func TestProcessDeadLetter(t *testing.T) {
	e := &fakeEngine{root: workspace(t, 1)}
	res, err := Process(context.Background(), e, ProcessOptions{})
	if err != nil || len(res.Runs) != 1 || res.Stopped != nil {
		t.Fatalf("Process: %v, %+v", err, res)
	}
	rec := res.Runs[0]
	if rec.Status != run.StatusDead || len(rec.Attempts) != 2 || len(res.Dead()) != 1 {
		t.Fatalf("got status %s after %d attempt(s), want dead after 2", rec.Status, len(rec.Attempts))
	}
	if len(e.reverts) != 2 || e.reverts[0].Mark != nil || e.reverts[1].Mark == nil {
		t.Fatalf("reverts %+v, want one without a mark, then one with", e.reverts)
	}
	m := e.reverts[1].Mark
	if m.Status != run.StatusDead || m.Inbox != "task.md" || m.Result != rec.Checkpoint {
		t.Errorf("mark %+v", m)
	}
	disk, err := run.LoadRecord(run.RunDir(e.root, rec.ID))
	if err != nil || disk.Status != run.StatusDead || disk.Unreverted {
		t.Errorf("run.json: %v, %+v", err, disk)
	}
	if _, err := os.Stat(filepath.Join(e.root, ".decree/inbox/dead/task.md")); err != nil {
		t.Errorf("message not in inbox/dead: %v", err)
	}
	if _, err := os.Stat(filepath.Join(run.RunDir(e.root, rec.ID), "failure-context.md")); err != nil {
		t.Errorf("no failure-context.md before the last attempt: %v", err)
	}
}

// TestUndoFallsBackToCheckpoint: when changes.diff does not reverse, the
// run's checkpoint is restored, and the mark says so.
func TestUndoFallsBackToCheckpoint(t *testing.T) {
	e := &fakeEngine{root: workspace(t, 1)}
	e.revert = func(RevertRequest) (bool, error) { return false, errors.New("changes.diff does not apply") }
	res, err := Process(context.Background(), e, ProcessOptions{})
	if err != nil || len(res.Runs) != 1 || res.Stopped != nil {
		t.Fatalf("Process: %v, %+v", err, res)
	}
	if len(e.restores) != 2 {
		t.Fatalf("%d restores of the run's checkpoint, want 2", len(e.restores))
	}
	disk, err := run.LoadRecord(run.RunDir(e.root, res.Runs[0].ID))
	if err != nil || disk.Status != run.StatusDead || !strings.Contains(disk.Reason, "checkpoint before the run was restored") {
		t.Errorf("run.json: %v, %+v", err, disk)
	}
}

// TestUndoFailsStops: when neither way puts the workspace back, the run
// is dead and unreverted, processing stops with a StoppedError (an
// integrity failure), and the next Process refuses to start until the
// workspace is the tree before the run.
func TestUndoFailsStops(t *testing.T) {
	ws := workspace(t, 1)
	os.WriteFile(filepath.Join(ws, ".decree/inbox/later.md"), []byte("---\nchain: \"9999999999999999\"\n---\nLater.\n"), 0o644)
	e := &fakeEngine{root: ws}
	e.revert = func(RevertRequest) (bool, error) { return false, fmt.Errorf("revert: %w", restore.ErrIntegrity) }
	e.restore = func(RevertRequest) error { return errors.New("a file is in the way") }
	res, err := Process(context.Background(), e, ProcessOptions{})
	if err != nil || res.Stopped == nil || len(res.Runs) != 1 {
		t.Fatalf("Process: %v, %+v", err, res)
	}
	if !errors.Is(res.Stopped, restore.ErrIntegrity) {
		t.Errorf("a stop is not an integrity failure: %v", res.Stopped)
	}
	rec := res.Runs[0]
	if rec.Status != run.StatusDead || !rec.Unreverted || len(rec.Attempts) != 1 {
		t.Errorf("got %s (unreverted %v) after %d attempt(s), want dead, unreverted, after 1", rec.Status, rec.Unreverted, len(rec.Attempts))
	}
	if _, err := os.Stat(filepath.Join(ws, ".decree/inbox/later.md")); err != nil {
		t.Errorf("the next message did not stay in the inbox: %v", err)
	}
	_, err = Process(context.Background(), e, ProcessOptions{})
	if err == nil {
		t.Fatal("Process ran on a tree that is not the one before the stopped run")
	}
	if h := (interface{ Hint() string })(nil); !errors.As(err, &h) || !strings.Contains(h.Hint(), "ckpt runs revert "+rec.ID) {
		t.Errorf("%v: no hint naming ckpt runs revert %s", err, rec.ID)
	}
	// Once the workspace is that tree again, processing goes on.
	e.same, e.revert, e.restore = true, nil, nil
	res, err = Process(context.Background(), e, ProcessOptions{})
	if err != nil || len(res.Runs) != 1 || res.Runs[0].Inbox != "later.md" {
		t.Fatalf("Process after the tree came back: %v, %+v", err, res)
	}
}

// TestRunAdHoc: Run takes its attempts from the options, and reports the
// routine's last exit status.
func TestRunAdHoc(t *testing.T) {
	e := &fakeEngine{root: t.TempDir()}
	res, err := Run(context.Background(), e, RunOptions{Command: []string{"sh", "-c", "exit 3"}, Attempts: 3, Message: "# Try it"})
	if err != nil {
		t.Fatal(err)
	}
	if res.ExitCode != 3 || res.Record.Status != run.StatusDead || len(res.Record.Attempts) != 3 || res.Record.Title != "Try it" {
		t.Errorf("got exit %d, %+v", res.ExitCode, res.Record)
	}
	if _, err := Run(context.Background(), e, RunOptions{Command: []string{"true"}, Attempts: run.MaxAttempts + 1}); err == nil {
		t.Error("Run accepted more than MaxAttempts attempts")
	}
}
