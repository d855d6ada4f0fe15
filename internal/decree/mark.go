package decree

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/seed1cedbf7c/ckpt/internal/run"
	"github.com/seed1cedbf7c/ckpt/internal/store"
)

// Mark is what a run's record says once its revert is done. A revert
// carries it in its journal (its JSON is part of the journal's format), so
// the record is written before the journal is cleared — by the revert, or
// by the recovery that finishes it ([Finish]).
type Mark struct {
	ID     string `json:"id"`
	Status string `json:"status"`
	Reason string `json:"reason,omitempty"`
	// Result is the state the revert left (a checkpoint id).
	Result string `json:"result,omitempty"`
	// Ended, if set, is when the run ended (a dead letter).
	Ended time.Time `json:"ended,omitzero"`
	// Inbox is the message file that moves to inbox/dead.
	Inbox string `json:"inbox,omitempty"`
}

// set updates rec as m says.
func (m *Mark) set(rec *run.Record) {
	rec.Status, rec.Reason, rec.Result = m.Status, m.Reason, m.Result
	rec.Owner, rec.Current, rec.Unreverted = nil, nil, false // the tree is back
	if !m.Ended.IsZero() {
		rec.Ended = m.Ended
	}
}

// Finish writes what m says into the record of the run in workspace root
// and moves its message to inbox/dead if m says so. Doing it again changes
// nothing. A run whose directory is gone has nothing to finish. A mark
// naming an invalid run id or message file (a journal is read back from
// the store) is a [*store.CorruptError].
func Finish(root string, m *Mark) error {
	if !run.ValidID(m.ID) || m.Inbox != "" && !run.PlainName(m.Inbox) {
		return &store.CorruptError{Kind: "journal", Detail: fmt.Sprintf("the run mark of a revert names run %q, message %q", m.ID, m.Inbox)}
	}
	dir := run.RunDir(root, m.ID)
	rec, err := run.LoadRecord(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	m.set(rec)
	if m.Inbox != "" {
		if _, err := os.Lstat(filepath.Join(root, filepath.FromSlash(run.InboxDir), m.Inbox)); err == nil {
			if err := moveMessage(root, m.Inbox, run.DeadDir); err != nil {
				return err
			}
		}
	}
	return rec.Save(dir)
}
