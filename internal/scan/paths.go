package scan

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"

	"github.com/seed1cedbf7c/ckpt/internal/fsroot"
	"github.com/seed1cedbf7c/ckpt/internal/ignore"
	"github.com/seed1cedbf7c/ckpt/internal/object"
)

// IgnoredError reports that a path named explicitly is ignored.
type IgnoredError struct {
	Path    string
	Source  string // the ignore file, or "" for an always-excluded name
	Line    int
	Pattern string
	// Excluded is the Options.Exclude path (the store) that Path is or
	// lies in, if that is why.
	Excluded string
}

// Error implements error.
func (e *IgnoredError) Error() string {
	if e.Excluded != "" {
		return fmt.Sprintf("%s is never checkpointed: ckpt's store is at %s", e.Path, e.Excluded)
	}
	if e.Source == "" {
		return fmt.Sprintf("%s is never checkpointed (ckpt always excludes .git, .ckpt and .decree)", e.Path)
	}
	return fmt.Sprintf("%s is ignored by %s:%d (%s)", e.Path, e.Source, e.Line, e.Pattern)
}

// NestedError reports a path named explicitly that is, or lies inside, a
// nested git repository (with Options.NestedRepos).
type NestedError struct {
	Path string
	Repo string // the nested repository's directory
}

// Error implements error.
func (e *NestedError) Error() string {
	if e.Path == e.Repo {
		return fmt.Sprintf("%s is a nested git repository (a submodule): the git backend records it as a gitlink and never captures its files", e.Path)
	}
	return fmt.Sprintf("%s lies inside the nested git repository %s (a submodule): the git backend never captures its files", e.Path, e.Repo)
}

// nestedAncestor returns the first directory on rel's path (rel included)
// that contains a .git entry, or "".
func nestedAncestor(root *fsroot.Root, rel string) string {
	cur := ""
	for _, part := range strings.Split(rel, "/") {
		cur = join(cur, part)
		if _, err := root.Lstat(cur + "/.git"); err == nil {
			return cur
		}
	}
	return ""
}

// matcherFor returns the matcher for the entries of dir (dir's own ignore
// files included), checking that neither dir nor any ancestor is ignored.
func matcherFor(root *fsroot.Root, dir string) (*ignore.Matcher, error) {
	m := ignore.New(loadInfoExclude(root.Name()))
	cur := ""
	parts := []string{}
	if dir != "" {
		parts = strings.Split(dir, "/")
	}
	for i := 0; ; i++ {
		lists := [3]*ignore.List{}
		for j, name := range []string{".gitignore", ".ckptignore", ".decreeignore"} {
			fi, err := root.Lstat(join(cur, name))
			if err != nil || !fi.Mode().IsRegular() {
				continue
			}
			f, err := root.OpenFile(join(cur, name), os.O_RDONLY|fsroot.ONonblock, 0) // never block on a FIFO
			var data []byte
			if err == nil {
				data, err = io.ReadAll(f)
				f.Close()
			}
			if err != nil {
				return nil, &PathError{Op: "read", Path: join(cur, name), Err: unwrapErr(err)}
			}
			lists[j] = ignore.ParseList(cur, join(cur, name), data)
		}
		m = m.Child(cur, lists[0], lists[1], lists[2])
		if i == len(parts) {
			return m, nil
		}
		next := join(cur, parts[i])
		if excludedName(parts[i]) {
			return nil, &IgnoredError{Path: next}
		}
		isDir := true
		if fi, err := root.Lstat(next); err == nil {
			isDir = fi.IsDir()
		}
		if m.Ignored(next, isDir) {
			src, line, pat, _ := m.Explain(next, isDir)
			return nil, &IgnoredError{Path: next, Source: src, Line: line, Pattern: pat}
		}
		cur = next
	}
}

// Path captures one workspace path as it is now: a file or symlink entry, a
// directory's subtree (a directory entry), or nil when the path is absent
// (or an empty directory). Objects go to opts.Sink. A path that is ignored
// (or lies in an ignored directory) gives an *IgnoredError.
func Path(ctx context.Context, opts Options, rel string) (*object.Entry, *Result, error) {
	if !object.ValidPath(rel) {
		return nil, nil, fmt.Errorf("invalid path %q", rel)
	}
	for _, ex := range opts.Exclude {
		if rel == ex || strings.HasPrefix(rel, ex+"/") {
			return nil, nil, &IgnoredError{Path: rel, Excluded: ex}
		}
	}
	dir, name := "", rel
	if i := strings.LastIndexByte(rel, '/'); i >= 0 {
		dir, name = rel[:i], rel[i+1:]
	}
	if errPlatform != nil {
		return nil, nil, fmt.Errorf("scan %s: %w", opts.Root, errPlatform)
	}
	root, err := fsroot.Open(opts.Root)
	if err != nil {
		return nil, nil, &PathError{Op: "open workspace", Path: "", Err: unwrapErr(err)}
	}
	defer root.Close()
	// A file Options.Include lists is captured whatever the ignore rules
	// say (ckpt's own names and the store aside).
	included := slices.Contains(opts.Include, rel) || slices.Contains(opts.Tracked, rel)
	m, err := matcherFor(root, dir)
	bypassed := false
	if ie := (*IgnoredError)(nil); included && errors.As(err, &ie) && ie.Source != "" {
		m, err, bypassed = ignore.New(nil), nil, true
	}
	if err != nil {
		return nil, nil, err
	}
	if excludedName(name) || opts.own(dir, name) {
		return nil, nil, &IgnoredError{Path: rel}
	}
	if opts.NestedRepos {
		if repo := nestedAncestor(root, rel); repo != "" {
			return nil, nil, &NestedError{Path: rel, Repo: repo}
		}
	}
	raw, err := root.Stat(rel)
	if vanished(err) {
		// Absent, or below a file or a symlink (never followed).
		return nil, &Result{}, nil
	}
	if err != nil {
		return nil, nil, &PathError{Op: "stat", Path: rel, Err: unwrapErr(err)}
	}
	st := fromStat(raw)
	isDir := st.mode&sIFMT == sIFDIR
	if bypassed && isDir {
		return nil, nil, &IgnoredError{Path: rel}
	}
	if m.Ignored(rel, isDir) && !(included && !isDir) {
		src, line, pat, _ := m.Explain(rel, isDir)
		return nil, nil, &IgnoredError{Path: rel, Source: src, Line: line, Pattern: pat}
	}
	if isDir {
		res, err := scanFrom(ctx, opts, &node{rel: rel, m: m})
		if err != nil {
			return nil, nil, err
		}
		if res.Root == object.EmptyTree {
			return nil, res, nil
		}
		return &object.Entry{Name: name, Mode: object.ModeDir, Size: res.Bytes, ID: res.Root}, res, nil
	}
	// A single file or symlink: scan its directory's entry alone.
	parent := &node{rel: dir, m: m}
	s := newScanner(ctx, opts)
	defer s.cancel(nil)
	s.root = root
	res := &s.res
	switch st.mode & sIFMT {
	case sIFREG:
		if st.size > s.max {
			res.Skipped = append(res.Skipped, Skipped{Path: rel, Reason: fmt.Sprintf("larger than the %s limit", humanBytes(s.max)), Size: st.size})
			return nil, res, nil
		}
		parent.entries = []ent{{name: name, mode: object.ModeFile | st.mode&0o777, size: st.size, st: st}}
		if err := s.hashEntry(parent, 0); err != nil {
			return nil, nil, err
		}
	case sIFLNK:
		target, err := root.Readlink(rel)
		if err != nil {
			return nil, nil, &PathError{Op: "read symlink", Path: rel, Err: unwrapErr(err)}
		}
		id := object.Sum([]byte(target))
		if err := s.putBlob(id, []byte(target), object.ZeroID); err != nil {
			return nil, nil, err
		}
		parent.entries = []ent{{name: name, mode: object.ModeSymlink, size: int64(len(target)), id: id}}
	default:
		res.Skipped = append(res.Skipped, Skipped{Path: rel, Reason: fileType(st.mode)})
		return nil, res, nil
	}
	e := parent.entries[0]
	if e.mode == 0 {
		return nil, res, nil
	}
	res.Files, res.Bytes = 1, e.size
	return &object.Entry{Name: name, Mode: e.mode, Size: e.size, ID: e.id}, res, nil
}
