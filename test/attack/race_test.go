package attack

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/seed1cedbf7c/ckpt/internal/treegen"
)

// pauseAt starts ckpt with a failpoint that pauses at point, and waits
// until it is there. release lets it go on; wait waits for its end.
func (e *env) pauseAt(point string, args ...string) (release func(), wait func() (int, string)) {
	e.T.Helper()
	dir := e.T.TempDir()
	c := e.Cmd(args...)
	c.Env = append(c.Env, "CKPT_FAILPOINT="+point+"=pause", "CKPT_FAILPOINT_DIR="+dir)
	if i := strings.IndexByte(point, '='); i >= 0 {
		c.Env[len(c.Env)-2] = "CKPT_FAILPOINT=" + point
		point = point[:i]
	}
	var out bytes.Buffer
	c.Stdout, c.Stderr = &out, &out
	if err := c.Start(); err != nil {
		e.T.Fatal(err)
	}
	base := point
	if i := strings.IndexByte(base, '('); i > 0 {
		base = base[:i]
	}
	file := strings.ReplaceAll(base, "/", "-")
	done := make(chan struct{})
	code := 0
	go func() {
		err := c.Wait()
		if ee, ok := err.(*exec.ExitError); ok {
			code = ee.ExitCode()
		}
		close(done)
	}()
	deadline := time.After(20 * time.Second)
	for {
		if _, err := os.Stat(filepath.Join(dir, file+".hit")); err == nil {
			break
		}
		select {
		case <-done:
			e.T.Fatalf("ckpt %s ended before reaching %s: exit %d\n%s", strings.Join(args, " "), point, code, out.String())
		case <-deadline:
			e.T.Fatalf("ckpt %s never reached %s", strings.Join(args, " "), point)
		case <-time.After(5 * time.Millisecond):
		}
	}
	release = func() { os.WriteFile(filepath.Join(dir, file+".go"), nil, 0o600) }
	wait = func() (int, string) { <-done; return code, out.String() }
	return release, wait
}

// start runs ckpt in the background.
func (e *env) start(args ...string) (wait func() (int, string)) {
	c := e.Cmd(args...)
	var out bytes.Buffer
	c.Stdout, c.Stderr = &out, &out
	if err := c.Start(); err != nil {
		e.T.Fatal(err)
	}
	done := make(chan struct{})
	code := 0
	go func() {
		err := c.Wait()
		if ee, ok := err.(*exec.ExitError); ok {
			code = ee.ExitCode()
		}
		close(done)
	}()
	return func() (int, string) { <-done; return code, out.String() }
}

// A recovery paused half-way (after its first change) while a save, a
// second recover, gc and a turn begin arrive: the writers wait for the
// lock, the readers (status, list, diff) answer at once without touching
// anything; once released, the recovery finishes, every writer then sees
// the finished state (the save records the target, not a half-way tree),
// fsck is clean and undo takes the restore back.
// This attack held.
func TestRecoveryRacingWriters(t *testing.T) {
	e, outside := killEnv(t)
	e.Must("save", "-q", "-m", "one")
	killMutate(e)
	e.Must("save", "-q", "-m", "two")
	stateTwo := wsState(e, outside)
	e.Must("session", "new", "-t", "race")
	// The reference target: state one.
	ref, refOut := killEnv(t)
	want := wsState(ref, refOut)

	if code, _, _ := e.RunEnv([]string{"CKPT_FAILPOINT=restore/change=kill@2"}, "restore", "HEAD~1"); code != -1 {
		t.Fatalf("restore not killed: exit %d", code)
	}
	release, waitRecover := e.pauseAt("restore/change=pause@1", "recover")
	save := e.start("save", "-m", "during the recovery")
	recover2 := e.start("recover")
	gc := e.start("gc", "--keep", "100")
	turn := e.start("turn", "begin", "-m", "a prompt during the recovery")
	// Readers answer while the recovery holds the lock.
	for _, args := range [][]string{{"status"}, {"list"}, {"diff", "--name-only"}} {
		done := make(chan struct{})
		var code int
		var out, errs string
		go func() { code, out, errs = e.Run(args...); close(done) }()
		select {
		case <-done:
			if code != 0 {
				t.Errorf("ckpt %s during the recovery: exit %d\n%s%s", args[0], code, out, errs)
			}
		case <-time.After(8 * time.Second):
			t.Fatalf("ckpt %s waited for the recovery", args[0])
		}
	}
	time.Sleep(100 * time.Millisecond) // let the writers queue on the lock
	release()
	for name, w := range map[string]func() (int, string){"recover": waitRecover, "save": save, "second recover": recover2, "gc": gc, "turn begin": turn} {
		if code, out := w(); code != 0 {
			t.Errorf("%s: exit %d\n%s", name, code, out)
		}
	}
	if d := treegen.Diff(want, wsState(e, outside)); d != "" {
		t.Fatalf("after the recovery the workspace is not the restore's target:\n%s", d)
	}
	if out := e.Must("diff", "--name-only", "HEAD"); strings.TrimSpace(out) != "" {
		t.Fatalf("HEAD does not match the disk:\n%s", out)
	}
	e.Must("fsck")
	// The save and the turn found nothing new: the finished state is HEAD.
	// Undo takes the restore back to state two.
	e.Must("undo")
	if d := treegen.Diff(stateTwo, wsState(e, outside)); d != "" {
		t.Fatalf("undo after the recovered restore:\n%s", d)
	}
	checkAfter(t, e, outside, "after undo")
}

// A restore stopped by an edit (paused at restore/before-replace of c.txt,
// where the test edits it) is killed in the middle of its rollback: the
// journal is still there, so the next command finishes the restore
// forward, checkpointing the edit first. Nothing is lost and the
// workspace is the target. This attack held.
func TestKillDuringRollback(t *testing.T) {
	e := newEnv(t)
	e.Write(map[string]string{"a.txt": "a1\n", "b.txt": "b1\n", "c.txt": "c1\n", "d.txt": "d1\n"})
	e.Must("save", "-q", "-m", "one")
	want := e.Snapshot()
	e.Write(map[string]string{"a.txt": "a2\n", "b.txt": "b2\n", "c.txt": "c2\n", "d.txt": "d2\n"})
	e.Must("save", "-q", "-m", "two")
	// Changes 1 and 2 write a.txt and b.txt; the rollback's first change is 3.
	release, wait := e.pauseAt("restore/before-replace(c.txt)=pause;restore/change=kill@3", "restore", "HEAD~1")
	e.Write(map[string]string{"c.txt": "the user's edit\n"})
	release()
	if code, out := wait(); code != -1 {
		t.Fatalf("restore: exit %d, not killed in its rollback\n%s", code, out)
	}
	out := e.Must("recover")
	t.Logf("recover:\n%s", out)
	if !inAnyCheckpoint(t, e, "c.txt", "the user's edit\n") {
		t.Fatal("the edit that stopped the restore is in no checkpoint")
	}
	if d := diffStates(want, e.Snapshot()); d != "" {
		t.Fatalf("after recovery the workspace is not the target:\n%s", d)
	}
	e.Must("fsck")
}
