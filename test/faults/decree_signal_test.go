//go:build unix

package faults

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/seed1cedbf7c/ckpt/internal/testutil"
)

// SIGINT or SIGTERM to ckpt run or ckpt process whose routine is stuck
// (it ignores SIGTERM, its children too, and a daemon it started holds its
// output) ends ckpt within a second: the routine's process group is
// killed, the attempt is recorded as interrupted with its changes kept,
// and the run can be resumed. A ckpt killed outright (SIGKILL) leaves the
// run "running" and its routine running; ckpt recover, or the next run of
// it, kills what is left of the routine and records the attempt. Before,
// ckpt waited for a daemon holding the routine's output for ever (even
// after SIGTERM), and a ckpt ended at a signal left the run "running" and
// its routine alive.

// stuckRoutine ignores SIGINT and SIGTERM, starts a child that ignores them
// too and a daemon (its own session) that holds the output, writes their
// pids to files in dir, changes a.txt and then sleeps.
func stuckRoutine(dir string) string {
	return fmt.Sprintf(`trap '' INT TERM
echo $$ > %[1]s/routine.pid
sh -c 'trap "" INT TERM; echo $$ > %[1]s/child.pid; exec sleep 60' &
setsid sh -c 'echo $$ > %[1]s/daemon.pid; exec sleep 60' &
echo partial >> a.txt
while [ ! -s %[1]s/child.pid ] || [ ! -s %[1]s/daemon.pid ]; do sleep 0.01; done
touch %[1]s/started
sleep 60
echo never >> a.txt
`, dir)
}

// checkInterrupted checks the record of a run whose only attempt was
// interrupted: interrupted (never "running"), the attempt kept with its
// change in changes.diff, the workspace holding it.
func checkInterrupted(t *testing.T, e *env, id string) {
	t.Helper()
	rec := readRunRecord(e, id)
	if rec.Status != "interrupted" || len(rec.Attempts) != 1 {
		t.Fatalf("run.json says %s after %d attempt(s), want interrupted after 1", rec.Status, len(rec.Attempts))
	}
	diff, err := os.ReadFile(filepath.Join(e.WS, ".decree", "runs", id, "changes.diff"))
	if err != nil || !strings.Contains(string(diff), "+partial") {
		t.Fatalf("changes.diff: %v\n%s", err, diff)
	}
	if got := e.Read("a.txt"); got != "a\npartial\n" {
		t.Fatalf("a.txt = %q", got)
	}
}

// TestDecreeSignalStuckRoutine sends SIGTERM and SIGINT to ckpt run and
// ckpt process while their routine is stuck.
func TestDecreeSignalStuckRoutine(t *testing.T) {
	testutil.Long(t, "waits out routines that ignore signals")
	for _, sig := range []syscall.Signal{syscall.SIGTERM, syscall.SIGINT} {
		for _, via := range []string{"run", "process"} {
			t.Run(fmt.Sprintf("%v/%s", sig, via), func(t *testing.T) {
				e := newEnv(t)
				pids := t.TempDir()
				const id = "20260101000000-0"
				e.Write(map[string]string{"a.txt": "a\n"})
				args := []string{"run", "--id", id, "--retries", "1", "--", "bash", "-c", stuckRoutine(pids)}
				if via == "process" {
					e.Write(map[string]string{
						".decree/routines/develop.sh": "#!/usr/bin/env bash\n" + stuckRoutine(pids),
						".decree/config.yml":          "max_retries: 2\n",
						".decree/inbox/" + id + ".md": "Get stuck.\n",
					})
					args = []string{"process"}
				}
				started := func() bool { return fileExists(filepath.Join(pids, "started")) }
				code, took, stderr := e.signalled(t, sig, nil, false, started, args...)
				if took > time.Second {
					t.Errorf("ckpt %s took %v to end after %v (want at most a second)", via, took, sig)
				}
				if want := 128 + int(sig); code != want {
					t.Errorf("exit %d, want %d\n%s", code, want, stderr)
				}
				routine, child, daemon := pidIn(t, pids, "routine.pid"), pidIn(t, pids, "child.pid"), pidIn(t, pids, "daemon.pid")
				if !goneWithin(routine, 2*time.Second) || !goneWithin(child, 2*time.Second) {
					t.Errorf("the routine (%v) or its child (%v) outlived ckpt", alive(routine), alive(child))
				}
				syscall.Kill(daemon, syscall.SIGKILL) // it left the group: not the attempt's
				checkInterrupted(t, e, id)
				if out := e.Must("recover"); !strings.Contains(out, "nothing to recover") {
					t.Errorf("recover after an interrupt that was recorded: %s", out)
				}
				// Resumed: the last attempt starts clean (the partial work reverted).
				if via == "process" {
					e.Write(map[string]string{".decree/routines/develop.sh": "#!/usr/bin/env bash\necho final >> a.txt\n"})
					e.Must("process")
				} else {
					e.Must("run", "--id", id, "--retries", "1", "--", "sh", "-c", "echo final >> a.txt")
				}
				if rec := readRunRecord(e, id); rec.Status != "done" || len(rec.Attempts) != 2 || e.Read("a.txt") != "a\nfinal\n" {
					t.Fatalf("resumed: run.json says %s after %d attempts; a.txt = %q", rec.Status, len(rec.Attempts), e.Read("a.txt"))
				}
				e.Must("fsck")
			})
		}
	}
}

// TestDecreeKilledDuringRoutine kills ckpt run and ckpt process with
// SIGKILL while their routine is stuck. ckpt recover (for run) or the next
// ckpt process kills what is left of the routine and records the attempt
// as interrupted; the run then resumes.
func TestDecreeKilledDuringRoutine(t *testing.T) {
	for _, via := range []string{"run", "process"} {
		t.Run(via, func(t *testing.T) {
			e := newEnv(t)
			pids := t.TempDir()
			const id = "20260101000000-0"
			e.Write(map[string]string{"a.txt": "a\n"})
			args := []string{"run", "--id", id, "--retries", "1", "--", "bash", "-c", stuckRoutine(pids)}
			if via == "process" {
				e.Write(map[string]string{
					".decree/routines/develop.sh": "#!/usr/bin/env bash\n" + stuckRoutine(pids),
					".decree/config.yml":          "max_retries: 2\n",
					".decree/inbox/" + id + ".md": "Get stuck.\n",
				})
				args = []string{"process"}
			}
			started := func() bool { return fileExists(filepath.Join(pids, "started")) }
			if code, _, stderr := e.signalled(t, syscall.SIGKILL, nil, false, started, args...); code != -1 {
				t.Fatalf("exit %d, want killed\n%s", code, stderr)
			}
			routine, child, daemon := pidIn(t, pids, "routine.pid"), pidIn(t, pids, "child.pid"), pidIn(t, pids, "daemon.pid")
			syscall.Kill(daemon, syscall.SIGKILL)
			if !alive(routine) || !alive(child) {
				t.Fatal("the routine died with ckpt: nothing to recover")
			}
			if rec := readRunRecord(e, id); rec.Status != "running" {
				t.Fatalf("run.json says %s, want running (ckpt was killed)", rec.Status)
			}
			if out := e.Must("runs"); !strings.Contains(out, "interrupted") {
				t.Errorf("ckpt runs shows a run whose ckpt is gone as:\n%s", out)
			}
			if via == "run" {
				// As if ckpt had been killed in an atomic write too.
				e.Write(map[string]string{".decree/runs/" + id + "/.ckpt-tmp-999": "{"})
				out := e.Must("recover")
				if !strings.Contains(out, "run "+id+" was cut short") || exists(e, ".decree/runs/"+id+"/.ckpt-tmp-999") {
					t.Fatalf("recover: %s", out)
				}
				if !goneWithin(routine, 2*time.Second) || !goneWithin(child, 2*time.Second) {
					t.Fatalf("recover left the routine (%v) or its child (%v) running", alive(routine), alive(child))
				}
				checkInterrupted(t, e, id)
				e.Must("run", "--id", id, "--retries", "1", "--", "sh", "-c", "echo final >> a.txt")
			} else {
				e.Write(map[string]string{".decree/routines/develop.sh": "#!/usr/bin/env bash\necho final >> a.txt\n"})
				e.Must("process")
				if !goneWithin(routine, 2*time.Second) || !goneWithin(child, 2*time.Second) {
					t.Fatalf("the next ckpt process left the routine (%v) or its child (%v) running", alive(routine), alive(child))
				}
			}
			rec := readRunRecord(e, id)
			if rec.Status != "done" || len(rec.Attempts) != 2 || e.Read("a.txt") != "a\nfinal\n" {
				t.Fatalf("resumed: run.json says %s after %d attempts; a.txt = %q", rec.Status, len(rec.Attempts), e.Read("a.txt"))
			}
			e.Must("fsck")
		})
	}
}

// TestDecreeSignalAtEachStage sends SIGTERM to ckpt run and ckpt process
// held (by a failpoint) in each stage of a run whose only attempt fails:
// the checkpoint before it, the checkpoint after it, and the revert. ckpt
// ends promptly; no record says "running" (ckpt runs shows a cut-short
// run as interrupted, and ckpt recover settles it); and running it again
// ends it dead and reverted, the workspace exactly as before.
func TestDecreeSignalAtEachStage(t *testing.T) {
	testutil.Long(t, "signals a run at each stage")
	const id = "20260101000000-0"
	const routine = "echo partial >> a/x.txt; echo new > n.txt; exit 1"
	for _, via := range []string{"run", "process"} {
		for _, stage := range []string{"scan/read-dir(a)=pause", "scan/read-dir(a)=pause@2", "restore/change=pause"} {
			t.Run(via+"/"+stage, func(t *testing.T) {
				e := newEnv(t)
				e.Write(map[string]string{"a/x.txt": "x\n", "b.txt": "b\n"})
				before := revertState(e)
				args := []string{"run", "--id", id, "--retries", "0", "--", "sh", "-c", routine}
				if via == "process" {
					e.Write(map[string]string{
						".decree/routines/develop.sh": "#!/usr/bin/env bash\n" + routine + "\n",
						".decree/config.yml":          "max_retries: 1\n",
						".decree/inbox/" + id + ".md": "Fail.\n",
					})
					args = []string{"process"}
				}
				fp := t.TempDir()
				hit := filepath.Join(fp, strings.ReplaceAll(strings.Split(strings.Split(stage, "=")[0], "(")[0], "/", "-")+".hit")
				extra := []string{"CKPT_FAILPOINT=" + stage, "CKPT_FAILPOINT_DIR=" + fp}
				e.signalled(t, syscall.SIGTERM, extra, false, func() bool { return fileExists(hit) }, args...)
				if out := e.Must("runs", "--json"); strings.Contains(out, `"running"`) {
					t.Fatalf("ckpt runs after the signal:\n%s", out)
				}
				e.Must("recover")
				if exists(e, ".decree/runs/"+id+"/run.json") {
					if rec := readRunRecord(e, id); rec.Status == "running" {
						t.Fatalf("run.json says running after ckpt recover")
					}
				}
				// Run it again until it is over.
				for range 3 {
					if exists(e, ".decree/runs/"+id+"/run.json") && readRunRecord(e, id).Status == "dead" {
						break
					}
					e.Run(args...)
				}
				if rec := readRunRecord(e, id); rec.Status != "dead" {
					t.Fatalf("run.json says %s (%s), want dead", rec.Status, rec.Reason)
				}
				wantState(e, before, "after the run ended")
				if via == "process" && !exists(e, ".decree/inbox/dead/"+id+".md") {
					t.Error("the message is not a dead letter")
				}
				e.Must("fsck")
			})
		}
	}
}

// TestDecreeSecondSignal: a second SIGTERM ends ckpt at once, in the
// middle of stopping its routine; the routine's process group goes with
// it, and ckpt recover records the attempt.
func TestDecreeSecondSignal(t *testing.T) {
	e := newEnv(t)
	pids := t.TempDir()
	const id = "20260101000000-0"
	e.Write(map[string]string{"a.txt": "a\n"})
	c := e.Cmd("run", "--id", id, "--retries", "1", "--", "bash", "-c", stuckRoutine(pids))
	if err := c.Start(); err != nil {
		t.Fatal(err)
	}
	for !fileExists(filepath.Join(pids, "started")) {
		time.Sleep(5 * time.Millisecond)
	}
	c.Process.Signal(syscall.SIGTERM)
	time.Sleep(20 * time.Millisecond)
	c.Process.Signal(syscall.SIGTERM)
	c.Wait()
	routine, child, daemon := pidIn(t, pids, "routine.pid"), pidIn(t, pids, "child.pid"), pidIn(t, pids, "daemon.pid")
	syscall.Kill(daemon, syscall.SIGKILL)
	if !goneWithin(routine, 2*time.Second) || !goneWithin(child, 2*time.Second) {
		t.Fatalf("the routine (%v) or its child (%v) outlived ckpt", alive(routine), alive(child))
	}
	if out := e.Must("runs"); strings.Contains(out, "running") {
		t.Errorf("ckpt runs: %s", out)
	}
	e.Must("recover")
	checkInterrupted(t, e, id)
	e.Must("fsck")
}

// TestDecreeRecoverLeavesLiveRun: ckpt recover (and a second ckpt running
// the same run) leaves a run alone while the ckpt running it is alive.
func TestDecreeRecoverLeavesLiveRun(t *testing.T) {
	e := newEnv(t)
	pids := t.TempDir()
	const id = "20260101000000-0"
	e.Write(map[string]string{"a.txt": "a\n"})
	c := e.Cmd("run", "--id", id, "--retries", "1", "--", "bash", "-c", stuckRoutine(pids))
	if err := c.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { c.Process.Kill(); c.Wait() }()
	for !fileExists(filepath.Join(pids, "started")) {
		time.Sleep(5 * time.Millisecond)
	}
	routine, daemon := pidIn(t, pids, "routine.pid"), pidIn(t, pids, "daemon.pid")
	pidIn(t, pids, "child.pid") // killed at the end
	defer syscall.Kill(daemon, syscall.SIGKILL)
	if out := e.Must("recover"); !strings.Contains(out, "nothing to recover") {
		t.Errorf("recover: %s", out)
	}
	code, _, errs := e.Run("run", "--id", id, "--", "true")
	if code == 0 || !strings.Contains(errs, "is being run by another ckpt") {
		t.Errorf("a second run of it: exit %d\n%s", code, errs)
	}
	if out := e.Must("runs"); !strings.Contains(out, "running") {
		t.Errorf("ckpt runs: %s", out)
	}
	if !alive(routine) {
		t.Fatal("the routine was killed")
	}
	if rec := readRunRecord(e, id); rec.Status != "running" {
		t.Fatalf("run.json says %s", rec.Status)
	}
}
