package attack

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/seed1cedbf7c/ckpt/internal/treegen"
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
	e.Write(map[string]string{a: "1\n", b: "1\n", "other.txt": "1\n"})
	e.Must("save", "-q", "-m", "one")
	e.Write(map[string]string{a: "2\n", b: "2\n", "other.txt": "2\n"})
	e.Must("save", "-q", "-m", "two")
	e.Extra = []string{"CKPT_FAILPOINT=restore/change=kill@1"}
	if code, _, _ := e.Run("restore", "HEAD~1", "--", a, b); code == 0 {
		t.Fatal("the killed restore exited 0")
	}
	e.Extra = nil
	ga, gb := e.Read(a), e.Read(b)
	if ga == gb {
		t.Fatalf("the kill did not land between the two paths: %q %q", ga, gb)
	}
	code, out, errs := e.Run("recover")
	t.Logf("recover: exit %d\n%s%s", code, out, errs)
	if ga, gb := e.Read(a), e.Read(b); ga != "1\n" || gb != "1\n" {
		t.Fatalf("after recover: %q = %q, %q = %q; want both at the target (1) — the restore was left half-done", a, ga, b, gb)
	}
	if got := e.Read("other.txt"); got != "2\n" {
		t.Fatalf("other.txt = %q: outside the restore's paths", got)
	}
}

// hostileNames are file names an agent may make: the longest a component
// can be, newlines, control bytes, non-UTF-8, quotes, leading dashes, names
// like ckpt's own, and the reserved names in other letter cases.
func hostileNames() map[string]string {
	long := strings.Repeat("L", 255)
	return map[string]string{
		long:                                  "255-byte name\n",
		strings.Repeat("D", 255) + "/" + long: "255 under 255\n",
		"new\nline.txt":                       "newline\n",
		"tab\there":                           "tab\n",
		"\x01ctrl":                            "control byte\n",
		"\xff\xfe.bin":                        "not UTF-8\n",
		"dir\xff/\xfeinner":                   "not UTF-8 below a not-UTF-8 directory\n",
		`"quoted"`:                            "quotes\n",
		"-rf":                                 "a leading dash\n",
		"back\\slash":                         "backslash\n",
		"...":                                 "three dots\n",
		"..a":                                 "two dots and a\n",
		" space ":                             "spaces\n",
		".ckpt-tmp-0123456789ab":              "exactly a staging directory's form\n",
		".ckpt-tmp-0123456789ab-back/f":       "a rollback stage's form\n",
		"sub/.ckpt-tmp-0123456789ab-0":        "a cross-device copy's form\n",
		".gitx":                               "not .git\n",
		".Git2/x":                             "not .git either\n",
	}
}

// Hostile names are saved, restored, undone and recovered exactly; the
// reserved names in any case (.GIT, .Ckpt, .DECREE) are never captured
// and never touched. This attack held.
func TestHostileNamesRoundTrip(t *testing.T) {
	e := newEnv(t)
	names := hostileNames()
	e.Write(names)
	reserved := map[string]string{".GIT/config": "not captured\n", ".Ckpt": "not captured\n", "sub/.DECREE/x": "not captured\n", "sub/.git": "a file named .git\n"}
	e.Write(reserved)
	// Every entry, .ckpt-tmp-* included: after a finished restore none is
	// ckpt's.
	all := func() treegen.State {
		st, err := treegen.Snapshot(e.WS, nil)
		if err != nil {
			t.Fatal(err)
		}
		return st
	}
	e.Must("save", "-q", "-m", "one")
	one := all()
	// Change every hostile file, delete some, and the reserved ones too.
	for p := range names {
		e.Write(map[string]string{p: "changed " + p + "\n"})
	}
	os.Remove(filepath.Join(e.WS, "new\nline.txt"))
	os.RemoveAll(filepath.Join(e.WS, "dir\xff"))
	e.Must("save", "-q", "-m", "two")
	two := all()
	e.Extra = []string{"CKPT_FAILPOINT=restore/change=kill@3"}
	if code, _, _ := e.Run("restore", "HEAD~1"); code != -1 {
		t.Fatalf("restore not killed: exit %d", code)
	}
	e.Extra = nil
	e.Must("recover")
	if d := diffStates(one, all()); d != "" {
		t.Fatalf("restore of hostile names, killed and recovered:\n%s", d)
	}
	e.Must("undo")
	if d := diffStates(two, all()); d != "" {
		t.Fatalf("undo:\n%s", d)
	}
	for p, c := range reserved {
		if got := e.Read(p); got != c {
			t.Fatalf("reserved %q = %q", p, got)
		}
	}
	m := e.Must("show", "--manifest", "HEAD")
	for _, r := range []string{".GIT", ".Ckpt", ".DECREE", "sub/.git"} {
		if strings.Contains(m, `"`+r) {
			t.Fatalf("%s was captured:\n%s", r, m)
		}
	}
	if code, out, errs := e.Run("fsck"); code != 0 {
		t.Fatalf("fsck: %d\n%s%s", code, out, errs)
	}
}
