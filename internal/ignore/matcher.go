package ignore

import "strings"

// A node links one per-directory list to the lists of the directories
// above it, deepest first. Nodes are shared between matchers.
type node struct {
	list   *List
	parent *node
}

// Matcher answers "is this path ignored" for entries of one directory. It is
// immutable and safe for concurrent use; Child returns a new Matcher sharing
// the parent's lists.
type Matcher struct {
	ckpt    *node // .decreeignore+.ckptignore lists, deepest first
	git     *node // .gitignore lists, deepest first
	exclude *List // .git/info/exclude, or nil
	// anchored: some list has a pattern matched against the whole path
	// (one with a slash); otherwise names alone decide.
	anchored bool
}

// New returns the matcher for the workspace root's *parent context*: exclude
// is the parsed .git/info/exclude (may be nil). Call Child with dir "" and
// the root's own ignore files to get the matcher for the root's entries.
func New(exclude *List) *Matcher {
	if exclude.Len() == 0 {
		exclude = nil
	}
	return &Matcher{exclude: exclude, anchored: exclude.hasAnchored()}
}

// Child returns the matcher for the entries of directory dir (relative path,
// "" = root), adding that directory's lists (any may be nil). Called once per
// directory the scanner enters.
//
// The lists must have been parsed with base dir. Within the directory the
// .decreeignore patterns come before the .ckptignore ones, so on a tie the
// .ckptignore line wins. When no list adds a pattern Child returns m itself,
// so a directory without ignore files costs nothing.
func (m *Matcher) Child(dir string, gitignore, ckptignore, decreeignore *List) *Matcher {
	var own *List
	switch {
	case decreeignore.Len() == 0:
		own = ckptignore
	case ckptignore.Len() == 0:
		own = decreeignore
	default:
		own = concat(dir, decreeignore, ckptignore)
	}
	if own.Len() == 0 && gitignore.Len() == 0 {
		return m
	}
	c := &Matcher{}
	if m != nil {
		*c = *m
	}
	if own.Len() > 0 {
		c.ckpt = &node{list: own, parent: c.ckpt}
		c.anchored = c.anchored || own.hasAnchored()
	}
	if gitignore.Len() > 0 {
		c.git = &node{list: gitignore, parent: c.git}
		c.anchored = c.anchored || gitignore.hasAnchored()
	}
	return c
}

// Empty reports whether the matcher has no patterns at all (nothing is
// ignored).
func (m *Matcher) Empty() bool {
	return m == nil || m.ckpt == nil && m.git == nil && m.exclude == nil
}

// IgnoredIn is Ignored for the entry name of directory dir ("" = root). It
// builds the entry's path only when some pattern needs it.
func (m *Matcher) IgnoredIn(dir, name string, isDir bool) bool {
	if m.Empty() {
		return false
	}
	path := name
	if m.anchored && dir != "" {
		path = dir + "/" + name
	}
	p := m.matchName(path, name, isDir)
	return p != nil && p.flags&flagNegative == 0
}

// Ignored reports whether path (relative, slash-separated, no leading slash;
// its parent is the directory this matcher was made for) is ignored. isDir:
// the entry is a real directory (false for a symlink to one).
//
// The deciding pattern is the last matching line of the first list, in the
// order .decreeignore/.ckptignore lists (deepest directory first), then
// .gitignore lists (deepest first), then .git/info/exclude. The path is
// ignored when that line is not negated. Ignored does not allocate.
func (m *Matcher) Ignored(path string, isDir bool) bool {
	p := m.match(path, isDir)
	return p != nil && p.flags&flagNegative == 0
}

// Explain returns the deciding pattern's source, line number and text (for
// `ckpt check-ignore`-like output), or ok=false.
//
// Like `git check-ignore -v`, it also reports a deciding negated pattern:
// the path is then not ignored, and pattern starts with "!". pattern is the
// line as parsed, after trailing spaces are trimmed.
func (m *Matcher) Explain(path string, isDir bool) (source string, line int, pattern string, ok bool) {
	p := m.match(path, isDir)
	if p == nil {
		return "", 0, "", false
	}
	return p.list.source, p.line, p.raw, true
}

// match returns the deciding pattern for path, or nil.
func (m *Matcher) match(path string, isDir bool) *pattern {
	if m == nil {
		return nil
	}
	return m.matchName(path, path[strings.LastIndexByte(path, '/')+1:], isDir)
}

// matchName is match with the entry's name already split off.
func (m *Matcher) matchName(path, name string, isDir bool) *pattern {
	if m == nil {
		return nil
	}
	for n := m.ckpt; n != nil; n = n.parent {
		if p := n.list.match(path, name, isDir); p != nil {
			return p
		}
	}
	for n := m.git; n != nil; n = n.parent {
		if p := n.list.match(path, name, isDir); p != nil {
			return p
		}
	}
	if m.exclude != nil {
		return m.exclude.match(path, name, isDir)
	}
	return nil
}
