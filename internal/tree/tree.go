// Package tree walks, compares and edits Merkle trees of checkpoints without
// touching the file system. Comparisons skip every subtree whose id is equal
// on both sides, so their cost grows with the difference, not the tree.
package tree

import (
	"context"
	"fmt"
	"sort"
	"strings"

	"github.com/seed1cedbf7c/ckpt/internal/object"
)

// Loader reads a tree by id.
type Loader func(ctx context.Context, id object.ID) (*object.Tree, error)

func load(ctx context.Context, l Loader, id object.ID) (*object.Tree, error) {
	if id.IsZero() || id == object.EmptyTree {
		return &object.Tree{}, nil
	}
	return l(ctx, id)
}

// Change is one path that differs between two trees. Entries are files or
// symlinks, never directories: a directory on one side appears as the files
// below it. Old or New is nil when the path is absent on that side.
type Change struct {
	Path     string
	Old, New *object.Entry
}

// Filter restricts a walk to some paths: a path matches if it equals one of
// them or lies below one. A nil Filter matches everything.
type Filter struct{ paths []string }

// NewFilter returns a filter for paths (cleaned, slash-separated, relative).
// An empty list gives nil (everything).
func NewFilter(paths []string) *Filter {
	if len(paths) == 0 {
		return nil
	}
	ps := append([]string(nil), paths...)
	sort.Strings(ps)
	return &Filter{paths: ps}
}

// Paths returns the filter's paths.
func (f *Filter) Paths() []string {
	if f == nil {
		return nil
	}
	return f.paths
}

// Match reports whether p is selected.
func (f *Filter) Match(p string) bool {
	if f == nil {
		return true
	}
	for _, q := range f.paths {
		if p == q || strings.HasPrefix(p, q+"/") {
			return true
		}
	}
	return false
}

// Descend reports whether directory d may contain selected paths.
func (f *Filter) Descend(d string) bool {
	if f == nil || d == "" {
		return true
	}
	for _, q := range f.paths {
		if d == q || strings.HasPrefix(d, q+"/") || strings.HasPrefix(q, d+"/") {
			return true
		}
	}
	return false
}

func join(dir, name string) string {
	if dir == "" {
		return name
	}
	return dir + "/" + name
}

// Diff calls fn for every changed file or symlink between trees a and b,
// in order of path bytes within each directory. Subtrees with equal ids
// are skipped without being read.
func Diff(ctx context.Context, l Loader, a, b object.ID, f *Filter, fn func(Change) error) error {
	return diffDir(ctx, l, "", a, b, f, fn)
}

func diffDir(ctx context.Context, l Loader, dir string, a, b object.ID, f *Filter, fn func(Change) error) error {
	if a == b {
		return nil
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	ta, err := load(ctx, l, a)
	if err != nil {
		return err
	}
	tb, err := load(ctx, l, b)
	if err != nil {
		return err
	}
	i, j := 0, 0
	for i < len(ta.Entries) || j < len(tb.Entries) {
		var ea, eb *object.Entry
		switch {
		case j >= len(tb.Entries) || (i < len(ta.Entries) && ta.Entries[i].Name < tb.Entries[j].Name):
			ea = &ta.Entries[i]
			i++
		case i >= len(ta.Entries) || tb.Entries[j].Name < ta.Entries[i].Name:
			eb = &tb.Entries[j]
			j++
		default:
			ea, eb = &ta.Entries[i], &tb.Entries[j]
			i++
			j++
		}
		name := ""
		if ea != nil {
			name = ea.Name
		} else {
			name = eb.Name
		}
		p := join(dir, name)
		if err := diffEntry(ctx, l, p, ea, eb, f, fn); err != nil {
			return err
		}
	}
	return nil
}

func diffEntry(ctx context.Context, l Loader, p string, ea, eb *object.Entry, f *Filter, fn func(Change) error) error {
	aDir := ea != nil && object.IsDir(ea.Mode)
	bDir := eb != nil && object.IsDir(eb.Mode)
	if ea != nil && eb != nil && ea.Mode == eb.Mode && ea.ID == eb.ID {
		return nil
	}
	switch {
	case aDir && bDir:
		if !f.Descend(p) {
			return nil
		}
		return diffDir(ctx, l, p, ea.ID, eb.ID, f, fn)
	case aDir || bDir:
		// A directory against a file, symlink or nothing.
		var fileOld, fileNew *object.Entry
		if !aDir {
			fileOld = ea
		}
		if !bDir {
			fileNew = eb
		}
		if aDir && f.Descend(p) {
			if err := diffDir(ctx, l, p, ea.ID, object.ZeroID, f, fn); err != nil {
				return err
			}
		}
		if (fileOld != nil || fileNew != nil) && f.Match(p) {
			if err := fn(Change{Path: p, Old: fileOld, New: fileNew}); err != nil {
				return err
			}
		}
		if bDir && f.Descend(p) {
			return diffDir(ctx, l, p, object.ZeroID, eb.ID, f, fn)
		}
		return nil
	default:
		if !f.Match(p) {
			return nil
		}
		return fn(Change{Path: p, Old: ea, New: eb})
	}
}

// Walk calls fn for every file and symlink below root (paths prefixed by
// prefix), in tree order.
func Walk(ctx context.Context, l Loader, root object.ID, f *Filter, fn func(path string, e object.Entry) error) error {
	return walkDir(ctx, l, "", root, f, fn)
}

func walkDir(ctx context.Context, l Loader, dir string, id object.ID, f *Filter, fn func(string, object.Entry) error) error {
	t, err := load(ctx, l, id)
	if err != nil {
		return err
	}
	for _, e := range t.Entries {
		p := join(dir, e.Name)
		if object.IsDir(e.Mode) {
			if f.Descend(p) {
				if err := walkDir(ctx, l, p, e.ID, f, fn); err != nil {
					return err
				}
			}
			continue
		}
		if f.Match(p) {
			if err := fn(p, e); err != nil {
				return err
			}
		}
	}
	return nil
}

// Lookup returns the entry at path p in root (directories included).
func Lookup(ctx context.Context, l Loader, root object.ID, p string) (object.Entry, bool, error) {
	id := root
	parts := strings.Split(p, "/")
	for i, name := range parts {
		t, err := load(ctx, l, id)
		if err != nil {
			return object.Entry{}, false, err
		}
		e, ok := t.Find(name)
		if !ok {
			return object.Entry{}, false, nil
		}
		if i == len(parts)-1 {
			return e, true, nil
		}
		if !object.IsDir(e.Mode) {
			return object.Entry{}, false, nil
		}
		id = e.ID
	}
	return object.Entry{}, false, nil
}

// Put stores a new tree encoding.
type Put func(id object.ID, data []byte) error

// Overlay returns root with edits applied: each path is set to its entry (a
// file, symlink or directory subtree) or removed (nil). Missing parent
// directories are created; directories left empty are dropped (empty
// directories are not tracked). A removal below a path that is itself
// removed or set to a file or symlink changes nothing (a directory that
// became a file: its old entries go with it). New trees are passed to put.
func Overlay(ctx context.Context, l Loader, put Put, root object.ID, edits map[string]*object.Entry) (object.ID, error) {
	paths := make([]string, 0, len(edits))
	for p := range edits {
		if !object.ValidPath(p) {
			return object.ID{}, fmt.Errorf("invalid path %q", p)
		}
		paths = append(paths, p)
	}
	sort.Strings(paths)
	id, _, err := overlayDir(ctx, l, put, root, "", paths, edits)
	return id, err
}

// overlayDir applies the edits under dir (paths are sorted and all below dir).
func overlayDir(ctx context.Context, l Loader, put Put, id object.ID, dir string, paths []string, edits map[string]*object.Entry) (object.ID, int64, error) {
	t, err := load(ctx, l, id)
	if err != nil {
		return object.ID{}, 0, err
	}
	entries := append([]object.Entry(nil), t.Entries...)
	// Group the paths by their first component below dir.
	for len(paths) > 0 {
		rel := paths[0]
		if dir != "" {
			rel = strings.TrimPrefix(rel, dir+"/")
		}
		name, _, _ := strings.Cut(rel, "/")
		childPath := join(dir, name)
		var group []string
		for len(paths) > 0 && (paths[0] == childPath || strings.HasPrefix(paths[0], childPath+"/")) {
			group = append(group, paths[0])
			paths = paths[1:]
		}
		idx := sort.Search(len(entries), func(i int) bool { return entries[i].Name >= name })
		exists := idx < len(entries) && entries[idx].Name == name
		// The starting value of the child: the edit for it, if any, else
		// what the tree holds.
		var cur *object.Entry
		if group[0] == childPath {
			cur = edits[childPath]
			group = group[1:]
			if cur == nil || !object.IsDir(cur.Mode) {
				// Removals below a path removed or set to a file or
				// symlink remove nothing more; writes below it still make
				// it a directory.
				kept := group[:0:0]
				for _, p := range group {
					if edits[p] != nil {
						kept = append(kept, p)
					}
				}
				group = kept
			}
		} else if exists {
			cur = &entries[idx]
		}
		newEntry := cur
		if len(group) > 0 {
			// Edits below the child: it becomes (or stays) a directory.
			base := object.ZeroID
			if cur != nil && object.IsDir(cur.Mode) {
				base = cur.ID
			}
			sub, size, err := overlayDir(ctx, l, put, base, childPath, group, edits)
			if err != nil {
				return object.ID{}, 0, err
			}
			newEntry = dirEntry(name, sub, size)
		}
		if newEntry != nil {
			ne := *newEntry
			ne.Name = name
			newEntry = &ne
		}
		switch {
		case newEntry == nil && exists:
			entries = append(entries[:idx], entries[idx+1:]...)
		case newEntry != nil && exists:
			entries[idx] = *newEntry
		case newEntry != nil:
			entries = append(entries, object.Entry{})
			copy(entries[idx+1:], entries[idx:])
			entries[idx] = *newEntry
		}
	}
	nt := &object.Tree{Entries: entries}
	if len(entries) == 0 {
		return object.EmptyTree, 0, nil
	}
	data := nt.Encode()
	nid := object.Sum(data)
	if nid != id {
		if err := put(nid, data); err != nil {
			return object.ID{}, 0, err
		}
	}
	return nid, nt.Size(), nil
}

// dirEntry returns a directory entry for subtree sub, or nil if it is empty.
func dirEntry(name string, sub object.ID, size int64) *object.Entry {
	if sub == object.EmptyTree {
		return nil
	}
	return &object.Entry{Name: name, Mode: object.ModeDir, Size: size, ID: sub}
}

// Count returns the number of files and symlinks below root, and their size.
func Count(ctx context.Context, l Loader, root object.ID) (files, bytes int64, err error) {
	t, err := load(ctx, l, root)
	if err != nil {
		return 0, 0, err
	}
	for _, e := range t.Entries {
		if object.IsDir(e.Mode) {
			f, b, err := Count(ctx, l, e.ID)
			if err != nil {
				return 0, 0, err
			}
			files += f
			bytes += b
			continue
		}
		files++
		bytes += e.Size
	}
	return files, bytes, nil
}
