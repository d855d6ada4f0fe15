package ignore

import (
	"strings"
	"testing"
)

// FuzzParseList parses arbitrary ignore files and asks about arbitrary
// paths: nothing may panic, every kept line is a single line, the deciding
// pattern is the one git's plain algorithm picks (refMatch), and Explain
// agrees with Ignored.
func FuzzParseList(f *testing.F) {
	for _, c := range syntaxCases {
		f.Add([]byte(c.ignore), c.path, c.kind == dir)
	}
	f.Add([]byte("\xef\xbb\xbf#c\r\n!a/**/b/\r\n\\ \n[[:x:]]\n[a-\\"), "a/x/b", true)
	f.Add([]byte("*\n!*/\n!*.go\nfoo**/bar\n/**\n**/\x00\n"), "foobar", false)
	f.Add([]byte(benchGitignore), "src/.vscode/settings.json", false)
	f.Add([]byte("a\nb\nc\nd/\n*.x\n*.y\n*.z\n*x\n!b\nq*/r\n"), "d", true)
	f.Fuzz(func(t *testing.T, data []byte, path string, isDir bool) {
		for _, base := range []string{"", "a", "a/b"} {
			l := ParseList(base, "fuzz", data)
			for _, p := range l.patterns {
				if strings.ContainsAny(p.raw, "\n\x00") {
					t.Fatalf("pattern %q holds a newline or NUL", p.raw)
				}
				if p.line < 1 {
					t.Fatalf("pattern %q has line %d", p.raw, p.line)
				}
			}
			if !strings.HasPrefix(path, "/") {
				checkAgainstRef(t, l, path, isDir)
			}
			for _, m := range []*Matcher{
				New(l),
				New(nil).Child(base, l, nil, nil),
				New(nil).Child(base, nil, l, l),
			} {
				ignored := m.Ignored(path, isDir)
				_, _, pat, ok := m.Explain(path, isDir)
				if want := ok && !strings.HasPrefix(pat, "!"); ignored != want {
					t.Fatalf("Ignored(%q) = %v but Explain gives %q, %v", path, ignored, pat, ok)
				}
			}
		}
	})
}

// FuzzWildmatch runs wildmatch on arbitrary input. Besides not panicking,
// a pattern that escapes every byte of a text must match exactly that
// text, and a pattern free of special bytes matches only itself.
func FuzzWildmatch(f *testing.F) {
	for _, c := range syntaxCases {
		f.Add(c.ignore, c.path, true)
	}
	f.Add("a/**/b", "a/x/y/b", true)
	f.Add("*a*a*a*a*a*a*a*b", strings.Repeat("a", 40), false)
	f.Add("**/**/**/x", "a/b/c/d/e/f/x", true)
	f.Add("[[:alpha:]][!]-a]\\", "x]\\", false)
	f.Fuzz(func(t *testing.T, pattern, text string, pathname bool) {
		flags := 0
		if pathname {
			flags = wmPathname
		}
		wildmatch(pattern, text, flags)

		if strings.IndexByte(text, 0) >= 0 {
			return // C strings: a NUL ends the text
		}
		var esc strings.Builder
		for i := 0; i < len(text); i++ {
			esc.WriteByte('\\')
			esc.WriteByte(text[i])
		}
		if !wildmatch(esc.String(), text, flags) {
			t.Fatalf("escaped %q does not match itself", text)
		}
		if strings.IndexByte(pattern, 0) < 0 && simpleLength(pattern) == len(pattern) {
			if got, want := wildmatch(pattern, text, flags), pattern == text; got != want {
				t.Fatalf("literal %q vs %q: match = %v, want %v", pattern, text, got, want)
			}
		}
	})
}
