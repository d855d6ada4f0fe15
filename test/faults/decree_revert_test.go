//go:build unix

package faults

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// A run's changes.diff and manifest.json are files in the workspace, and
// a forged pair could make ckpt runs revert write a path no checkpoint
// records — a gitignored file, one below an ignored directory or ignored
// by an ignore file the revert itself writes, one inside a nested .decree
// — which the revert's checks and every later restore cannot see: the
// revert said it was done, and the files stayed, invisible. Such a revert
// is now refused before anything is written, naming the paths.

// forgeRun appends file deletions to a finished run's changes.diff (so that
// its revert creates them) and, if list, lists them in its manifest.json,
// as a forger would to make the revert pass its manifest check.
func forgeRun(t *testing.T, e *env, id string, files map[string]string, list bool) {
	t.Helper()
	dir := filepath.Join(e.WS, ".decree", "runs", id)
	patch, err := os.ReadFile(filepath.Join(dir, "changes.diff"))
	if err != nil {
		t.Fatal(err)
	}
	var man struct {
		Files map[string]map[string]any `json:"files"`
	}
	data, err := os.ReadFile(filepath.Join(dir, "manifest.json"))
	if err != nil || json.Unmarshal(data, &man) != nil {
		t.Fatalf("manifest.json: %v", err)
	}
	for p, content := range files {
		lines := strings.Split(strings.TrimSuffix(content, "\n"), "\n")
		patch = append(patch, "diff --git a/"+p+" b/"+p+"\ndeleted file mode 100644\n--- a/"+p+"\n+++ /dev/null\n@@ -1,"+strconv.Itoa(len(lines))+" +0,0 @@\n"...)
		for _, l := range lines {
			patch = append(patch, "-"+l+"\n"...)
		}
		if !list {
			continue
		}
		sum := sha256.Sum256([]byte(content))
		man.Files[p] = map[string]any{"sha256": hex.EncodeToString(sum[:]), "size": len(content), "mode": "644"}
	}
	out, _ := json.Marshal(man)
	if err := os.WriteFile(filepath.Join(dir, "changes.diff"), patch, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "manifest.json"), out, 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestDecreeForgedRevertIntoIgnoredPaths forges a finished run so that its
// revert would create ignored files: runs revert exits 3 naming them, and
// writes nothing.
func TestDecreeForgedRevertIntoIgnoredPaths(t *testing.T) {
	const id = "2026010100000000-0"
	for name, forged := range map[string]map[string]string{
		"gitignored file":         {"ign.txt": "evil\n"},
		"below an ignored dir":    {"build/out.txt": "evil\n"},
		"ignored by its own rule": {"new/.gitignore": "x\n", "new/x": "evil\n"},
		"decreeignored":           {"sub/.decreeignore": "*.gen\n", "sub/a.gen": "evil\n"},
		"with a real change":      {"ign.txt": "evil\n", "fine.txt": "fine\n"},
	} {
		t.Run(name, func(t *testing.T) {
			e := newEnv(t)
			e.Write(map[string]string{".gitignore": "ign.txt\nbuild/\n", "a.txt": "a\n"})
			e.Must("run", "--id", id, "--", "sh", "-c", "echo b >> a.txt")
			forgeRun(t, e, id, forged, true)
			before := e.Snapshot()
			code, out, errs := e.Run("runs", "revert", id)
			if code != 3 || !strings.Contains(errs, "would write paths no checkpoint records; nothing was changed") {
				t.Fatalf("runs revert: exit %d, want 3\nstdout: %s\nstderr: %s", code, out, errs)
			}
			for p := range forged {
				if p != "fine.txt" && !strings.HasSuffix(p, ".gitignore") && !strings.HasSuffix(p, ".decreeignore") && !strings.Contains(errs, p) {
					t.Errorf("stderr does not name %s:\n%s", p, errs)
				}
			}
			if d := diffStates(before, e.Snapshot()); d != "" {
				t.Fatalf("the workspace changed:\n%s", d)
			}
			if rec := readRunRecord(e, id); rec.Status != "done" {
				t.Fatalf("run.json says %s", rec.Status)
			}
			e.Must("fsck")
		})
	}
}

// TestDecreeForgedRevertIntoReservedPaths: a forged changes.diff naming a
// path inside .decree, .ckpt or .git at any depth is refused when it is
// read; nothing is written.
func TestDecreeForgedRevertIntoReservedPaths(t *testing.T) {
	const id = "2026010100000000-0"
	for _, p := range []string{"sub/.decree/x", "a/b/.ckpt/x", "sub/.Decree/runs/y"} {
		t.Run(p, func(t *testing.T) {
			e := newEnv(t)
			e.Write(map[string]string{"a.txt": "a\n"})
			e.Must("run", "--id", id, "--", "sh", "-c", "echo b >> a.txt")
			forgeRun(t, e, id, map[string]string{p: "evil\n"}, false)
			before := e.Snapshot()
			code, out, errs := e.Run("runs", "revert", id)
			if code == 0 || !strings.Contains(errs, "which is never checkpointed; nothing was changed") {
				t.Fatalf("runs revert: exit %d\nstdout: %s\nstderr: %s", code, out, errs)
			}
			if d := diffStates(before, e.Snapshot()); d != "" {
				t.Fatalf("the workspace changed:\n%s", d)
			}
		})
	}
}
