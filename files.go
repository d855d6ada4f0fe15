package ckpt

import (
	"context"
	"fmt"
	"io"
	"path"

	"github.com/seed1cedbf7c/ckpt/internal/object"
	"github.com/seed1cedbf7c/ckpt/internal/store"
	"github.com/seed1cedbf7c/ckpt/internal/tree"
)

// TreeEntry is a file, symlink or directory of a checkpoint, as
// [Repo.Stat] and [Repo.ListTree] return it.
type TreeEntry struct {
	// Path is workspace-relative, slash-separated ("" for the top).
	Path Path `json:"path"`
	// Type is "file", "symlink" or "dir".
	Type string `json:"type"`
	// Mode is the git mode in octal as git ls-tree prints it: 100644,
	// 100755, 120000 or 040000.
	Mode string `json:"mode"`
	// Size is the file's length, or the symlink target's; 0 for a
	// directory.
	Size int64 `json:"size"`
	// ID is the content's hash (a directory's tree hash).
	ID ID `json:"id"`
}

// IsDir reports whether the entry is a directory.
func (e *TreeEntry) IsDir() bool { return e.Type == "dir" }

func newTreeEntry(p string, e object.Entry) TreeEntry {
	te := TreeEntry{Path: Path(p), Mode: fmt.Sprintf("%06o", e.Mode), Size: e.Size, ID: e.ID}
	switch {
	case object.IsDir(e.Mode):
		te.Type, te.Size = "dir", 0
	case object.IsSymlink(e.Mode):
		te.Type = "symlink"
	default:
		te.Type = "file"
	}
	return te
}

// Stat returns the entry at p (workspace-relative, slash-separated; "" or
// "." for the top directory) in checkpoint rev. A path the checkpoint does
// not hold — or, for a partial checkpoint, one outside its paths — is an
// error wrapping [ErrNotFound] that names rev and p.
func (r *Repo) Stat(ctx context.Context, rev, p string) (*TreeEntry, error) {
	rec, err := r.record(ctx, rev)
	if err != nil {
		return nil, err
	}
	e, err := r.stat(ctx, rec, rev, p)
	if err != nil {
		return nil, err
	}
	return &e, nil
}

func (r *Repo) stat(ctx context.Context, rec *store.Record, rev, p string) (TreeEntry, error) {
	p = path.Clean("/" + p)[1:]
	if p == "" {
		return TreeEntry{Type: "dir", Mode: "040000", ID: rec.Tree}, nil
	}
	f := tree.NewFilter(rec.Paths)
	e, ok, err := tree.Lookup(ctx, r.st.ReadTree, rec.Tree, p)
	if err != nil {
		return TreeEntry{}, err
	}
	if ok && (f.Match(p) || object.IsDir(e.Mode) && f.Descend(p)) {
		return newTreeEntry(p, e), nil
	}
	return TreeEntry{}, withHint(&notFoundError{fmt.Sprintf("path %s not in checkpoint %s", QuotePath(p), rev)},
		fmt.Sprintf("'ckpt ls -r %s' lists its files", rev))
}

// OpenFile returns the content of the file at p in checkpoint rev,
// streamed and verified as it is read (a read error wraps [ErrCorrupt] if
// the store no longer matches), with its entry. A symlink's content is its
// target, as git stores it. A directory is an error: list it with
// [Repo.ListTree].
func (r *Repo) OpenFile(ctx context.Context, rev, p string) (io.ReadCloser, *TreeEntry, error) {
	e, err := r.Stat(ctx, rev, p)
	if err != nil {
		return nil, nil, err
	}
	if e.IsDir() {
		return nil, e, withHint(fmt.Errorf("path %s in checkpoint %s is a directory", QuotePath(string(e.Path)), rev),
			fmt.Sprintf("'ckpt ls %s %s' lists it", rev, QuotePath(string(e.Path))))
	}
	rc, _, err := r.st.OpenBlob(ctx, e.ID)
	if err != nil {
		return nil, nil, fmt.Errorf("%s in checkpoint %s: %w", QuotePath(string(e.Path)), rev, err)
	}
	return rc, e, nil
}

// ListTree lists directory p ("" for the top) of checkpoint rev, as git
// ls-tree does: its entries in name order, or the entry itself when p is
// a file or symlink. With recursive it lists every file and symlink below
// p instead, without the directories. A partial checkpoint lists only its
// paths.
func (r *Repo) ListTree(ctx context.Context, rev, p string, recursive bool) ([]TreeEntry, error) {
	rec, err := r.record(ctx, rev)
	if err != nil {
		return nil, err
	}
	top, err := r.stat(ctx, rec, rev, p)
	if err != nil {
		return nil, err
	}
	if !top.IsDir() {
		return []TreeEntry{top}, nil
	}
	f := tree.NewFilter(rec.Paths)
	out := []TreeEntry{}
	dir := string(top.Path)
	if recursive {
		err := tree.Walk(ctx, r.st.ReadTree, top.ID, nil, func(q string, e object.Entry) error {
			if full := joinPath(dir, q); f.Match(full) {
				out = append(out, newTreeEntry(full, e))
			}
			return nil
		})
		return out, err
	}
	var entries []object.Entry
	if top.ID != object.EmptyTree && !top.ID.IsZero() {
		t, err := r.st.ReadTree(ctx, top.ID)
		if err != nil {
			return nil, err
		}
		entries = t.Entries
	}
	for _, e := range entries {
		full := joinPath(dir, e.Name)
		if f.Match(full) || object.IsDir(e.Mode) && f.Descend(full) {
			out = append(out, newTreeEntry(full, e))
		}
	}
	return out, nil
}

func joinPath(dir, name string) string {
	if dir == "" {
		return name
	}
	return dir + "/" + name
}
