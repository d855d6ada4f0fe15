//go:build unix

package faults

import (
	"bytes"
	"context"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/seed1cedbf7c/ckpt"
	"github.com/seed1cedbf7c/ckpt/internal/testutil"
)

// Class 11: permissions. Store files are 0600 and store directories 0700
// whatever the umask and the parent directory; existing ones are tightened
// when a store we own is opened; the same for hook logs.

// openUmask sets the process umask to 0 for the test (children inherit it).
func openUmask(t *testing.T) {
	old := syscall.Umask(0)
	t.Cleanup(func() { syscall.Umask(old) })
}

// checkPrivate fails for any entry of dir (dir included, not below
// subdirectories named in skip) that group or others may use, or a file
// its owner cannot read and write.
func checkPrivate(t *testing.T, dir string) {
	t.Helper()
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			t.Errorf("%s: %v", p, err)
			return nil
		}
		fi, err := os.Lstat(p)
		if err != nil {
			return nil // a temporary file gone meanwhile
		}
		m := fi.Mode()
		switch {
		case m.IsDir():
			if m.Perm() != 0o700 {
				t.Errorf("directory %s is %04o, want 0700", p, m.Perm())
			}
		case m.IsRegular():
			if m.Perm() != 0o600 {
				t.Errorf("file %s is %04o, want 0600", p, m.Perm())
			}
		case m.Type() == fs.ModeSocket:
		default:
			t.Errorf("%s: unexpected %s", p, m.Type())
		}
		return nil
	})
}

// TestStorePermissions: a store made in an existing 0755 directory under
// umask 0 holds nothing but 0600 files and 0700 directories, the
// database's -wal and -shm files while it is open included.
func TestStorePermissions(t *testing.T) {
	openUmask(t)
	e := newEnv(t)
	e.Write(map[string]string{"a.txt": "a", "b.txt": "b"})
	if err := os.MkdirAll(e.Store, 0o755); err != nil {
		t.Fatal(err)
	}
	os.Chmod(e.Store, 0o755)
	e.Must("config", "keep", "50")
	e.Must("save", "-q")
	e.Write(map[string]string{"a.txt": "a2"})
	e.Must("save", "-q")
	r := e.Open(ckpt.Options{})
	e.Write(map[string]string{"b.txt": "b2"})
	if _, err := r.Save(context.Background(), ckpt.SaveOptions{}); err != nil {
		t.Fatal(err)
	}
	for _, n := range []string{"ckpt.db", "ckpt.db-wal", "ckpt.db-shm", "lock", "statcache", "config.toml"} {
		if _, err := os.Stat(filepath.Join(e.Store, n)); err != nil {
			t.Errorf("%s: %v (the test expects it)", n, err)
		}
	}
	checkPrivate(t, e.Store)
}

// TestDefaultStorePermissions: the default store under $XDG_STATE_HOME
// and the directories ckpt makes above it are 0700.
func TestDefaultStorePermissions(t *testing.T) {
	openUmask(t)
	e := newEnv(t)
	e.Write(map[string]string{"a.txt": "a"})
	e.Extra = []string{"CKPT_STORE="}
	e.Must("save", "-q")
	t.Setenv("XDG_STATE_HOME", e.State)
	sd, err := ckpt.DefaultStoreDir(e.WS)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(sd, "ckpt.db")); err != nil {
		t.Fatalf("default store: %v", err)
	}
	checkPrivate(t, filepath.Join(e.State, "ckpt"))
}

// TestStorePermissionsTightened: a store left 0755/0644 by an older ckpt
// (or a umask of 022) is made private again by the next command.
func TestStorePermissionsTightened(t *testing.T) {
	openUmask(t)
	e := newEnv(t)
	e.Write(map[string]string{"a.txt": "a"})
	e.Must("save", "-q")
	e.Must("config", "keep", "50")
	for n, c := range map[string]string{"watch.log": "old log\n", "process.lock": ""} {
		os.WriteFile(filepath.Join(e.Store, n), []byte(c), 0o644)
	}
	des, _ := os.ReadDir(e.Store)
	for _, de := range des {
		os.Chmod(filepath.Join(e.Store, de.Name()), 0o644)
	}
	os.Chmod(e.Store, 0o755)
	e.Must("list")
	checkPrivate(t, e.Store)
}

// TestGitStorePermissions: the git backend's store in .git/ckpt, its map
// database included.
func TestGitStorePermissions(t *testing.T) {
	openUmask(t)
	e := newEnv(t)
	e.Write(map[string]string{"a.txt": "a"})
	testutil.GitInit(t, e.WS)
	e.Must("--backend", "git", "save", "-q")
	e.Write(map[string]string{"a.txt": "a2"})
	e.Must("--backend", "git", "save", "-q")
	checkPrivate(t, filepath.Join(e.WS, ".git", "ckpt"))
}

// TestHookLogPermissions: the hook log is 0600 in a 0700 directory, a new
// one and an old 0644 one alike.
func TestHookLogPermissions(t *testing.T) {
	openUmask(t)
	e := newEnv(t)
	hook := func(env ...string) {
		t.Helper()
		c := e.Cmd("hook", "claude-code")
		c.Env = append(c.Env, env...)
		c.Stdin = strings.NewReader("this is not a hook payload")
		var out bytes.Buffer
		c.Stdout, c.Stderr = &out, &out
		c.Run() // a hook never fails the agent; the log records the call
	}
	hook()
	log := filepath.Join(e.State, "ckpt", "hooks.log")
	if _, err := os.Stat(log); err != nil {
		t.Fatalf("hook log: %v", err)
	}
	checkPrivate(t, filepath.Join(e.State, "ckpt"))
	os.Chmod(log, 0o644)
	hook()
	checkPrivate(t, filepath.Join(e.State, "ckpt"))
	// A log named by CKPT_HOOK_LOG in a new directory.
	other := filepath.Join(t.TempDir(), "logs", "hooks.log")
	hook("CKPT_HOOK_LOG=" + other)
	checkPrivate(t, filepath.Dir(other))
}
