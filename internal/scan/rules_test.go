//go:build unix

package scan

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
)

// TestRulesAgreeWithScan: for a tree on disk, Rules reading its ignore
// files says ignored exactly for the files a scan leaves out.
func TestRulesAgreeWithScan(t *testing.T) {
	f := newFixture(t)
	files := map[string]string{
		".gitignore":             "*.log\nbuild/\n/top.txt\n!keep.log\n",
		"sub/.gitignore":         "secret*\n!secret-ok\n",
		"sub/.ckptignore":        "!secret-also\nnoise.txt\n",
		"sub/deep/.decreeignore": "x.txt\n",
		".git/info/exclude":      "excluded.txt\n",
		"a.txt":                  "", "a.log": "", "keep.log": "", "top.txt": "", "sub/top.txt": "",
		"build/out.txt": "", "sub/build/out.txt": "", "sub/secret1": "", "sub/secret-ok": "",
		"sub/secret-also": "", "sub/noise.txt": "", "sub/deep/x.txt": "", "sub/deep/y.txt": "",
		"x.txt": "", "excluded.txt": "", "sub/excluded.txt": "",
	}
	for p, c := range files {
		f.write(p, c, 0o644)
	}
	captured := f.files(f.scan().Root)
	rules := NewRules(f.root, func(p string) ([]byte, bool) {
		b, err := os.ReadFile(filepath.Join(f.root, filepath.FromSlash(p)))
		return b, err == nil
	})
	for p := range files {
		if filepath.Dir(p) == ".git/info" {
			continue
		}
		_, in := captured[p]
		if got := rules.Ignored(p, false); got == in {
			t.Errorf("%s: Ignored = %v, but the scan captured it: %v", p, got, in)
		}
	}
	if !rules.Ignored("build", true) || rules.Ignored("sub", true) {
		t.Error("directories")
	}
	// Rules read through the function: a tree that is not on disk.
	virtual := NewRules(f.root, func(p string) ([]byte, bool) {
		if p == "new/.gitignore" {
			return []byte("*\n"), true
		}
		return nil, false
	})
	if !virtual.Ignored("new/file", false) || virtual.Ignored("a.log", false) {
		t.Error("virtual tree")
	}
	if _, err := os.Stat(filepath.Join(f.root, "new")); !errors.Is(err, os.ErrNotExist) {
		t.Error("Rules touched the disk")
	}
}
