package ignore

import (
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/seed1cedbf7c/ckpt/internal/testutil"
)

// dirFiles are the ignore files of one directory in a precedence test.
type dirFiles struct {
	gitignore, ckptignore, decreeignore string
}

// buildMatcher returns the matcher for the entries of dir, with the given
// ignore files per directory ("" is the root) and info/exclude.
func buildMatcher(exclude string, files map[string]dirFiles, dir string) *Matcher {
	parse := func(d, name, data string) *List {
		if data == "" {
			return nil
		}
		return ParseList(d, join(d, name), []byte(data))
	}
	var m *Matcher
	if exclude != "" {
		m = New(ParseList("", ".git/info/exclude", []byte(exclude)))
	} else {
		m = New(nil)
	}
	apply := func(d string) {
		f := files[d]
		m = m.Child(d,
			parse(d, ".gitignore", f.gitignore),
			parse(d, ".ckptignore", f.ckptignore),
			parse(d, ".decreeignore", f.decreeignore))
	}
	apply("")
	if dir != "" {
		d := ""
		for _, comp := range strings.Split(dir, "/") {
			d = join(d, comp)
			apply(d)
		}
	}
	return m
}

func TestPrecedence(t *testing.T) {
	tests := []struct {
		name    string
		exclude string
		files   map[string]dirFiles
		path    string
		isDir   bool
		want    bool
		// The deciding line, as Explain reports it ("" = none).
		source  string
		line    int
		pattern string
	}{
		{
			name: "ckptignore re-includes what a nested gitignore ignores",
			files: map[string]dirFiles{
				"":        {ckptignore: "!.env"},
				"sub":     {},
				"sub/dir": {gitignore: ".env"},
			},
			path: "sub/dir/.env", want: false,
			source: ".ckptignore", line: 1, pattern: "!.env",
		},
		{
			name: "ckptignore re-includes what the root gitignore ignores",
			files: map[string]dirFiles{
				"": {gitignore: ".env*\n", ckptignore: "# keep secrets out of git, not out of checkpoints\n!.env"},
			},
			path: ".env", want: false,
			source: ".ckptignore", line: 2, pattern: "!.env",
		},
		{
			name:    "ckptignore re-includes what info/exclude ignores",
			exclude: "*.local",
			files:   map[string]dirFiles{"": {ckptignore: "!*.local"}},
			path:    "x.local", want: false,
			source: ".ckptignore", line: 1, pattern: "!*.local",
		},
		{
			name: "ckptignore ignores what gitignore re-includes",
			files: map[string]dirFiles{
				"": {gitignore: "*.bin\n!model.bin", ckptignore: "model.bin"},
			},
			path: "model.bin", want: true,
			source: ".ckptignore", line: 1, pattern: "model.bin",
		},
		{
			name: "ckptignore ignores what nothing else mentions",
			files: map[string]dirFiles{
				"": {ckptignore: "/scratch/"},
			},
			path: "scratch", isDir: true, want: true,
			source: ".ckptignore", line: 1, pattern: "/scratch/",
		},
		{
			name: "a shallower ckptignore beats a deeper gitignore",
			files: map[string]dirFiles{
				"":    {ckptignore: "!x"},
				"sub": {gitignore: "x"},
			},
			path: "sub/x", want: false,
			source: ".ckptignore", line: 1, pattern: "!x",
		},
		{
			name: "deepest ckptignore first: nested negation wins",
			files: map[string]dirFiles{
				"":    {ckptignore: "*.log"},
				"sub": {ckptignore: "!keep.log"},
			},
			path: "sub/keep.log", want: false,
			source: "sub/.ckptignore", line: 1, pattern: "!keep.log",
		},
		{
			name: "deepest ckptignore first: nested ignore wins",
			files: map[string]dirFiles{
				"":    {ckptignore: "!*.log"},
				"sub": {ckptignore: "debug.log"},
			},
			path: "sub/debug.log", want: true,
			source: "sub/.ckptignore", line: 1, pattern: "debug.log",
		},
		{
			name: "deeper ckptignore without a match falls back to the shallower",
			files: map[string]dirFiles{
				"":    {ckptignore: "*.log"},
				"sub": {ckptignore: "other"},
			},
			path: "sub/a.log", want: true,
			source: ".ckptignore", line: 1, pattern: "*.log",
		},
		{
			name: "decreeignore ignores",
			files: map[string]dirFiles{
				"": {decreeignore: "\n\ndraft/"},
			},
			path: "draft", isDir: true, want: true,
			source: ".decreeignore", line: 3, pattern: "draft/",
		},
		{
			name: "decreeignore beats gitignore",
			files: map[string]dirFiles{
				"": {gitignore: "notes", decreeignore: "!notes"},
			},
			path: "notes", want: false,
			source: ".decreeignore", line: 1, pattern: "!notes",
		},
		{
			name: "ckptignore wins a tie with decreeignore in one directory",
			files: map[string]dirFiles{
				"": {decreeignore: "foo", ckptignore: "!foo"},
			},
			path: "foo", want: false,
			source: ".ckptignore", line: 1, pattern: "!foo",
		},
		{
			name: "ckptignore wins a tie with decreeignore, other way round",
			files: map[string]dirFiles{
				"": {decreeignore: "!foo", ckptignore: "foo"},
			},
			path: "foo", want: true,
			source: ".ckptignore", line: 1, pattern: "foo",
		},
		{
			name: "decreeignore still applies where ckptignore has no match",
			files: map[string]dirFiles{
				"": {decreeignore: "a\nb", ckptignore: "c"},
			},
			path: "b", want: true,
			source: ".decreeignore", line: 2, pattern: "b",
		},
		{
			name: "a deeper decreeignore beats a shallower ckptignore",
			files: map[string]dirFiles{
				"":    {ckptignore: "x"},
				"sub": {decreeignore: "!x"},
			},
			path: "sub/x", want: false,
			source: "sub/.decreeignore", line: 1, pattern: "!x",
		},
		{
			name: "ckptignore re-includes a directory gitignore excludes",
			files: map[string]dirFiles{
				"": {gitignore: "build/", ckptignore: "!build/"},
			},
			path: "build", isDir: true, want: false,
			source: ".ckptignore", line: 1, pattern: "!build/",
		},
		{
			name: "inside a re-included directory gitignore applies again",
			files: map[string]dirFiles{
				"":      {gitignore: "build/\n*.o", ckptignore: "!build/"},
				"build": {},
			},
			path: "build/x.o", want: true,
			source: ".gitignore", line: 2, pattern: "*.o",
		},
		{
			name:    "gitignore and info/exclude keep git's order",
			exclude: "x",
			files:   map[string]dirFiles{"": {gitignore: "!x"}},
			path:    "x", want: false,
			source: ".gitignore", line: 1, pattern: "!x",
		},
		{
			name:    "info/exclude applies last",
			exclude: "x",
			files:   map[string]dirFiles{"": {gitignore: "y", ckptignore: "z"}},
			path:    "x", want: true,
			source: ".git/info/exclude", line: 1, pattern: "x",
		},
		{
			name:  "nothing matches",
			files: map[string]dirFiles{"": {gitignore: "y", ckptignore: "z"}},
			path:  "x", want: false,
		},
		{
			name: "ckptignore anchors to its own directory",
			files: map[string]dirFiles{
				"":      {},
				"sub":   {ckptignore: "/a/b"},
				"sub/a": {},
			},
			path: "sub/a/b", want: true,
			source: "sub/.ckptignore", line: 1, pattern: "/a/b",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := ""
			if i := strings.LastIndexByte(tt.path, '/'); i >= 0 {
				dir = tt.path[:i]
			}
			m := buildMatcher(tt.exclude, tt.files, dir)
			if got := m.Ignored(tt.path, tt.isDir); got != tt.want {
				t.Errorf("Ignored(%q) = %v, want %v", tt.path, got, tt.want)
			}
			source, line, pattern, ok := m.Explain(tt.path, tt.isDir)
			if ok != (tt.pattern != "") || source != tt.source || line != tt.line || pattern != tt.pattern {
				t.Errorf("Explain(%q) = %q, %d, %q, %v; want %q, %d, %q, %v",
					tt.path, source, line, pattern, ok, tt.source, tt.line, tt.pattern, tt.pattern != "")
			}
		})
	}
}

// TestCkptignoreReincludedDirIsWalked checks the whole flow on disk: a
// directory that .gitignore excludes but .ckptignore brings back is
// descended, and its files are then judged by all lists again.
func TestCkptignoreReincludedDirIsWalked(t *testing.T) {
	root := t.TempDir()
	testutil.WriteFile(t, filepath.Join(root, ".gitignore"), "build/\n*.o\n.env\n")
	testutil.WriteFile(t, filepath.Join(root, ".ckptignore"), "!build/\n!.env\n")
	testutil.WriteFile(t, filepath.Join(root, "build", "app"), "x")
	testutil.WriteFile(t, filepath.Join(root, "build", "app.o"), "x")
	testutil.WriteFile(t, filepath.Join(root, "sub", ".gitignore"), ".env\n")
	testutil.WriteFile(t, filepath.Join(root, "sub", ".env"), "x")
	testutil.WriteFile(t, filepath.Join(root, "sub", ".decreeignore"), "private/\n")
	testutil.WriteFile(t, filepath.Join(root, "sub", "private", "key"), "x")
	testutil.WriteFile(t, filepath.Join(root, ".git", "info", "exclude"), "")

	got := walk(t, root)
	slices.Sort(got)
	want := []string{".ckptignore", ".gitignore", "build/app", "sub/.decreeignore", "sub/.env", "sub/.gitignore"}
	if !slices.Equal(got, want) {
		t.Errorf("walk = %q, want %q", got, want)
	}
}

func TestChildWithoutListsSharesParent(t *testing.T) {
	m := New(nil).Child("", ParseList("", ".gitignore", []byte("x")), nil, nil)
	empty := ParseList("sub", "sub/.gitignore", []byte("# only a comment\n\n   \n"))
	for _, c := range []*Matcher{
		m.Child("sub", nil, nil, nil),
		m.Child("sub", empty, empty, empty),
	} {
		if c != m {
			t.Errorf("Child without patterns = %p, want the parent %p", c, m)
		}
	}
	if c := m.Child("sub", nil, ParseList("sub", "sub/.ckptignore", []byte("y")), nil); c == m {
		t.Error("Child with a .ckptignore pattern returned the parent")
	}
}

func TestNilSafety(t *testing.T) {
	var m *Matcher
	if m.Ignored("x", false) {
		t.Error("nil Matcher ignores x")
	}
	if _, _, _, ok := m.Explain("x", false); ok {
		t.Error("nil Matcher explains x")
	}
	if c := m.Child("", nil, nil, nil); c.Ignored("x", false) {
		t.Error("child of nil Matcher ignores x")
	}
	c := m.Child("", ParseList("", ".gitignore", []byte("x")), nil, nil)
	if !c.Ignored("x", false) {
		t.Error("child of nil Matcher with a .gitignore does not ignore x")
	}
	if New(nil).Ignored("", false) {
		t.Error("empty path ignored")
	}
	// Paths the scanner never passes must not panic either.
	full := New(ParseList("", "exclude", []byte("*\n/a/b\n[a]\n*.x\nlit")))
	for _, p := range []string{"", "/", "a/", "//", "a//b"} {
		full.Ignored(p, true)
		full.Child("a", ParseList("a", "a/.gitignore", []byte("/b\nb/**")), nil, nil).Ignored(p, false)
	}
}
