//go:build unix

package faults

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// runUsage runs ckpt like run and also returns the peak resident memory of
// the ckpt process, in bytes, as it reports it (see reportPeakMemory).
// (The rusage of a child is no use: on Linux its maxrss includes the
// memory of the parent it was forked from.)
func (e *env) runUsage(args ...string) (code int, stdout, stderr string, maxRSS int64) {
	e.T.Helper()
	var out, errb capBuffer
	peak := filepath.Join(e.T.TempDir(), "peak")
	c := e.Cmd(args...)
	c.Env = append(c.Env, "CKPT_TEST_PEAK_FILE="+peak)
	c.Stdout, c.Stderr = &out, &errb
	err := c.Run()
	if err != nil {
		var ee *exec.ExitError
		if !errors.As(err, &ee) {
			e.T.Fatalf("ckpt %s: %v", strings.Join(args, " "), err)
		}
		code = ee.ExitCode()
	}
	b, err := os.ReadFile(peak)
	if err != nil {
		e.T.Fatalf("ckpt %s did not report its peak memory: %v", strings.Join(args, " "), err)
	}
	maxRSS, _ = strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64)
	return code, out.String(), errb.String(), maxRSS
}

// reportPeakMemory is called by the test binary acting as ckpt as it
// exits: it writes its peak resident memory (VmHWM, in bytes) to
// $CKPT_TEST_PEAK_FILE, if set.
func reportPeakMemory() {
	path := os.Getenv("CKPT_TEST_PEAK_FILE")
	if path == "" {
		return
	}
	status, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return
	}
	for _, l := range strings.Split(string(status), "\n") {
		if v, ok := strings.CutPrefix(l, "VmHWM:"); ok {
			kb, _ := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			os.WriteFile(path, []byte(strconv.FormatInt(kb*1024, 10)+"\n"), 0o644)
		}
	}
}

// capBuffer keeps the first 64 KiB written to it and counts the rest (a
// routine's output can be far larger).
type capBuffer struct {
	bytes.Buffer
	dropped int64
}

func (b *capBuffer) Write(p []byte) (int, error) {
	n := len(p)
	if room := 64<<10 - b.Len(); room < len(p) {
		b.dropped += int64(len(p) - max(room, 0))
		p = p[:max(room, 0)]
	}
	b.Buffer.Write(p)
	return n, nil
}

// pidIn reads a pid a routine wrote; the test kills it at the end if it
// is still there.
func pidIn(t *testing.T, dir, name string) int {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, name))
	if err != nil {
		t.Fatal(err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil || pid <= 1 {
		t.Fatalf("%s: %q", name, b)
	}
	t.Cleanup(func() {
		if alive(pid) {
			syscall.Kill(pid, syscall.SIGKILL)
		}
	})
	return pid
}

// alive reports whether process pid exists and is not a zombie.
func alive(pid int) bool {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	s := string(b)
	f := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
	return len(f) > 0 && f[0] != "Z" && f[0] != "X"
}

// goneWithin reports whether process pid is gone within d.
func goneWithin(pid int, d time.Duration) bool {
	for deadline := time.Now().Add(d); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		if !alive(pid) {
			return true
		}
	}
	return !alive(pid)
}
