package ckpt

import (
	"github.com/seed1cedbf7c/ckpt/internal/object"
	"github.com/seed1cedbf7c/ckpt/internal/store"
)

// A session's turn records the files it changed: the difference between
// the checkpoints at its start and end. That is usually what the turn's
// last save changed against its parent, which the save found anyway (a
// checkpoint's stats come from that difference): the Repo remembers it,
// so the agent hook that ends the turn does not read both trees again.

// savedChanges is what a checkpoint changed against its parent, sorted
// as [Repo.Diff] sorts.
type savedChanges struct {
	parent, id object.ID
	files      []TurnFile
}

// maxSavedChanges bounds the changes remembered (a larger change is
// found again by a diff when asked for).
const maxSavedChanges = 4096

// rememberChanges records what checkpoint id changed against parent.
func (r *Repo) rememberChanges(parent, id object.ID, changes []FileChange) {
	sortChanges(changes)
	files := make([]TurnFile, len(changes))
	for i, c := range changes {
		files[i] = TurnFile{Path: c.Path, Status: c.Status}
	}
	r.mu.Lock()
	r.saved = &savedChanges{parent: parent, id: id, files: files}
	r.mu.Unlock()
}

// lastChanges returns what checkpoint to changed against from, if the
// last checkpoint this Repo made (or had a watcher make) is to and its
// parent is from.
func (r *Repo) lastChanges(from, to object.ID) ([]TurnFile, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if s := r.saved; s != nil && s.parent == from && s.id == to {
		return append([]TurnFile{}, s.files...), true
	}
	return nil, false
}

// takeServedChanges remembers the changes a watcher's reply carries for
// the checkpoint it made, rec, if they are well formed: known statuses,
// valid paths, sorted and distinct, no more than maxSavedChanges, and
// for rec's parent. Anything else is dropped, and a diff finds them when
// asked for.
func (r *Repo) takeServedChanges(rec *store.Record, rep servedReply) {
	if rep.Parent == "" || len(rec.Parents) != 1 || rep.Parent != rec.Parents[0].String() || len(rep.Changes) > maxSavedChanges {
		return
	}
	files := make([]TurnFile, 0, len(rep.Changes))
	for i, c := range rep.Changes {
		p := string(c.Path)
		switch c.Status {
		case "added", "modified", "deleted", "type-changed":
		default:
			return
		}
		if !object.ValidPath(p) || i > 0 && p <= string(rep.Changes[i-1].Path) {
			return
		}
		files = append(files, TurnFile{Path: Path(p), Status: c.Status})
	}
	r.mu.Lock()
	r.saved = &savedChanges{parent: rec.Parents[0], id: rec.ID, files: files}
	r.mu.Unlock()
}
