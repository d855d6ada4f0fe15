package run

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
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
// it is killed.
var GracePeriod = 5 * time.Second

// Execute runs argv in dir with env, its output (stdout and stderr) written
// to log and, if tee is not nil, copied there. The routine runs in its own
// process group; when ctx is cancelled the group gets SIGTERM, then SIGKILL
// after GracePeriod, and the attempt ends as interrupted.
func Execute(ctx context.Context, argv []string, dir string, env []string, log io.Writer, tee io.Writer) Exit {
	out := log
	if tee != nil {
		out = io.MultiWriter(log, tee)
	}
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Dir = dir
	cmd.Env = env
	cmd.Stdout, cmd.Stderr = out, out
	cmd.Stdin = nil
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		fmt.Fprintf(log, "ckpt: cannot start %s: %v\n", argv[0], err)
		code := 126
		if errors.Is(err, exec.ErrNotFound) || errors.Is(err, os.ErrNotExist) {
			code = 127
		}
		return Exit{Code: code, Error: "cannot start " + argv[0] + ": " + err.Error()}
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	var err error
	interrupted := false
	select {
	case err = <-done:
	case <-ctx.Done():
		interrupted = true
		pgid := cmd.Process.Pid
		syscall.Kill(-pgid, syscall.SIGTERM)
		select {
		case err = <-done:
		case <-time.After(GracePeriod):
			syscall.Kill(-pgid, syscall.SIGKILL)
			err = <-done
		}
	}
	var ex Exit
	if interrupted {
		ex.Interrupted = true
		fmt.Fprintf(log, "\nckpt: interrupted; the routine was stopped\n")
	}
	var ee *exec.ExitError
	switch {
	case err == nil:
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
