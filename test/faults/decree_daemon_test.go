//go:build unix

package faults

import (
	"fmt"
	"testing"
	"time"
)

// A routine runs in its own process group: when it exits, what it left
// running there is killed, and ckpt stops reading its output at once even
// if a daemon it started (in a session of its own) holds it. Before, ckpt
// run waited for such a daemon for ever.

// TestDecreeDaemonHoldsOutput: a routine that exits, leaving a daemon (in
// its own session) that holds its output, ends the attempt at once; what
// it left in its own process group is killed.
func TestDecreeDaemonHoldsOutput(t *testing.T) {
	for _, quiet := range []bool{false, true} {
		t.Run(fmt.Sprintf("quiet=%v", quiet), func(t *testing.T) {
			e := newEnv(t)
			pids := t.TempDir()
			script := fmt.Sprintf(`setsid sh -c 'echo $$ > %[1]s/daemon.pid; exec sleep 60' &
sh -c 'echo $$ > %[1]s/child.pid; exec sleep 60' &
while [ ! -s %[1]s/child.pid ] || [ ! -s %[1]s/daemon.pid ]; do sleep 0.01; done
echo done > out.txt`, pids)
			args := []string{"run", "--", "sh", "-c", script}
			if quiet {
				args = append([]string{"-q"}, args...)
			}
			c := e.Cmd(args...)
			var errb capBuffer
			c.Stderr = &errb
			start := time.Now()
			if err := c.Start(); err != nil {
				t.Fatal(err)
			}
			done := make(chan error, 1)
			go func() { done <- c.Wait() }()
			select {
			case err := <-done:
				if err != nil {
					t.Fatalf("ckpt run: %v\n%s", err, errb.String())
				}
			case <-time.After(10 * time.Second):
				c.Process.Kill()
				<-done
				t.Fatalf("ckpt run still waiting for the daemon after 10s\n%s", errb.String())
			}
			t.Logf("ckpt run took %v", time.Since(start).Round(time.Millisecond))
			daemon, child := pidIn(t, pids, "daemon.pid"), pidIn(t, pids, "child.pid")
			if !goneWithin(child, 2*time.Second) {
				t.Error("what the routine left in its process group outlived the attempt")
			}
			if !alive(daemon) {
				t.Error("the daemon (its own session) was killed")
			}
			if e.Read("out.txt") != "done\n" {
				t.Error("the routine did not finish")
			}
		})
	}
}
