package run

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"sync"
	"syscall"
	"time"
)

// Exit is how an attempt ended.
type Exit struct {
	Code int `json:"exit_code"`
	// Signal names the signal that killed the routine, if any.
	Signal string `json:"signal,omitempty"`
	// Interrupted: ckpt was asked to stop (SIGINT/SIGTERM) and ended it.
	Interrupted bool `json:"interrupted,omitempty"`
	// Error is set when the routine could not be started.
	Error string `json:"error,omitempty"`
}

// OK reports success.
func (e Exit) OK() bool { return e.Code == 0 && e.Signal == "" && !e.Interrupted && e.Error == "" }

func (e Exit) String() string {
	switch {
	case e.Interrupted:
		return "interrupted"
	case e.Error != "":
		return e.Error
	case e.Signal != "":
		return "killed by signal " + e.Signal
	}
	return fmt.Sprintf("exit code %d", e.Code)
}

// GracePeriod is how long a routine may take to stop after SIGTERM before
// its process group is killed. It is short: ckpt ends within a second of
// SIGINT or SIGTERM (and is ended by then, see cli.InterruptGrace), and
// it has still to record what the attempt left.
var GracePeriod = 250 * time.Millisecond

// PipeDelay is how long ckpt waits, once a routine has exited, for its
// output pipe to be closed by processes it started: a daemon that left the
// routine's process group may hold it for ever. Then ckpt stops reading it.
var PipeDelay = 100 * time.Millisecond

// running holds the process groups of the routines this process runs.
var running sync.Map

// KillRunning kills (SIGKILL) the process groups of the routines this
// process is running: for a program about to exit in the middle of a run
// (at a second SIGINT), so that no routine outlives it.
func KillRunning() {
	running.Range(func(k, _ any) bool {
		signalGroup(k.(int), syscall.SIGKILL)
		return true
	})
}

// Execute runs argv in dir with env, its output (stdout and stderr) written
// to log and, if tee is not nil, copied there. started, if not nil, is
// told the routine's process group as soon as it runs.
//
// The routine runs in its own process group. When it exits, whatever it
// left running in that group is killed (SIGKILL): an attempt's processes
// end with it, so none changes the workspace after its checkpoint; and
// ckpt stops waiting for its output once the routine has exited and
// PipeDelay has passed. When ctx is cancelled the group gets SIGTERM, then
// SIGKILL after GracePeriod, and the attempt ends as interrupted. If ctx
// is cancelled before the routine starts, it is not started.
func Execute(ctx context.Context, argv []string, dir string, env []string, log io.Writer, tee io.Writer, started func(group *Proc)) Exit {
	if errPlatform != nil {
		fmt.Fprintf(log, "ckpt: %v\n", errPlatform)
		return Exit{Code: 126, Error: errPlatform.Error()}
	}
	if ctx.Err() != nil {
		fmt.Fprintf(log, "ckpt: interrupted before the routine started\n")
		return Exit{Code: 130, Interrupted: true}
	}
	// Always through a pipe (never log's descriptor itself), so that
	// nothing the routine leaves behind writes to the log once ckpt
	// stops reading.
	out := struct{ io.Writer }{log}
	if tee != nil {
		out.Writer = io.MultiWriter(log, tee)
	}
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Dir = dir
	cmd.Env = env
	cmd.Stdout, cmd.Stderr = out, out
	cmd.Stdin = nil
	cmd.SysProcAttr = groupAttr()
	cmd.WaitDelay = PipeDelay
	if err := cmd.Start(); err != nil {
		fmt.Fprintf(log, "ckpt: cannot start %s: %v\n", argv[0], err)
		code := 126
		if errors.Is(err, exec.ErrNotFound) || errors.Is(err, os.ErrNotExist) {
			code = 127
		}
		return Exit{Code: code, Error: "cannot start " + argv[0] + ": " + err.Error()}
	}
	pgid := cmd.Process.Pid
	running.Store(pgid, true)
	defer running.Delete(pgid)
	if started != nil {
		started(procOf(pgid))
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	var err error
	interrupted := false
	select {
	case err = <-done:
	case <-ctx.Done():
		interrupted = true
		signalGroup(pgid, syscall.SIGTERM)
		select {
		case err = <-done:
		case <-time.After(GracePeriod):
			signalGroup(pgid, syscall.SIGKILL)
			err = <-done
		}
	}
	// What the routine left running in its group. (Its id cannot have
	// been taken by another group: it was reaped a moment ago, and the id
	// stays in use while any of its processes lives.)
	signalGroup(pgid, syscall.SIGKILL)
	var ex Exit
	if interrupted {
		ex.Interrupted = true
		fmt.Fprintf(log, "\nckpt: interrupted; the routine was stopped\n")
	}
	var ee *exec.ExitError
	switch {
	case err == nil, errors.Is(err, exec.ErrWaitDelay):
		// ErrWaitDelay: the routine exited 0, and something it started
		// held its output open; that is over now.
	case errors.As(err, &ee):
		ex.Code = ee.ExitCode()
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			ex.Signal = ws.Signal().String()
			ex.Code = 128 + int(ws.Signal())
		}
	default:
		ex.Code = 1
		ex.Error = err.Error()
	}
	if interrupted && ex.Code == 0 {
		ex.Code = 130
	}
	return ex
}
