package ignore

import (
	"fmt"
	"strings"
	"sync"
	"testing"
)

// A realistic root .gitignore: GitHub's Node, Go and Python templates,
// trimmed, plus the usual editor and OS files.
const benchGitignore = `# dependencies
node_modules/
jspm_packages/
bower_components/
vendor/
# builds
/dist
/build
out/
*.o
*.a
*.so
*.dylib
*.exe
*.test
*.out
__pycache__/
*.py[cod]
*$py.class
.pytest_cache/
.mypy_cache/
.tox/
*.egg-info/
coverage/
.nyc_output/
*.lcov
# logs
logs
*.log
npm-debug.log*
yarn-debug.log*
yarn-error.log*
# env
.env
.env.*
!.env.example
.venv
venv/
# editors and OS
.idea/
.vscode/*
!.vscode/settings.json
*.swp
*~
.DS_Store
Thumbs.db
# generated
**/generated/**
docs/_build/
tmp/
`

// benchDir is one directory of the benchmark tree.
type benchDir struct {
	path    string
	entries []benchEntry
	m       *Matcher // matcher for the entries
}

type benchEntry struct {
	path  string
	isDir bool
	sub   *benchDir
}

var benchTree = sync.OnceValues(func() (*benchDir, int) {
	n := 0
	exclude := ParseList("", ".git/info/exclude", []byte("*.local\n/scratch/\n"))
	fileNames := []string{"main.go", "util.go", "util_test.go", "index.js", "index.test.js",
		"app.py", "README.md", "data.json", "style.css", "x.o", "debug.log", ".env",
		"Makefile", "notes.txt", "a.swp", "config.yaml", "schema.sql", "logo.png",
		"lib.so", "model.pyc"}
	for i := range 22 {
		fileNames = append(fileNames, fmt.Sprintf("file%02d.%s", i, []string{"go", "ts", "rs", "txt"}[i%4]))
	}
	var build func(path string, depth int, m *Matcher) *benchDir
	build = func(path string, depth int, m *Matcher) *benchDir {
		d := &benchDir{path: path}
		var gi, ck *List
		switch {
		case path == "":
			gi = ParseList("", ".gitignore", []byte(benchGitignore))
			ck = ParseList("", ".ckptignore", []byte("!.env\n.ckpt/\n"))
		case strings.HasSuffix(path, "7"):
			gi = ParseList(path, path+"/.gitignore", []byte("*.tmp\n!keep.tmp\n/local/\n"))
		}
		d.m = m.Child(path, gi, ck, nil)
		for _, f := range fileNames {
			d.entries = append(d.entries, benchEntry{path: join(path, f)})
			n++
		}
		if depth < 3 {
			for i := range 13 {
				name := fmt.Sprintf("pkg%d", i)
				switch i {
				case 11:
					name = "node_modules"
				case 12:
					name = "build"
				}
				e := benchEntry{path: join(path, name), isDir: true}
				e.sub = build(e.path, depth+1, d.m)
				d.entries = append(d.entries, e)
				n++
			}
		}
		return d
	}
	return build("", 0, New(exclude)), n
})

// ignoredWalk checks every entry of the tree, descending only into
// directories that are not ignored, and returns how many were checked.
func ignoredWalk(d *benchDir) int {
	n := 0
	for _, e := range d.entries {
		n++
		if !d.m.Ignored(e.path, e.isDir) && e.isDir {
			n += ignoredWalk(e.sub)
		}
	}
	return n
}

// allWalk checks every entry of the tree, ignored directories included.
func allWalk(d *benchDir) int {
	n := 0
	for _, e := range d.entries {
		n++
		d.m.Ignored(e.path, e.isDir)
		if e.isDir {
			n += allWalk(e.sub)
		}
	}
	return n
}

// BenchmarkIgnoredTree checks the ~100k entries of a tree against a
// realistic rule set; ns/entry is the cost of one Ignored call. "all"
// checks every entry, "walk" only those a scanner reaches (it does not
// descend into ignored directories).
func BenchmarkIgnoredTree(b *testing.B) {
	root, n := benchTree()
	b.Run("all", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			allWalk(root)
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(n), "ns/entry")
		b.ReportMetric(float64(n), "entries")
	})
	b.Run("walk", func(b *testing.B) {
		m := ignoredWalk(root)
		b.ReportAllocs()
		for b.Loop() {
			ignoredWalk(root)
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(m), "ns/entry")
		b.ReportMetric(float64(m), "entries")
	})
}

// BenchmarkChild measures entering a directory with and without ignore
// files.
func BenchmarkChild(b *testing.B) {
	m := New(nil).Child("", ParseList("", ".gitignore", []byte(benchGitignore)), nil, nil)
	gi := ParseList("sub", "sub/.gitignore", []byte("*.tmp\n"))
	b.Run("none", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			m.Child("sub", nil, nil, nil)
		}
	})
	b.Run("gitignore", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			m.Child("sub", gi, nil, nil)
		}
	})
}

func BenchmarkParseList(b *testing.B) {
	data := []byte(benchGitignore)
	b.SetBytes(int64(len(data)))
	for b.Loop() {
		ParseList("", ".gitignore", data)
	}
}

func TestIgnoredDoesNotAllocate(t *testing.T) {
	root, _ := benchTree()
	var d *benchDir
	for _, e := range root.entries {
		if e.sub != nil && strings.HasSuffix(e.path, "7") {
			d = e.sub
		}
	}
	allocs := testing.AllocsPerRun(10, func() { allWalk(d) })
	if allocs != 0 {
		t.Errorf("checking a directory allocates %v times, want 0", allocs)
	}
}

// TestBenchTreeConcurrent walks the benchmark tree from several goroutines
// (run it with -race); every walk must see the same entries.
func TestBenchTreeConcurrent(t *testing.T) {
	root, n := benchTree()
	want := ignoredWalk(root)
	if want == 0 || want >= n {
		t.Fatalf("walk checked %d of %d entries; the rules should prune some", want, n)
	}
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			if got := ignoredWalk(root); got != want {
				t.Errorf("concurrent walk checked %d entries, want %d", got, want)
			}
		})
	}
	wg.Wait()
}
