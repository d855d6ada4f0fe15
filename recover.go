package ckpt

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"time"

	"github.com/seed1cedbf7c/ckpt/internal/fsroot"
	"github.com/seed1cedbf7c/ckpt/internal/scan"
	"github.com/seed1cedbf7c/ckpt/internal/store"
)

// RecoverResult reports what [Repo.Recover] did.
type RecoverResult struct {
	// Op is the interrupted operation ("" when there was none).
	Op string `json:"op"`
	// Result is the finished restore (nil when there was none).
	Result *RestoreResult `json:"result"`
	// Removed lists leftover temporary files that were deleted.
	Removed []Path `json:"removed"`
	// Runs lists the guarded runs a ckpt that is gone left running: what
	// was left of each one's routine was stopped and the run recorded as
	// interrupted, to be resumed by ckpt process or ckpt run --id.
	Runs []string `json:"runs"`
}

// Recover finishes an operation a crash interrupted: a restore (or undo,
// redo, switch, rewind, or a run's revert, whose run record it also
// completes) that had started changing the workspace is completed, so the
// workspace equals its target, and leftover temporary files are removed.
// If files were edited after the crash, that state is checkpointed first.
// Every command runs this automatically; Recover does it explicitly.
//
// Recover also settles the guarded runs that a ckpt which is gone (killed,
// or ended at a signal before it could record the run) left "running":
// what is left of the routine's process group is killed and the attempt
// is recorded as interrupted, its changes kept (see [RecoverResult.Runs]).
// A run whose ckpt is still running is left alone.
func (r *Repo) Recover(ctx context.Context) (*RecoverResult, error) {
	res, err := func() (*RecoverResult, error) {
		unlock, err := r.lock(ctx)
		if err != nil {
			return nil, err
		}
		defer r.endOp(ctx, unlock)()
		return r.recover(ctx)
	}()
	if err != nil {
		return nil, err
	}
	var removed []Path
	res.Runs, removed, err = r.settleRuns(ctx)
	res.Removed = append(res.Removed, removed...)
	return res, err
}

// recoverIfFree recovers when an interrupted operation is recorded and no
// other process holds the store (one that does will recover itself).
func (r *Repo) recoverIfFree(ctx context.Context) error {
	j, err := r.st.Journal(ctx)
	if err != nil || j == nil {
		return err
	}
	unlock, err := r.st.Lock(ctx, 50*time.Millisecond, nil)
	if errors.Is(err, store.ErrLocked) || errors.Is(err, store.ErrNotWritable) {
		return nil // a read-only store: reading commands still work
	}
	if err != nil {
		return err
	}
	defer unlock()
	_, err = r.recover(ctx)
	return err
}

// recoverLocked is recover for operations that already hold the lock.
func (r *Repo) recoverLocked(ctx context.Context) error {
	_, err := r.recover(ctx)
	return err
}

func (r *Repo) recover(ctx context.Context) (*RecoverResult, error) {
	out := &RecoverResult{Removed: []Path{}, Runs: []string{}}
	j, err := r.st.Journal(ctx)
	if err != nil {
		return nil, err
	}
	if j == nil {
		return out, nil
	}
	var jd journalData
	if err := json.Unmarshal(j.Data, &jd); err != nil || jd.Target.IsZero() || !stageName.MatchString(jd.Stage) {
		return nil, &store.CorruptError{Kind: "journal", Detail: fmt.Sprintf("cannot decode the interrupted %s's journal", j.Kind)}
	}
	out.Op = string(jd.Op)
	if err := r.removeTemps(ctx, jd.Stage, out); err != nil {
		return nil, err
	}
	res, err := r.restoreLocked(ctx, jd, true)
	if err != nil {
		var ue *unfinishedError
		if errors.As(err, &ue) {
			return nil, err
		}
		return nil, fmt.Errorf("recover interrupted %s: %w", jd.Op, err)
	}
	out.Result = res
	return out, nil
}

// stageName is the form of every staging directory's name (newStageName):
// a journal naming anything else — a user's directory, .git — is corrupt.
var stageName = regexp.MustCompile(`^\.ckpt-tmp-[0-9a-f]{12}$`)

// removeTemps deletes the staging directories an interrupted restore left
// in the workspace root: only those its journal names (stage and the
// rollback's stage+"-back"), never a user's file that merely looks like
// one. (We hold the lock, so none is in use; copies left next to their
// destinations are found by the recovering scan.)
func (r *Repo) removeTemps(ctx context.Context, stage string, out *RecoverResult) error {
	if !strings.HasPrefix(stage, scan.TempPrefix) || strings.Contains(stage, "/") {
		return nil
	}
	root, err := fsroot.Open(r.root)
	if err != nil {
		return err
	}
	defer root.Close()
	for _, name := range []string{stage, stage + "-back"} {
		if _, err := root.Lstat(name); err != nil {
			continue
		}
		if err := root.RemoveAll(name); err == nil {
			out.Removed = append(out.Removed, Path(name))
		}
	}
	return nil
}

// ownTemps returns the name prefixes of ckpt's own temporary entries in
// the workspace: the staging directory of an interrupted restore, which
// its journal names. Scans skip them; nothing else is ckpt's to skip.
func (r *Repo) ownTemps(ctx context.Context) []string {
	j, err := r.st.Journal(ctx)
	if err != nil || j == nil {
		return nil
	}
	var jd journalData
	if json.Unmarshal(j.Data, &jd) != nil || !strings.HasPrefix(jd.Stage, scan.TempPrefix) {
		return nil
	}
	return []string{jd.Stage}
}
