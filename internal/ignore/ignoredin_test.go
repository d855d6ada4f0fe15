package ignore

import (
	"math/rand/v2"
	"strings"
	"testing"
)

// IgnoredIn(dir, name) must agree with Ignored(dir/name) for every kind of
// pattern, anchored or not, at every depth.
func TestIgnoredInAgrees(t *testing.T) {
	r := rand.New(rand.NewPCG(8, 8))
	pats := []string{"*.o", "build/", "/top", "a/b", "**/x", "x/**", "a/**/c", "!keep.o", "[a-c]*", "?", "name", "dir/*.txt", "\\!bang", "*"}
	names := []string{"a", "b", "c", "x", "top", "keep.o", "main.o", "build", "name", "f.txt", "!bang", "zz"}
	for trial := 0; trial < 3000; trial++ {
		var lines []string
		for i := r.IntN(4); i >= 0; i-- {
			lines = append(lines, pats[r.IntN(len(pats))])
		}
		dir := ""
		for d := r.IntN(3); d > 0; d-- {
			dir = strings.TrimPrefix(dir+"/"+names[r.IntN(len(names))], "/")
		}
		m := New(nil).Child("", ParseList("", ".gitignore", []byte(strings.Join(lines, "\n"))), nil, nil)
		if dir != "" {
			m = m.Child(dir, ParseList(dir, dir+"/.gitignore", []byte(lines[0])), nil, nil)
		}
		name := names[r.IntN(len(names))]
		isDir := r.IntN(2) == 0
		path := name
		if dir != "" {
			path = dir + "/" + name
		}
		if got, want := m.IgnoredIn(dir, name, isDir), m.Ignored(path, isDir); got != want {
			t.Fatalf("patterns %q, dir %q: IgnoredIn(%q) = %v, Ignored(%q) = %v", lines, dir, name, got, path, want)
		}
	}
	if !New(nil).Empty() || New(nil).Child("", ParseList("", "x", []byte("*.o")), nil, nil).Empty() {
		t.Fatal("Empty")
	}
}
