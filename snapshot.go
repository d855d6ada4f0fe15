package ckpt

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"
	"unicode"

	"github.com/seed1cedbf7c/ckpt/internal/gitmirror"
	"github.com/seed1cedbf7c/ckpt/internal/store"
)

// Named snapshots (as the sandbox snapshot tools make them): a snapshot is a whole-tree checkpoint with a
// name, kept under the ref "snapshots/NAME" until it is deleted or, with a
// lifetime, until it expires and [Repo.ExpireSnapshots] drops it.

// SnapshotNameRule is the pattern every snapshot name must match.
const SnapshotNameRule = "^[A-Za-z0-9_][A-Za-z0-9_.-]*$"

// maxSnapshotName bounds a name's length so that it stays a valid file name
// (with room for git's ".lock" suffix) on every backend.
const maxSnapshotName = 200

// NoExpiry as [SnapshotOptions.TTL] makes a snapshot live until it is
// deleted, whatever the store's default lifetime.
const NoExpiry time.Duration = -1

// SnapshotOptions configure [Repo.SnapshotCreate].
type SnapshotOptions struct {
	// Description is stored as the snapshot checkpoint's message.
	Description string
	// Force replaces an existing snapshot of the same name. Without it,
	// reusing a name is an error.
	Force bool
	// TTL is the snapshot's lifetime: 0 uses the store's default
	// ([Config.SnapshotTTL]; 0 there means forever), [NoExpiry] means
	// forever.
	TTL time.Duration
}

// Snapshot is a named snapshot.
type Snapshot struct {
	Name       string `json:"name"`
	Checkpoint ID     `json:"checkpoint"`
	// Commit is the git commit the snapshot is on the git backend (40 hex;
	// empty on other backends). Responses show it as the snapshot's id.
	Commit string    `json:"commit,omitempty"`
	Time   time.Time `json:"time"`
	// Description is the message given at creation.
	Description string `json:"description"`
	// Expires is when the snapshot expires (zero: never; then absent
	// from JSON).
	Expires time.Time `json:"expires,omitzero"`
	// Expired reports whether Expires has passed: the snapshot is hidden
	// from the snapshot list and the next [Repo.ExpireSnapshots] (ckpt
	// gc) deletes it. Until then it can still be restored.
	Expired bool `json:"expired"`
}

// ValidSnapshotName reports whether name may name a new snapshot. It must
// match [SnapshotNameRule] (so no empty names, dotfiles, path separators,
// whitespace or leading hyphens) and be at most 200 bytes long; because a
// snapshot is the git ref <prefix>/snapshots/NAME on the git backend, git
// check-ref-format must accept that ref (so no "..", no trailing "." or
// ".lock"); and it must not read as a revision, which would shadow it or be
// shadowed by it: not HEAD, not 4 or more hex digits (a checkpoint id
// prefix). The error wraps [ErrInvalidSnapshotName], quotes the name and
// states the rule.
func ValidSnapshotName(name string) error {
	why := snapshotPatternError(name)
	if why == "" {
		why = snapshotRefError(name)
	}
	return snapshotNameError(name, why)
}

// MatchSnapshotName reports whether name matches [SnapshotNameRule] and is
// at most 200 bytes long: the check restore, diff and delete make, so that a
// snapshot named before [ValidSnapshotName] refused its name ("a.", "cafe")
// can still be restored, compared and deleted. The error is the one
// [ValidSnapshotName] returns.
func MatchSnapshotName(name string) error {
	return snapshotNameError(name, snapshotPatternError(name))
}

func snapshotNameError(name, why string) error {
	if why == "" {
		return nil
	}
	return fmt.Errorf("%w %q: %s; a name must match %s", ErrInvalidSnapshotName, name, why, SnapshotNameRule)
}

// snapshotPatternError says how name breaks SnapshotNameRule or the length
// limit ("" if it does not).
func snapshotPatternError(name string) string {
	switch {
	case name == "":
		return "it is empty"
	case name[0] == '.':
		return `it starts with "."`
	case name[0] == '-':
		return `it starts with "-"`
	case len(name) > maxSnapshotName:
		return fmt.Sprintf("it is longer than %d bytes", maxSnapshotName)
	}
	for _, c := range name {
		switch {
		case c == '/' || c == '\\':
			return fmt.Sprintf("it contains the path separator %q", c)
		case unicode.IsSpace(c):
			return "it contains whitespace"
		case !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '_' || c == '.' || c == '-'):
			return fmt.Sprintf("it contains %q", c)
		}
	}
	return ""
}

// snapshotRefError says why a name that matches the pattern cannot become a
// git ref or would read as a revision ("" if neither).
func snapshotRefError(name string) string {
	const notRef = " (not allowed in a git ref)"
	switch {
	case strings.Contains(name, ".."):
		return `it contains ".."` + notRef
	case strings.HasSuffix(name, ".lock"):
		return `it ends in ".lock"` + notRef
	case strings.HasSuffix(name, "."):
		return `it ends with "."` + notRef
	}
	if err := gitmirror.CheckRefFormat(refCheckPrefix + snapshotRef(name)); err != nil {
		return errors.Unwrap(err).Error() + notRef
	}
	return revisionShadow(name)
}

// refCheckPrefix is the ref prefix names are checked under. Whether a
// name makes a valid ref does not depend on the prefix, once the prefix is
// valid itself (gitmirror.CheckPrefix).
const refCheckPrefix = "refs/ckpt/"

// revisionShadow says why a ref name would read as a revision: HEAD (or
// "@"), or 4 to 64 hex digits, which read as a checkpoint id or a prefix of
// one ("" if neither).
func revisionShadow(name string) string {
	switch {
	case name == "HEAD" || name == "@":
		return "it would read as the revision HEAD"
	case len(name) >= 4 && len(name) <= 64 && isHex(name):
		return "it would read as a checkpoint id (4 or more hex digits)"
	}
	return ""
}

// snapshotTTL is the lifetime a snapshot created with opts gets.
func (r *Repo) snapshotTTL(opts SnapshotOptions) time.Duration {
	switch {
	case opts.TTL > 0:
		return opts.TTL
	case opts.TTL < 0:
		return 0
	}
	return r.cfg.SnapshotTTL
}

func (r *Repo) expired(ref store.Ref) bool {
	return !ref.Expires.IsZero() && !r.now().Before(ref.Expires)
}

// snapshotRef returns the ref of a snapshot, or an error naming it (for op)
// when there is none.
func (r *Repo) snapshotRef(ctx context.Context, op, name string) (store.Ref, error) {
	if err := MatchSnapshotName(name); err != nil {
		return store.Ref{}, fmt.Errorf("%s: %w", op, err)
	}
	ref, err := r.st.Ref(ctx, snapshotRef(name))
	if errors.Is(err, store.ErrNotFound) {
		return ref, withHint(&notFoundError{fmt.Sprintf("%s: no snapshot named %q", op, name)},
			"`ckpt snapshot list` (MCP: snapshot_list) shows the snapshots")
	}
	if err != nil {
		return ref, fmt.Errorf("%s: %w", op, err)
	}
	return ref, nil
}

func (r *Repo) toSnapshot(ctx context.Context, ref store.Ref) (*Snapshot, error) {
	rec, err := r.st.Checkpoint(ctx, ref.ID)
	if err != nil {
		return nil, fmt.Errorf("snapshot %s: %w", strings.TrimPrefix(ref.Name, snapshotPrefix), err)
	}
	s := &Snapshot{
		Name:        strings.TrimPrefix(ref.Name, snapshotPrefix),
		Checkpoint:  ref.ID,
		Time:        rec.Time.UTC(),
		Description: rec.Message,
		Expired:     r.expired(ref),
	}
	if !ref.Expires.IsZero() {
		s.Expires = ref.Expires.UTC()
	}
	s.Commit = r.gitCommitOrEmpty(ctx, ref.ID)
	return s, nil
}

// gitCommitOrEmpty is the checkpoint's git commit on the git backend ("" on
// others, or if it cannot be exported: the sync reports that).
func (r *Repo) gitCommitOrEmpty(ctx context.Context, id ID) string {
	if r.git == nil {
		return ""
	}
	c, err := r.GitCommit(ctx, id)
	if err != nil {
		return ""
	}
	return c
}

// ID is the snapshot's id as responses show it: the git commit on the git
// backend (as the sandbox snapshot tools' refs/sandbox snapshots are), the checkpoint's id
// otherwise.
func (s *Snapshot) ID() string {
	if s.Commit != "" {
		return s.Commit
	}
	return s.Checkpoint.String()
}

// SnapshotCreate records the whole workspace as a new checkpoint (even if it
// equals HEAD; ignored files are never captured) and names it: the ref
// "snapshots/NAME" points at it, in the same transaction. The checkpoint's
// message is opts.Description and its metadata {"snapshot": NAME}; like any
// save, it becomes HEAD. An existing snapshot of that name is an error
// unless opts.Force (an expired one is replaced without it).
func (r *Repo) SnapshotCreate(ctx context.Context, name string, opts SnapshotOptions) (*Snapshot, error) {
	const op = "snapshot create"
	if err := ValidSnapshotName(name); err != nil {
		return nil, fmt.Errorf("%s: %w", op, err)
	}
	unlock, err := r.begin(ctx)
	if err != nil {
		return nil, err
	}
	defer unlock()
	old, err := r.st.Ref(ctx, snapshotRef(name))
	switch {
	case err == nil && !opts.Force && !r.expired(old):
		return nil, withHint(&existsError{fmt.Sprintf("%s: snapshot %q already exists (checkpoint %s)", op, name, old.ID.Short())},
			"replace it with --force (MCP: force: true), or pick another name")
	case err != nil && !errors.Is(err, store.ErrNotFound):
		return nil, fmt.Errorf("%s: %w", op, err)
	}
	var ref store.Ref
	res, err := r.saveLocked(ctx, SaveOptions{
		Kind: KindManual, Message: opts.Description, AllowEmpty: true,
		Meta: map[string]string{"snapshot": name},
	}, func(tx store.Tx, rec *store.Record, created bool, c *capture) error {
		ref = store.Ref{Name: snapshotRef(name), ID: rec.ID, Time: rec.Time}
		if ttl := r.snapshotTTL(opts); ttl > 0 {
			ref.Expires = rec.Time.Add(ttl)
		}
		return tx.SetRef(ref)
	})
	if err != nil {
		return nil, fmt.Errorf("%s %s: %w", op, name, err)
	}
	s := &Snapshot{Name: name, Checkpoint: res.Checkpoint.ID, Time: res.Checkpoint.Time.UTC(), Description: opts.Description}
	if !ref.Expires.IsZero() {
		s.Expires = ref.Expires.UTC()
	}
	s.Commit = r.gitCommitOrEmpty(ctx, s.Checkpoint)
	r.emit(Event{Kind: EventSnapshotCreated, Checkpoint: s.Checkpoint, Name: name, Message: opts.Description})
	return s, nil
}

// Snapshots returns every snapshot, expired ones included (marked), newest
// first (by creation time, then name).
func (r *Repo) Snapshots(ctx context.Context) ([]*Snapshot, error) {
	refs, err := r.st.Refs(ctx, snapshotPrefix)
	if err != nil {
		return nil, err
	}
	out := make([]*Snapshot, 0, len(refs))
	for _, ref := range refs {
		s, err := r.toSnapshot(ctx, ref)
		if err != nil {
			return nil, err
		}
		out = append(out, s)
	}
	sort.SliceStable(out, func(i, j int) bool {
		if !out[i].Time.Equal(out[j].Time) {
			return out[i].Time.After(out[j].Time)
		}
		return out[i].Name < out[j].Name
	})
	return out, nil
}

// Snapshot returns the named snapshot; an unknown name is an error
// wrapping [ErrNotFound].
func (r *Repo) Snapshot(ctx context.Context, name string) (*Snapshot, error) {
	ref, err := r.snapshotRef(ctx, "snapshot", name)
	if err != nil {
		return nil, err
	}
	return r.toSnapshot(ctx, ref)
}

// SnapshotRestore makes the workspace equal to the named snapshot with the
// verified restore of [Repo.Restore]: files the snapshot does not have are
// removed and the directories that emptied pruned, ignored files are never
// touched, every written path is hash-checked, and the state before is
// checkpointed first (when it differs from HEAD) so [Repo.Undo] brings it
// back. An unknown name is an error that touches nothing.
func (r *Repo) SnapshotRestore(ctx context.Context, name string) (*RestoreResult, error) {
	const op = "snapshot restore"
	if err := MatchSnapshotName(name); err != nil {
		return nil, fmt.Errorf("%s: %w", op, err)
	}
	unlock, err := r.begin(ctx)
	if err != nil {
		return nil, err
	}
	defer unlock()
	ref, err := r.snapshotRef(ctx, op, name)
	if err != nil {
		return nil, err
	}
	return r.restoreLocked(ctx, journalData{Op: OpRestore, Target: ref.ID}, false)
}

// SnapshotDiff compares the named snapshot (the old side, "-" lines) with
// the working tree (the new side, "+" lines). Render it with
// [DiffResult.WritePatch].
func (r *Repo) SnapshotDiff(ctx context.Context, name string) (*DiffResult, error) {
	ref, err := r.snapshotRef(ctx, "snapshot diff", name)
	if err != nil {
		return nil, err
	}
	d, err := r.Diff(ctx, DiffOptions{From: ref.ID.String()})
	if err != nil {
		return nil, fmt.Errorf("snapshot diff %s: %w", name, err)
	}
	return d, nil
}

// SnapshotDelete deletes the named snapshot and returns what it was. Its
// checkpoint stays in the store (the operation log records its id) until
// gc finds nothing else refers to it. An unknown name is an error.
func (r *Repo) SnapshotDelete(ctx context.Context, name string) (*Snapshot, error) {
	const op = "snapshot delete"
	if err := MatchSnapshotName(name); err != nil {
		return nil, fmt.Errorf("%s: %w", op, err)
	}
	unlock, err := r.begin(ctx)
	if err != nil {
		return nil, err
	}
	defer unlock()
	ref, err := r.snapshotRef(ctx, op, name)
	if err != nil {
		return nil, err
	}
	s, err := r.toSnapshot(ctx, ref)
	if err != nil {
		return nil, err
	}
	if err := r.deleteSnapshots(ctx, []store.Ref{ref}, "delete"); err != nil {
		return nil, fmt.Errorf("%s %s: %w", op, name, err)
	}
	return s, nil
}

// ExpireSnapshots deletes every snapshot whose lifetime has passed and
// returns their names, sorted. ckpt gc calls it before collecting.
func (r *Repo) ExpireSnapshots(ctx context.Context) ([]string, error) {
	unlock, err := r.begin(ctx)
	if err != nil {
		return nil, err
	}
	defer unlock()
	refs, err := r.st.Refs(ctx, snapshotPrefix)
	if err != nil {
		return nil, err
	}
	var gone []store.Ref
	names := []string{}
	for _, ref := range refs {
		if r.expired(ref) {
			gone = append(gone, ref)
			names = append(names, strings.TrimPrefix(ref.Name, snapshotPrefix))
		}
	}
	if len(gone) == 0 {
		return names, nil
	}
	if err := r.deleteSnapshots(ctx, gone, "expire"); err != nil {
		return nil, fmt.Errorf("expire snapshots: %w", err)
	}
	return names, nil
}

// deleteSnapshots removes refs in one transaction, recording each in the
// operation log (kind "snapshot-delete", detail "why NAME"), and emits
// their events.
func (r *Repo) deleteSnapshots(ctx context.Context, refs []store.Ref, why string) error {
	_, head, err := r.head(ctx)
	if err != nil {
		return err
	}
	var headID ID
	if head != nil {
		headID = head.ID
	}
	err = r.st.Update(ctx, func(tx store.Tx) error {
		for _, ref := range refs {
			if err := tx.DeleteRef(ref.Name); err != nil {
				return err
			}
			name := strings.TrimPrefix(ref.Name, snapshotPrefix)
			if _, err := tx.AppendOp(store.Op{Kind: string(OpSnapshotDelete), Time: r.now(), Before: headID, After: headID,
				Checkpoint: ref.ID, Detail: why + " " + name}); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	for _, ref := range refs {
		msg := "deleted"
		if why == "expire" {
			msg = "expired"
		}
		r.emit(Event{Kind: EventSnapshotDeleted, Checkpoint: ref.ID, Name: strings.TrimPrefix(ref.Name, snapshotPrefix), Message: msg})
	}
	return nil
}

// Responses of the snapshot commands and MCP tools: the sandbox snapshot tools' text, shared
// by every frontend so that they are byte-identical. None ends with a
// newline except a diff (a patch ends with one); the CLI adds one to the
// others.

// SnapshotTimeLayout is how snapshot times are written: UTC, with the
// offset spelled "+00:00" (never "Z").
const SnapshotTimeLayout = "2006-01-02T15:04:05-07:00"
