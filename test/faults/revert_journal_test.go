//go:build unix

package faults

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/seed1cedbf7c/ckpt"
	"github.com/seed1cedbf7c/ckpt/internal/testutil"
	"github.com/seed1cedbf7c/ckpt/internal/treegen"
)

// Class 5: every write of more than one path goes through the journal. A
// run's revert (ckpt runs revert, and Decree's automatic reverts in ckpt
// run and ckpt process) killed at any moment leaves the workspace as before
// the revert or, after recovery (ckpt recover or any other command), exactly
// reverted — never half-way — with the run's record saying which.

const revertRunID = "2026010100000000-0"

// revertFiles is the workspace before the run.
var revertFiles = map[string]string{
	"a.txt":    "a\n",
	"b.txt":    "b\n",
	"c.sh":     "#!/bin/sh\necho c\n",
	"d/e.txt":  "e\n",
	"bin.dat":  "\x00\x01\x02 binary \xff",
	"keep.txt": "untouched\n",
}

// revertScript changes the workspace in every way a revert must undo:
// edits, deletions (a whole directory too), new files in new directories, a
// mode change, a binary file and a symlink.
const revertScript = `echo more >> a.txt
rm b.txt
echo new > n.txt
mkdir -p d2/deep && echo x > d2/deep/f.txt
chmod 755 c.sh
printf '\000\002 changed' > bin.dat
rm -r d
ln -s a.txt link
`

// revertState is the workspace's state without .decree (run records) and
// ckpt's temporary entries.
func revertState(e *env) treegen.State {
	e.T.Helper()
	st, err := treegen.Snapshot(e.WS, func(rel string) bool {
		return rel == ".decree" || strings.HasPrefix(rel, ".ckpt-tmp-")
	})
	if err != nil {
		e.T.Fatal(err)
	}
	return st
}

// finishedRun makes a workspace and runs revertScript in it with ckpt run;
// it returns the states before and after the run.
func finishedRun(t *testing.T) (e *env, before, after treegen.State) {
	t.Helper()
	e = newEnv(t)
	e.Write(revertFiles)
	before = revertState(e)
	out := e.Must("run", "--id", revertRunID, "--", "sh", "-c", revertScript)
	if !strings.Contains(out, "done after 1 attempt") {
		t.Fatalf("ckpt run: %s", out)
	}
	after = revertState(e)
	if treegen.Diff(before, after) == "" {
		t.Fatal("the run changed nothing")
	}
	return e, before, after
}

// runRecord is what run.json says.
type runRecord struct {
	ID         string `json:"id"`
	Status     string `json:"status"`
	Reason     string `json:"reason"`
	Checkpoint string `json:"checkpoint"`
	Result     string `json:"result"`
	Attempts   []struct {
		N int `json:"n"`
	} `json:"attempts"`
}

func readRunRecord(e *env, id string) runRecord {
	e.T.Helper()
	data, err := os.ReadFile(filepath.Join(e.WS, ".decree", "runs", id, "run.json"))
	if err != nil {
		e.T.Fatal(err)
	}
	var rec runRecord
	if err := json.Unmarshal(data, &rec); err != nil {
		e.T.Fatalf("run.json: %v\n%s", err, data)
	}
	return rec
}

// timeline opens the store in this process (without recovering anything)
// and returns where HEAD is and what undo would take back.
func timeline(e *env) *ckpt.Timeline {
	e.T.Helper()
	r, err := ckpt.Open(context.Background(), e.WS, ckpt.Options{Store: e.Store, NoRecover: true})
	if err != nil {
		e.T.Fatal(err)
	}
	defer r.Close()
	tl, err := r.Timeline(context.Background())
	if err != nil {
		e.T.Fatal(err)
	}
	return tl
}

// wantState fails the test unless the workspace is exactly want, with no
// empty directory left behind (want has none).
func wantState(e *env, want treegen.State, what string) {
	e.T.Helper()
	if d := treegen.Diff(want, revertState(e)); d != "" {
		e.T.Fatalf("%s: the workspace is not as it should be:\n%s", what, d)
	}
	if dirs := emptyDirs(e); len(dirs) > 0 {
		e.T.Fatalf("%s: empty directories left: %v", what, dirs)
	}
}

func killed(code int) bool { return code == -1 }

var finishedRevert = regexp.MustCompile(`(?m)^finished the interrupted revert: now at [0-9a-f]{12} \(\d+ file\(s\) changed\)$`)

// checkReverted checks a workspace after a finished (or recovered) runs
// revert: exactly the state before the run, the record reverted and
// pointing at HEAD, nothing left to recover, a clean store, and a revert
// that undo takes back (and, if again, that can then be done again).
func checkReverted(e *env, before, after treegen.State, what string, again bool) {
	e.T.Helper()
	wantState(e, before, what)
	tl := timeline(e)
	rec := readRunRecord(e, revertRunID)
	if rec.Status != "reverted" || rec.Result != tl.Head.String() {
		e.T.Fatalf("%s: run.json says %s, result %s; want reverted, result HEAD %s", what, rec.Status, rec.Result, tl.Head)
	}
	if tl.Undo == nil || tl.Undo.OpKind != "revert" {
		e.T.Fatalf("%s: undo would take back %+v, want the revert", what, tl.Undo)
	}
	if out := e.Must("recover"); !strings.Contains(out, "nothing to recover") {
		e.T.Fatalf("%s: a second recover: %s", what, out)
	}
	e.Must("fsck")
	e.Must("undo")
	wantState(e, after, what+", then undo")
	if !again {
		return
	}
	// A reverted run whose changes came back reverts again.
	e.Must("runs", "revert", revertRunID)
	wantState(e, before, what+", then undo and revert")
	e.Must("fsck")
}

// TestRunsRevertKilledAtEveryChange kills ckpt runs revert (SIGKILL, through
// a failpoint) after each change it makes to the workspace, and before the
// first; the next command — ckpt recover, or any other — finishes it.
func TestRunsRevertKilledAtEveryChange(t *testing.T) {
	testutil.Long(t, "kills a revert at every change")
	_, before, after := finishedRun(t)
	changed := len(strings.Split(treegen.Diff(before, after), "\n"))
	for n := 0; ; n++ {
		e, before, after := finishedRun(t)
		point := "revert/before-change=kill"
		if n > 0 {
			point = fmt.Sprintf("restore/change=kill@%d", n)
		}
		code, out, errs := e.RunEnv([]string{"CKPT_FAILPOINT=" + point}, "runs", "revert", revertRunID)
		what := fmt.Sprintf("killed at %s", point)
		if !killed(code) {
			if code != 0 || n == 0 || n <= changed {
				t.Fatalf("%s: not killed (exit %d): the revert never reached the point\nstdout: %s\nstderr: %s", what, code, out, errs)
			}
			checkReverted(e, before, after, fmt.Sprintf("not killed at change %d", n), false)
			t.Logf("the revert made %d changes; killed after each", n-1)
			return
		}
		if n == 0 {
			// Nothing was written: nothing to recover, the run still done.
			wantState(e, after, what)
			if out := e.Must("recover"); !strings.Contains(out, "nothing to recover") {
				t.Fatalf("%s: recover: %s", what, out)
			}
			wantState(e, after, what+", then recover")
			if rec := readRunRecord(e, revertRunID); rec.Status != "done" {
				t.Fatalf("%s: run.json says %s, want done", what, rec.Status)
			}
			e.Must("runs", "revert", revertRunID)
			checkReverted(e, before, after, what+", then runs revert", true)
			continue
		}
		switch {
		case n%2 == 1:
			// Any command finishes it first.
			e.Must("status")
		case n == 2:
			out := e.Must("recover", "--json")
			var res struct {
				Op     string `json:"op"`
				Result *struct {
					Head string `json:"head"`
				} `json:"result"`
			}
			if err := json.Unmarshal([]byte(out), &res); err != nil || res.Op != "revert" || res.Result == nil {
				t.Fatalf("%s: recover --json: %v\n%s", what, err, out)
			}
		default:
			if out := e.Must("recover"); !finishedRevert.MatchString(out) {
				t.Fatalf("%s: recover said:\n%s", what, out)
			}
		}
		checkReverted(e, before, after, what+", then recovered", n == 1)
	}
}

// bigRun makes a workspace of 300 files and runs a command that edits 200
// of them, deletes 50 and adds 50, so that its revert takes a while.
func bigRun(t *testing.T) (e *env, before, after treegen.State) {
	t.Helper()
	e = newEnv(t)
	files := map[string]string{}
	for i := range 300 {
		files[fmt.Sprintf("d%d/f%d.txt", i%10, i)] = fmt.Sprintf("file %d\nline 2\nline 3\n", i)
	}
	e.Write(files)
	before = revertState(e)
	script := `i=0; while [ $i -lt 200 ]; do echo edited >> d$((i%10))/f$i.txt; i=$((i+1)); done
while [ $i -lt 250 ]; do rm d$((i%10))/f$i.txt; i=$((i+1)); done
mkdir -p n; i=0; while [ $i -lt 50 ]; do echo new $i > n/n$i.txt; i=$((i+1)); done
`
	e.Must("run", "--id", revertRunID, "--", "sh", "-c", script)
	after = revertState(e)
	return e, before, after
}

// TestRunsRevertKilledAtRandom kills ckpt runs revert with SIGKILL at
// random moments: after ckpt recover the workspace is exactly as before
// the revert or exactly reverted, and the run's record says which.
func TestRunsRevertKilledAtRandom(t *testing.T) {
	testutil.Long(t, "kills reverts at random")
	rounds := 25
	// How long a whole revert takes here.
	e, before, _ := bigRun(t)
	start := time.Now()
	e.Must("runs", "revert", revertRunID)
	took := time.Since(start)
	wantState(e, before, "an uninterrupted revert")
	var untouched, reverted int
	for i := range rounds {
		e, before, after := bigRun(t)
		c := e.Cmd("runs", "revert", revertRunID)
		if err := c.Start(); err != nil {
			t.Fatal(err)
		}
		delay := time.Duration(rand.Int64N(int64(took)))
		time.Sleep(delay)
		c.Process.Kill()
		c.Wait()
		what := fmt.Sprintf("round %d, killed after %v", i, delay)
		e.Must("recover")
		rec := readRunRecord(e, revertRunID)
		now := revertState(e)
		switch {
		case treegen.Diff(before, now) == "":
			reverted++
			if tl := timeline(e); rec.Status != "reverted" || rec.Result != tl.Head.String() {
				t.Fatalf("%s: reverted, but run.json says %s, result %s (HEAD %s)", what, rec.Status, rec.Result, tl.Head)
			}
		case treegen.Diff(after, now) == "":
			untouched++
			if rec.Status != "done" {
				t.Fatalf("%s: not reverted, but run.json says %s", what, rec.Status)
			}
			e.Must("runs", "revert", revertRunID)
			wantState(e, before, what+", then runs revert")
		default:
			t.Fatalf("%s: half-reverted after recover:\n%s", what, treegen.Diff(before, now))
		}
		e.Must("fsck")
		e.Must("undo")
		wantState(e, after, what+", then undo")
	}
	t.Logf("%d rounds (a revert took %v): %d reverted, %d untouched", rounds, took, reverted, untouched)
}

// decreeEnv makes a workspace with revertFiles, a routine and one inbox
// message, and returns the state before and the state the failing routine
// leaves (revertScript applied to revertFiles).
func decreeEnv(t *testing.T, maxRetries int, routine string) (e *env, before, failed treegen.State) {
	t.Helper()
	e = newEnv(t)
	e.Write(revertFiles)
	before = revertState(e)
	// The state a failed attempt leaves: the script run on a copy.
	scratch := newEnv(t)
	scratch.Write(revertFiles)
	c := exec.Command("sh", "-c", revertScript)
	c.Dir = scratch.WS
	if out, err := c.CombinedOutput(); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	failed = revertState(scratch)
	e.Write(map[string]string{
		".decree/config.yml":                   fmt.Sprintf("max_retries: %d\n", maxRetries),
		".decree/routines/develop.sh":          "#!/usr/bin/env bash\n" + routine,
		".decree/inbox/" + revertRunID + ".md": "Change everything, then fail.\n",
	})
	return e, before, failed
}

func exists(e *env, p string) bool {
	_, err := os.Lstat(filepath.Join(e.WS, filepath.FromSlash(p)))
	return err == nil
}

// TestDecreeRevertKilledAtEveryChange kills Decree's automatic revert —
// after a message (ckpt process) or a command (ckpt run) exhausted its
// attempts — after each change it makes. After recovery the workspace is
// the pre-run state and the run's record says dead, with the pre-run
// checkpoint as its result; a message is a dead letter, and processing goes
// on cleanly.
func TestDecreeRevertKilledAtEveryChange(t *testing.T) {
	testutil.Long(t, "kills a revert at every change")
	for _, viaRun := range []bool{false, true} {
		name := map[bool]string{false: "process", true: "run"}[viaRun]
		t.Run(name, func(t *testing.T) {
			for n := 1; ; n++ {
				e, before, failed := decreeEnv(t, 1, revertScript+"exit 1\n")
				args := []string{"process"}
				if viaRun {
					args = []string{"run", "--id", revertRunID, "--", "sh", "-c", revertScript + "exit 1\n"}
				}
				point := fmt.Sprintf("restore/change=kill@%d", n)
				what := "ckpt " + name + " killed at " + point
				code, out, errs := e.RunEnv([]string{"CKPT_FAILPOINT=" + point}, args...)
				if !killed(code) {
					if n <= len(strings.Split(treegen.Diff(before, failed), "\n")) {
						t.Fatalf("%s: not killed (exit %d): the revert never reached the point\nstdout: %s\nstderr: %s", what, code, out, errs)
					}
					wantState(e, before, what+" (not killed)")
					t.Logf("the revert made %d changes; killed after each", n-1)
					return
				}
				if n%2 == 1 {
					if out := e.Must("recover"); !finishedRevert.MatchString(out) {
						t.Fatalf("%s: recover said:\n%s", what, out)
					}
				} else {
					e.Must("list") // any command finishes it
				}
				wantState(e, before, what+", then recovered")
				rec := readRunRecord(e, revertRunID)
				if rec.Status != "dead" || rec.Result != rec.Checkpoint || !strings.Contains(rec.Reason, "attempts failed") {
					t.Fatalf("%s: run.json says %s (%s), result %s; want dead, result the pre-run checkpoint %s", what, rec.Status, rec.Reason, rec.Result, rec.Checkpoint)
				}
				if tl := timeline(e); tl.Undo == nil || tl.Undo.OpKind != "revert" {
					t.Fatalf("%s: undo would take back %+v, want the revert", what, tl.Undo)
				}
				if !viaRun {
					if exists(e, ".decree/inbox/"+revertRunID+".md") || !exists(e, ".decree/inbox/dead/"+revertRunID+".md") {
						t.Fatalf("%s: the message is not (only) in inbox/dead", what)
					}
					// Processing goes on: nothing is left to run, nothing fails.
					if code, out, errs := e.Run("process"); code != 0 || strings.Contains(out+errs, "already exists") {
						t.Fatalf("%s: process again: exit %d\n%s%s", what, code, out, errs)
					}
				}
				e.Must("fsck")
				e.Must("undo")
				wantState(e, failed, what+", then undo")
			}
		})
	}
}

// TestProcessCleanSlateRevertKilled kills ckpt process during the revert
// before a message's last attempt (which starts clean). After recovery the
// workspace is the pre-run state; the next ckpt process resumes the run
// with its last attempt, which sees failure-context.md and a clean tree.
func TestProcessCleanSlateRevertKilled(t *testing.T) {
	testutil.Long(t, "kills a revert at every change")
	routine := `if [ -f "$message_dir/failure-context.md" ]; then
  seen=$(LC_ALL=C ls)
  echo "$seen" > seen-by-last-attempt.txt
  exit 0
fi
` + revertScript + "exit 1\n"
	for n := 1; ; n++ {
		e, before, failed := decreeEnv(t, 2, routine)
		point := fmt.Sprintf("restore/change=kill@%d", n)
		what := "ckpt process killed at " + point
		code, out, errs := e.RunEnv([]string{"CKPT_FAILPOINT=" + point}, "process")
		if !killed(code) {
			if n <= len(strings.Split(treegen.Diff(before, failed), "\n")) {
				t.Fatalf("%s: not killed (exit %d): the revert never reached the point\nstdout: %s\nstderr: %s", what, code, out, errs)
			}
			t.Logf("the revert made %d changes; killed after each", n-1)
			return
		}
		if out := e.Must("recover"); !finishedRevert.MatchString(out) {
			t.Fatalf("%s: recover said:\n%s", what, out)
		}
		wantState(e, before, what+", then recovered")
		// Its ckpt is gone: recover recorded the run as interrupted.
		if rec := readRunRecord(e, revertRunID); rec.Status != "interrupted" || len(rec.Attempts) != 1 {
			t.Fatalf("%s: run.json says %s after %d attempts; want interrupted after 1", what, rec.Status, len(rec.Attempts))
		}
		// The run resumes with its last attempt, on the clean tree.
		out = e.Must("process")
		if !strings.Contains(out, "done") {
			t.Fatalf("%s: process again:\n%s", what, out)
		}
		rec := readRunRecord(e, revertRunID)
		if rec.Status != "done" || len(rec.Attempts) != 2 {
			t.Fatalf("%s: run.json says %s after %d attempts; want done after 2", what, rec.Status, len(rec.Attempts))
		}
		if seen := e.Read("seen-by-last-attempt.txt"); seen != "a.txt\nb.txt\nbin.dat\nc.sh\nd\nkeep.txt\n" {
			t.Fatalf("%s: the last attempt did not start clean; it saw:\n%s", what, seen)
		}
		os.Remove(filepath.Join(e.WS, "seen-by-last-attempt.txt"))
		wantState(e, before, what+", then processed")
		if !exists(e, ".decree/inbox/done/"+revertRunID+".md") {
			t.Fatalf("%s: the message is not in inbox/done", what)
		}
		e.Must("fsck")
	}
}
