//go:build unix

package faults

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A run whose every attempt failed must leave the tree it found. Before,
// a revert that failed left the failed work in place, the message in the
// inbox and run.json dead, and ckpt process went on to the next message on
// that tree (and every later process said the run already existed).

// decreeFiles is a workspace with two messages: the first one's routine
// changes files and fails, the second one's succeeds.
func decreeFiles(e *env) {
	e.Write(map[string]string{
		"a.txt":                               "a\n",
		"gone.txt":                            "bye\n",
		".decree/config.yml":                  "max_retries: 1\n",
		".decree/routines/fail.sh":            "echo more >> a.txt\nrm gone.txt\necho new > new.txt\nexit 1\n",
		".decree/routines/ok.sh":              "echo second > second.txt\n",
		".decree/inbox/2026010100000000-0.md": "---\nroutine: fail\n---\nfirst\n",
		".decree/inbox/2026010100000001-0.md": "---\nroutine: ok\n---\nsecond\n",
	})
}

// runUnreverted reads run.json's unreverted mark.
func runUnreverted(t *testing.T, e *env, id string) bool {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(e.WS, ".decree", "runs", id, "run.json"))
	if err != nil {
		t.Fatal(err)
	}
	var rec struct {
		Unreverted bool `json:"unreverted"`
	}
	if err := json.Unmarshal(data, &rec); err != nil {
		t.Fatal(err)
	}
	return rec.Unreverted
}

// TestDecreeRevertFallsBackToCheckpoint: when changes.diff does not
// reverse, the run's checkpoint is restored instead; the message is dead,
// the tree is the one before the run, and processing goes on. ckpt process
// then exits 4 (dead letters).
func TestDecreeRevertFallsBackToCheckpoint(t *testing.T) {
	e := newEnv(t)
	decreeFiles(e)
	before := e.Snapshot()
	e.Extra = []string{"CKPT_FAILPOINT=revert/before-change=fail"}
	code, out, errs := e.Run("process")
	if code != 4 {
		t.Fatalf("process: exit %d, want 4\nstdout: %s\nstderr: %s", code, out, errs)
	}
	if !strings.Contains(errs, "restoring checkpoint") {
		t.Errorf("stderr does not say the checkpoint was restored:\n%s", errs)
	}
	e.Extra = nil
	after := e.Snapshot()
	delete(after, "second.txt")
	for p := range after {
		if strings.HasPrefix(p, ".decree/") {
			delete(after, p)
		}
	}
	for p := range before {
		if strings.HasPrefix(p, ".decree/") {
			delete(before, p)
		}
	}
	if d := diffStates(before, after); d != "" {
		t.Fatalf("the tree is not the tree before the failed run:\n%s", d)
	}
	if e.Read("second.txt") != "second\n" {
		t.Error("the second message did not run after the first was dead-lettered")
	}
	rec := readRunRecord(e, "2026010100000000-0")
	if rec.Status != "dead" || !strings.Contains(rec.Reason, "the checkpoint before the run was restored") {
		t.Errorf("run.json: %+v", rec)
	}
	if runUnreverted(t, e, "2026010100000000-0") {
		t.Error("run.json says unreverted after a restore that worked")
	}
	if _, err := os.Stat(filepath.Join(e.WS, ".decree/inbox/dead/2026010100000000-0.md")); err != nil {
		t.Error(err)
	}
	e.Must("fsck")
}

// TestDecreeUndoFailsStopsProcessing: when neither the revert nor the
// restore of the run's checkpoint works, processing stops (exit 3): the
// message is dead-lettered with the reason, run.json says unreverted, the
// next message does not run — nor does it in a later ckpt process, until
// the tree is the one before the run again (ckpt runs revert, or a restore
// of the run's checkpoint).
func TestDecreeUndoFailsStopsProcessing(t *testing.T) {
	for _, way := range []string{"runs revert", "restore"} {
		t.Run(way, func(t *testing.T) {
			e := newEnv(t)
			decreeFiles(e)
			before := e.Snapshot()
			e.Extra = []string{"CKPT_FAILPOINT=revert/before-change=fail;restore/before-change=fail"}
			code, out, errs := e.Run("process")
			e.Extra = nil
			if code != 3 || !strings.Contains(errs, "processing stopped") || !strings.Contains(errs, "hint: nothing is lost") {
				t.Fatalf("process: exit %d, want 3\nstdout: %s\nstderr: %s", code, out, errs)
			}
			if e.Read("second.txt") != "<absent>" {
				t.Fatal("the second message ran on a tree that is not the tree before the first")
			}
			if _, err := os.Stat(filepath.Join(e.WS, ".decree/inbox/2026010100000001-0.md")); err != nil {
				t.Fatalf("the second message left the inbox: %v", err)
			}
			dead, err := os.ReadFile(filepath.Join(e.WS, ".decree/inbox/dead/2026010100000000-0.md"))
			if err != nil || !strings.Contains(string(dead), "RevertFailed") {
				t.Fatalf("dead letter: %v\n%s", err, dead)
			}
			id := "2026010100000000-0"
			if rec := readRunRecord(e, id); rec.Status != "dead" || !runUnreverted(t, e, id) {
				t.Fatalf("run.json: %+v", rec)
			}
			// A later process refuses while the tree is not put back.
			code, out, errs = e.Run("process")
			if code != 1 || !strings.Contains(errs, "could not be undone") || e.Read("second.txt") != "<absent>" {
				t.Fatalf("second process: exit %d\nstdout: %s\nstderr: %s", code, out, errs)
			}
			switch way {
			case "runs revert":
				e.Must("runs", "revert", id)
			case "restore":
				e.Must("restore", readRunRecord(e, id).Checkpoint)
			}
			after := e.Snapshot()
			for p := range after {
				if strings.HasPrefix(p, ".decree/") {
					delete(after, p)
				}
			}
			want := before
			for p := range want {
				if strings.HasPrefix(p, ".decree/") {
					delete(want, p)
				}
			}
			if d := diffStates(want, after); d != "" {
				t.Fatalf("after %s the tree is not the tree before the run:\n%s", way, d)
			}
			e.Must("process")
			if e.Read("second.txt") != "second\n" {
				t.Fatal("the second message did not run once the tree was put back")
			}
			if runUnreverted(t, e, id) {
				t.Error("run.json still says unreverted")
			}
			e.Must("fsck")
		})
	}
}
