package agents

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/seed1cedbf7c/ckpt/internal/testutil"
)

// world is one user's machine: a home directory (the agents' settings,
// ckpt's state and store under it), a workspace, and ckpt on PATH.
type world struct {
	t     *testing.T
	home  string
	ws    string
	state string
	bin   string // directory holding the ckpt command
	env   []string
}

func newWorld(t *testing.T) *world {
	t.Helper()
	base := testutil.TempDir(t)
	w := &world{t: t, home: filepath.Join(base, "home"), ws: filepath.Join(base, "work"), bin: filepath.Join(base, "bin")}
	w.state = filepath.Join(w.home, ".local", "state")
	for _, d := range []string{w.home, w.ws, w.state} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	testutil.CkptBinary(t, w.bin)
	node, err := exec.LookPath("node")
	if err != nil {
		t.Fatalf("the agents' CLIs need node (scripts/test installs it): %v", err)
	}
	w.env = []string{
		"HOME=" + w.home,
		"XDG_STATE_HOME=" + w.state,
		"XDG_CONFIG_HOME=" + filepath.Join(w.home, ".config"),
		"XDG_CACHE_HOME=" + filepath.Join(w.home, ".cache"),
		"PATH=" + strings.Join([]string{w.bin, filepath.Dir(node), "/usr/local/bin", "/usr/bin", "/bin"}, string(os.PathListSeparator)),
		"TERM=dumb", "NO_COLOR=1", "LANG=C.UTF-8", "SHELL=/bin/bash", "USER=" + os.Getenv("USER"),
		"CKPT_HOOK_LOG=" + filepath.Join(w.home, "hooks.log"),
	}
	// The hooks start a watcher for the workspace; it goes with the test.
	t.Cleanup(func() {
		c := exec.Command(filepath.Join(w.bin, "ckpt"), "watch", "--stop")
		c.Dir, c.Env = w.ws, w.env
		c.Run()
	})
	return w
}

// ckpt runs ckpt in the workspace as the user would and returns stdout;
// a non-zero exit fails the test.
func (w *world) ckpt(args ...string) string {
	w.t.Helper()
	code, out, errs := w.ckptCode(args...)
	if code != 0 {
		w.t.Fatalf("ckpt %s: exit %d\n%s%s", strings.Join(args, " "), code, out, errs)
	}
	return out
}

func (w *world) ckptCode(args ...string) (int, string, string) {
	w.t.Helper()
	c := exec.Command(filepath.Join(w.bin, "ckpt"), args...)
	c.Dir, c.Env = w.ws, w.env
	return testutil.Run(w.t, c)
}

// run runs an agent's command in the workspace, with extra environment,
// and fails the test when it does not exit 0 within two minutes.
func (w *world) run(extra []string, name string, args ...string) string {
	w.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	c := exec.CommandContext(ctx, name, args...)
	c.Dir, c.Env = w.ws, append(append([]string{}, w.env...), extra...)
	c.WaitDelay = 5 * time.Second
	code, out, errs := testutil.Run(w.t, c)
	if code != 0 {
		w.t.Fatalf("%s %s: exit %d\nstdout:\n%s\nstderr:\n%s\nhook log:\n%s", filepath.Base(name), strings.Join(args, " "), code, out, errs, w.hookLog())
	}
	return out
}

func (w *world) hookLog() string {
	b, _ := os.ReadFile(filepath.Join(w.home, "hooks.log"))
	return string(b)
}

func (w *world) write(files map[string]string) {
	w.t.Helper()
	testutil.WriteFiles(w.t, w.ws, files)
}

func (w *world) read(p string) string {
	w.t.Helper()
	return testutil.ReadFile(w.t, w.ws, p)
}
