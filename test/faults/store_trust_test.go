//go:build unix

package faults

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// chownAll gives dir and everything below it to uid (as root).
func chownAll(t *testing.T, dir string, uid int) {
	t.Helper()
	if out, err := exec.Command("chown", "-R", "-h", fmt.Sprintf("%d:%d", uid, uid), dir).CombinedOutput(); err != nil {
		t.Fatalf("chown: %v\n%s", err, out)
	}
}

// TestForeignStoreRefused (Hardening III, 6): a store another user owns —
// planted in a shared directory or in a repository's .git — is refused by
// every command, naming the owner and the way to trust it
// (CKPT_SAFE_STORE), as git refuses a repository with safe.directory.
func TestForeignStoreRefused(t *testing.T) {
	if os.Geteuid() != 0 {
		// Without root no file can be given to another user; a store in a
		// directory root owns is the same case seen from the other side.
		e := newEnv(t)
		code, _, stderr := e.Run("--store", "/", "list")
		if code == 0 || !strings.Contains(stderr, "owned by") {
			t.Fatalf("a root-owned store as uid %d: exit %d\n%s", os.Geteuid(), code, stderr)
		}
		return
	}
	const other = 4242
	t.Run("sqlite", func(t *testing.T) {
		e := newEnv(t)
		e.Write(map[string]string{"a.txt": "a\n"})
		e.Must("save", "-m", "one")
		chownAll(t, e.Store, other)
		for _, args := range [][]string{{"list"}, {"status"}, {"save", "-m", "two"}} {
			code, _, stderr := e.Run(args...)
			if code == 0 || !strings.Contains(stderr, "owned by uid 4242") || !strings.Contains(stderr, "CKPT_SAFE_STORE="+e.Store) {
				t.Fatalf("ckpt %s on another user's store: exit %d\n%s", strings.Join(args, " "), code, stderr)
			}
		}
		e.Extra = []string{"CKPT_SAFE_STORE=/elsewhere:" + e.Store}
		e.Must("list")
		e.Extra = []string{"SUDO_UID=4242"}
		e.Must("list")
	})
	t.Run("git", func(t *testing.T) {
		e := newEnv(t)
		e.Extra = []string{"CKPT_STORE=", "CKPT_BACKEND=git"}
		gitCmd(t, e.WS, "init", "-q")
		e.Write(map[string]string{"a.txt": "a\n"})
		e.Must("save", "-m", "one")
		sd := filepath.Join(e.WS, ".git", "ckpt")
		chownAll(t, sd, other)
		code, _, stderr := e.Run("list")
		if code == 0 || !strings.Contains(stderr, "owned by uid 4242") {
			t.Fatalf("list on a planted .git/ckpt: exit %d\n%s", code, stderr)
		}
	})
}

// TestPlantedSummarizerNotRun (Hardening III, 6): a config.toml that came
// with the repository (.git/ckpt, owned by the user who unpacked it)
// names a summarizer; ckpt summarize refuses to run it until the user
// sets it with ckpt config, and then runs it.
func TestPlantedSummarizerNotRun(t *testing.T) {
	e := newEnv(t)
	e.Extra = []string{"CKPT_STORE=", "CKPT_BACKEND=git"}
	gitCmd(t, e.WS, "init", "-q")
	e.Write(map[string]string{"a.txt": "a\n"})
	e.Must("session", "new", "-t", "work")
	for i, p := range []string{"one", "two"} {
		e.Must("turn", "begin", "-m", p)
		e.Write(map[string]string{"a.txt": strings.Repeat("x", i+2) + "\n"})
		e.Must("turn", "end")
	}
	pwned := filepath.Join(t.TempDir(), "pwned")
	cfg := filepath.Join(e.WS, ".git", "ckpt", "config.toml")
	old, _ := os.ReadFile(cfg)
	planted := string(old) + "summarizer = \"touch " + pwned + "; echo planted\"\n"
	if err := os.WriteFile(cfg, []byte(planted), 0o600); err != nil {
		t.Fatal(err)
	}
	code, _, stderr := e.Run("summarize", "1", "--upto")
	if code == 0 || !strings.Contains(stderr, "was not set with `ckpt config`") || !strings.Contains(stderr, "ckpt config summarizer") {
		t.Fatalf("summarize with a planted summarizer: exit %d\n%s", code, stderr)
	}
	if _, err := os.Stat(pwned); err == nil {
		t.Fatal("the planted summarizer ran")
	}
	e.Must("config", "summarizer", "echo mine")
	if out := e.Must("summarize", "1", "--upto"); !strings.Contains(out, "mine") {
		t.Fatalf("summarize with the user's summarizer: %s", out)
	}
}
