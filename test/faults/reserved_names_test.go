//go:build unix

package faults

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/seed1cedbf7c/ckpt"
)

// Class 8: a user's files and directories named like ckpt's temporaries
// (.ckpt-tmp-*) are recorded like any other and never deleted unseen.
func TestReservedNamesAreTheUsers(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t)
	mine := map[string]string{
		".ckpt-tmp-notes.txt":          "my notes\n",
		".ckpt-tmp-0123456789ab/f.txt": "looks like a staging directory\n",
		"sub/.ckpt-tmp-x":              "nested\n",
		".ckpt-tmp-clock-1234":         "looks like a clock file\n",
		"plain.txt":                    "plain\n",
	}
	e.Write(mine)
	// Through the CLI: every command runs recovery first.
	e.Must("save", "-m", "first")
	e.Must("status")
	e.Must("list")
	for p, c := range mine {
		if got := e.Read(p); got != c {
			t.Fatalf("after save, %s = %q", p, got)
		}
	}
	r := e.Open(ckpt.Options{})
	m, err := r.Manifest(ctx, "HEAD")
	if err != nil {
		t.Fatal(err)
	}
	for p := range mine {
		if _, ok := m.Files[p]; !ok {
			t.Errorf("%s was not recorded", p)
		}
	}
	// Gone, then restored; kept by a recover.
	os.RemoveAll(filepath.Join(e.WS, ".ckpt-tmp-0123456789ab"))
	os.Remove(filepath.Join(e.WS, ".ckpt-tmp-notes.txt"))
	e.Must("restore", "HEAD")
	e.Must("recover")
	for p, c := range mine {
		if got := e.Read(p); got != c {
			t.Fatalf("after restore and recover, %s = %q", p, got)
		}
	}
	// A restore's own staging directory is not left behind, nor recorded.
	e.Write(map[string]string{"plain.txt": "changed\n"})
	e.Must("save", "-m", "second")
	e.Must("restore", "HEAD~1")
	des, _ := os.ReadDir(e.WS)
	var temps []string
	for _, de := range des {
		if strings.HasPrefix(de.Name(), ".ckpt-tmp-") {
			temps = append(temps, de.Name())
		}
	}
	if strings.Join(temps, " ") != ".ckpt-tmp-0123456789ab .ckpt-tmp-clock-1234 .ckpt-tmp-notes.txt" {
		t.Fatalf("workspace root holds %v, want only the user's three .ckpt-tmp-* entries", temps)
	}
}

// Class 8: an interrupted restore's staging directory (named in its
// journal) is removed by recovery and never recorded; the user's look-alike
// beside it stays.
func TestInterruptedStageRemovedUsersKept(t *testing.T) {
	e := newEnv(t)
	e.Write(map[string]string{"a.txt": "1\n", "b.txt": "1\n", ".ckpt-tmp-mine": "mine\n"})
	e.Must("save", "-q", "-m", "one")
	e.Write(map[string]string{"a.txt": "2\n", "b.txt": "2\n"})
	e.Must("save", "-q", "-m", "two")
	e.Extra = []string{"CKPT_FAILPOINT=restore/before-change=kill"}
	if code, _, _ := e.Run("restore", "HEAD~1"); code == 0 {
		t.Fatal("the killed restore exited 0")
	}
	e.Extra = nil
	des, _ := os.ReadDir(e.WS)
	stages := 0
	for _, de := range des {
		if strings.HasPrefix(de.Name(), ".ckpt-tmp-") && de.Name() != ".ckpt-tmp-mine" {
			stages++
		}
	}
	if stages != 1 {
		t.Fatalf("after the kill, %d staging directories", stages)
	}
	out := e.Must("recover")
	if !strings.Contains(out, "removed leftover .ckpt-tmp-") {
		t.Errorf("recover did not report the staging directory:\n%s", out)
	}
	des, _ = os.ReadDir(e.WS)
	for _, de := range des {
		if strings.HasPrefix(de.Name(), ".ckpt-tmp-") && de.Name() != ".ckpt-tmp-mine" {
			t.Errorf("%s left behind", de.Name())
		}
	}
	if got := e.Read(".ckpt-tmp-mine"); got != "mine\n" {
		t.Fatalf(".ckpt-tmp-mine = %q", got)
	}
	if got := e.Read("a.txt"); got != "1\n" {
		t.Fatalf("a.txt = %q after recover", got)
	}
	_, list, _ := e.Run("show", "--manifest", "HEAD")
	if strings.Contains(list, ".ckpt-tmp-") && !strings.Contains(list, ".ckpt-tmp-mine") {
		t.Fatalf("a staging entry was recorded:\n%s", list)
	}
}
