package diff

import (
	"bytes"
	"errors"
	"fmt"
	"slices"
	"strings"
)

// Tree is the file tree a patch is applied to. Paths are slash-separated and
// relative to the tree's root.
type Tree interface {
	// Read returns the file at path, or nil, nil when there is none
	// (including when a parent of path is not a directory).
	Read(path string) (*Side, error)
	// Write creates or replaces the file at path with s (a symlink when
	// s.Mode is 0o120000), creating parent directories as needed.
	Write(path string, s *Side) error
	// Remove deletes the file at path. Implementations should also remove
	// parent directories it leaves empty, as git does.
	Remove(path string) error
}

// ErrIsDir is wrapped by a [Tree]'s Read of a path that is a directory.
var ErrIsDir = errors.New("is a directory")

// DirTree is a [Tree] that can list the files below a directory. On one,
// a patch may replace a directory with a file, provided it removes every
// file the directory holds (a run that turned a file into a directory,
// reversed).
type DirTree interface {
	Tree
	// Below lists the files below the directory at dir (paths relative
	// to the tree's root).
	Below(dir string) ([]string, error)
}

// CheckPath reports whether p is safe to use as a path read from a diff:
// relative, slash-separated, with no empty, "." or ".." component, no NUL
// byte, and no ".git" component (in any letter case).
func CheckPath(p string) error {
	return checkPath(p, true)
}

func checkPath(p string, noGit bool) error {
	switch {
	case p == "":
		return errors.New("empty path")
	case strings.IndexByte(p, 0) >= 0:
		return fmt.Errorf("path %s contains a NUL byte", QuotePath(p))
	case p[0] == '/':
		return fmt.Errorf("absolute path %s", QuotePath(p))
	}
	for c := range strings.SplitSeq(p, "/") {
		switch {
		case c == "":
			return fmt.Errorf("path %s has an empty component", QuotePath(p))
		case c == "." || c == "..":
			return fmt.Errorf("path %s has a %q component", QuotePath(p), c)
		case noGit && strings.EqualFold(c, ".git"):
			return fmt.Errorf("path %s is inside .git", QuotePath(p))
		}
	}
	return nil
}

// ApplyTree applies p to t, or reverses it, all or nothing. It reads what
// it needs, computes every result in memory (later file patches see the
// results of earlier ones; in reverse the file patches are undone last to
// first), and only when all of them succeed removes and writes the files
// that change: removals first, then writes, each in path order. If a
// Remove or Write fails, ApplyTree puts back the files it already changed
// and returns the error. It returns the changed paths, sorted.
func ApplyTree(t Tree, p *Patch, reverse bool) (changed []string, err error) {
	type entry struct {
		orig, cur *Side
	}
	state := map[string]*entry{}
	// dirs: directories a file patch creates a file at; every file below
	// must be removed by the patch (checked once all are computed).
	dirs := map[string][]string{}
	get := func(path string) (*Side, error) {
		if e, ok := state[path]; ok {
			return e.cur, nil
		}
		s, err := t.Read(path)
		if dt, ok := t.(DirTree); ok && errors.Is(err, ErrIsDir) {
			below, lerr := dt.Below(path)
			if lerr != nil {
				return nil, fmt.Errorf("apply %s: %w", QuotePath(path), lerr)
			}
			dirs[path] = below
			s, err = nil, nil
		}
		if err != nil {
			return nil, fmt.Errorf("apply %s: %w", QuotePath(path), err)
		}
		state[path] = &entry{orig: s, cur: s}
		return s, nil
	}
	set := func(path string, s *Side) { state[path].cur = s }

	files := slices.Clone(p.Files)
	if reverse {
		slices.Reverse(files)
	}
	for _, fp := range files {
		for _, path := range []string{fp.OldPath, fp.NewPath} {
			if path == "" {
				continue
			}
			if err := CheckPath(path); err != nil {
				return nil, fmt.Errorf("apply: %w", err)
			}
		}
		from, to := fp.OldPath, fp.NewPath
		if reverse {
			from, to = to, from
		}
		var cur *Side
		if from != "" {
			if cur, err = get(from); err != nil {
				return nil, err
			}
		}
		if to != "" && to != from {
			// A created, renamed-to or copied-to file must not exist yet,
			// except that undoing a copy needs the source.
			exist, err := get(to)
			if err != nil {
				return nil, err
			}
			if exist != nil && !(fp.Copy && reverse) {
				return nil, &ApplyError{Path: to, Err: errors.New("file already exists")}
			}
		}
		res, err := fp.Apply(cur, reverse)
		if err != nil {
			return nil, err
		}
		switch {
		case from == "" || to == "" || from == to:
			path := from
			if path == "" {
				path = to
			}
			set(path, res)
		case fp.Copy && reverse:
			// Undoing a copy removes the copy, which must equal the source.
			if src := state[to].cur; src == nil || !bytes.Equal(src.Content, res.Content) {
				return nil, &ApplyError{Path: from, Err: fmt.Errorf("copy differs from its source %s", QuotePath(to))}
			}
			set(from, nil)
		case fp.Copy:
			set(to, res)
		default: // rename
			set(from, nil)
			set(to, res)
		}
	}

	for dir, below := range dirs {
		if state[dir].cur == nil {
			continue // nothing is put there
		}
		for _, f := range below {
			if e, ok := state[f]; !ok || e.cur != nil {
				return nil, &ApplyError{Path: dir, Err: ErrIsDir}
			}
		}
	}
	for path, e := range state {
		if !sameSide(e.orig, e.cur) {
			changed = append(changed, path)
		}
	}
	slices.Sort(changed)
	var removes, writes []string
	for _, path := range changed {
		if state[path].cur == nil {
			removes = append(removes, path)
		} else {
			writes = append(writes, path)
		}
	}
	var done []string
	undo := func(err error) ([]string, error) {
		for _, path := range slices.Backward(done) {
			var uerr error
			if orig := state[path].orig; orig == nil {
				uerr = t.Remove(path)
			} else {
				uerr = t.Write(path, orig)
			}
			if uerr != nil {
				err = errors.Join(err, fmt.Errorf("restore %s: %w", QuotePath(path), uerr))
			}
		}
		return nil, err
	}
	for _, path := range removes {
		if err := t.Remove(path); err != nil {
			return undo(fmt.Errorf("apply: remove %s: %w", QuotePath(path), err))
		}
		done = append(done, path)
	}
	for _, path := range writes {
		if err := t.Write(path, state[path].cur); err != nil {
			return undo(fmt.Errorf("apply: write %s: %w", QuotePath(path), err))
		}
		done = append(done, path)
	}
	return changed, nil
}

func sameSide(a, b *Side) bool {
	if a == nil || b == nil {
		return a == b
	}
	return a.Mode == b.Mode && bytes.Equal(a.Content, b.Content)
}
