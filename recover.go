package ckpt

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

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
}

// Recover finishes an operation a crash interrupted: a restore (or undo,
// redo) that had started changing the workspace is completed, so the
// workspace equals its target, and leftover temporary files are removed.
// If files were edited after the crash, that state is checkpointed first.
// Every command runs this automatically; Recover does it explicitly.
func (r *Repo) Recover(ctx context.Context) (*RecoverResult, error) {
	unlock, err := r.lock(ctx)
	if err != nil {
		return nil, err
	}
	defer r.endOp(ctx, unlock)()
	return r.recover(ctx)
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
	out := &RecoverResult{Removed: []Path{}}
	j, err := r.st.Journal(ctx)
	if err != nil {
		return nil, err
	}
	if j == nil {
		return out, r.removeTemps(ctx, out)
	}
	var jd journalData
	if err := json.Unmarshal(j.Data, &jd); err != nil || jd.Target.IsZero() {
		return nil, &store.CorruptError{Kind: "journal", Detail: fmt.Sprintf("cannot decode the interrupted %s's journal", j.Kind)}
	}
	out.Op = jd.Op
	if err := r.removeTemps(ctx, out); err != nil {
		return nil, err
	}
	res, err := r.restoreLocked(ctx, jd, true)
	if err != nil {
		return nil, fmt.Errorf("recover interrupted %s: %w", jd.Op, err)
	}
	out.Result = res
	return out, nil
}

// removeTemps deletes ckpt's temporary files left in the workspace by a
// process that died (we hold the lock, so none is in use).
func (r *Repo) removeTemps(ctx context.Context, out *RecoverResult) error {
	root, err := os.OpenRoot(r.root)
	if err != nil {
		return err
	}
	defer root.Close()
	des, err := os.ReadDir(r.root)
	if err != nil {
		return nil
	}
	for _, de := range des {
		if strings.HasPrefix(de.Name(), scan.TempPrefix) {
			if err := root.RemoveAll(de.Name()); err == nil {
				out.Removed = append(out.Removed, Path(de.Name()))
			}
		}
	}
	return nil
}
