//go:build unix

package faults

import (
	"context"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/seed1cedbf7c/ckpt/internal/testutil"
)

// TestHookGuardCrashedChild: the process that handles a hook's event dies
// of a fatal runtime error (out of memory, which recover() cannot catch
// and which exits 2). `ckpt hook` still exits 0 — 1 with --strict, never 2
// — and says what happened on stderr and in the hook log.
func TestHookGuardCrashedChild(t *testing.T) {
	e := newEnv(t)
	e.Write(map[string]string{"a.txt": "a\n"})
	e.Extra = []string{"CKPT_TEST_HOOK_CHILD=crash"}
	payload := e.claudePayload("UserPromptSubmit", "s1", map[string]any{"prompt": "hi"})
	r := e.mustHook("claude-code", payload)
	if !strings.Contains(r.stderr, "crashed") {
		t.Errorf("stderr %.3000q, want it to say the hook process crashed", r.stderr)
	}
	if log := e.hookLog(); !strings.Contains(log, "claude-code UserPromptSubmit") || !strings.Contains(log, "crashed") {
		t.Errorf("log %q, want the crash of UserPromptSubmit", log)
	}
	if r := e.hook("claude-code", payload, "--strict"); r.code != 1 {
		t.Errorf("--strict: exit %d, want 1", r.code)
	}
}

// TestHookGuardHungChild: a handling process that hangs is killed past
// --timeout; the hook exits 0 and says so.
func TestHookGuardHungChild(t *testing.T) {
	testutil.Long(t, "waits out a hung hook child")
	e := newEnv(t)
	e.Extra = []string{"CKPT_TEST_HOOK_CHILD=hang"}
	r := e.mustHook("claude-code", e.claudePayload("UserPromptSubmit", "s1", map[string]any{"prompt": "hi"}), "--timeout", "1s")
	if !strings.Contains(r.stderr, "ran past --timeout 1s and was killed") {
		t.Errorf("stderr %q, want the kill reported", r.stderr)
	}
}

// TestHookStdinLeftOpen: an agent that writes the payload and keeps the
// hook's stdin open does not hold the hook: one JSON value is the payload.
func TestHookStdinLeftOpen(t *testing.T) {
	e := newEnv(t)
	e.Write(map[string]string{"a.txt": "a\n"})
	pr, pw, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer pw.Close()
	pw.WriteString(e.claudePayload("UserPromptSubmit", "s1", map[string]any{"prompt": "hi"}) + "\n")
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	c := withContext(ctx, e.Cmd("hook", "claude-code"))
	c.Env = append(c.Env, hookEnv...)
	c.Stdin = pr
	out, err := c.CombinedOutput()
	pr.Close()
	if err != nil || ctx.Err() != nil {
		t.Fatalf("hook: %v (%v)\n%s", err, ctx.Err(), out)
	}
	if !strings.Contains(e.hookLog(), "began turn 1") {
		t.Fatalf("the turn did not begin; log:\n%s\noutput: %s", e.hookLog(), out)
	}
}

// TestHookUsageErrorNeverExits2: a mistyped flag in an installed hook's
// command is a usage error, which exits 2 — "block" to Claude Code, on
// every prompt. Under `ckpt hook AGENT` it is reported (stderr, log, last
// failure) and exits 0 (1 with --strict).
func TestHookUsageErrorNeverExits2(t *testing.T) {
	e := newEnv(t)
	payload := e.claudePayload("UserPromptSubmit", "s1", map[string]any{"prompt": "hi"})
	r := e.hook("claude-code", payload, "--lock-timeot", "5s")
	if r.code != 0 || !strings.Contains(r.stderr, "unknown flag: --lock-timeot") {
		t.Fatalf("exit %d, stderr %q; want 0 and the error", r.code, r.stderr)
	}
	if out := e.Must("hook", "status"); !strings.Contains(out, "unknown flag: --lock-timeot") {
		t.Errorf("hook status does not show the failure:\n%s", out)
	}
	if r := e.hook("claude-code", payload, "--strict", "--lock-timeot", "5s"); r.code != 1 {
		t.Errorf("--strict: exit %d, want 1", r.code)
	}
	// Installing is a command the user types: its usage errors exit 2.
	if code, _, _ := e.Run("hook", "claude-code", "install", "--no-such-flag"); code != 2 {
		t.Errorf("install --no-such-flag: exit %d, want 2", code)
	}
}
