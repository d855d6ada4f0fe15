package ignore

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// Helpers for tests that use the real git as an oracle. They fail, never
// skip, when git is missing: the package promises git's semantics.

// gitPath returns the git binary, failing the test when there is none.
func gitPath(t testing.TB) string {
	t.Helper()
	if p, err := exec.LookPath("git"); err == nil {
		return p
	}
	if _, err := os.Stat("/usr/bin/git"); err == nil {
		return "/usr/bin/git"
	}
	t.Fatal("git not found in PATH or at /usr/bin/git: the differential tests need it")
	return ""
}

// runGit runs git in dir and returns its stdout, failing on error.
func runGit(t testing.TB, env []string, dir string, stdin []byte, args ...string) []byte {
	t.Helper()
	cmd := exec.Command(gitPath(t), args...)
	cmd.Dir = dir
	cmd.Env = env
	if stdin != nil {
		cmd.Stdin = bytes.NewReader(stdin)
	}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, stderr.Bytes())
	}
	return out
}

// gitInit makes dir a fresh repository without template files.
func gitInit(t testing.TB, env []string, dir string) {
	t.Helper()
	runGit(t, env, dir, nil, "init", "-q", "--template=", ".")
	if err := os.MkdirAll(filepath.Join(dir, ".git", "info"), 0o755); err != nil {
		t.Fatal(err)
	}
}

// splitNUL splits NUL-terminated records.
func splitNUL(b []byte) []string {
	var out []string
	for len(b) > 0 {
		i := bytes.IndexByte(b, 0)
		if i < 0 {
			out = append(out, string(b))
			break
		}
		out = append(out, string(b[:i]))
		b = b[i+1:]
	}
	return out
}

// readIgnore reads an ignore file the way git does for per-directory
// files: a missing file or a symlink counts as absent.
func readIgnore(t testing.TB, abs, base, source string) *List {
	t.Helper()
	fi, err := os.Lstat(abs)
	if err != nil || !fi.Mode().IsRegular() {
		return nil
	}
	data, err := os.ReadFile(abs)
	if err != nil {
		t.Fatal(err)
	}
	return ParseList(base, source, data)
}

// walk lists the files and symlinks under root that are not ignored, the
// way a scanner using Matcher does: it reads the ignore files of each
// directory, skips ".git" entries, and never descends into an ignored
// directory.
func walk(t testing.TB, root string) []string {
	t.Helper()
	exclude := readIgnore(t, filepath.Join(root, ".git", "info", "exclude"), "", ".git/info/exclude")
	var out []string
	var rec func(m *Matcher, dir string)
	rec = func(m *Matcher, dir string) {
		abs := filepath.Join(root, filepath.FromSlash(dir))
		src := func(name string) string {
			if dir == "" {
				return name
			}
			return dir + "/" + name
		}
		m = m.Child(dir,
			readIgnore(t, filepath.Join(abs, ".gitignore"), dir, src(".gitignore")),
			readIgnore(t, filepath.Join(abs, ".ckptignore"), dir, src(".ckptignore")),
			readIgnore(t, filepath.Join(abs, ".decreeignore"), dir, src(".decreeignore")))
		entries, err := os.ReadDir(abs)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range entries {
			if e.Name() == ".git" {
				continue
			}
			path := src(e.Name())
			isDir := e.IsDir() // a symlink to a directory is not a directory
			if m.Ignored(path, isDir) {
				continue
			}
			if isDir {
				rec(m, path)
			} else {
				out = append(out, path)
			}
		}
	}
	rec(New(exclude), "")
	return out
}
