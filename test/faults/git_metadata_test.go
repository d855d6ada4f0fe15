//go:build unix

package faults

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/seed1cedbf7c/ckpt/internal/testutil"
	"golang.org/x/sys/unix"
)

// gitCmd runs the real git in dir and returns its trimmed output.
func gitCmd(t *testing.T, dir string, args ...string) string {
	t.Helper()
	return strings.TrimSpace(testutil.Git(t, dir, args...))
}

// runBounded runs ckpt and fails the test if it has not ended within d (a
// hang is the defect: a FIFO or /dev/zero read).
func (e *env) runBounded(d time.Duration, args ...string) (int, string, string) {
	e.T.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	var out, errb strings.Builder
	c := e.Cmd(args...)
	c.Stdout, c.Stderr = &out, &errb
	if err := c.Start(); err != nil {
		e.T.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- c.Wait() }()
	select {
	case err := <-done:
		code := 0
		if ee, ok := err.(*exec.ExitError); ok {
			code = ee.ExitCode()
		} else if err != nil {
			e.T.Fatal(err)
		}
		return code, out.String(), errb.String()
	case <-ctx.Done():
		c.Process.Kill()
		<-done
		e.T.Fatalf("ckpt %s did not end within %s\nstderr: %s", strings.Join(args, " "), d, errb.String())
		return 0, "", ""
	}
}

// TestGitBackendRefusesSHA256 (Hardening III, 5): "[extensions]
// objectformat = sha256" on one line, which git accepts, is a SHA-256
// repository; the git backend refuses it and writes nothing, so git fsck
// stays clean. Spellings git reads the same way are refused the same way.
func TestGitBackendRefusesSHA256(t *testing.T) {
	for name, config := range map[string]string{
		"one line":     "[core]\n\trepositoryformatversion = 1\n\tbare = false\n[extensions] objectformat = sha256\n",
		"no spaces":    "[core]\nrepositoryformatversion=1\n[extensions]objectFormat=sha256\n",
		"quoted":       "[core]\n\trepositoryformatversion = 1\n[Extensions]\n\tObjectFormat = \"sha256\"\n",
		"continuation": "[core]\n\trepositoryformatversion = 1\n[extensions]\n\tobjectformat = sha\\\n256\n",
		"crlf":         "[core]\r\n\trepositoryformatversion = 1\r\n[extensions]\r\n\tobjectformat = sha256 ; sha1\r\n",
	} {
		t.Run(strings.ReplaceAll(name, " ", "_"), func(t *testing.T) {
			e := newEnv(t)
			e.Extra = []string{"CKPT_STORE=", "CKPT_BACKEND=git"}
			gitCmd(t, e.WS, "init", "-q", "--object-format=sha256")
			if err := os.WriteFile(filepath.Join(e.WS, ".git", "config"), []byte(config), 0o644); err != nil {
				t.Fatal(err)
			}
			if got := gitCmd(t, e.WS, "rev-parse", "--show-object-format"); got != "sha256" {
				t.Fatalf("git reads %q as %s; the test expects sha256", config, got)
			}
			e.Write(map[string]string{"a.txt": "a\n"})
			code, _, stderr := e.Run("save", "-m", "x")
			if code == 0 || !strings.Contains(stderr, "sha256") || !strings.Contains(stderr, "sqlite backend") {
				t.Fatalf("save on a SHA-256 repository: exit %d\n%s", code, stderr)
			}
			if refs := gitCmd(t, e.WS, "for-each-ref"); refs != "" {
				t.Fatalf("refs written: %s", refs)
			}
			gitCmd(t, e.WS, "fsck", "--no-progress")
			if _, err := os.Stat(filepath.Join(e.WS, ".git", "ckpt")); err == nil {
				t.Fatal("a store was created in .git/ckpt")
			}
		})
	}
}

// TestGitBackendRefusesUnreadableConfig: a config git itself cannot read
// is refused, not guessed at.
func TestGitBackendRefusesUnreadableConfig(t *testing.T) {
	e := newEnv(t)
	e.Extra = []string{"CKPT_STORE=", "CKPT_BACKEND=git"}
	gitCmd(t, e.WS, "init", "-q")
	bad := "[core]\n\trepositoryformatversion = 0\n[extensions]\n\tobjectformat = \"sha256\n"
	if err := os.WriteFile(filepath.Join(e.WS, ".git", "config"), []byte(bad), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := exec.Command("git", "-C", e.WS, "rev-parse", "--git-dir").Run(); err == nil {
		t.Fatal("git reads the malformed config; the test expects it not to")
	}
	e.Write(map[string]string{"a.txt": "a\n"})
	code, _, stderr := e.Run("save", "-m", "x")
	if code == 0 || !strings.Contains(stderr, "bad config line 4") {
		t.Fatalf("save with a config git refuses: exit %d\n%s", code, stderr)
	}
}

// TestNestedRepositorySpecialFiles (Hardening III, 7): a nested
// repository whose HEAD names ../../../../dev/zero, whose HEAD is a FIFO or
// a symlink to /dev/zero, or a repository whose info/exclude is a FIFO:
// every save ends promptly, with both backends, and the nested repository
// is reported rather than read.
func TestNestedRepositorySpecialFiles(t *testing.T) {
	cases := map[string]func(t *testing.T, head string){
		"ref to dev zero": func(t *testing.T, head string) {
			os.WriteFile(head, []byte("ref: ../../../../../../../../../../dev/zero\n"), 0o644)
		},
		"ref with dotdot": func(t *testing.T, head string) {
			os.WriteFile(head, []byte("ref: refs/heads/../../../../../../../../../../../dev/zero\n"), 0o644)
		},
		"head is a fifo": func(t *testing.T, head string) {
			os.Remove(head)
			if err := unix.Mkfifo(head, 0o644); err != nil {
				t.Fatal(err)
			}
		},
		"head links to dev zero": func(t *testing.T, head string) {
			os.Remove(head)
			os.Symlink("/dev/zero", head)
		},
	}
	for _, backend := range []string{"sqlite", "git"} {
		for name, plant := range cases {
			t.Run(backend+"/"+strings.ReplaceAll(name, " ", "_"), func(t *testing.T) {
				e := newEnv(t)
				if backend == "git" {
					e.Extra = []string{"CKPT_STORE=", "CKPT_BACKEND=git"}
					gitCmd(t, e.WS, "init", "-q")
				}
				e.Write(map[string]string{"a.txt": "a\n", "sub/b.txt": "b\n"})
				gitCmd(t, filepath.Join(e.WS, "sub"), "init", "-q")
				gitCmd(t, filepath.Join(e.WS, "sub"), "add", ".")
				gitCmd(t, filepath.Join(e.WS, "sub"), "commit", "-q", "-m", "b")
				plant(t, filepath.Join(e.WS, "sub", ".git", "HEAD"))
				code, _, stderr := e.runBounded(20*time.Second, "save", "-m", "x")
				if backend == "sqlite" && code != 0 {
					t.Fatalf("save: exit %d\n%s", code, stderr)
				}
				if code != 0 && !strings.Contains(stderr, "sub") {
					t.Fatalf("save fails without naming the nested repository: exit %d\n%s", code, stderr)
				}
				e.runBounded(20*time.Second, "status")
			})
		}
	}
	for _, backend := range []string{"sqlite", "git"} {
		t.Run(backend+"/info_exclude_is_a_fifo", func(t *testing.T) {
			e := newEnv(t)
			if backend == "git" {
				e.Extra = []string{"CKPT_STORE=", "CKPT_BACKEND=git"}
			}
			gitCmd(t, e.WS, "init", "-q")
			ex := filepath.Join(e.WS, ".git", "info", "exclude")
			os.MkdirAll(filepath.Dir(ex), 0o755)
			os.Remove(ex)
			if err := unix.Mkfifo(ex, 0o644); err != nil {
				t.Fatal(err)
			}
			e.Write(map[string]string{"a.txt": "a\n"})
			if code, _, stderr := e.runBounded(20*time.Second, "save", "-m", "x"); code != 0 {
				t.Fatalf("save: exit %d\n%s", code, stderr)
			}
			if code, _, stderr := e.runBounded(20*time.Second, "status"); code != 0 {
				t.Fatalf("status: exit %d\n%s", code, stderr)
			}
		})
	}
}
