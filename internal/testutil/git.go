package testutil

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// NeedGit fails the test when there is no git: tests that use git as an
// oracle fail rather than skip (scripts/test installs it).
func NeedGit(t testing.TB) {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Fatal("git is needed (scripts/test installs it)")
	}
}

var gitHomes sync.Map // testing.TB → its empty HOME for git

// GitEnv is a clean environment for git: the process's environment
// without its GIT_* variables, no system or global configuration, an
// empty HOME and XDG_CONFIG_HOME of the test's own (so no
// core.excludesFile, attributes or credentials apply), a fixed author and
// committer, no prompts and the C locale.
func GitEnv(t testing.TB) []string {
	t.Helper()
	home, ok := gitHomes.Load(t)
	if !ok {
		home, _ = gitHomes.LoadOrStore(t, t.TempDir())
		t.Cleanup(func() { gitHomes.Delete(t) })
	}
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "GIT_") {
			env = append(env, kv)
		}
	}
	return append(env, "HOME="+home.(string), "XDG_CONFIG_HOME="+home.(string),
		"GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null", "GIT_TERMINAL_PROMPT=0",
		"GIT_AUTHOR_NAME=Test", "GIT_AUTHOR_EMAIL=test@example.com",
		"GIT_COMMITTER_NAME=Test", "GIT_COMMITTER_EMAIL=test@example.com", "LC_ALL=C")
}

// GitCommand prepares git with args in dir, in GitEnv's environment.
func GitCommand(t testing.TB, dir string, args ...string) *exec.Cmd {
	t.Helper()
	c := exec.Command("git", args...)
	c.Dir = dir
	c.Env = GitEnv(t)
	return c
}

// GitErr runs git with args in dir and returns its stdout; the error
// holds git's stderr.
func GitErr(t testing.TB, dir string, args ...string) (string, error) {
	t.Helper()
	return gitRun(GitCommand(t, dir, args...))
}

// Git runs git with args in dir and returns its stdout; it fails the test
// when git fails.
func Git(t testing.TB, dir string, args ...string) string {
	t.Helper()
	out, err := GitErr(t, dir, args...)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// GitInput is Git with stdin.
func GitInput(t testing.TB, dir, stdin string, args ...string) string {
	t.Helper()
	c := GitCommand(t, dir, args...)
	c.Stdin = strings.NewReader(stdin)
	out, err := gitRun(c)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// GitInit makes dir (created if missing) a new git repository.
func GitInit(t testing.TB, dir string) {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	Git(t, dir, "init", "-q")
}

func gitRun(c *exec.Cmd) (string, error) {
	var out, errb bytes.Buffer
	c.Stdout, c.Stderr = &out, &errb
	if err := c.Run(); err != nil {
		return out.String(), fmt.Errorf("git %s in %s: %v: %s", strings.Join(c.Args[1:], " "), filepath.Base(c.Dir), err, errb.String())
	}
	return out.String(), nil
}
