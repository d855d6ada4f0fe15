//go:build unix

package faults

import (
	"strings"
	"testing"

	"github.com/seed1cedbf7c/ckpt/internal/testutil"
)

// TestHookUsesTheUsersBackend: for a user of the git backend
// (CKPT_BACKEND=git), the first hook opens the git backend's store as
// every command does, rather than create a sqlite store beside it — after
// which every hook failed "two stores" and the agent's turns went
// unrecorded.
func TestHookUsesTheUsersBackend(t *testing.T) {
	e := newEnv(t)
	e.Write(map[string]string{"a.txt": "a\n"})
	testutil.GitInit(t, e.WS)
	e.Extra = []string{"CKPT_STORE=", "CKPT_BACKEND=git"}
	e.mustHook("claude-code", e.claudePayload("UserPromptSubmit", "s1", map[string]any{"prompt": "edit a"}))
	e.Write(map[string]string{"a.txt": "b\n"})
	e.Must("save", "-q", "-m", "by hand")
	r := e.mustHook("claude-code", e.claudePayload("Stop", "s1", nil))
	if r.stderr != "" || !strings.Contains(e.hookLog(), "ended turn 1") {
		t.Fatalf("stderr %q; log:\n%s", r.stderr, e.hookLog())
	}
	// One store: the git backend's, found without CKPT_BACKEND too.
	e.Extra = []string{"CKPT_STORE="}
	if out := e.Must("status"); !strings.Contains(out, "backend:   git") {
		t.Fatalf("status:\n%s", out)
	}
	// --store on the hook's command line names the store, as for any
	// command.
	e.Extra = nil
	store := t.TempDir()
	e.mustHook("claude-code", e.claudePayload("UserPromptSubmit", "s2", map[string]any{"prompt": "p"}), "--store", store)
	if out := e.Must("--store", store, "session", "list"); !strings.Contains(out, "s2") {
		t.Fatalf("session list in --store %s:\n%s", store, out)
	}
}
