package ckpt

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/seed1cedbf7c/ckpt/internal/object"
	"github.com/seed1cedbf7c/ckpt/internal/store"
	"github.com/seed1cedbf7c/ckpt/internal/tree"
)

var errPermission = fs.ErrPermission

// refNames maps checkpoint ids to the refs naming them.
func (r *Repo) refNames(ctx context.Context) (map[ID][]string, error) {
	refs, err := r.st.Refs(ctx, "")
	if err != nil {
		return nil, err
	}
	m := map[ID][]string{}
	for _, ref := range refs {
		m[ref.ID] = append(m[ref.ID], ref.Name)
	}
	return m, nil
}

func toCheckpoint(rec *store.Record, names map[ID][]string) *Checkpoint {
	c := &Checkpoint{
		ID: rec.ID, Time: rec.Time, Kind: rec.Kind, Message: rec.Message, Branch: rec.Branch,
		Author: rec.Author, Parents: rec.Parents, Tree: rec.Tree, Meta: rec.Meta,
		Stats: rec.Stats, Names: names[rec.ID],
	}
	if c.Parents == nil {
		c.Parents = []ID{}
	}
	if c.Names == nil {
		c.Names = []string{}
	}
	if len(rec.Paths) > 0 {
		c.Paths = toPaths(rec.Paths)
	}
	return c
}

// describe turns a record into a Checkpoint with its names.
func (r *Repo) describe(ctx context.Context, rec *store.Record) (*Checkpoint, error) {
	names, err := r.refNames(ctx)
	if err != nil {
		return nil, err
	}
	return toCheckpoint(rec, names), nil
}

// ListOptions select checkpoints for [Repo.List].
type ListOptions struct {
	Limit int    // 0: all
	Kind  string // "": all kinds
	// Before, when set, lists only the checkpoints stored before this one
	// (of any kind): the last of a page is the cursor of the next. A page
	// costs its own rows, however long the history. A Before the store
	// does not hold (never, or removed by gc) is an error wrapping
	// [ErrNotFound].
	Before ID
}

// Kinds are the kinds of checkpoint, as [ListOptions.Kind] takes them.
var Kinds = []string{KindManual, KindTurn, KindRun, KindPreRestore, KindEdit, KindRestore}

// List returns checkpoints, newest first. An unknown Kind is a
// [*NameError] (nothing would ever match it).
func (r *Repo) List(ctx context.Context, opts ListOptions) ([]*Checkpoint, error) {
	if opts.Kind != "" && !slices.Contains(Kinds, opts.Kind) {
		return nil, &NameError{Kind: "checkpoint kind", Name: opts.Kind, Reason: "want one of " + strings.Join(Kinds, ", ")}
	}
	f := store.ListFilter{Limit: opts.Limit, Kind: opts.Kind}
	if !opts.Before.IsZero() {
		rec, err := r.st.Checkpoint(ctx, opts.Before)
		if err != nil {
			return nil, err
		}
		f.BeforeSeq = rec.Seq
	}
	recs, err := r.st.Checkpoints(ctx, f)
	if err != nil {
		return nil, err
	}
	names, err := r.refNames(ctx)
	if err != nil {
		return nil, err
	}
	out := make([]*Checkpoint, len(recs))
	for i, rec := range recs {
		out[i] = toCheckpoint(rec, names)
	}
	return out, nil
}

// record returns the stored checkpoint a revision names.
func (r *Repo) record(ctx context.Context, rev string) (*store.Record, error) {
	id, err := r.Resolve(ctx, rev)
	if err != nil {
		return nil, err
	}
	return r.st.Checkpoint(ctx, id)
}

// Get returns the checkpoint a revision names.
func (r *Repo) Get(ctx context.Context, rev string) (*Checkpoint, error) {
	rec, err := r.record(ctx, rev)
	if err != nil {
		return nil, err
	}
	return r.describe(ctx, rec)
}

// Head returns the checkpoint HEAD points at (nil before the first save)
// and the branch HEAD is on.
func (r *Repo) Head(ctx context.Context) (*Checkpoint, string, error) {
	ref, rec, err := r.head(ctx)
	if err != nil || rec == nil {
		return nil, "", err
	}
	c, err := r.describe(ctx, rec)
	return c, ref.Symbolic, err
}

// LogOptions configure [Repo.Log].
type LogOptions struct {
	// From is the revision to start at (default HEAD).
	From  string
	Limit int
}

// Log returns the history leading to a checkpoint (HEAD by default):
// it and its first parents, newest first.
func (r *Repo) Log(ctx context.Context, opts LogOptions) ([]*Checkpoint, error) {
	from := opts.From
	if from == "" {
		from = "HEAD"
		if ref, _, err := r.head(ctx); err != nil {
			return nil, err
		} else if ref == nil {
			return nil, nil
		}
	}
	id, err := r.Resolve(ctx, from)
	if err != nil {
		return nil, err
	}
	names, err := r.refNames(ctx)
	if err != nil {
		return nil, err
	}
	var out []*Checkpoint
	seen := map[ID]bool{}
	for !id.IsZero() && !seen[id] && (opts.Limit <= 0 || len(out) < opts.Limit) {
		seen[id] = true
		rec, err := r.st.Checkpoint(ctx, id)
		if err != nil {
			if errors.Is(err, store.ErrNotFound) {
				break // history beyond retention
			}
			return nil, err
		}
		out = append(out, toCheckpoint(rec, names))
		id = object.ZeroID
		if len(rec.Parents) > 0 {
			id = rec.Parents[0]
		}
	}
	return out, nil
}

// FileChange is one path that differs between two states.
type FileChange struct {
	Path Path `json:"path"`
	// Status is "added", "modified", "deleted" or "type-changed".
	Status  string `json:"status"`
	OldMode string `json:"old_mode,omitempty"`
	NewMode string `json:"new_mode,omitempty"`
	OldID   *ID    `json:"old_sha256,omitempty"`
	NewID   *ID    `json:"new_sha256,omitempty"`
	OldSize int64  `json:"old_size,omitempty"`
	NewSize int64  `json:"new_size,omitempty"`

	old, new *object.Entry
}

func newFileChange(c tree.Change) FileChange {
	fc := FileChange{Path: Path(c.Path), old: c.Old, new: c.New}
	switch {
	case c.Old == nil:
		fc.Status = "added"
	case c.New == nil:
		fc.Status = "deleted"
	case c.Old.Mode&object.ModeTypeMask != c.New.Mode&object.ModeTypeMask:
		fc.Status = "type-changed"
	default:
		fc.Status = "modified"
	}
	if c.Old != nil {
		id := c.Old.ID
		fc.OldID, fc.OldMode, fc.OldSize = &id, strconv.FormatUint(uint64(c.Old.Mode), 8), c.Old.Size
	}
	if c.New != nil {
		id := c.New.ID
		fc.NewID, fc.NewMode, fc.NewSize = &id, strconv.FormatUint(uint64(c.New.Mode), 8), c.New.Size
	}
	return fc
}

// ShowResult is a checkpoint and what it changed against its first parent.
type ShowResult struct {
	Checkpoint *Checkpoint  `json:"checkpoint"`
	Changes    []FileChange `json:"changes"`
}

// Show returns a checkpoint and the files it changed against its parent
// (against nothing for the first checkpoint). For a partial checkpoint only
// its paths are compared.
func (r *Repo) Show(ctx context.Context, rev string) (*ShowResult, error) {
	rec, err := r.record(ctx, rev)
	if err != nil {
		return nil, err
	}
	parentTree := object.EmptyTree
	if len(rec.Parents) > 0 {
		prec, err := r.st.Checkpoint(ctx, rec.Parents[0])
		if err == nil {
			parentTree = prec.Tree
		} else if !errors.Is(err, store.ErrNotFound) {
			return nil, err
		}
	}
	out := &ShowResult{Changes: []FileChange{}}
	out.Checkpoint, err = r.describe(ctx, rec)
	if err != nil {
		return nil, err
	}
	err = tree.Diff(ctx, r.st.ReadTree, parentTree, rec.Tree, tree.NewFilter(rec.Paths), func(c tree.Change) error {
		out.Changes = append(out.Changes, newFileChange(c))
		return nil
	})
	sortChanges(out.Changes)
	return out, err
}

func sortChanges(cs []FileChange) {
	sort.SliceStable(cs, func(i, j int) bool { return cs[i].Path < cs[j].Path })
}

// Status describes a workspace and its store.
type Status struct {
	Workspace   string      `json:"workspace"`
	Store       string      `json:"store"`
	Backend     string      `json:"backend"`
	StoreSize   int64       `json:"store_size"`
	Checkpoints int         `json:"checkpoints"`
	Head        *Checkpoint `json:"head"`
	Branch      string      `json:"branch,omitempty"`
	// Changes of the working tree against HEAD (nil when not computed).
	Changes []FileChange `json:"changes"`
	// Skipped are the paths the scan skipped (nil when not computed).
	Skipped []Skipped `json:"skipped"`
	// Pending is the kind of an interrupted operation awaiting recovery.
	Pending string `json:"pending,omitempty"`
	// Git describes the git backend's repository and refs (git backend only).
	Git *GitInfo `json:"git,omitempty"`
	// Session is the current session, if there is one.
	Session *SessionStatus `json:"session,omitempty"`
}

// MarshalJSON writes the paths as [Path] does, so a non-UTF-8 name
// round-trips.
func (s *Status) MarshalJSON() ([]byte, error) {
	type plain Status
	return json.Marshal(struct {
		Workspace Path `json:"workspace"`
		Store     Path `json:"store"`
		*plain
	}{Path(s.Workspace), Path(s.Store), (*plain)(s)})
}

// SessionStatus summarizes the current session.
type SessionStatus struct {
	ID    string `json:"id"`
	Title string `json:"title"`
	Turns int    `json:"turns"`
	// Open is the number of the turn in progress (0: none).
	Open int `json:"open,omitempty"`
}

// Status reports the workspace, its store and HEAD; with changes, also how
// the working tree differs from HEAD (a scan that stores nothing).
func (r *Repo) Status(ctx context.Context, changes bool) (*Status, error) {
	info, err := r.st.Info(ctx)
	if err != nil {
		return nil, err
	}
	s := &Status{Workspace: r.root, Store: info.Path, Backend: info.Backend, StoreSize: info.Size}
	if s.Store == "" {
		s.Store = "(memory)"
	}
	if r.git != nil {
		s.Backend = BackendGit
		s.Git = r.gitStatus(ctx)
	}
	recs, err := r.st.Checkpoints(ctx, store.ListFilter{})
	if err != nil {
		return nil, err
	}
	s.Checkpoints = len(recs)
	if s.Head, s.Branch, err = r.Head(ctx); err != nil {
		return nil, err
	}
	if j, err := r.st.Journal(ctx); err != nil {
		return nil, err
	} else if j != nil {
		s.Pending = j.Kind
	}
	if ss, err := r.Sessions(ctx); err != nil {
		return nil, err
	} else if len(ss) > 0 {
		cur := ss[0]
		s.Session = &SessionStatus{ID: cur.ID, Title: cur.Title, Turns: len(cur.Turns)}
		if n := len(cur.Turns); n > 0 && cur.Turns[n-1].Open() {
			s.Session.Open = n
		}
	}
	if changes {
		d, err := r.Diff(ctx, DiffOptions{})
		if err != nil {
			return nil, err
		}
		s.Changes = d.Changes()
		s.Skipped = append([]Skipped{}, d.Skipped...)
	}
	return s, nil
}

// Manifest is Decree's manifest.json: every file of a checkpoint with its
// SHA-256, size and mode ("644", "755" — the permission bits in octal — or
// "120000" for a symlink, whose hash and size are those of its target).
type Manifest struct {
	Files map[string]ManifestFile
}

// ManifestFile is one manifest entry.
type ManifestFile struct {
	SHA256 string `json:"sha256"`
	Size   int64  `json:"size"`
	Mode   string `json:"mode"`
}

// MarshalJSON writes {"files": {...}} with paths sorted and encoded as
// described for [Path], two-space indented.
func (m *Manifest) MarshalJSON() ([]byte, error) {
	keys := make([]string, 0, len(m.Files))
	for k := range m.Files {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var b bytes.Buffer
	b.WriteString("{\n  \"files\": {")
	for i, k := range keys {
		if i > 0 {
			b.WriteString(",")
		}
		kb, _ := json.Marshal(EncodePath(k))
		f := m.Files[k]
		fmt.Fprintf(&b, "\n    %s: {\n      \"sha256\": %q,\n      \"size\": %d,\n      \"mode\": %q\n    }", kb, f.SHA256, f.Size, f.Mode)
	}
	if len(keys) > 0 {
		b.WriteString("\n  ")
	}
	b.WriteString("}\n}")
	return b.Bytes(), nil
}

// UnmarshalJSON reads a manifest, decoding quoted paths.
func (m *Manifest) UnmarshalJSON(data []byte) error {
	var raw struct {
		Files map[string]ManifestFile `json:"files"`
	}
	if err := json.Unmarshal(data, &raw); err != nil {
		return err
	}
	m.Files = make(map[string]ManifestFile, len(raw.Files))
	for k, v := range raw.Files {
		p, err := DecodePath(k)
		if err != nil {
			return fmt.Errorf("manifest path %q: %v", k, err)
		}
		if !object.ValidPath(p) {
			return fmt.Errorf("manifest path %q is not a valid relative path", k)
		}
		m.Files[p] = v
	}
	return nil
}

// ManifestMode returns the manifest mode string of a tree entry mode.
func ManifestMode(mode uint32) string {
	if object.IsSymlink(mode) {
		return "120000"
	}
	return strconv.FormatUint(uint64(mode&0o777), 8)
}

// Manifest returns the Decree manifest of a checkpoint (only its paths for
// a partial checkpoint).
func (r *Repo) Manifest(ctx context.Context, rev string) (*Manifest, error) {
	rec, err := r.record(ctx, rev)
	if err != nil {
		return nil, err
	}
	m := &Manifest{Files: map[string]ManifestFile{}}
	err = tree.Walk(ctx, r.st.ReadTree, rec.Tree, tree.NewFilter(rec.Paths), func(p string, e object.Entry) error {
		m.Files[p] = ManifestFile{SHA256: e.ID.String(), Size: e.Size, Mode: ManifestMode(e.Mode)}
		return nil
	})
	return m, err
}

var _ = strings.TrimSpace
