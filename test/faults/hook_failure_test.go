//go:build unix

package faults

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/seed1cedbf7c/ckpt/internal/testutil"
)

// TestHookFailureShownUntilSuccess: a hook that cannot checkpoint (here: a
// workspace with two stores and no backend setting) exits 0 for the
// agent's sake, and says so where the user looks — 'ckpt hook status'
// and 'ckpt status', with when, which agent and event, the error and the
// next step — until a later hook call succeeds.
func TestHookFailureShownUntilSuccess(t *testing.T) {
	e := newEnv(t)
	e.Write(map[string]string{"a.txt": "a\n"})
	testutil.GitInit(t, e.WS)
	e.Extra = []string{"CKPT_STORE="}
	e.Must("--backend", "sqlite", "save", "-q")
	e.Must("--backend", "git", "save", "-q")
	r := e.mustHook("claude-code", e.claudePayload("UserPromptSubmit", "s1", map[string]any{"prompt": "p"}))
	if !strings.Contains(r.stderr, "two stores") {
		t.Fatalf("hook stderr %q", r.stderr)
	}
	want := []string{"last hook failure: ", "claude-code UserPromptSubmit in " + e.WS, "error: this workspace has two stores", "next:  choose one with --backend sqlite|git"}
	check := func(what, out string) {
		t.Helper()
		for _, w := range want {
			if !strings.Contains(out, w) {
				t.Errorf("%s: no %q in\n%s", what, w, out)
			}
		}
	}
	check("hook status", e.Must("hook", "status"))
	check("status", e.Must("--backend", "git", "status"))
	_, _, errs := e.Run("status") // fails: two stores; says why hooks fail too
	check("status (failing)", errs)
	var js struct {
		LastFailure *struct{ Agent, Event, Error, Next string } `json:"last_failure"`
	}
	if err := json.Unmarshal([]byte(e.Must("hook", "status", "--json")), &js); err != nil || js.LastFailure == nil || js.LastFailure.Event != "UserPromptSubmit" {
		t.Errorf("hook status --json: %+v, %v", js.LastFailure, err)
	}
	file := filepath.Join(e.State, "ckpt", "hook-failure.json")
	if fi, err := os.Stat(file); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("%s: %v, %v; want 0600", file, fi, err)
	}
	// Once the user chooses, the next hook succeeds and the failure is gone.
	e.Must("config", "backend", "git")
	e.mustHook("claude-code", e.claudePayload("UserPromptSubmit", "s1", map[string]any{"prompt": "p"}))
	for _, out := range []string{e.Must("hook", "status"), e.Must("status")} {
		if strings.Contains(out, "last hook failure") {
			t.Errorf("after a successful hook:\n%s", out)
		}
	}
	if _, err := os.Stat(file); !os.IsNotExist(err) {
		t.Errorf("%s still there: %v", file, err)
	}
}
