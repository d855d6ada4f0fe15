package ignore

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
)

// refMatch is a literal transcription of git's last_matching_pattern_from_list,
// match_basename and match_pathname, with none of this package's shortcuts
// (pattern kinds, literal map, suffix buckets, required runs). It returns
// the index in l.patterns of the deciding pattern, or -1.
func refMatch(l *List, path string, isDir bool) int {
	name := path[strings.LastIndexByte(path, '/')+1:]
	for i := len(l.patterns) - 1; i >= 0; i-- {
		s := l.patterns[i].raw
		s = strings.TrimPrefix(s, "!")
		full := s
		n := len(s)
		mustBeDir := false
		if n > 0 && s[n-1] == '/' {
			n--
			mustBeDir = true
		}
		pat := s[:n]
		noDir := strings.IndexByte(pat, '/') < 0
		nowild := min(refSimpleLength(full), n)
		endsWith := strings.HasPrefix(full, "*") && refSimpleLength(full[1:]) == len(full)-1

		if mustBeDir && !isDir {
			continue
		}
		if noDir {
			switch {
			case nowild == n:
				if n == len(name) && pat == name {
					return i
				}
			case endsWith:
				if n-1 <= len(name) && name[len(name)-(n-1):] == pat[1:] {
					return i
				}
			default:
				if wildmatch(pat, name, 0) {
					return i
				}
			}
			continue
		}
		prefix := nowild
		if pat[0] == '/' {
			pat = pat[1:]
			prefix--
		}
		base := l.base
		if len(path) < len(base)+1 || (base != "" && path[len(base)] != '/') || path[:len(base)] != base {
			continue
		}
		rel := path
		if base != "" {
			rel = path[len(base)+1:]
		}
		if prefix > 0 {
			if prefix > len(rel) || pat[:prefix] != rel[:prefix] {
				continue
			}
			pat, rel = pat[prefix:], rel[prefix:]
			if pat == "" && rel == "" {
				return i
			}
		}
		if wildmatch(pat, rel, wmPathname) {
			return i
		}
	}
	return -1
}

func refSimpleLength(s string) int {
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '*', '?', '[', '\\':
			return i
		}
	}
	return len(s)
}

// checkAgainstRef compares l.match with refMatch for one path.
func checkAgainstRef(t testing.TB, l *List, path string, isDir bool) {
	t.Helper()
	want := refMatch(l, path, isDir)
	got := -1
	if p := l.match(path, path[strings.LastIndexByte(path, '/')+1:], isDir); p != nil {
		for i := range l.patterns {
			if &l.patterns[i] == p {
				got = i
			}
		}
	}
	if got != want {
		show := func(i int) string {
			if i < 0 {
				return "none"
			}
			return fmt.Sprintf("%d %+q", i, l.patterns[i].raw)
		}
		t.Fatalf("base %+q, path %+q, dir %v: match = %s, git's algorithm = %s (indexed %v)",
			l.base, path, isDir, show(got), show(want), l.indexed)
	}
}

// TestIndexedListsMatchReference checks large random lists, which use the
// literal map, the suffix buckets and the required runs, against the plain
// algorithm.
func TestIndexedListsMatchReference(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 7))
	indexed := 0
	for range 400 {
		tr := genTree(r)
		paths := tr.root.below()
		var lines []string
		for range 8 + r.IntN(60) {
			switch r.IntN(4) {
			case 0: // literal names, often dir-only or negated
				line := paths[r.IntN(len(paths))]
				line = line[strings.LastIndexByte(line, '/')+1:]
				if r.IntN(3) == 0 {
					line += "/"
				}
				if r.IntN(4) == 0 {
					line = "!" + line
				}
				lines = append(lines, escapeGlob(line))
			case 1: // suffixes
				line := []string{"*.txt", "*.log", "*c", "*\xff", "*.o", "*a", "*/", "*.LOG", "*", "*z/"}[r.IntN(10)]
				if r.IntN(4) == 0 {
					line = "!" + line
				}
				lines = append(lines, line)
			default:
				lines = append(lines, genPattern(r, paths))
			}
		}
		for _, base := range []string{"", "sub", "a/b"} {
			l := ParseList(base, "x", []byte(strings.Join(lines, "\n")))
			if l.indexed {
				indexed++
			}
			for _, p := range paths {
				if base != "" {
					p = base + "/" + p
				}
				checkAgainstRef(t, l, p, false)
				checkAgainstRef(t, l, p, true)
			}
		}
	}
	if indexed < 600 {
		t.Errorf("only %d of 1200 lists were indexed; the test misses the index", indexed)
	}
}
