package ignore

import (
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/seed1cedbf7c/ckpt/internal/testutil"
)

var (
	diffSeed  = flag.Uint64("ignore.seed", 1, "first seed of TestDifferentialGit; tree i uses seed+i")
	diffTrees = flag.Int("ignore.trees", 300, "number of random trees in TestDifferentialGit")
)

// TestDifferentialGit builds random trees with random .gitignore files and
// .git/info/exclude, and checks that a walk using Matcher lists exactly the
// files `git ls-files --others --exclude-standard` lists. Rerun one tree
// with -run 'TestDifferentialGit/seed=N$'.
func TestDifferentialGit(t *testing.T) {
	gitPath(t) // fail early, once, when git is missing
	env := testutil.GitEnv(t)
	var total, listed, ignoreFiles atomic.Int64
	start := time.Now()
	t.Cleanup(func() {
		t.Logf("%d trees in %v: %d files and symlinks, %d ignored, %d ignore files",
			*diffTrees, time.Since(start).Round(time.Millisecond),
			total.Load(), total.Load()-listed.Load(), ignoreFiles.Load())
	})
	for i := range *diffTrees {
		seed := *diffSeed + uint64(i)
		t.Run(fmt.Sprintf("seed=%d", seed), func(t *testing.T) {
			t.Parallel()
			n, l, f := checkTreeAgainstGit(t, env, seed)
			total.Add(int64(n))
			listed.Add(int64(l))
			ignoreFiles.Add(int64(f))
		})
	}
}

// checkTreeAgainstGit compares one random tree and returns the number of
// files and symlinks in it, how many git lists, and how many ignore files
// it has.
func checkTreeAgainstGit(t *testing.T, env []string, seed uint64) (files, listed, ignoreFiles int) {
	r := rand.New(rand.NewPCG(seed, 0x6967_6e6f_7265))
	root := t.TempDir()
	gitInit(t, env, root)

	tr := genTree(r)
	ignores := tr.write(t, r, root)

	got := walk(t, root)
	want := splitNUL(runGit(t, env, root, nil, "ls-files", "-z", "--others", "--exclude-standard"))
	slices.Sort(got)
	slices.Sort(want)
	files, listed, ignoreFiles = len(tr.all)+len(ignores), len(want), len(ignores)
	if tr.hasExclude {
		files-- // .git/info/exclude is not in the work tree
	}
	if slices.Equal(got, want) {
		return
	}

	var b strings.Builder
	fmt.Fprintf(&b, "seed %d: Matcher walk and git ls-files differ\n", seed)
	for _, f := range ignores {
		fmt.Fprintf(&b, "--- %s\n", f.path)
		for _, line := range strings.SplitAfter(f.data, "\n") {
			if line != "" {
				fmt.Fprintf(&b, "    %+q\n", line)
			}
		}
	}
	fmt.Fprintf(&b, "--- all files and symlinks:\n")
	for _, p := range tr.all {
		fmt.Fprintf(&b, "    %+q\n", p)
	}
	for _, p := range setDiff(want, got) {
		fmt.Fprintf(&b, "listed by git only (we ignore it): %+q\n", p)
	}
	for _, p := range setDiff(got, want) {
		fmt.Fprintf(&b, "listed by us only (git ignores it): %+q\n", p)
	}
	t.Error(b.String())
	return
}

// setDiff returns the elements of sorted a missing from sorted b.
func setDiff(a, b []string) []string {
	var out []string
	for _, s := range a {
		if _, found := slices.BinarySearch(b, s); !found {
			out = append(out, s)
		}
	}
	return out
}

// Random trees.

// namePool holds awkward names: spaces, leading and trailing blanks, glob
// and gitignore syntax bytes, control bytes, non-UTF-8 bytes, dotfiles.
// None contains '*', '/' or NUL.
var namePool = []string{
	"a", "b", "c", "ab", "abc", "foo", "bar", "baz", "foo.txt", "bar.txt",
	"x.log", "y.LOG", "a.o", "main.go", "README", "x.y.z", "build", "out",
	"node_modules", "src", "lib", "A", "B.TXT", "1", "42", "d1", "-", "a-c",
	"a b", "sp ", "sp  ", " lead", "#hash", "!bang", "[br]", "br]", "q?",
	"\\back", "back\\", "\xff", "\xfe\xff.bin", "caf\xc3\xa9", "\xc3\xa9t\xc3\xa9",
	"tab\tx", "v\vx", "f\fx", "cr\r", "nl\nx", "\x01ctl", "del\x7f",
	".env", ".hidden", ".gitkeep", ".a.txt", "foobar", "fooxbar", "foo.bar",
}

// randomName returns a name from the pool or a short random one.
func randomName(r *rand.Rand) string {
	if r.IntN(3) > 0 {
		return namePool[r.IntN(len(namePool))]
	}
	const alphabet = "abcxyz019.-_ #![]?\\^:\xff"
	for {
		n := 1 + r.IntN(5)
		b := make([]byte, n)
		for i := range b {
			b[i] = alphabet[r.IntN(len(alphabet))]
		}
		s := string(b)
		switch s {
		case ".", "..", ".git", ".gitignore", ".ckptignore", ".decreeignore":
			continue
		}
		return s
	}
}

type genDir struct {
	rel     string // "" for the root
	dirs    []*genDir
	files   []string // names of regular files
	links   []string // names of symlinks
	targets []string
}

type genTreeT struct {
	root *genDir
	dirs []*genDir // all directories, root first
	all  []string  // every file and symlink path, ignore files excepted

	hasExclude bool // whether write wrote .git/info/exclude
}

type ignoreFile struct {
	path string // relative to the root
	data string
}

func join(dir, name string) string {
	if dir == "" {
		return name
	}
	return dir + "/" + name
}

func genTree(r *rand.Rand) *genTreeT {
	tr := &genTreeT{}
	var gen func(rel string, depth int) *genDir
	gen = func(rel string, depth int) *genDir {
		d := &genDir{rel: rel}
		tr.dirs = append(tr.dirs, d)
		used := map[string]bool{}
		n := 1 + r.IntN(7)
		if depth == 0 {
			n += 3
		}
		for range n {
			name := randomName(r)
			if used[name] {
				continue
			}
			used[name] = true
			switch x := r.IntN(100); {
			case x < 30 && depth < 4:
				d.dirs = append(d.dirs, gen(join(rel, name), depth+1))
			case x < 37:
				d.links = append(d.links, name)
				d.targets = append(d.targets, []string{"nowhere", ".", "..", "a"}[r.IntN(4)])
				tr.all = append(tr.all, join(rel, name))
			default:
				d.files = append(d.files, name)
				tr.all = append(tr.all, join(rel, name))
			}
		}
		return d
	}
	tr.root = gen("", 0)
	return tr
}

// below returns the paths of files, links and directories under d,
// relative to d.
func (d *genDir) below() []string {
	var out []string
	var rec func(x *genDir, prefix string)
	rec = func(x *genDir, prefix string) {
		out = append(out, prefixAll(prefix, x.files)...)
		out = append(out, prefixAll(prefix, x.links)...)
		for _, s := range x.dirs {
			name := s.rel[strings.LastIndexByte(s.rel, '/')+1:]
			out = append(out, join(prefix, name))
			rec(s, join(prefix, name))
		}
	}
	rec(d, "")
	return out
}

func prefixAll(prefix string, names []string) []string {
	out := make([]string, len(names))
	for i, n := range names {
		out[i] = join(prefix, n)
	}
	return out
}

// write creates the tree under root with random ignore files and returns
// those files.
func (tr *genTreeT) write(t *testing.T, r *rand.Rand, root string) []ignoreFile {
	var ignores []ignoreFile
	for _, d := range tr.dirs {
		abs := filepath.Join(root, filepath.FromSlash(d.rel))
		if d.rel != "" {
			if err := os.Mkdir(abs, 0o755); err != nil {
				t.Fatal(err)
			}
		}
		for _, f := range d.files {
			if err := os.WriteFile(filepath.Join(abs, f), []byte("x"), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		for i, l := range d.links {
			if err := os.Symlink(d.targets[i], filepath.Join(abs, l)); err != nil {
				t.Fatal(err)
			}
		}
	}
	// Directories are created before their children above (tr.dirs is in
	// pre-order), so ignore files can now be written anywhere.
	for _, d := range tr.dirs {
		chance := 45
		if d.rel == "" {
			chance = 85
		}
		if r.IntN(100) >= chance {
			continue
		}
		data := genIgnoreFile(r, d.below())
		rel := join(d.rel, ".gitignore")
		if err := os.WriteFile(filepath.Join(root, filepath.FromSlash(rel)), []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
		ignores = append(ignores, ignoreFile{rel, data})
	}
	if r.IntN(100) < 60 {
		data := genIgnoreFile(r, tr.root.below())
		if err := os.WriteFile(filepath.Join(root, ".git", "info", "exclude"), []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
		ignores = append(ignores, ignoreFile{".git/info/exclude", data})
		tr.hasExclude = true
	}
	return ignores
}

// genIgnoreFile returns random ignore-file content whose patterns are drawn
// mostly from the given paths (relative to the file's directory).
func genIgnoreFile(r *rand.Rand, paths []string) string {
	var lines []string
	n := 1 + r.IntN(8)
	for range n {
		lines = append(lines, genPattern(r, paths))
	}
	eol := "\n"
	if r.IntN(100) < 15 {
		eol = "\r\n"
	}
	s := strings.Join(lines, eol)
	if r.IntN(100) < 70 {
		s += eol
	}
	if r.IntN(100) < 5 {
		s = "\xef\xbb\xbf" + s
	}
	return s
}

// escapeGlob backslash-escapes the bytes wildmatch treats specially, and a
// leading '#' or '!'.
func escapeGlob(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if isGlobSpecial(c) || (i == 0 && (c == '#' || c == '!')) {
			b.WriteByte('\\')
		}
		b.WriteByte(c)
	}
	return b.String()
}

// genPattern returns one random line.
func genPattern(r *rand.Rand, paths []string) string {
	p := "x"
	if len(paths) > 0 {
		p = paths[r.IntN(len(paths))]
	}
	comps := strings.Split(p, "/")
	base := comps[len(comps)-1]
	first := comps[0]
	dirPart := strings.Join(comps[:len(comps)-1], "/")
	maybeEsc := func(s string) string {
		if r.IntN(2) == 0 {
			return escapeGlob(s)
		}
		return s
	}
	ext := ".txt"
	if i := strings.LastIndexByte(base, '.'); i >= 0 {
		ext = base[i:]
	} else if len(base) > 1 {
		ext = base[len(base)-1:]
	}
	cut := func(s string) (string, string) {
		if s == "" {
			return "", ""
		}
		i := r.IntN(len(s))
		return s[:i], s[i+1:]
	}

	var pat string
	switch r.IntN(24) {
	case 0, 1:
		pat = maybeEsc(base)
	case 2:
		pat = "*" + ext
	case 3:
		pat = "/" + maybeEsc(first)
	case 4:
		pat = maybeEsc(p)
	case 5:
		pat = "**/" + maybeEsc(base)
	case 6:
		if dirPart != "" {
			pat = maybeEsc(dirPart) + "/**"
		} else {
			pat = maybeEsc(base) + "/**"
		}
	case 7:
		pat = maybeEsc(first) + "/**/" + maybeEsc(base)
	case 8:
		pat = maybeEsc(comps[r.IntN(len(comps))]) + "/"
	case 9: // a class in place of one byte
		a, b := cut(base)
		class := []string{"[a-c]", "[!a]", "[^x]", "[[:digit:]]", "[[:alpha:]]",
			"[[:space:]]", "[[:punct:]]", "[[:upper:]]", "[[:lower:]]", "[[:alnum:]]",
			"[[:xdigit:]]", "[[:cntrl:]]", "[[:print:]]", "[[:graph:]]", "[[:blank:]]",
			"[]]", "[!]]", "[a-]", "[-a]", "[\\]]", "[\xff]", "[\x80-\xff]", "[b-a]",
			"[[:nope:]]", "[[:alpha]", "[[]", "[x-z0-9.]", "?"}[r.IntN(28)]
		pat = a + class + b
	case 10:
		pat = "\\" + base
	case 11:
		pat = base + []string{" ", "  ", "\\ ", "\\  ", " \\ ", "\t"}[r.IntN(6)]
	case 12:
		a, b := cut(base)
		pat = a + "*" + b
	case 13:
		pat = []string{"*", "**", "?", "??", "*.*", ".*", "*/", "**/", "*/**", "/*", "/*/", "*/*"}[r.IntN(12)]
	case 14:
		a, b := cut(base)
		pat = a + "**" + b
	case 15:
		pat = "*/" + maybeEsc(base)
	case 16:
		pat = maybeEsc(first) + "/*"
	case 17: // a literal prefix glued to "**" (a git quirk)
		a, _ := cut(first)
		pat = a + "**/" + base
	case 18: // junk git must survive
		pat = []string{"[", "[abc", "foo\\", "\\", "[[:", "[!", "a[", "!", "/", "//", "!/",
			"\\#hash", "\\!bang", "#hash", "!!bang", "***", "a/**b", "**a", "a/b/", "/a/", "\x00x"}[r.IntN(21)]
	case 19:
		pat = "" // blank line
	case 20:
		pat = "# comment " + base
	case 21:
		if dirPart != "" {
			pat = "/" + maybeEsc(dirPart) + "/*" + ext
		} else {
			pat = "/*" + ext
		}
	case 22:
		pat = asciiUpper(base) // case sensitivity
	case 23:
		pat = "?" + base[min(1, len(base)):]
	}
	if r.IntN(100) < 25 && pat != "" && !strings.HasPrefix(pat, "#") {
		pat = "!" + pat
	}
	return pat
}

// asciiUpper upper-cases ASCII letters and leaves every other byte alone.
func asciiUpper(s string) string {
	b := []byte(s)
	for i, c := range b {
		if c >= 'a' && c <= 'z' {
			b[i] = c - 'a' + 'A'
		}
	}
	return string(b)
}
