package decree

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"
	"time"

	"github.com/seed1cedbf7c/ckpt/internal/object"
	"github.com/seed1cedbf7c/ckpt/internal/run"
)

// Settle settles every run left running by a ckpt that is gone: what is
// left of its routine's process group is killed, and the attempt under way
// is recorded as interrupted, its changes checkpointed and kept (see
// settleRun). It returns the ids of the runs it settled, and the temporary
// files a ckpt left in run directories (an atomic write of a run's file
// cut short) that it removed, as workspace paths. A run whose ckpt is
// still alive is left alone.
func Settle(ctx context.Context, e Engine) (settled []string, removed []string, err error) {
	f := newFlow(e)
	ids, err := run.ListRuns(f.root)
	if err != nil {
		return nil, nil, err
	}
	settled = []string{}
	for _, id := range ids {
		dir := run.RunDir(f.root, id)
		rec, err := run.LoadRecord(dir)
		if err != nil || rec.ID != id {
			continue
		}
		ok, err := f.settleRun(ctx, dir, rec)
		var busy *BusyError
		switch {
		case errors.As(err, &busy):
			continue // its ckpt is alive, and may be writing its files
		case err != nil:
			return settled, removed, fmt.Errorf("recover run %s: %w", id, err)
		case ok:
			settled = append(settled, id)
		}
		// A run no ckpt runs: its temporary files are leftovers, but
		// for one that a ckpt (runs revert, say) may be writing now.
		age := time.Minute
		if ok {
			age = 0
		}
		for _, name := range run.RemoveTemps(dir, age) {
			removed = append(removed, path.Join(run.RunsDir, id, name))
		}
	}
	return settled, removed, nil
}

// unusable says why a run has no record ckpt can use ("" when it has
// none at all).
func unusable(err error) string {
	if errors.Is(err, fs.ErrNotExist) {
		return ""
	}
	return "run.json: " + err.Error()
}

// cutShort shows a run that a ckpt which is gone left "running" as what
// it is, interrupted (the record on disk says so once settled: see
// settleRun).
func cutShort(rec *run.Record) *run.Record {
	if rec.Status != run.StatusRunning || rec.Owner.Alive() {
		return rec
	}
	rec.Status = run.StatusInterrupted
	rec.Reason = "ckpt was stopped during the run; ckpt recover (or running it again) settles it"
	return rec
}

// StopRoutines kills the process groups of the routines that runs in
// this process are running. A program that must exit in the middle of
// [Run] or [Process] (at a second SIGINT) calls it first, so no
// routine outlives it; the run's record is settled by the next ckpt
// (the root package's Repo.Recover, which calls [Settle], or the next
// run of it).
func StopRoutines() { run.KillRunning() }

// settleRun finishes the record of a run that a ckpt which is gone (killed,
// or ended at a second signal) left running, or that an error stopped
// with an attempt under way: what is left of the attempt's routine — its
// process group — is killed, and the attempt is recorded as interrupted,
// as after SIGINT (its log kept as attempt-N.log, its changes checkpointed
// and written to changes.diff); the run is then interrupted, and the next
// ckpt process (or ckpt run --id) resumes it. It reports whether it
// changed anything, and refuses a run whose ckpt is still running.
func (f *flow) settleRun(ctx context.Context, runDir string, rec *run.Record) (bool, error) {
	if rec.Status != run.StatusRunning && rec.Current == nil {
		return false, nil
	}
	if rec.Owner.Alive() && rec.Owner.PID != os.Getpid() {
		return false, &BusyError{ID: rec.ID, PID: rec.Owner.PID}
	}
	if _, err := object.ParseID(rec.Checkpoint); err != nil {
		// Stopped before its checkpoint: no attempt ran.
		rec.Current = nil
	}
	n := len(rec.Attempts) + 1
	if a := rec.Current; a != nil {
		run.KillGroup(a.Group)
		log := a.Log
		if log != "papermill.log" {
			log = "routine.log"
		}
		*a = run.Attempt{N: n, Started: a.Started, Ended: f.now().UTC(), Exit: run.Exit{Code: 130, Interrupted: true}}
		if err := f.finishAttempt(ctx, runDir, rec, a, filepath.Join(runDir, log)); err != nil {
			return false, err
		}
		rec.Attempts = append(rec.Attempts, *a)
		rec.Current = nil
	}
	rec.Status, rec.Ended, rec.Owner = run.StatusInterrupted, f.now().UTC(), nil
	switch {
	case strings.HasPrefix(rec.Reason, "stopped by an error"):
	case len(rec.Attempts) == n:
		rec.Reason = fmt.Sprintf("ckpt was stopped during attempt %d", n)
	default:
		rec.Reason = "ckpt was stopped between attempts"
	}
	return true, rec.Save(runDir)
}
