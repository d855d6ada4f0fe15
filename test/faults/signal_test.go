//go:build unix

package faults

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/seed1cedbf7c/ckpt/internal/testutil"
	"github.com/seed1cedbf7c/ckpt/internal/treegen"
)

// interruptBound is how long a signalled ckpt may take to end: its grace
// (cli.InterruptGrace, 0.7 s) and the process's exit, with room for a
// loaded machine (the race detector). Measured times are logged.
const interruptBound = 3 * time.Second

// signalled starts ckpt, waits until ready says the command is under way,
// sends sig, and returns the exit status, the time from signal to exit and
// stderr. It fails the test if ckpt has not ended within interruptBound,
// or ended before the signal unless early is allowed (then took is 0).
func (e *env) signalled(t *testing.T, sig syscall.Signal, extra []string, early bool, ready func() bool, args ...string) (int, time.Duration, string) {
	t.Helper()
	c := e.Cmd(args...)
	c.Env = append(c.Env, extra...)
	var errb strings.Builder
	c.Stderr = &errb
	if err := c.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- c.Wait() }()
	deadline := time.Now().Add(30 * time.Second)
	for !ready() {
		select {
		case err := <-done:
			if early {
				t.Logf("ckpt %s ended before the signal", strings.Join(args, " "))
				return 0, 0, errb.String()
			}
			t.Fatalf("ckpt %s ended before the signal: %v\n%s", strings.Join(args, " "), err, errb.String())
		default:
		}
		if time.Now().After(deadline) {
			c.Process.Kill()
			t.Fatalf("ckpt %s never got under way\n%s", strings.Join(args, " "), errb.String())
		}
		time.Sleep(5 * time.Millisecond)
	}
	start := time.Now()
	c.Process.Signal(sig)
	select {
	case err := <-done:
		took := time.Since(start)
		code := 0
		if ee, ok := err.(*exec.ExitError); ok {
			code = ee.ExitCode()
		}
		t.Logf("ckpt %s ended %s after %v (exit %d)", strings.Join(args, " "), took.Round(time.Millisecond), sig, code)
		return code, took, errb.String()
	case <-time.After(interruptBound):
		c.Process.Kill()
		<-done
		t.Fatalf("ckpt %s still running %s after %v\n%s", strings.Join(args, " "), interruptBound, sig, errb.String())
		return 0, 0, ""
	}
}

func fileExists(p string) bool { _, err := os.Stat(p); return err == nil }

// TestSignalEndsCommands (Hardening III, 7): SIGTERM and SIGINT end a
// save blocked in a read, a save of a large tree and a restore blocked
// half-way, promptly, with the signal's status; afterwards recovery
// leaves the workspace exactly before or after, and fsck is clean.
func TestSignalEndsCommands(t *testing.T) {
	testutil.Long(t, "signals every kind of command")
	for _, sig := range []syscall.Signal{syscall.SIGTERM, syscall.SIGINT} {
		want := 128 + int(sig)
		t.Run(fmt.Sprintf("%v/save_blocked_in_a_read", sig), func(t *testing.T) {
			e := newEnv(t)
			e.Write(map[string]string{"a/x.txt": "x\n", "b/y.txt": "y\n"})
			fp := t.TempDir()
			extra := []string{"CKPT_FAILPOINT=scan/read-dir(a)=pause", "CKPT_FAILPOINT_DIR=" + fp}
			code, _, stderr := e.signalled(t, sig, extra, false, func() bool { return fileExists(filepath.Join(fp, "scan-read-dir.hit")) }, "save", "-m", "blocked")
			if code != want || !strings.Contains(stderr, "interrupted") {
				t.Fatalf("exit %d, want %d\n%s", code, want, stderr)
			}
			e.Must("recover")
			e.Must("save", "-m", "after")
			if out := e.Must("fsck"); !strings.Contains(out, "ok") {
				t.Fatalf("fsck: %s", out)
			}
		})
		t.Run(fmt.Sprintf("%v/save_of_a_large_tree", sig), func(t *testing.T) {
			e := newEnv(t)
			files := map[string]string{}
			n := 10000
			for i := range n {
				files[fmt.Sprintf("d%02d/e%02d/f%d.txt", i%40, i%13, i)] = strings.Repeat(fmt.Sprintf("line %d\n", i), 50)
			}
			e.Write(files)
			// Under way once it made its store: ckpt handles signals from
			// before it opens one (a signal any earlier would find the Go
			// runtime's default action, not ckpt).
			code, _, stderr := e.signalled(t, sig, nil, true, func() bool { return fileExists(e.Store) }, "save", "-m", "large")
			if code != want && code != 0 {
				t.Fatalf("exit %d, want %d (or 0 if it finished first)\n%s", code, want, stderr)
			}
			e.Must("recover")
			e.Must("save", "-m", "after")
			if out := e.Must("fsck"); !strings.Contains(out, "ok") {
				t.Fatalf("fsck: %s", out)
			}
		})
		t.Run(fmt.Sprintf("%v/restore_blocked_half_way", sig), func(t *testing.T) {
			e := newEnv(t)
			v1 := map[string]string{}
			for i := range 12 {
				v1[fmt.Sprintf("f%02d.txt", i)] = fmt.Sprintf("v1 %d\n", i)
			}
			e.Write(v1)
			e.Must("save", "-m", "v1")
			target := e.Snapshot()
			v2 := map[string]string{}
			for p := range v1 {
				v2[p] = "v2 " + p + "\n"
			}
			e.Write(v2)
			e.Must("save", "-m", "v2")
			before := e.Snapshot()
			fp := t.TempDir()
			extra := []string{"CKPT_FAILPOINT=restore/change=pause@4", "CKPT_FAILPOINT_DIR=" + fp}
			code, _, stderr := e.signalled(t, sig, extra, false, func() bool { return fileExists(filepath.Join(fp, "restore-change.hit")) }, "restore", "HEAD~1")
			if code != want {
				t.Fatalf("exit %d, want %d\n%s", code, want, stderr)
			}
			e.Must("recover")
			after := e.Snapshot()
			if treegen.Diff(target, after) != "" && treegen.Diff(before, after) != "" {
				t.Fatalf("half-way after recover:\nvs target:\n%s\nvs before:\n%s", treegen.Diff(target, after), treegen.Diff(before, after))
			}
			if out := e.Must("fsck"); !strings.Contains(out, "ok") {
				t.Fatalf("fsck: %s", out)
			}
		})
	}
}
