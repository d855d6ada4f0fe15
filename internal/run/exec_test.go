//go:build unix

package run

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

func TestExecuteKillsLeftoversAndStopsWaiting(t *testing.T) {
	dir := t.TempDir()
	// The daemon writes its pid once setsid has put it in a session of
	// its own, and the routine waits for that: ending the routine's
	// group before would kill it while it is still in the group.
	script := `sleep 60 & echo $! > child.pid
setsid sh -c 'echo $$ > daemon.tmp && mv daemon.tmp daemon.pid && exec sleep 60' &
while [ ! -s daemon.pid ]; do sleep 0.01; done
echo hi`
	var log, tee bytes.Buffer
	var group *Proc
	start := time.Now()
	ex := Execute(context.Background(), []string{"sh", "-c", script}, dir, os.Environ(), &log, &tee, func(g *Proc) { group = g })
	took := time.Since(start)
	pid := func(name string) int {
		b, _ := os.ReadFile(filepath.Join(dir, name))
		n, _ := strconv.Atoi(strings.TrimSpace(string(b)))
		return n
	}
	child, daemon := pid("child.pid"), pid("daemon.pid")
	defer syscall.Kill(daemon, syscall.SIGKILL)
	if !ex.OK() || log.String() != "hi\n" || tee.String() != "hi\n" {
		t.Fatalf("exit %v, log %q, tee %q", ex, log.String(), tee.String())
	}
	if took > 5*time.Second {
		t.Errorf("Execute waited %v for the daemon's pipe", took)
	}
	if group == nil || group.PID <= 1 {
		t.Errorf("started was told %+v", group)
	}
	for deadline := time.Now().Add(2 * time.Second); time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
		if _, ok := procStart(child); !ok {
			break
		}
	}
	if _, ok := procStart(child); ok {
		t.Error("the routine's background child outlived it")
	}
	if _, ok := procStart(daemon); !ok {
		t.Error("the daemon in its own session was killed")
	}
}

func TestExecuteInterrupted(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	var log bytes.Buffer
	called := false
	ex := Execute(ctx, []string{"sh", "-c", "touch ran"}, t.TempDir(), os.Environ(), &log, nil, func(*Proc) { called = true })
	if !ex.Interrupted || called {
		t.Fatalf("cancelled before the start: %+v, started %v", ex, called)
	}
	ctx, cancel = context.WithCancel(context.Background())
	time.AfterFunc(100*time.Millisecond, cancel)
	start := time.Now()
	ex = Execute(ctx, []string{"sh", "-c", "trap '' TERM; sleep 30"}, t.TempDir(), os.Environ(), &log, nil, nil)
	if !ex.Interrupted || ex.Signal != "killed" || time.Since(start) > 5*time.Second {
		t.Fatalf("a routine ignoring SIGTERM: %+v after %v", ex, time.Since(start))
	}
}

func TestProcAliveAndKillGroup(t *testing.T) {
	if !Self().Alive() {
		t.Fatal("Self is not alive")
	}
	if (&Proc{PID: os.Getpid(), Start: Self().Start + 1}).Alive() && Self().Start != 0 {
		t.Fatal("a process that started at another time is taken for this one")
	}
	if (*Proc)(nil).Alive() || (&Proc{PID: 0}).Alive() {
		t.Fatal("no process is alive")
	}
	KillGroup(&Proc{PID: 1})           // never
	KillGroup(&Proc{PID: os.Getpid()}) // never
	// A group whose leader's pid now names another process is left alone.
	dir := t.TempDir()
	var log bytes.Buffer
	groups := make(chan *Proc, 1)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan Exit, 1)
	go func() {
		done <- Execute(ctx, []string{"sh", "-c", "touch started; sleep 30"}, dir, os.Environ(), &log, nil, func(p *Proc) { groups <- p })
	}()
	g := <-groups
	for !fileExists(filepath.Join(dir, "started")) {
		time.Sleep(5 * time.Millisecond)
	}
	KillGroup(&Proc{PID: g.PID, Start: g.Start + 1})
	select {
	case ex := <-done:
		t.Fatalf("a group with another start time was killed: %+v", ex)
	case <-time.After(100 * time.Millisecond):
	}
	KillGroup(g)
	if ex := <-done; ex.Signal != "killed" {
		t.Fatalf("KillGroup: %+v", ex)
	}
}

func fileExists(p string) bool { _, err := os.Stat(p); return err == nil }
