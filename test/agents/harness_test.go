package agents

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/seed1cedbf7c/ckpt/internal/testutil"
)

// world is one user's machine: a home directory (the agents' settings,
// ckpt's state and store under it), a workspace, and ckpt on PATH.
type world struct {
	t     testing.TB
	home  string
	ws    string
	state string
	bin   string // directory holding the ckpt command
	env   []string
}

func newWorld(t testing.TB) *world {
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

// storeDir is the workspace's store (under XDG_STATE_HOME/ckpt).
func (w *world) storeDir() string {
	w.t.Helper()
	m, err := filepath.Glob(filepath.Join(w.state, "ckpt", "work-*", "ckpt.db"))
	if err != nil || len(m) != 1 {
		w.t.Fatalf("want one store under %s, found %q (%v)", w.state, m, err)
	}
	return filepath.Dir(m[0])
}

// hookTimes is the time each hook call took, per event, from the hook
// log's lines ("… EVENT session=… : what it did (12ms)").
func (w *world) hookTimes() map[string][]time.Duration {
	out := map[string][]time.Duration{}
	for _, line := range strings.Split(w.hookLog(), "\n") {
		f := strings.Fields(line)
		if len(f) < 4 || !strings.HasSuffix(line, "ms)") {
			continue
		}
		i := strings.LastIndex(line, "(")
		d, err := time.ParseDuration(strings.TrimSuffix(line[i+1:], ")"))
		if err != nil {
			continue
		}
		out[f[2]] = append(out[f[2]], d)
	}
	return out
}

// hookStat is one hook event's times: how many calls, the median and the
// 95th percentile.
type hookStat struct {
	event       string
	n           int
	median, p95 time.Duration
}

// hookStats summarizes the hook log's times per event, by event name.
func (w *world) hookStats() []hookStat {
	times := w.hookTimes()
	var out []hookStat
	for e, ds := range times {
		sort.Slice(ds, func(i, j int) bool { return ds[i] < ds[j] })
		out = append(out, hookStat{e, len(ds), ds[len(ds)/2], ds[min(len(ds)-1, (len(ds)*95+99)/100-1)]})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].event < out[j].event })
	return out
}

// logHookTimes reports the median and 95th percentile per event.
func (w *world) logHookTimes(agent string) {
	w.t.Helper()
	for _, s := range w.hookStats() {
		w.t.Logf("%s hook latency %-18s n=%-3d median %-6v p95 %v", agent, s.event, s.n, s.median, s.p95)
	}
}

// resetHookLog empties the hook log (for timing only later calls).
func (w *world) resetHookLog() {
	w.t.Helper()
	if err := os.WriteFile(filepath.Join(w.home, "hooks.log"), nil, 0o600); err != nil {
		w.t.Fatal(err)
	}
}
