package ignore

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/seed1cedbf7c/ckpt/internal/testutil"
)

// Entry kinds in syntaxCase.
const (
	file = 'f' // regular file
	dir  = 'd' // directory
	link = 'l' // symlink to a directory: never a directory for "x/"
)

// syntaxCase is one .gitignore, one path relative to the file's directory,
// and whether the path is ignored.
type syntaxCase struct {
	name   string
	ignore string
	path   string
	kind   byte
	want   bool
}

// syntaxCases pin gitignore syntax. TestSyntax checks each against the
// expectation written here and against `git check-ignore -v`.
var syntaxCases = []syntaxCase{
	// Basenames and anchoring.
	{"basename", "foo", "foo", file, true},
	{"basename at depth", "foo", "a/b/foo", file, true},
	{"basename is whole", "foo", "foobar", file, false},
	{"basename matches dir", "foo", "foo", dir, true},
	{"leading slash anchors", "/foo", "foo", file, true},
	{"leading slash anchors not deeper", "/foo", "a/foo", file, false},
	{"middle slash anchors", "a/b", "a/b", file, true},
	{"middle slash anchors not deeper", "a/b", "x/a/b", file, false},
	{"escaped slash anchors", "a\\/b", "a/b", file, true},
	{"case sensitive", "*.TXT", "x.txt", file, false},
	{"case sensitive literal", "Foo", "foo", file, false},

	// Directory-only patterns.
	{"dir-only matches dir", "foo/", "foo", dir, true},
	{"dir-only skips file", "foo/", "foo", file, false},
	{"dir-only skips symlink to dir", "foo/", "foo", link, false},
	{"dir-only at depth", "foo/", "a/foo", dir, true},
	{"anchored dir-only", "/foo/", "foo", dir, true},
	{"anchored dir-only not deeper", "/foo/", "a/foo", dir, false},
	{"dir-only with slash inside", "a/b/", "a/b", dir, true},
	{"dir-only with slash inside, file", "a/b/", "a/b", file, false},
	{"dir-only glob", "*.d/", "x.d", dir, true},
	{"dir-only glob, file", "*.d/", "x.d", file, false},
	{"starstar dir-only", "**/", "x", dir, true},
	{"starstar dir-only, file", "**/", "x", file, false},
	{"double trailing slash", "foo//", "foo", dir, false},
	{"negated dir-only spares dir", "*\n!foo/", "foo", dir, false},
	{"negated dir-only not for file", "*\n!foo/", "foo", file, true},

	// Comments, blank lines, escapes.
	{"comment", "# c", "# c", file, false},
	{"escaped hash", "\\#c", "#c", file, true},
	{"hash after space", " #c", " #c", file, true},
	{"hash not first", "a#c", "a#c", file, true},
	{"blank lines", "\n\n  \nfoo\n\n", "foo", file, true},
	{"escaped bang", "\\!x", "!x", file, true},
	{"escaped ordinary byte", "\\a", "a", file, true},
	{"escaped question mark", "\\?", "?", file, true},
	{"escaped question mark is literal", "\\?", "a", file, false},

	// Negation: the last matching line wins.
	{"lone negation", "!x", "x", file, false},
	{"negation after", "x\n!x", "x", file, false},
	{"negation before", "!x\nx", "x", file, true},
	{"negation of glob", "*.log\n!keep.log", "keep.log", file, false},
	{"negation of glob, others", "*.log\n!keep.log", "drop.log", file, true},
	{"bare bang matches nothing", "!", "!", file, false},
	{"bare slash matches nothing", "/", "x", dir, false},
	{"double bang", "!!x", "!x", file, false},
	{"double bang other", "x\n!!x", "x", file, true},

	// Trailing spaces and line ends.
	{"trailing spaces trimmed", "foo   ", "foo", file, true},
	{"trailing spaces trimmed, spaced name", "foo   ", "foo ", file, false},
	{"escaped trailing space", "foo\\ ", "foo ", file, true},
	{"escaped trailing space, bare name", "foo\\ ", "foo", file, false},
	{"escaped space then spaces", "foo\\   ", "foo ", file, true},
	{"inner spaces kept", "a b", "a b", file, true},
	{"trailing tab kept", "foo\t", "foo\t", file, true},
	{"trailing tab kept, bare name", "foo\t", "foo", file, false},
	{"crlf strips cr", "foo\r\nbar\r\n", "foo", file, true},
	{"crlf strips cr, name with cr", "foo\r\nbar\r\n", "foo\r", file, false},
	{"cr at eof stripped", "foo\r", "foo", file, true},
	{"spaces before crlf trimmed", "foo  \r\n", "foo", file, true},
	{"cr before spaces kept", "foo\r  \n", "foo\r", file, true},
	{"cr before spaces kept, bare name", "foo\r  \n", "foo", file, false},
	{"only one cr stripped", "foo\r\r\n", "foo\r", file, true},
	{"lone cr mid-line kept", "a\rb", "a\rb", file, true},
	{"bom skipped", "\xef\xbb\xbffoo\n", "foo", file, true},
	{"bom only at start", "x\n\xef\xbb\xbffoo\n", "foo", file, false},
	{"nul ends line", "foo\x00bar\n", "foo", file, true},
	{"nul ends line, rest ignored", "foo\x00bar\n", "bar", file, false},
	{"trailing backslash never matches", "foo\\", "foo\\", file, false},
	{"trailing backslash keeps spaces", "foo \\", "foo ", file, false},

	// Stars.
	{"suffix", "*.txt", "x.txt", file, true},
	{"suffix at depth", "*.txt", "a/x.txt", file, true},
	{"suffix is suffix", "*.txt", "x.txt.bak", file, false},
	{"star matches empty", "*.txt", ".txt", file, true},
	{"star", "*", "anything", file, true},
	{"star at depth", "*", "a/b", file, true},
	{"triple star", "***", "x", file, true},
	{"star in middle", "a*c", "abbbc", file, true},
	{"star in middle, no match", "a*c", "abbbd", file, false},
	{"double star in basename is star", "a**b", "axyb", file, true},
	{"leading double star in basename", "**a", "x/ya", file, true},
	{"anchored star stops at slash", "a/*", "a/b", file, true},
	{"anchored star stops at slash, deeper", "a/*", "a/b/c", file, false},
	{"star slash", "*/x", "a/x", file, true},
	{"star slash, deeper", "*/x", "a/b/x", file, false},
	{"star slash, top", "*/x", "x", file, false},
	{"anchored suffix", "/*.txt", "x.txt", file, true},
	{"anchored suffix, deeper", "/*.txt", "a/x.txt", file, false},
	{"slash star star", "/**", "a/b", file, true},

	// "**" with slashes.
	{"leading starstar, top", "**/foo", "foo", file, true},
	{"leading starstar, deep", "**/foo", "a/b/foo", file, true},
	{"leading starstar dir", "**/a/b", "x/a/b", file, true},
	{"trailing starstar", "foo/**", "foo/a", file, true},
	{"trailing starstar, deep", "foo/**", "foo/a/b", file, true},
	{"trailing starstar, not dir itself", "foo/**", "foo", dir, false},
	{"inner starstar, zero dirs", "a/**/b", "a/b", file, true},
	{"inner starstar, one dir", "a/**/b", "a/x/b", file, true},
	{"inner starstar, two dirs", "a/**/b", "a/x/y/b", file, true},
	{"inner starstar, not a suffix", "a/**/b", "a/xb", file, false},
	{"inner starstar dir-only", "a/**/", "a/b", dir, true},
	{"inner starstar dir-only, file", "a/**/", "a/b", file, false},
	{"starstar glued after slash is star", "a/**b", "a/xb", file, true},
	{"starstar glued after slash is star, deep", "a/**b", "a/x/b", file, false},
	{"starstar glued before slash is star", "x**/b", "xy/b", file, true},
	// git matches the literal prefix ("foo") first and hands only the rest
	// ("**/bar") to wildmatch, which then sees a leading "**/".
	{"literal prefix then starstar", "foo**/bar", "foobar", file, true},
	{"literal prefix then starstar, deep", "foo**/bar", "foo/x/y/bar", file, true},
	{"literal prefix then starstar, glued", "foo**/bar", "fooz/bar", file, true},
	{"no literal prefix: starstar is star", "*o**/bar", "fo/x/bar", file, false},

	// Question marks.
	{"question mark", "?", "a", file, true},
	{"question mark is one byte", "?", "ab", file, false},
	{"question mark in path", "a/?", "a/b", file, true},
	{"question mark is a byte, not a rune", "?", "\xc3\xa9", file, false},
	{"two question marks, one rune", "??", "\xc3\xa9", file, true},

	// Brackets.
	{"range", "[a-c]x", "bx", file, true},
	{"range, outside", "[a-c]x", "dx", file, false},
	{"bang negation", "[!a]x", "bx", file, true},
	{"bang negation, excluded", "[!a]x", "ax", file, false},
	{"caret negation", "[^a]x", "bx", file, true},
	{"caret negation, excluded", "[^a]x", "ax", file, false},
	{"bracket first", "[]]", "]", file, true},
	{"negated bracket first", "[!]]", "a", file, true},
	{"negated bracket first, excluded", "[!]]", "]", file, false},
	{"dash last", "[a-]", "-", file, true},
	{"dash first", "[-a]", "-", file, true},
	{"escaped bracket in class", "[\\]]", "]", file, true},
	{"dash after range is literal", "[a-c-e]", "-", file, true},
	{"dash after range is literal, not range", "[a-c-e]", "d", file, false},
	{"reversed range is empty", "[b-a]", "a", file, false},
	{"open bracket in class", "[[]", "[", file, true},
	{"unterminated bracket", "[abc", "[abc", file, false},
	{"unterminated bracket, member", "[abc", "a", file, false},
	{"lone bracket", "a[", "a[", file, false},
	{"non-utf8 in class", "[\xff]", "\xff", file, true},
	{"high range", "[\x80-\xff]x", "\xc3x", file, true},
	{"class does not match slash", "a[/]b", "a/b", file, false},
	{"digit", "[[:digit:]]", "5", file, true},
	{"digit, letter", "[[:digit:]]", "a", file, false},
	{"alpha not beyond ascii", "[[:alpha:]]", "\xe9", file, false},
	{"upper", "[[:upper:]]*", "Abc", file, true},
	{"upper, lower", "[[:upper:]]*", "abc", file, false},
	{"xdigit", "[[:xdigit:]]", "f", file, true},
	{"xdigit, g", "[[:xdigit:]]", "g", file, false},
	{"punct", "[[:punct:]]", "_", file, true},
	{"cntrl", "[[:cntrl:]]x", "\x01x", file, true},
	{"cntrl del", "[[:cntrl:]]x", "\x7fx", file, true},
	{"print space", "[[:print:]]", " ", file, true},
	{"graph space", "[[:graph:]]x", " x", file, false},
	{"blank tab", "[[:blank:]]x", "\tx", file, true},
	{"blank newline", "[[:blank:]]x", "\nx", file, false},
	{"space", "[[:space:]]x", " x", file, true},
	{"space tab", "[[:space:]]x", "\tx", file, true},
	{"space cr", "[[:space:]]x", "\rx", file, true},
	{"space newline", "[[:space:]]x", "\nx", file, true},
	// git's own ctype table leaves \v and \f out of "space".
	{"space not vt", "[[:space:]]x", "\vx", file, false},
	{"space not ff", "[[:space:]]x", "\fx", file, false},
	{"class with others", "[[:digit:]ab]", "b", file, true},
	{"negated class", "[![:digit:]]", "5", file, false},
	{"unknown class never matches", "[[:nope:]]", "n", file, false},
	{"class without colon is a set", "[[:alpha]", ":", file, true},
	{"class without colon is a set, member", "[[:alpha]", "h", file, true},
	{"class without colon is a set, other", "[[:alpha]", "x", file, false},

	// Bytes.
	{"non-utf8 literal", "\xff", "\xff", file, true},
	{"non-utf8 suffix", "*\xff", "a\xff", file, true},
	{"utf8 literal", "caf\xc3\xa9", "caf\xc3\xa9", file, true},
	{"newline in name needs glob", "nl?x", "nl\nx", file, true},
}

// syntaxMatcher returns the matcher for the entries of path's parent, with
// the case's .gitignore in directory dirOf.
func syntaxMatcher(dirOf string, l *List, path string) *Matcher {
	m := New(nil).Child("", nil, nil, nil)
	d := ""
	for _, comp := range strings.Split(path, "/")[:strings.Count(path, "/")] {
		d = join(d, comp)
		if d == dirOf {
			m = m.Child(d, l, nil, nil)
		} else {
			m = m.Child(d, nil, nil, nil)
		}
	}
	return m
}

// syntaxParentIgnored reports whether a directory above path is ignored,
// in which case git check-ignore reports that directory instead.
func syntaxParentIgnored(dirOf string, l *List, path string) bool {
	for i := len(dirOf) + 1; i < len(path); i++ {
		if path[i] == '/' && syntaxMatcher(dirOf, l, path[:i]).Ignored(path[:i], true) {
			return true
		}
	}
	return false
}

func TestSyntax(t *testing.T) {
	env := testutil.GitEnv(t)
	root := t.TempDir()
	gitInit(t, env, root)

	type prepared struct {
		c       syntaxCase
		dir     string // the case's directory
		path    string // relative to root
		list    *List
		checked bool // whether git's answer is comparable
	}
	var cases []prepared
	var stdin []byte
	for i, c := range syntaxCases {
		d := fmt.Sprintf("c%03d", i)
		p := prepared{c: c, dir: d, path: d + "/" + c.path}
		p.list = ParseList(d, d+"/.gitignore", []byte(c.ignore))
		testutil.WriteFile(t, filepath.Join(root, d, ".gitignore"), c.ignore)
		abs := filepath.Join(root, filepath.FromSlash(p.path))
		if err := os.MkdirAll(filepath.Dir(abs), 0o755); err != nil {
			t.Fatal(err)
		}
		switch c.kind {
		case file:
			testutil.WriteFile(t, abs, "x")
		case dir:
			if err := os.Mkdir(abs, 0o755); err != nil {
				t.Fatal(err)
			}
		case link:
			if err := os.Symlink(".", abs); err != nil {
				t.Fatal(err)
			}
		}
		p.checked = !syntaxParentIgnored(d, p.list, p.path)
		if p.checked {
			stdin = append(append(stdin, p.path...), 0)
		}
		cases = append(cases, p)
	}

	// git check-ignore -v -n -z prints source, line, pattern, path, each
	// NUL-terminated; the first three are empty when nothing matched.
	out := splitNUL(runGit(t, env, root, stdin, "check-ignore", "-v", "-n", "-z", "--stdin"))
	if len(out)%4 != 0 {
		t.Fatalf("git check-ignore: %d fields, not a multiple of 4", len(out))
	}
	type gitAnswer struct {
		source, line, pattern string
	}
	fromGit := map[string]gitAnswer{}
	for i := 0; i < len(out); i += 4 {
		fromGit[out[i+3]] = gitAnswer{out[i], out[i+1], out[i+2]}
	}

	compared := 0
	for _, p := range cases {
		if p.checked {
			compared++
		}
	}
	t.Logf("%d cases, %d also checked against git check-ignore", len(cases), compared)
	for _, p := range cases {
		c := p.c
		t.Run(c.name, func(t *testing.T) {
			m := syntaxMatcher(p.dir, p.list, p.path)
			got := m.Ignored(p.path, c.kind == dir)
			if got != c.want {
				t.Errorf("%+q in .gitignore %+q (kind %c): Ignored = %v, want %v", c.path, c.ignore, c.kind, got, c.want)
			}
			if !p.checked {
				return
			}
			g, ok := fromGit[p.path]
			if !ok {
				t.Fatalf("git check-ignore did not report %+q", p.path)
			}
			gitIgnored := g.pattern != "" && g.pattern[0] != '!'
			if got != gitIgnored {
				t.Errorf("%+q in .gitignore %+q (kind %c): Ignored = %v, git says %v (%s:%s:%+q)",
					c.path, c.ignore, c.kind, got, gitIgnored, g.source, g.line, g.pattern)
			}
			src, line, pat, ok := m.Explain(p.path, c.kind == dir)
			var mine gitAnswer
			if ok {
				mine = gitAnswer{src, fmt.Sprint(line), pat}
			}
			if mine != g {
				t.Errorf("%+q in .gitignore %+q: Explain = %+q, git check-ignore -v = %+q", c.path, c.ignore, mine, g)
			}
		})
	}
}
