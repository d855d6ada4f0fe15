//go:build unix

package faults

import (
	"strings"
	"testing"
)

// Class 6: a recovery that cannot finish (here its first change fails)
// keeps the journal, says what blocks it and that the workspace is still
// part-way, and a later recover finishes the job. It never "rolls back"
// to the half-restored state nor drops the journal.
func TestRecoveryThatCannotFinish(t *testing.T) {
	e := newEnv(t)
	files := map[string]string{}
	for _, p := range []string{"a.txt", "b.txt", "c.txt", "d/e.txt", "d/f.txt"} {
		files[p] = "one " + p + "\n"
	}
	e.Write(files)
	e.Must("save", "-q", "-m", "one")
	for p := range files {
		files[p] = "two " + p + "\n"
	}
	e.Write(files)
	e.Must("save", "-q", "-m", "two")

	// A restore killed after its second change: half-way.
	e.Extra = []string{"CKPT_FAILPOINT=restore/change=kill@2"}
	if code, _, _ := e.Run("restore", "HEAD~1"); code == 0 {
		t.Fatal("the killed restore exited 0")
	}
	half := e.Snapshot()

	// Recovery hits a failure at its first change.
	e.Extra = []string{"CKPT_FAILPOINT=restore/change=fail@1"}
	code, out, errs := e.Run("recover")
	if code == 0 {
		t.Fatalf("a recovery that could not finish exited 0:\n%s%s", out, errs)
	}
	if strings.Contains(out+errs, "rolled back") || strings.Contains(out+errs, "nothing to recover") {
		t.Fatalf("the failed recovery claims too much:\n%s%s", out, errs)
	}
	for _, want := range []string{"cannot finish the interrupted restore", "injected failure", "journal is kept", "ckpt recover"} {
		if !strings.Contains(errs, want) {
			t.Errorf("stderr lacks %q:\n%s", want, errs)
		}
	}
	// Nothing went back: what the restore had done stays done.
	now := e.Snapshot()
	for p, en := range half {
		if strings.HasPrefix(en.Data, "one ") && now[p].Data != en.Data {
			t.Fatalf("the failed recovery rolled %s back to %q", p, now[p].Data)
		}
	}
	// The journal is kept: reading commands work and say so; a later
	// recover finishes.
	e.Extra = []string{"CKPT_FAILPOINT=restore/change=fail@1"}
	code, out, errs = e.Run("status")
	if code != 0 || !strings.Contains(out, "restore") || !strings.Contains(errs, "warning: cannot finish the interrupted restore") {
		t.Fatalf("status while the recovery is blocked: exit %d\n%s%s", code, out, errs)
	}
	e.Extra = nil
	out = e.Must("recover")
	if !strings.Contains(out, "finished the interrupted restore") {
		t.Fatalf("recover once unblocked:\n%s", out)
	}
	for p := range files {
		if got := e.Read(p); got != "one "+p+"\n" {
			t.Fatalf("after recover %s = %q", p, got)
		}
	}
	e.Must("fsck")
	if out := e.Must("recover"); !strings.Contains(out, "nothing to recover") {
		t.Fatalf("a second recover: %s", out)
	}
}
