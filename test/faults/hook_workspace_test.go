//go:build unix

package faults

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// codexPayload is a Codex agent-turn-complete notification from dir.
func codexPayload(t *testing.T, thread, dir string) string {
	t.Helper()
	b, err := json.Marshal(map[string]any{"type": "agent-turn-complete", "thread-id": thread, "turn-id": "1",
		"cwd": dir, "input-messages": []string{"tidy up"}, "last-assistant-message": "done"})
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// homeEnv makes a home directory holding two projects, proj and other,
// with default stores (no CKPT_STORE) in a state directory outside it.
func homeEnv(t *testing.T) (e *env, home string) {
	e = newEnv(t)
	home = filepath.Join(e.WS, "home")
	for p, c := range map[string]string{"home/proj/a.txt": "a\n", "home/other/o.txt": "o\n", "home/.bashrc": "# rc\n"} {
		e.Write(map[string]string{p: c})
	}
	e.Extra = []string{"CKPT_STORE=", "HOME=" + home}
	return e, home
}

// TestHookNeverAdoptsHomeOrRoot: a Codex turn reported in $HOME (or "/")
// checkpoints nothing — no store for the home directory, so a later
// 'ckpt restore HEAD' in ~/proj cannot plan changes to ~/other — and the
// hook exits 0 saying why.
func TestHookNeverAdoptsHomeOrRoot(t *testing.T) {
	e, home := homeEnv(t)
	for _, dir := range []string{home, filepath.Dir(home), "/"} {
		r := e.mustHook("codex", "", codexPayload(t, "t-"+filepath.Base(dir), dir))
		if !strings.Contains(r.stderr, "a hook does not checkpoint all of it") {
			t.Errorf("cwd %s: stderr %q, want the refusal", dir, r.stderr)
		}
	}
	e.Write(map[string]string{"home/other/o.txt": "changed by hand\n"})
	c := e.Cmd("-C", filepath.Join(home, "proj"), "restore", "HEAD", "--dry-run")
	c.Env = append(c.Env, hookEnv...)
	out, _ := c.CombinedOutput()
	if strings.Contains(string(out), "other/") || strings.Contains(string(out), ".bashrc") {
		t.Fatalf("a restore in ~/proj plans changes outside it:\n%s", out)
	}
}

// TestAncestorStoreNotAdopted: a store an older ckpt left for the home
// directory (not a repository's top) is not the workspace of ~/proj: a
// restore there is refused, naming that store and how to go on, and plans
// nothing. A repository's top still claims its subdirectories.
func TestAncestorStoreNotAdopted(t *testing.T) {
	e, home := homeEnv(t)
	e.Must("-C", home, "save", "-q", "--force") // what a hook in $HOME used to do
	e.Write(map[string]string{"home/other/o.txt": "changed by hand\n"})
	code, out, errs := e.Run("-C", filepath.Join(home, "proj"), "restore", "HEAD", "--dry-run")
	if code == 0 || strings.Contains(out+errs, "other/") {
		t.Fatalf("restore in ~/proj: exit %d\n%s%s", code, out, errs)
	}
	if !strings.Contains(errs, "is not the top of a git repository") || !strings.Contains(errs, "--workspace "+filepath.Join(home, "proj")) {
		t.Errorf("stderr %q, want the ancestor's store named and --workspace suggested", errs)
	}
	// The hook says the same, and exits 0.
	r := e.mustHook("codex", "", codexPayload(t, "t1", filepath.Join(home, "proj")))
	if !strings.Contains(r.stderr, "is not the top of a git repository") {
		t.Errorf("hook stderr %q", r.stderr)
	}
	// A repository's top claims its subdirectories.
	if err := os.Mkdir(filepath.Join(home, ".git"), 0o755); err != nil {
		t.Fatal(err)
	}
	if out := e.Must("-C", filepath.Join(home, "proj"), "status"); !strings.Contains(out, "workspace: "+home+"\n") {
		t.Errorf("status in a repository's subdirectory:\n%s", out)
	}
}

// TestHookNeverAdoptsAboveAWorkspace: a turn reported in a directory
// above a workspace ckpt protects (~/code above ~/code/proj) is not
// recorded there; once the user makes that directory a workspace, it is.
func TestHookNeverAdoptsAboveAWorkspace(t *testing.T) {
	e, home := homeEnv(t)
	code := filepath.Join(home, "code")
	e.Write(map[string]string{"home/code/proj/p.txt": "p\n", "home/code/notes.txt": "n\n"})
	e.Must("-C", filepath.Join(code, "proj"), "save", "-q")
	r := e.mustHook("codex", "", codexPayload(t, "t1", code))
	if !strings.Contains(r.stderr, "above workspaces ckpt protects ("+filepath.Join(code, "proj")+")") || !strings.Contains(r.stderr, "ckpt -C "+code+" save") {
		t.Fatalf("stderr %q, want the refusal naming the workspace below", r.stderr)
	}
	e.Must("-C", code, "save", "-q")
	r = e.mustHook("codex", "", codexPayload(t, "t1", code))
	if r.stderr != "" {
		t.Fatalf("stderr %q, want none", r.stderr)
	}
	if log := e.hookLog(); !strings.Contains(log, "workspace="+code+": recorded turn 1") {
		t.Fatalf("log:\n%s", log)
	}
}
