package attack

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/seed1cedbf7c/ckpt/internal/testutil"
	"github.com/seed1cedbf7c/ckpt/internal/treegen"
)

// The workspace's first state: tracked files of every kind, ignored files
// (never captured, never to be touched) and a symlink out of the workspace.
var killBase = map[string]string{
	".gitignore": "*.log\nbuild/\n",
	"a.txt":      "a1\n",
	"b.txt":      "b1\n",
	"c.sh":       "#!/bin/sh\n",
	"d/x.txt":    "dx1\n",
	"d/y.txt":    "dy1\n",
	"f":          "f is a file\n",
	"keep.txt":   "keep\n",
	"app.log":    "ignored log\n",
	"build/o.b":  "ignored build output\n",
	"s/t/u.txt":  "deep1\n",
}

// killMutate makes the second state: edits, a deletion, a directory that
// becomes a file, a file that becomes a directory, a new deep tree, a mode
// change and a changed symlink.
func killMutate(e *env) {
	e.Write(map[string]string{"a.txt": "a2\n", "s/t/u.txt": "deep2\n", "n/m/k.txt": "new\n"})
	os.Remove(filepath.Join(e.WS, "b.txt"))
	os.RemoveAll(filepath.Join(e.WS, "d"))
	e.Write(map[string]string{"d": "d is a file now\n"})
	os.Remove(filepath.Join(e.WS, "f"))
	e.Write(map[string]string{"f/inner.txt": "f is a directory now\n"})
	os.Chmod(filepath.Join(e.WS, "c.sh"), 0o755)
	os.Remove(filepath.Join(e.WS, "ext"))
	os.Symlink("a.txt", filepath.Join(e.WS, "ext"))
}

// killEnv is a workspace with the base state and a directory outside it
// that a symlink in the workspace points to.
func killEnv(t *testing.T) (*env, string) {
	e := newEnv(t)
	e.Write(killBase)
	outside := t.TempDir()
	os.WriteFile(filepath.Join(outside, "secret.txt"), []byte("outside\n"), 0o644)
	if err := os.Symlink(outside, filepath.Join(e.WS, "ext")); err != nil {
		t.Fatal(err)
	}
	return e, outside
}

// wsState is the workspace without run records and ckpt's temporaries;
// a symlink to the directory outside (which differs between
// environments) reads "<outside>".
func wsState(e *env, outside string) treegen.State {
	e.T.Helper()
	st, err := treegen.Snapshot(e.WS, func(rel string) bool {
		return rel == ".decree" || rel == ".git" || strings.HasPrefix(rel, ".ckpt-tmp-")
	})
	if err != nil {
		e.T.Fatal(err)
	}
	for p, en := range st {
		if en.Symlink && en.Data == outside {
			en.Data = "<outside>"
			st[p] = en
		}
	}
	return st
}

type killScenario struct {
	name  string
	setup func(e *env)
	op    []string
}

var killScenarios = []killScenario{
	{"restore", func(e *env) {
		e.Must("save", "-q", "-m", "one")
		killMutate(e)
		e.Must("save", "-q", "-m", "two")
	}, []string{"restore", "HEAD~1"}},
	{"partial restore", func(e *env) {
		e.Must("save", "-q", "-m", "one")
		killMutate(e)
		e.Must("save", "-q", "-m", "two")
		// (Not f: see TestPartialRestoreDirectoryToFile.)
	}, []string{"restore", "HEAD~1", "--", "d", "a.txt", "n", "s"}},
	{"undo", func(e *env) {
		e.Must("save", "-q", "-m", "one")
		killMutate(e)
		e.Must("save", "-q", "-m", "two")
		e.Must("restore", "-q", "HEAD~1")
	}, []string{"undo"}},
	{"redo", func(e *env) {
		e.Must("save", "-q", "-m", "one")
		killMutate(e)
		e.Must("save", "-q", "-m", "two")
		e.Must("undo")
	}, []string{"redo"}},
	{"switch", func(e *env) {
		e.Must("save", "-q", "-m", "one")
		e.Must("branch", "other")
		killMutate(e)
		e.Must("save", "-q", "-m", "two")
	}, []string{"switch", "other"}},
	{"rewind --keep-user-edits", func(e *env) {
		e.Must("session", "new", "-t", "attack")
		e.Must("turn", "begin", "-m", "first")
		killMutate(e)
		e.Must("turn", "end")
		// The user's edits between turns, kept by the rewind.
		e.Write(map[string]string{"keep.txt": "the user's edit\n", "user.txt": "the user's file\n"})
		e.Must("turn", "begin", "-m", "second")
		e.Write(map[string]string{"a.txt": "a3\n", "z/z.txt": "z\n"})
		e.Must("turn", "end")
	}, []string{"rewind", "1", "--keep-user-edits"}},
	{"runs revert", func(e *env) {
		e.Must("run", "--id", "2026010100000000-0", "--", "sh", "-c",
			// (No file made a directory: see TestRunRevertFileToDirectory.)
			"echo a2 > a.txt; rm b.txt; rm -r d; echo file > d; mkdir -p n/m; echo new > n/m/k.txt; chmod 755 c.sh; rm ext; ln -s a.txt ext")
	}, []string{"runs", "revert", "2026010100000000-0"}},
}

// Kill -9 at every step of every journaled operation, then kill the
// recovery at its first change, then recover: the workspace ends exactly
// as the uninterrupted operation leaves it, ignored files and what lies
// outside are untouched, HEAD matches the disk, fsck is clean and every
// checkpoint restores.
func TestKillEveryStepAndRecovery(t *testing.T) {
	testutil.Long(t, "kills ckpt at every step")
	for _, sc := range killScenarios {
		t.Run(sc.name, func(t *testing.T) {
			// The reference: the operation, uninterrupted.
			ref, refOut := killEnv(t)
			sc.setup(ref)
			ref.Must(sc.op...)
			want := wsState(ref, refOut)

			points := []string{"restore/staged=kill", "restore/before-change=kill"}
			for n := 1; n <= 40; n++ {
				points = append(points, fmt.Sprintf("restore/change=kill@%d", n))
			}
			for i := range points {
				point := points[i]
				e, outside := killEnv(t)
				sc.setup(e)
				code, out, errs := e.RunEnv([]string{"CKPT_FAILPOINT=" + point}, sc.op...)
				if code == 0 {
					if !strings.HasPrefix(point, "restore/change") {
						t.Fatalf("%s: not killed\n%s%s", point, out, errs)
					}
					break // fewer changes than n
				}
				if code != -1 {
					t.Fatalf("%s: exit %d, not killed\n%s%s", point, code, out, errs)
				}
				// Kill the recovery too, at its first change (if it has one).
				e.RunEnv([]string{"CKPT_FAILPOINT=restore/change=kill@1"}, "recover")
				e.Must("recover")
				if d := treegen.Diff(want, wsState(e, outside)); d != "" {
					t.Fatalf("%s: after recovery the workspace is not the operation's result:\n%s", point, d)
				}
				checkAfter(t, e, outside, point)
				if i%10 == 0 {
					checkEveryCheckpoint(t, e, point)
				}
			}
		})
	}
}

// checkAfter: ignored files and the outside directory are untouched, HEAD
// matches the disk and fsck is clean.
func checkAfter(t *testing.T, e *env, outside, what string) {
	t.Helper()
	for p, c := range map[string]string{"app.log": "ignored log\n", "build/o.b": "ignored build output\n"} {
		if got := e.Read(p); got != c {
			t.Fatalf("%s: ignored %s = %q", what, p, got)
		}
	}
	if b, err := os.ReadFile(filepath.Join(outside, "secret.txt")); err != nil || string(b) != "outside\n" {
		t.Fatalf("%s: outside file: %q %v", what, b, err)
	}
	if des, _ := os.ReadDir(outside); len(des) != 1 {
		t.Fatalf("%s: the directory outside holds %d entries", what, len(des))
	}
	if out := e.Must("diff", "--name-only"); strings.TrimSpace(out) != "" {
		t.Fatalf("%s: HEAD does not match the disk:\n%s", what, out)
	}
	if code, out, errs := e.Run("fsck"); code != 0 {
		t.Fatalf("%s: fsck exit %d\n%s%s", what, code, out, errs)
	}
}

// checkEveryCheckpoint restores every checkpoint and checks the workspace
// then equals it, and goes back.
func checkEveryCheckpoint(t *testing.T, e *env, what string) {
	t.Helper()
	var list []struct {
		ID string `json:"id"`
	}
	if err := json.Unmarshal([]byte(e.Must("list", "--json")), &list); err != nil {
		t.Fatal(err)
	}
	for _, c := range list {
		if code, out, errs := e.Run("restore", "-q", c.ID); code != 0 {
			t.Fatalf("%s: restore %s: exit %d\n%s%s", what, c.ID[:12], code, out, errs)
		}
		if out := e.Must("diff", "--name-only", c.ID); strings.TrimSpace(out) != "" {
			t.Fatalf("%s: after restore %s the workspace differs:\n%s", what, c.ID[:12], out)
		}
	}
	if code, out, errs := e.Run("fsck"); code != 0 {
		t.Fatalf("%s: fsck after restoring every checkpoint: exit %d\n%s%s", what, code, out, errs)
	}
}
