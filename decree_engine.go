package ckpt

import (
	"bytes"
	"context"
	"io"
	"time"

	"github.com/seed1cedbf7c/ckpt/internal/decree"
	"github.com/seed1cedbf7c/ckpt/internal/diff"
	"github.com/seed1cedbf7c/ckpt/internal/object"
	"github.com/seed1cedbf7c/ckpt/internal/store"
)

// decreeEngine is the Repo as Decree's flow sees it ([decree.Engine]):
// checkpoints, diffs and manifests through the public API, and the run's
// revert and its fallback (revert.go), which work on the store directly.
type decreeEngine struct{ r *Repo }

var _ decree.Engine = decreeEngine{}

func (r *Repo) decree() decreeEngine { return decreeEngine{r} }

// runMark is the run mark a revert's journal carries (journalData.Run).
type runMark = decree.Mark

// finishRun writes a revert's run mark into the run's record (restoreLocked
// calls it before it clears the journal, and so does recovery).
func (r *Repo) finishRun(m *runMark) error { return decree.Finish(r.root, m) }

func (e decreeEngine) Root() string { return e.r.root }

func (e decreeEngine) Now() time.Time { return e.r.now() }

func (e decreeEngine) Save(ctx context.Context, s decree.Save) (string, error) {
	opts := SaveOptions{Kind: s.Kind, AllowEmpty: true, Message: s.Message}
	if s.Run != "" {
		opts.Meta = map[string]string{"run": s.Run}
	}
	res, err := e.r.Save(ctx, opts)
	if err != nil {
		return "", err
	}
	return res.Checkpoint.ID.String(), nil
}

func (e decreeEngine) WorkspaceIs(ctx context.Context, rev string) (bool, error) {
	id, err := object.ParseID(rev)
	if err != nil {
		return false, nil
	}
	cp, err := e.r.st.Checkpoint(ctx, id)
	if err != nil {
		return false, nil
	}
	c, err := e.r.captureTx(ctx, nil, false, nil)
	if err != nil {
		return false, err
	}
	return c.res.Root == cp.Tree, nil
}

func (e decreeEngine) Changes(ctx context.Context, from, to string) (*decree.Changes, error) {
	d, err := e.r.Diff(ctx, DiffOptions{From: from, To: to})
	if err != nil {
		return nil, err
	}
	var stat bytes.Buffer
	if err := d.WriteStat(ctx, &stat); err != nil {
		return nil, err
	}
	c := &decree.Changes{Stat: stat.String(),
		WritePatch: func(w io.Writer) error { return d.writePatch(ctx, w, diff.Options{Binary: diff.Base64Blocks}) }}
	c.Added, c.Modified, c.Deleted = d.Summary()
	return c, nil
}

func (e decreeEngine) Manifest(ctx context.Context, id string) ([]byte, error) {
	m, err := e.r.Manifest(ctx, id)
	if err != nil {
		return nil, err
	}
	return m.MarshalJSON()
}

func (e decreeEngine) ProcessLock() (func(), error) {
	if e.r.storeDir == "" {
		return func() {}, nil
	}
	s, ok := e.r.st.(*store.SQLite)
	if !ok {
		return func() {}, nil
	}
	return s.TryNamedLock("process")
}

func (e decreeEngine) Revert(ctx context.Context, req decree.RevertRequest) (bool, error) {
	return e.r.revertRun(ctx, req.Dir, req.Run, req.Why, req.Mark)
}

func (e decreeEngine) RestoreCheckpoint(ctx context.Context, req decree.RevertRequest) error {
	return e.r.restoreRunCheckpoint(ctx, req.Dir, req.Run, req.Mark)
}
