package decree

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/seed1cedbf7c/ckpt/internal/hint"
	"github.com/seed1cedbf7c/ckpt/internal/object"
	"github.com/seed1cedbf7c/ckpt/internal/restore"
	"github.com/seed1cedbf7c/ckpt/internal/run"
)

// Runs returns the guarded runs' records, newest first. A run without a
// record ckpt can use is listed with status "unknown"; one a ckpt which is
// gone left running, as interrupted.
func Runs(ctx context.Context, e Engine) ([]*run.Record, error) {
	f := newFlow(e)
	ids, err := run.ListRuns(f.root)
	if err != nil {
		return nil, err
	}
	var out []*run.Record
	for i := len(ids) - 1; i >= 0; i-- {
		rec, err := run.LoadRecord(run.RunDir(f.root, ids[i]))
		if err != nil {
			// A Decree run without ckpt's record (or with one ckpt
			// cannot use): what its files say.
			rec = &run.Record{ID: ids[i], Status: "unknown", Reason: unusable(err)}
		}
		out = append(out, cutShort(rec))
	}
	return out, nil
}

// Detail is a run's record and the paths of its files.
type Detail struct {
	Record *run.Record `json:"record"`
	// Dir is the run directory; Files lists what it holds.
	Dir   string   `json:"dir"`
	Files []string `json:"files"`
}

// resolve returns the full id and the directory of the run an id (or a
// unique id prefix) names.
func (f *flow) resolve(id string) (full, dir string, err error) {
	full, err = run.ResolveRun(f.root, id)
	if err != nil {
		return "", "", hint.With(err, "`ckpt runs` lists the runs")
	}
	return full, run.RunDir(f.root, full), nil
}

// Show returns the run an id (or unique id prefix) names.
func Show(ctx context.Context, e Engine, id string) (*Detail, error) {
	f := newFlow(e)
	full, dir, err := f.resolve(id)
	if err != nil {
		return nil, err
	}
	rec, err := run.LoadRecord(dir)
	if err != nil {
		rec = &run.Record{ID: full, Status: "unknown", Reason: unusable(err)}
	}
	d := &Detail{Record: cutShort(rec), Dir: dir}
	des, _ := os.ReadDir(dir)
	for _, de := range des {
		if !strings.HasPrefix(de.Name(), ".") {
			d.Files = append(d.Files, de.Name())
		}
	}
	return d, nil
}

// Revert undoes a finished run: its changes.diff in reverse, verified
// against its manifest.json. The current state is checkpointed first. A
// dead run whose changes could not be undone is put back as the attempts
// loop would have (its checkpoint restored if changes.diff still does not
// reverse).
func Revert(ctx context.Context, e Engine, id string) (*run.Record, error) {
	f := newFlow(e)
	full, dir, err := f.resolve(id)
	if err != nil {
		return nil, err
	}
	rec, err := run.LoadRecord(dir)
	if err != nil {
		return nil, fmt.Errorf("run %s has no ckpt record: %w", full, err)
	}
	// A run a ckpt that is gone left running is settled first.
	if _, err := f.settleRun(ctx, dir, rec); err != nil {
		return nil, err
	}
	switch rec.Status {
	case run.StatusDone, run.StatusInterrupted:
	case run.StatusReverted:
		// Reverted, and perhaps brought back since (ckpt undo): revert
		// again if its changes are there.
	case run.StatusDead:
		if !rec.Unreverted {
			return nil, fmt.Errorf("run %s is %s: its changes were already reverted", full, rec.Status)
		}
		// Its changes could not be undone when it died: try again.
	default:
		return nil, fmt.Errorf("run %s is %s and cannot be reverted", full, rec.Status)
	}
	pre, err := f.e.Save(ctx, Save{Kind: object.KindPreRestore, Message: "before reverting run " + full})
	if err != nil {
		return nil, err
	}
	// For a finished run, changes.diff is what the last attempt left. The
	// revert writes the record (so does the recovery of a revert a crash
	// interrupted).
	mark := &Mark{ID: full, Status: run.StatusReverted, Reason: "reverted with ckpt runs revert"}
	var reverted bool
	if rec.Unreverted {
		// A dead run: back to the state before it, by its checkpoint if
		// changes.diff still does not reverse.
		mark = &Mark{ID: full, Status: run.StatusDead, Reason: strings.TrimPrefix(rec.Reason, "the workspace could not be put back: ") + "; reverted later with ckpt runs revert"}
		reverted, err = f.undoRun(ctx, dir, rec, "run "+full+" reverted", mark, func(string, ...any) {})
	} else {
		reverted, err = f.e.Revert(ctx, RevertRequest{Dir: dir, Run: rec, Why: "run " + full + " reverted", Mark: mark})
	}
	switch {
	case rec.Status == run.StatusReverted && (!reverted && err == nil || errors.Is(err, restore.ErrIntegrity)):
		return nil, fmt.Errorf("run %s is reverted: its changes were already reverted (and are not in the workspace)", full)
	case err != nil:
		return nil, err
	case !reverted:
		// Its changes are not in the workspace: nothing to write.
		mark.Result = pre
		if err := Finish(f.root, mark); err != nil {
			return nil, err
		}
	}
	return run.LoadRecord(dir)
}
