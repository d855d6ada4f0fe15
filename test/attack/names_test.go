package attack

import (
	"testing"
)

// DEFECT. The journal is JSON, and encoding/json replaces invalid UTF-8
// with U+FFFD: the paths of a partial restore (journalData.Paths in
// restore.go) are recorded lossily when a name is not UTF-8. A partial
// restore of such paths killed part-way is "finished" by recovery with a
// filter that matches nothing: the workspace stays half-restored — neither
// the state before nor the target — and recovery reports success (and
// records the half-way state as HEAD).
func TestPartialRestoreNonUTF8KilledMidway(t *testing.T) {
	e := newEnv(t)
	a, b := "\xff-a.txt", "\xfe-b.txt"
	e.write(map[string]string{a: "1\n", b: "1\n", "other.txt": "1\n"})
	e.must("save", "-q", "-m", "one")
	e.write(map[string]string{a: "2\n", b: "2\n", "other.txt": "2\n"})
	e.must("save", "-q", "-m", "two")
	e.extra = []string{"CKPT_FAILPOINT=restore/change=kill@1"}
	if code, _, _ := e.run("restore", "HEAD~1", "--", a, b); code == 0 {
		t.Fatal("the killed restore exited 0")
	}
	e.extra = nil
	ga, gb := e.read(a), e.read(b)
	if ga == gb {
		t.Fatalf("the kill did not land between the two paths: %q %q", ga, gb)
	}
	code, out, errs := e.run("recover")
	t.Logf("recover: exit %d\n%s%s", code, out, errs)
	if ga, gb := e.read(a), e.read(b); ga != "1\n" || gb != "1\n" {
		t.Fatalf("after recover: %q = %q, %q = %q; want both at the target (1) — the restore was left half-done", a, ga, b, gb)
	}
	if got := e.read("other.txt"); got != "2\n" {
		t.Fatalf("other.txt = %q: outside the restore's paths", got)
	}
}
