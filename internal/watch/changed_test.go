//go:build linux

package watch

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// names is what an answer says may have changed in dir: its names, or
// "*" for any entry; absent when dir is not dirty.
func names(a *Answer, dir string) ([]string, bool) {
	if !slices.Contains(a.Dirty, dir) {
		return nil, false
	}
	if n, ok := a.Names[dir]; ok {
		return n, true
	}
	return []string{"*"}, true
}

// TestAnswerNamesChangedEntries: an answer names, per dirty directory, the
// entries an event named since the token — written, chmod'ed, created,
// removed, renamed — and only those; an event about the directory itself,
// a directory walked when watched, or more entries than maxDirNames make
// it "any entry". Names from before a token are not in its answers.
func TestAnswerNamesChangedEntries(t *testing.T) {
	root, sock := setup(t)
	tok := query(t, sock, query(t, sock, "").Token).Token
	for i := 0; i < 5; i++ {
		os.WriteFile(filepath.Join(root, "c", fmt.Sprint("old", i)), nil, 0o644)
	}
	tok = query(t, sock, tok).Token

	os.WriteFile(filepath.Join(root, "c/f.txt"), []byte("y"), 0o644)
	os.Chmod(filepath.Join(root, "a/b/f.txt"), 0o600)
	os.WriteFile(filepath.Join(root, "sub/new.txt"), nil, 0o644)
	os.Rename(filepath.Join(root, "c/old1"), filepath.Join(root, "sub/moved"))
	os.Remove(filepath.Join(root, "c/old2"))
	os.Chmod(filepath.Join(root, "sub/deep"), 0o700) // an event of sub (the entry) and of sub/deep (itself)
	a := query(t, sock, tok)
	if a.Full {
		t.Fatalf("full: %s", a.Reason)
	}
	want := map[string][]string{
		"c":        {"f.txt", "old1", "old2"},
		"a/b":      {"f.txt"},
		"sub":      {"deep", "moved", "new.txt"},
		"sub/deep": {"*"},
	}
	for dir, w := range want {
		if got, _ := names(a, dir); !slices.Equal(got, w) {
			t.Errorf("%s: names %q, want %q", dir, got, w)
		}
	}
	if len(a.Dirty) != len(want) {
		t.Errorf("dirty %q, want the directories of %v", a.Dirty, want)
	}

	// From that answer's token on, only what came after.
	tok = a.Token
	os.WriteFile(filepath.Join(root, "c/old3"), []byte("z"), 0o644)
	os.MkdirAll(filepath.Join(root, "c/newdir/x"), 0o755)
	a = query(t, sock, tok)
	if got, _ := names(a, "c"); !slices.Equal(got, []string{"newdir", "old3"}) {
		t.Errorf("c after the second batch: %q", got)
	}
	// A directory made is walked when watched: any entry.
	if got, _ := names(a, "c/newdir"); !slices.Equal(got, []string{"*"}) {
		t.Errorf("c/newdir: %q, want any entry", got)
	}
	if _, dirty := names(a, "a/b"); dirty {
		t.Errorf("a/b dirty again: %q", a.Dirty)
	}

	// More entries than maxDirNames: any entry, for this token and the
	// ones before.
	tok = a.Token
	for i := 0; i <= maxDirNames; i++ {
		os.WriteFile(filepath.Join(root, "a/b", fmt.Sprint("many", i)), nil, 0o644)
	}
	a = query(t, sock, tok)
	if got, _ := names(a, "a/b"); !slices.Equal(got, []string{"*"}) {
		t.Errorf("a/b after %d new files: %d names", maxDirNames+1, len(got))
	}
	tok = a.Token
	os.WriteFile(filepath.Join(root, "a/b/many0"), []byte("x"), 0o644)
	a = query(t, sock, tok)
	if got, _ := names(a, "a/b"); !slices.Equal(got, []string{"many0"}) {
		t.Errorf("a/b after the overflow, one more edit: %q", got)
	}
}

// TestAnswerNamesOverall: past maxChangedNames names in all, the daemon
// drops them; tokens from before then get "any entry" for every
// directory, later ones names again.
func TestAnswerNamesOverall(t *testing.T) {
	defer func(n int) { maxChangedNames = n }(maxChangedNames)
	maxChangedNames = 8
	root, sock := setup(t)
	tok := query(t, sock, query(t, sock, "").Token).Token
	os.WriteFile(filepath.Join(root, "c/one"), nil, 0o644)
	for i := 0; i < 8; i++ {
		os.WriteFile(filepath.Join(root, "sub", fmt.Sprint("n", i)), nil, 0o644)
	}
	a := query(t, sock, tok)
	for _, dir := range []string{"c", "sub"} {
		if got, _ := names(a, dir); !slices.Equal(got, []string{"*"}) {
			t.Errorf("%s past the overall bound: %q, want any entry", dir, got)
		}
	}
	tok = a.Token
	os.WriteFile(filepath.Join(root, "c/two"), nil, 0o644)
	a = query(t, sock, tok)
	if got, _ := names(a, "c"); !slices.Equal(got, []string{"two"}) {
		t.Errorf("c after: %q", got)
	}
}

// TestAnswerNamesOldDaemon: an answer without names (a daemon from
// before them) leaves every entry of a dirty directory to be read.
func TestAnswerNamesOldDaemon(t *testing.T) {
	a := &Answer{RawDirty: [][]byte{[]byte("a"), []byte("b")}}
	a.decode()
	if a.Names != nil {
		t.Fatalf("names %v from an answer without them", a.Names)
	}
	ch := Changed(a)
	if _, ok := ch("a"); ok {
		t.Fatal("a dirty directory without names has a list")
	}
	if names, ok := ch(""); !ok || len(names) != 0 {
		t.Fatalf("the root, read only for what is below: %q %v", names, ok)
	}
	if _, ok := ch("elsewhere"); ok {
		t.Fatal("a directory the answer does not know has a list")
	}
	// Names out of order on the wire are sorted.
	a = &Answer{RawDirty: [][]byte{[]byte("a")}, RawNames: [][][]byte{{[]byte("z"), []byte("m")}}}
	a.decode()
	if names, ok := Changed(a)("a"); !ok || !slices.Equal(names, []string{"m", "z"}) {
		t.Fatalf("names %q %v", names, ok)
	}
}
