//go:build linux

package harness

import (
	"os"
	"strconv"
	"strings"
	"syscall"
	"testing"
)

var ballast []byte

// A child's peak memory is its own, not the benchmark's: Go's vfork-style
// start and Linux's accounting would otherwise count the parent's
// resident memory in the child's peak.
func TestShPeakIsTheChilds(t *testing.T) {
	ballast = make([]byte, 300<<20)
	for i := 0; i < len(ballast); i += 4096 {
		ballast[i] = 1
	}
	r := Runner{Home: t.TempDir()}
	d, rss, out, err := r.Sh(nil, t.TempDir(), "sh", "-c", "echo hi")
	if err != nil {
		t.Fatal(err)
	}
	if out != "hi" || d <= 0 {
		t.Fatalf("out %q, duration %v", out, d)
	}
	if rss <= 0 || rss > 100<<10 {
		t.Fatalf("peak RSS of sh -c 'echo hi': %d KB (the benchmark holds 300 MB)", rss)
	}
	ballast = nil

	_, _, _, err = r.Sh(nil, t.TempDir(), "sh", "-c", "echo out; echo why >&2; exit 3")
	if err == nil || !strings.Contains(err.Error(), "exit status 3") || !strings.Contains(err.Error(), "why") {
		t.Fatalf("a failing command: %v", err)
	}
	if _, _, _, err = r.Sh(nil, t.TempDir(), "/nonexistent/cmd"); err == nil {
		t.Fatal("a missing command ran")
	}
}

// A command that leaves a process running (ckpt watch -d starts its
// daemon) returns at once, and the process does not hold the relay's
// report pipe.
func TestShLeavesNoReportPipe(t *testing.T) {
	r := Runner{Home: t.TempDir()}
	_, _, out, err := r.Sh(nil, t.TempDir(), "sh", "-c", "sleep 30 </dev/null >/dev/null 2>&1 & echo $!")
	if err != nil {
		t.Fatal(err)
	}
	pid, err := strconv.Atoi(out)
	if err != nil {
		t.Fatalf("pid %q: %v", out, err)
	}
	defer syscall.Kill(pid, syscall.SIGKILL)
	if target, err := os.Readlink("/proc/" + out + "/fd/3"); err == nil {
		t.Fatalf("the process left running holds descriptor 3: %s", target)
	}
}
