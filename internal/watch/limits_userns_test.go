//go:build linux

package watch

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
)

// The real inotify limits, in a child process in a user namespace of its
// own: since Linux 5.11 the watch and instance limits are counted per user
// namespace (/proc/sys/user/max_inotify_watches and
// max_inotify_instances), and the namespace's owner may lower them for
// the namespace alone. The machine-wide limits are never touched.
func TestWatchRealLimit(t *testing.T) {
	if os.Getenv("CKPT_WATCH_LIMIT_CHILD") == "1" {
		realLimitChild(t)
		return
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestWatchRealLimit$", "-test.v", "-test.count=1")
	cmd.Env = append(os.Environ(), "CKPT_WATCH_LIMIT_CHILD=1")
	cmd.SysProcAttr = &syscall.SysProcAttr{
		Cloneflags:  syscall.CLONE_NEWUSER,
		UidMappings: []syscall.SysProcIDMap{{ContainerID: 0, HostID: os.Getuid(), Size: 1}},
		GidMappings: []syscall.SysProcIDMap{{ContainerID: 0, HostID: os.Getgid(), Size: 1}},
	}
	out, err := cmd.CombinedOutput()
	if err != nil && len(out) == 0 {
		t.Skipf("cannot start a child process in a new user namespace (%v): the real inotify limits are not tested here; TestWatchLimitUnwatched covers the same logic with a failpoint", err)
	}
	if m := regexp.MustCompile(`(?m)^\s*limits_userns_test.go:\d+: (skip: .*)$`).FindSubmatch(out); m != nil {
		t.Skipf("in the child process: %s", m[1])
	}
	t.Logf("child process:\n%s", out)
	if err != nil || !strings.Contains(string(out), "--- PASS: TestWatchRealLimit") {
		t.Fatalf("child process (in a user namespace): %v\n%s", err, out)
	}
}

func writeSysctl(path string, n int) error {
	if err := os.WriteFile(path, []byte(strconv.Itoa(n)), 0o644); err != nil {
		return err
	}
	if got := readInt(path); got != int64(n) {
		return fmt.Errorf("%s reads %d after writing %d", path, got, n)
	}
	return nil
}

// realLimitChild runs in the user namespace: a watch limit of 4 for a
// workspace with 9 directories.
func realLimitChild(t *testing.T) {
	if err := writeSysctl(sysctlNSWatches, 4); err != nil {
		t.Skipf("skip: cannot lower the user namespace's watch limit (Linux before 5.11, or no per-namespace limits): %v", err)
	}
	dirs := []string{"a", "a/b", "a/b/c", "d", "e", "f", "g", "h"}
	l := startLimitDaemon(t, dirs...)
	st, err := GetStatus(context.Background(), l.sock)
	if err != nil {
		t.Fatal(err)
	}
	// The root and 3 directories take the 4 watches.
	if st.Error != "" || st.Watches != 4 || st.Unwatched != 5 {
		t.Fatalf("status: error %q, %d watches, %d unwatched; want no error, 4, 5", st.Error, st.Watches, st.Unwatched)
	}
	if !strings.Contains(st.Warning, "user.max_inotify_watches = 4") || !strings.Contains(st.Warning, "5 directories are not watched") {
		t.Fatalf("warning %q", st.Warning)
	}
	a := query(t, l.sock, "")
	a = query(t, l.sock, a.Token)
	if a.Full || len(a.Dirty) != 5 || a.Warning != st.Warning {
		t.Fatalf("answer: full %v (%s), dirty %q, warning %q", a.Full, a.Reason, a.Dirty, a.Warning)
	}
	watched := 0
	for _, d := range dirs {
		if !slices.Contains(a.Dirty, d) {
			watched++
			os.WriteFile(filepath.Join(l.root, d, "f.txt"), []byte("y"), 0o644)
		}
	}
	if watched != 3 {
		t.Fatalf("%d directories watched, want 3 (dirty %q)", watched, a.Dirty)
	}
	a = query(t, l.sock, a.Token)
	if a.Full || len(a.Dirty) != 8 {
		t.Fatalf("after an edit in each watched directory: full %v (%s), dirty %q", a.Full, a.Reason, a.Dirty)
	}

	// Raised: the next save's answer watches them all (and is full once).
	if err := writeSysctl(sysctlNSWatches, 100); err != nil {
		t.Fatal(err)
	}
	l.writeCache(t)
	if a = query(t, l.sock, a.Token); !a.Full || a.Warning != "" {
		t.Fatalf("after raising the limit: full %v (%s), warning %q", a.Full, a.Reason, a.Warning)
	}
	if st, _ := GetStatus(context.Background(), l.sock); st.Watches != 9 || st.Unwatched != 0 || st.Warning != "" {
		t.Fatalf("after raising the limit: %d watches, %d unwatched, warning %q", st.Watches, st.Unwatched, st.Warning)
	}

	// Not even the root can be watched: the daemon does not start, and
	// says why.
	if err := writeSysctl(sysctlNSWatches, 1); err != nil {
		t.Fatal(err)
	}
	err = Run(context.Background(), Options{Root: t.TempDir(), Cache: l.cache, Socket: filepath.Join(t.TempDir(), "s")})
	if err == nil || !strings.Contains(err.Error(), "user.max_inotify_watches = 1") || !strings.Contains(err.Error(), "before the workspace root could be watched") {
		t.Fatalf("with no inotify watch left: %v", err)
	}

	// No inotify instance left: the daemon does not start, and says why.
	if err := writeSysctl(sysctlNSInstances, 1); err != nil { // the running daemon's
		t.Fatal(err)
	}
	err = Run(context.Background(), Options{Root: l.root, Cache: l.cache, Socket: filepath.Join(t.TempDir(), "s")})
	if err == nil || !strings.Contains(err.Error(), "user.max_inotify_instances = 1") || !strings.Contains(err.Error(), "sudo sysctl") {
		t.Fatalf("with no inotify instance left: %v", err)
	}
}
