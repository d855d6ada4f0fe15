//go:build unix

package faults

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// init lets the hook tests make a ckpt child process fail the ways a real
// one can, without risking the machine:
//
//   - CKPT_TEST_RLIMIT_AS=BYTES bounds the process's address space, so a
//     hook that reads /dev/zero without bound dies at once of "out of
//     memory" (exit 2) rather than fill the machine's memory.
//   - CKPT_TEST_HOOK_CHILD=crash|hang makes the process that `ckpt hook`
//     runs the event in (its guard's child, CKPT_HOOK_CHILD set) die of a
//     fatal runtime error, or hang, as it starts.
func init() {
	if v := os.Getenv("CKPT_TEST_RLIMIT_AS"); v != "" {
		if n, err := strconv.ParseUint(v, 10, 64); err == nil {
			unix.Setrlimit(unix.RLIMIT_AS, &unix.Rlimit{Cur: n, Max: n})
		}
	}
	if os.Getenv("CKPT_HOOK_CHILD") == "" {
		return
	}
	switch os.Getenv("CKPT_TEST_HOOK_CHILD") {
	case "crash":
		unix.Setrlimit(unix.RLIMIT_AS, &unix.Rlimit{Cur: 1 << 30, Max: 1 << 30})
		b := make([]byte, 4<<30) // fatal error: runtime: out of memory
		b[len(b)-1] = 1
	case "hang":
		time.Sleep(time.Hour)
	}
}

// hookEnv is the environment of a hook call in the tests: no watcher
// (it would outlive the test), the address space bounded to 4 GiB.
var hookEnv = []string{"CKPT_NO_WATCH=1", "CKPT_TEST_RLIMIT_AS=" + strconv.Itoa(4<<30)}

// hookResult is what a hook call did.
type hookResult struct {
	code           int
	stdout, stderr string
}

// hook runs `ckpt hook AGENT [args...]` with payload on stdin (for Codex,
// pass the payload as an argument and "" here), bounded to a minute.
func (e *env) hook(agent, payload string, args ...string) hookResult {
	e.T.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	c := e.Cmd(append([]string{"hook", agent}, args...)...)
	c = withContext(ctx, c)
	c.Env = append(c.Env, hookEnv...)
	c.Env = append(c.Env, e.Extra...) // the test's own settings win
	c.Stdin = strings.NewReader(payload)
	var out, errb bytes.Buffer
	c.Stdout, c.Stderr = &out, &errb
	err := c.Run()
	r := hookResult{stdout: out.String(), stderr: errb.String()}
	var ee *exec.ExitError
	switch {
	case err == nil:
	case errors.As(err, &ee):
		r.code = ee.ExitCode()
	default:
		e.T.Fatalf("ckpt hook %s: %v", agent, err)
	}
	if ctx.Err() != nil {
		e.T.Fatalf("ckpt hook %s ran for more than a minute\nstderr: %s", agent, errb.String())
	}
	return r
}

// withContext re-creates c under ctx (exec.Cmd takes its context only
// when it is made).
func withContext(ctx context.Context, c *exec.Cmd) *exec.Cmd {
	cc := exec.CommandContext(ctx, c.Path, c.Args[1:]...)
	cc.Dir, cc.Env = c.Dir, c.Env
	return cc
}

// bounded re-creates c to be killed if it runs for more than a minute.
func bounded(t *testing.T, c *exec.Cmd) *exec.Cmd {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	t.Cleanup(cancel)
	return withContext(ctx, c)
}

// must fails the test on an error.
func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// claudePayload is a Claude Code hook payload for this workspace.
func (e *env) claudePayload(event, session string, extra map[string]any) string {
	e.T.Helper()
	m := map[string]any{"session_id": session, "hook_event_name": event, "cwd": e.WS}
	for k, v := range extra {
		m[k] = v
	}
	b, err := json.Marshal(m)
	if err != nil {
		e.T.Fatal(err)
	}
	return string(b)
}

// hookLog returns the hook log of the test's state directory.
func (e *env) hookLog() string {
	b, _ := os.ReadFile(filepath.Join(e.State, "ckpt", "hooks.log"))
	return string(b)
}

// mustHook runs a hook call that must exit 0 having printed nothing on
// stdout.
func (e *env) mustHook(agent, payload string, args ...string) hookResult {
	e.T.Helper()
	r := e.hook(agent, payload, args...)
	if r.code != 0 || r.stdout != "" {
		e.T.Fatalf("ckpt hook %s: exit %d, stdout %q; want 0 and nothing\nstderr: %s", agent, r.code, r.stdout, r.stderr)
	}
	return r
}
