package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"time"

	"github.com/seed1cedbf7c/ckpt/internal/hooks"
)

// The guard. A hook must not fail the agent, and Claude Code takes exit
// status 2 as "block": yet a Go program that runs out of memory, or hits
// any other fatal runtime error, exits 2 whatever its code says —
// recover() cannot catch those, and a memory limit (debug.SetMemoryLimit)
// only makes the collector work harder before the same end. So `ckpt hook
// AGENT` runs the event in a child process of itself and stays out of
// harm's way: it reads the payload (bounded), hands it to the child,
// waits at most --timeout plus hookGrace, kills a child that runs longer,
// and always exits 0 (1 with --strict), reporting a child that crashed,
// was killed or was stopped on stderr, in the hook log and as the last
// hook failure. The cost is one process start (a few milliseconds).

const (
	hookChildEnv  = "CKPT_HOOK_CHILD"  // set in the guard's child
	hookCalledEnv = "CKPT_HOOK_CALLED" // when the guard started (RFC 3339)
	// hookGuardEnv=0 handles the event in the process the agent started
	// (for debugging ckpt itself).
	hookGuardEnv = "CKPT_HOOK_GUARD"
)

// hookGrace is how long past --timeout the guard waits for its child
// (which gives up by itself at --timeout) before it kills it. The
// installed entries give a hook 30 s; the default --timeout is 25 s.
const hookGrace = 2 * time.Second

// maxChildStderr bounds what the guard passes on of its child's stderr (a
// Go crash prints every goroutine's stack).
const maxChildStderr = 16 << 10

// guardHook reports whether this hook call should run under a guard:
// when ckpt is the process the agent started — Main was given the
// process's own stdout and stderr, as cmd/ckpt does — and not already
// the guard's child.
func (e *env) guardHook() bool {
	return os.Getenv(hookChildEnv) == "" && os.Getenv(hookGuardEnv) != "0" &&
		e.stdout == io.Writer(os.Stdout) && e.stderr == io.Writer(os.Stderr)
}

// runHookGuarded runs this hook call again in a child process and reports
// what became of it. ran is false when the child could not be started:
// the caller then handles the event itself.
func runHookGuarded(e *env, o *hookOptions, agent string, payload []byte, called time.Time) (ran bool, err error) {
	exe, err := os.Executable()
	if err != nil {
		return false, nil
	}
	// A signal to the guard (the agent gives up on the hook) ends the
	// child too.
	ctx, cancel := context.WithDeadline(e.ctx, called.Add(o.timeout+hookGrace))
	defer cancel()
	cmd := exec.CommandContext(ctx, exe)
	cmd.Args = append([]string{os.Args[0]}, e.args...)
	cmd.Env = append(os.Environ(), hookChildEnv+"=1", hookCalledEnv+"="+called.Format(time.RFC3339Nano))
	cmd.Stdin = strings.NewReader(string(payload))
	cmd.Stdout = e.stdout
	stderr := &clipWriter{w: e.stderr, n: maxChildStderr}
	cmd.Stderr = stderr
	cmd.WaitDelay = time.Second // a grandchild holding stderr open does not hold the guard
	if err := cmd.Start(); err != nil {
		return false, nil
	}
	err = cmd.Wait()
	stderr.done()
	if err == nil {
		return true, nil
	}
	var ee *exec.ExitError
	if errors.As(err, &ee) && ee.ExitCode() == ExitError && o.strict {
		return true, &exitStatusError{code: ExitError} // the child reported it
	}
	var failure error
	switch ws := waitStatus(ee); {
	case e.ctx.Err() != nil:
		failure = fmt.Errorf("the hook was interrupted (%v) and its process killed; the event was skipped", context.Cause(e.ctx))
	case ctx.Err() != nil:
		failure = fmt.Errorf("the hook process ran past --timeout %s and was killed; the event was skipped", o.timeout)
	case ee == nil:
		failure = fmt.Errorf("the hook process: %v", err)
	case ws != nil && ws.Signaled():
		failure = fmt.Errorf("the hook process was killed by signal %v; the event was skipped", ws.Signal())
	case ee.ExitCode() == 2:
		failure = fmt.Errorf("the hook process crashed (exit status 2; its stderr says why); the event was skipped")
	default:
		failure = fmt.Errorf("the hook process exited with status %d; the event may have been skipped", ee.ExitCode())
	}
	hooks.ReportFailure(agent, payload, failure, time.Since(called), hooks.RunOptions{Stderr: e.stderr})
	if o.strict {
		return true, &exitStatusError{code: ExitError}
	}
	return true, nil
}

// waitStatus returns how the process ended (nil if unknown).
func waitStatus(ee *exec.ExitError) *syscall.WaitStatus {
	if ee == nil {
		return nil
	}
	if ws, ok := ee.Sys().(syscall.WaitStatus); ok {
		return &ws
	}
	return nil
}

// clipWriter passes on the first n bytes written to it and counts the
// rest.
type clipWriter struct {
	w       io.Writer
	n       int
	dropped int
}

func (c *clipWriter) Write(p []byte) (int, error) {
	k := min(len(p), c.n)
	if k > 0 {
		c.w.Write(p[:k])
		c.n -= k
	}
	c.dropped += len(p) - k
	return len(p), nil
}

func (c *clipWriter) done() {
	if c.dropped > 0 {
		fmt.Fprintf(c.w, "\nckpt: (%d more bytes of the hook process's stderr left out)\n", c.dropped)
	}
}
