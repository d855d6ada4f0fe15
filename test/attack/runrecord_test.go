package attack

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// DEFECT. A run record is a file in the workspace (.decree/runs/ID/
// run.json) that the agent can write, yet revertRun (revert.go, the
// hint of a diff that no longer applies) slices its "checkpoint" field
// with rec.Checkpoint[:12]: a record whose checkpoint is shorter than 12
// bytes makes `ckpt runs revert` panic (exit 2, a Go stack trace) instead
// of saying the workspace no longer matches the run.
func TestRunRecordShortCheckpointPanics(t *testing.T) {
	e := newEnv(t)
	e.Write(map[string]string{"a.txt": "a\nb\nc\n"})
	e.Must("run", "--id", "2026010100000000-0", "--", "sh", "-c", `printf 'a\nB\nc\n' > a.txt`)
	p := filepath.Join(e.WS, ".decree", "runs", "2026010100000000-0", "run.json")
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	b = regexp.MustCompile(`"checkpoint": "[0-9a-f]+"`).ReplaceAll(b, []byte(`"checkpoint": "x"`))
	if err := os.WriteFile(p, b, 0o644); err != nil {
		t.Fatal(err)
	}
	// The run's change no longer applies in reverse.
	e.Write(map[string]string{"a.txt": "something else\n"})
	code, out, errs := e.Run("runs", "revert", "2026010100000000-0")
	if strings.Contains(errs, "panic:") || code == 2 {
		t.Fatalf("runs revert on a run record with a short checkpoint: exit %d\n%s%s", code, out, errs)
	}
	if got := e.Read("a.txt"); got != "something else\n" {
		t.Fatalf("a.txt = %q", got)
	}
}
