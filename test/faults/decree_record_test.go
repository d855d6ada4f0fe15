//go:build unix

package faults

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/seed1cedbf7c/ckpt/internal/testutil"
)

// run.json is a file in the workspace, which a routine can write; no value
// in it may make ckpt panic or act outside the run it belongs to. Every
// field ckpt acts on is now validated when the record is read. Before, a
// record whose id named another directory ("../../../x-0") made the dead
// letter of a resumed run write that directory's run.json — outside the
// workspace.

// forgeRecord rewrites fields of a run's run.json.
func forgeRecord(t *testing.T, e *env, id string, fields map[string]any) {
	t.Helper()
	p := filepath.Join(e.WS, ".decree", "runs", id, "run.json")
	data, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	var rec map[string]any
	if err := json.Unmarshal(data, &rec); err != nil {
		t.Fatal(err)
	}
	for k, v := range fields {
		rec[k] = v
	}
	out, _ := json.Marshal(rec)
	if err := os.WriteFile(p, out, 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestDecreeForgedRecord forges one field of an interrupted run's record
// at a time and runs every command that reads it: none panics, none writes
// outside the workspace, and those that act on the run refuse it, naming
// run.json.
func TestDecreeForgedRecord(t *testing.T) {
	testutil.Long(t, "forges every field of a run record")
	const id = "2026010100000000-0"
	for name, fields := range map[string]map[string]any{
		"id elsewhere":       {"id": "../../../escape-0"},
		"short checkpoint":   {"checkpoint": "x"},
		"bad result":         {"result": "zz"},
		"status":             {"status": "bogus"},
		"attempt numbers":    {"attempts": []any{map[string]any{"n": 7}}},
		"too many attempts":  {"max_attempts": 1 << 30},
		"inbox":              {"inbox": "../../../../x.md"},
		"input file":         {"input_file": "../../etc/passwd"},
		"group pid 1":        {"status": "running", "current": map[string]any{"n": 2, "group": map[string]any{"pid": 1}}},
		"current log":        {"status": "running", "current": map[string]any{"n": 2, "log": "../../../x"}},
		"negative owner":     {"status": "running", "owner": map[string]any{"pid": -5}},
		"wrong types":        {"attempts": "many", "seq": "x"},
		"null attempts item": {"attempts": []any{nil}},
	} {
		t.Run(name, func(t *testing.T) {
			e := newEnv(t)
			// A directory outside the workspace holding a run.json, as the
			// id "../../../escape-0" names it from the run directory.
			escape := filepath.Join(filepath.Dir(e.WS), "escape-0")
			os.MkdirAll(escape, 0o755)
			t.Cleanup(func() { os.RemoveAll(escape) })
			outsideRec := `{"id": "escape-0", "status": "interrupted"}` + "\n"
			os.WriteFile(filepath.Join(escape, "run.json"), []byte(outsideRec), 0o644)

			e.Write(map[string]string{"a.txt": "a\n"})
			e.Must("run", "--id", id, "--retries", "1", "--", "sh", "-c", "echo b >> a.txt")
			// Interrupted, so that running it again resumes it.
			forgeRecord(t, e, id, map[string]any{"status": "interrupted"})
			forgeRecord(t, e, id, fields)
			for _, args := range [][]string{
				{"runs"}, {"runs", "--json"}, {"runs", "show", id}, {"recover"},
				{"run", "--id", id, "--retries", "1", "--", "sh", "-c", "exit 1"}, {"runs", "revert", id},
			} {
				code, out, errs := e.Run(args...)
				if code == 2 || strings.Contains(errs, "panic") || strings.Contains(errs, "goroutine ") {
					t.Fatalf("ckpt %s: exit %d\n%s%s", strings.Join(args, " "), code, out, errs)
				}
				if args[0] == "run" || len(args) > 1 && args[1] == "revert" {
					if code == 0 || !strings.Contains(errs, "run.json") {
						t.Errorf("ckpt %s: exit %d, want a refusal naming run.json\n%s", strings.Join(args, " "), code, errs)
					}
				}
			}
			if b, _ := os.ReadFile(filepath.Join(escape, "run.json")); string(b) != outsideRec {
				t.Fatalf("a run.json outside the workspace was written:\n%s", b)
			}
			if out := e.Must("runs"); !strings.Contains(out, "unknown") {
				t.Errorf("ckpt runs:\n%s", out)
			}
			e.Must("fsck")
		})
	}
}
