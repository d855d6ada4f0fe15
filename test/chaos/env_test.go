//go:build linux

package chaos

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/seed1cedbf7c/ckpt/internal/testutil"
)

// env is one workspace with its store, a directory outside it that must
// never change, and a ckpt binary to run on them.
type env struct {
	t       *testing.T
	ws      string // the workspace (symlinks resolved)
	store   string // its store directory
	state   string // XDG_STATE_HOME for child processes
	bin     string // the ckpt command
	outside string // sentinel directory outside the workspace
}

// newEnv makes an empty workspace, a store directory outside it and the
// sentinel directory.
func newEnv(t *testing.T) *env {
	t.Helper()
	base := t.TempDir()
	return &env{t: t, ws: testutil.TempDir(t), store: filepath.Join(base, "store"), state: filepath.Join(base, "state"),
		outside: testutil.TempDir(t), bin: testutil.CkptBinary(t, filepath.Join(base, "bin"))}
}

// result is how one ckpt process ended.
type result struct {
	args   []string
	code   int  // exit status; -1 when killed by a signal
	killed bool // ended by SIGKILL
	out    string
	errOut string
}

func (r result) String() string {
	return fmt.Sprintf("ckpt %s: exit %d\nstdout: %s\nstderr: %s", strings.Join(r.args, " "), r.code, r.out, r.errOut)
}

// runOpts arm a failpoint or a timed kill for one ckpt process.
type runOpts struct {
	failpoint string        // $CKPT_FAILPOINT
	killAfter time.Duration // > 0: SIGKILL the process group after this
}

// start starts ckpt in the workspace, in a process group of its own (so
// a run's command dies with it), with the store, a state directory of its
// own and the failpoints of o.
func (e *env) start(o runOpts, args ...string) (*exec.Cmd, *bytes.Buffer, *bytes.Buffer) {
	c := exec.Command(e.bin, args...)
	c.Dir = e.ws
	c.Env = append(os.Environ(), "CKPT_STORE="+e.store, "XDG_STATE_HOME="+e.state,
		"CKPT_FAILPOINT="+o.failpoint, "CKPT_FAILPOINT_DIR=", "NO_COLOR=1", "CKPT_PROGRESS=none", asCLI+"=1",
		// Under -race a child would sleep a second at exit.
		"GORACE=atexit_sleep_ms=0 "+os.Getenv("GORACE"))
	c.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	var out, errb bytes.Buffer
	c.Stdout, c.Stderr = &out, &errb
	if err := c.Start(); err != nil {
		e.t.Fatalf("ckpt %s: %v", strings.Join(args, " "), err)
	}
	return c, &out, &errb
}

// wait waits for a process started by start and kills what is left of its
// process group (a killed run's command).
func (e *env) wait(c *exec.Cmd, o runOpts, out, errb *bytes.Buffer) result {
	var timer *time.Timer
	pid := c.Process.Pid
	if o.killAfter > 0 {
		timer = time.AfterFunc(o.killAfter, func() { syscall.Kill(-pid, syscall.SIGKILL) })
	}
	err := c.Wait()
	if timer != nil {
		timer.Stop()
	}
	syscall.Kill(-pid, syscall.SIGKILL)
	r := result{args: c.Args[1:], out: out.String(), errOut: errb.String()}
	if err != nil {
		var ee *exec.ExitError
		if !errors.As(err, &ee) {
			e.t.Fatalf("ckpt %s: %v", strings.Join(r.args, " "), err)
		}
		r.code = ee.ExitCode()
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() && ws.Signal() == syscall.SIGKILL {
			r.killed = true
		}
	}
	return r
}

// runWith runs ckpt to the end with o.
func (e *env) runWith(o runOpts, args ...string) result {
	e.t.Helper()
	c, out, errb := e.start(o, args...)
	return e.wait(c, o, out, errb)
}

// run runs ckpt without failpoints.
func (e *env) run(args ...string) result {
	e.t.Helper()
	return e.runWith(runOpts{}, args...)
}
