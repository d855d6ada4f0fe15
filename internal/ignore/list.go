package ignore

import (
	"bytes"
	"strings"
)

// Pattern flags, as PATTERN_FLAG_* in git's dir.h.
const (
	flagNegative  = 1 << iota // "!pattern"
	flagMustBeDir             // "pattern/"
)

// How a pattern is matched; chosen once at parse time.
const (
	kindLiteral  = iota // basename == text
	kindSuffix          // "*literal": basename ends with text[1:]
	kindBaseGlob        // wildmatch(text, basename)
	kindPath            // anchored: match_pathname against the list's base
)

// A pattern is one parsed line of an ignore file.
type pattern struct {
	raw    string // the line as git keeps it: trailing spaces trimmed
	text   string // raw without "!", trailing "/" and, for kindPath, leading "/"
	need   string // bytes any text matching text[prefix:] contains (see requiredRun)
	prefix int    // length of text's leading run free of * ? [ \ (git's nowildcardlen)
	line   int    // 1-based line number in the file
	flags  uint8
	kind   uint8
	list   *List // the file the line came from (for Explain and the base)
}

// literalIndex records, for one literal basename, the highest index in
// List.patterns of a literal pattern matching any entry and of one matching
// only directories (-1 when none).
type literalIndex struct {
	any, dir int32
}

// Lists with at least indexMin patterns are indexed: when they hold at
// least bucketMin literal basename patterns these are looked up in a map,
// and when they hold at least bucketMin "*literal" patterns these are
// bucketed by their last byte. Only the remaining patterns are scanned.
const (
	indexMin  = 8
	bucketMin = 4
)

// suffixIndex buckets "*literal" patterns by the last byte of the literal:
// buckets[slot[b]-1] holds the indices, ascending, of those ending in b.
type suffixIndex struct {
	slot    [256]uint16
	buckets [][]int32
}

// bucket returns the indices of the patterns whose literal ends in b.
func (x *suffixIndex) bucket(b byte) []int32 {
	if s := x.slot[b]; s != 0 {
		return x.buckets[s-1]
	}
	return nil
}

// List is the parsed patterns of one ignore file, based at a directory.
//
// A List is immutable once parsed and safe for concurrent use.
type List struct {
	base     string // directory of the file, "" for the root
	source   string
	patterns []pattern

	indexed  bool
	lits     map[string]literalIndex // literal basename patterns, or nil
	suffixes *suffixIndex            // "*literal" patterns by last byte, or nil
	rest     []int32                 // indices of all other patterns, ascending
}

// ParseList parses gitignore-syntax data from the file at base (base = the
// directory holding the file, relative to the workspace root,
// slash-separated, "" for the root; never a leading or trailing slash).
// source is a label used in explanations, e.g. "sub/.gitignore".
//
// Parsing follows git's dir.c exactly: a UTF-8 byte order mark at the start
// is skipped; lines end at "\n" and one "\r" before it is dropped; empty
// lines and lines starting with "#" are skipped; a NUL byte ends the line;
// unescaped trailing spaces are trimmed. No input is an error: a pattern
// git cannot match (such as "[abc" with no closing bracket) simply never
// matches.
func ParseList(base, source string, data []byte) *List {
	l := &List{base: base, source: source}
	if len(data) == 0 {
		return l
	}
	data = bytes.TrimPrefix(data, []byte("\xef\xbb\xbf"))
	lineno := 1
	for start := 0; start <= len(data); lineno++ {
		line := data[start:]
		if i := bytes.IndexByte(line, '\n'); i >= 0 {
			line = line[:i]
			start += i + 1
		} else {
			start = len(data) + 1
		}
		if len(line) == 0 || line[0] == '#' {
			continue
		}
		if line[len(line)-1] == '\r' {
			line = line[:len(line)-1]
		}
		if i := bytes.IndexByte(line, 0); i >= 0 {
			line = line[:i]
		}
		line = trimTrailingSpaces(line)
		l.add(string(line), lineno)
	}
	l.index()
	return l
}

// trimTrailingSpaces drops trailing ' ' bytes unless escaped by a
// backslash, like dir.c's trim_trailing_spaces. A line ending in a lone
// backslash is kept whole.
func trimTrailingSpaces(s []byte) []byte {
	lastSpace := -1
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case ' ':
			if lastSpace < 0 {
				lastSpace = i
			}
		case '\\':
			i++
			if i >= len(s) {
				return s
			}
			lastSpace = -1
		default:
			lastSpace = -1
		}
	}
	if lastSpace >= 0 {
		return s[:lastSpace]
	}
	return s
}

// simpleLength is git's simple_length: the length of the leading run of s
// free of glob special bytes.
func simpleLength(s string) int {
	for i := 0; i < len(s); i++ {
		if isGlobSpecial(s[i]) {
			return i
		}
	}
	return len(s)
}

// add parses one line like dir.c's parse_path_pattern and appends it.
func (l *List) add(raw string, lineno int) {
	p := pattern{raw: raw, line: lineno, list: l}
	s := raw
	if strings.HasPrefix(s, "!") {
		p.flags |= flagNegative
		s = s[1:]
	}
	full := s // still with any trailing slash, as git's no_wildcard sees it
	if strings.HasSuffix(s, "/") {
		p.flags |= flagMustBeDir
		s = s[:len(s)-1]
	}
	if s == "" {
		// "", "!", "/" and "!/": git keeps these but they match no name.
		return
	}
	p.prefix = min(simpleLength(full), len(s))
	switch {
	case strings.IndexByte(s, '/') >= 0:
		p.kind = kindPath
		if s[0] == '/' {
			s = s[1:]
			p.prefix--
		}
	case p.prefix == len(s):
		p.kind = kindLiteral
	case s[0] == '*' && simpleLength(full[1:]) == len(full)-1:
		p.kind = kindSuffix
	default:
		p.kind = kindBaseGlob
	}
	p.text = s
	if p.kind == kindBaseGlob || p.kind == kindPath {
		p.need = requiredRun(s[p.prefix:])
	}
	l.patterns = append(l.patterns, p)
}

// index builds the lookup structures of a large list.
func (l *List) index() {
	l.indexed, l.lits, l.suffixes, l.rest = false, nil, nil, nil
	if len(l.patterns) < indexMin {
		return
	}
	nLit, nSuf := 0, 0
	for i := range l.patterns {
		switch p := &l.patterns[i]; {
		case p.kind == kindLiteral:
			nLit++
		case p.kind == kindSuffix && len(p.text) > 1:
			nSuf++
		}
	}
	if nLit < bucketMin && nSuf < bucketMin {
		return
	}
	l.indexed = true
	if nLit >= bucketMin {
		l.lits = make(map[string]literalIndex, nLit)
	}
	if nSuf >= bucketMin {
		l.suffixes = new(suffixIndex)
	}
	for i := range l.patterns {
		p := &l.patterns[i]
		switch {
		case p.kind == kindLiteral && l.lits != nil:
			e, ok := l.lits[p.text]
			if !ok {
				e = literalIndex{any: -1, dir: -1}
			}
			if p.flags&flagMustBeDir != 0 {
				e.dir = int32(i)
			} else {
				e.any = int32(i)
			}
			l.lits[p.text] = e
		case p.kind == kindSuffix && len(p.text) > 1 && l.suffixes != nil:
			x, last := l.suffixes, p.text[len(p.text)-1]
			if x.slot[last] == 0 {
				x.buckets = append(x.buckets, nil)
				x.slot[last] = uint16(len(x.buckets))
			}
			x.buckets[x.slot[last]-1] = append(x.buckets[x.slot[last]-1], int32(i))
		default:
			l.rest = append(l.rest, int32(i))
		}
	}
}

// hasAnchored reports whether some pattern is matched against the whole
// path rather than the name alone.
func (l *List) hasAnchored() bool {
	if l == nil {
		return false
	}
	for i := range l.patterns {
		switch l.patterns[i].kind {
		case kindLiteral, kindSuffix, kindBaseGlob:
		default:
			return true
		}
	}
	return false
}

// Base returns the directory the list's patterns are anchored to ("" for a
// nil list).
func (l *List) Base() string {
	if l == nil {
		return ""
	}
	return l.base
}

// Source returns the label given to ParseList ("" for a nil list).
func (l *List) Source() string {
	if l == nil {
		return ""
	}
	return l.source
}

// Len returns the number of patterns in the list (skipped lines excluded).
func (l *List) Len() int {
	if l == nil {
		return 0
	}
	return len(l.patterns)
}

// concat returns a list holding a's patterns then b's, based at base. The
// patterns keep their own sources.
func concat(base string, a, b *List) *List {
	l := &List{base: base, source: b.source}
	l.patterns = make([]pattern, 0, len(a.patterns)+len(b.patterns))
	l.patterns = append(l.patterns, a.patterns...)
	l.patterns = append(l.patterns, b.patterns...)
	l.index()
	return l
}

// match returns the last pattern of l matching path, or nil. name is the
// last component of path.
func (l *List) match(path, name string, isDir bool) *pattern {
	if !l.indexed {
		for i := len(l.patterns) - 1; i >= 0; i-- {
			if p := &l.patterns[i]; p.matches(path, name, isDir) {
				return p
			}
		}
		return nil
	}
	// lo is the highest index found in the map and buckets; only the other
	// patterns above it can still win.
	lo := int32(-1)
	if l.lits != nil {
		if e, ok := l.lits[name]; ok {
			lo = e.any
			if isDir && e.dir > lo {
				lo = e.dir
			}
		}
	}
	if l.suffixes != nil && name != "" {
		b := l.suffixes.bucket(name[len(name)-1])
		for i := len(b) - 1; i >= 0 && b[i] > lo; i-- {
			if l.patterns[b[i]].matches(path, name, isDir) {
				lo = b[i]
				break
			}
		}
	}
	for i := len(l.rest) - 1; i >= 0 && l.rest[i] > lo; i-- {
		if p := &l.patterns[l.rest[i]]; p.matches(path, name, isDir) {
			return p
		}
	}
	if lo >= 0 {
		return &l.patterns[lo]
	}
	return nil
}

// matches reports whether p matches path (whose last component is name),
// like the loop body of dir.c's last_matching_pattern_from_list.
func (p *pattern) matches(path, name string, isDir bool) bool {
	if p.flags&flagMustBeDir != 0 && !isDir {
		return false
	}
	switch p.kind {
	case kindLiteral:
		return name == p.text
	case kindSuffix:
		return strings.HasSuffix(name, p.text[1:])
	case kindBaseGlob:
		// The literal prefix and the required run are quick necessary
		// conditions; wildmatch decides.
		return strings.HasPrefix(name, p.text[:p.prefix]) &&
			strings.Contains(name[p.prefix:], p.need) &&
			wildmatch(p.text, name, 0)
	}
	return p.matchPath(path)
}

// matchPath is dir.c's match_pathname: path must lie below the list's base,
// its literal prefix is compared directly and the rest goes to wildmatch
// with WM_PATHNAME.
func (p *pattern) matchPath(path string) bool {
	base := p.list.base
	rel := path
	if base != "" {
		if len(path) < len(base)+1 || path[len(base)] != '/' || path[:len(base)] != base {
			return false
		}
		rel = path[len(base)+1:]
	} else if path == "" {
		return false
	}
	if p.prefix == len(p.text) {
		return rel == p.text
	}
	if p.prefix > len(rel) || rel[:p.prefix] != p.text[:p.prefix] {
		return false
	}
	// As in git, the wildcard part is matched on its own, so a "**" right
	// after the literal prefix counts as leading ("foo**/bar" matches
	// "foobar").
	rel = rel[p.prefix:]
	return strings.Contains(rel, p.need) && wildmatch(p.text[p.prefix:], rel, wmPathname)
}

// requiredRun returns the longest run of bytes that every text matched by
// the wildmatch pattern p contains. Such bytes are matched one for one by
// wildmatch's literal case, so a run of them appears unbroken in the text.
// Runs stop at * ? / and escapes (an escaped byte is left out), and nothing
// from the first '[' on is used, since bracket contents are not literal.
func requiredRun(p string) string {
	best := ""
	start := 0
	for i := 0; i <= len(p); i++ {
		if i < len(p) && !isGlobSpecial(p[i]) && p[i] != '/' {
			continue
		}
		if i-start > len(best) {
			best = p[start:i]
		}
		if i == len(p) || p[i] == '[' {
			break
		}
		if p[i] == '\\' {
			i++
		}
		start = i + 1
	}
	return best
}
