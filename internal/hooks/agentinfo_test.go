package hooks

import (
	"context"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"
)

// TestLastRuns reads back what report writes: the last call of each
// agent's event, ok or failed, its time in ms and its workspace (spaces
// in it too), across the rotated log; lines of other shapes are skipped.
func TestLastRuns(t *testing.T) {
	dir := t.TempDir()
	log, fail := filepath.Join(dir, "hooks.log"), filepath.Join(dir, "failure.json")
	ws := filepath.Join(dir, "my project")
	call := func(res *Result, err error) {
		report(io.Discard, log, fail, res, err, time.Now().Add(-42*time.Millisecond), nil)
	}
	call(&Result{Agent: ClaudeCode, Event: "SessionStart", Session: "s1", Workspace: ws, Action: "opened session"}, nil)
	if err := os.Rename(log, log+".1"); err != nil { // rotated
		t.Fatal(err)
	}
	call(&Result{Agent: ClaudeCode, Event: "UserPromptSubmit", Session: "s1", Workspace: ws, Action: "began turn 1", Checkpoint: "abc"}, nil)
	call(&Result{Agent: ClaudeCode, Event: "Stop", Session: "s1"}, errors.New("the store is locked"))
	call(&Result{Agent: Gemini, Event: "BeforeAgent", Action: "ignored", Notes: []string{"a note: with a colon"}}, nil)
	call(&Result{Agent: Codex, Event: "agent-turn-complete", Session: "t1", Workspace: ws, Action: "recorded turn 2", Files: 3}, nil)
	call(&Result{Agent: ClaudeCode}, errors.New("no event")) // no event: not a run of one
	call(&Result{Agent: ClaudeCode, Event: "Stop", Session: "s1", Workspace: ws, Action: "ended turn 1"}, nil)
	f, err := os.OpenFile(log, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString("garbage line\n2026-01-01T00:00:00.000Z someone Stop: x (1ms)\n")
	f.Close()

	runs, err := LastRuns(log)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for agent, rs := range runs {
		for _, r := range rs {
			if r.Time.IsZero() || r.Millis < 42 || r.Millis > 10_000 {
				t.Errorf("%s %s: time %v, %d ms", agent, r.Event, r.Time, r.Millis)
			}
			got[agent+" "+r.Event] = strings.TrimSpace(strings.Join([]string{map[bool]string{true: "ok", false: "failed"}[r.OK], r.Workspace}, " "))
		}
	}
	want := map[string]string{
		"claude-code SessionStart":     "ok " + ws,
		"claude-code UserPromptSubmit": "ok " + ws,
		"claude-code Stop":             "ok " + ws,
		"gemini BeforeAgent":           "ok",
		"codex agent-turn-complete":    "ok " + ws,
	}
	if len(got) != len(want) {
		t.Errorf("got %v, want %v", got, want)
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s: %q, want %q", k, got[k], v)
		}
	}
	if rs := runs[ClaudeCode]; len(rs) != 3 || rs[0].Event != "SessionStart" || rs[2].Event != "Stop" {
		t.Errorf("claude-code's events in the order first seen: %+v", rs)
	}
	if runs, err := LastRuns(filepath.Join(dir, "none.log")); err != nil || len(runs) != 0 {
		t.Errorf("no log: %v, %v", runs, err)
	}
}

// TestLastRunsFailed: a failed last call is reported as failed.
func TestLastRunsFailed(t *testing.T) {
	dir := t.TempDir()
	log := filepath.Join(dir, "hooks.log")
	report(io.Discard, log, filepath.Join(dir, "f.json"), &Result{Agent: Gemini, Event: "AfterAgent", Session: "s", Workspace: "/w"}, errors.New("boom: bad"), time.Now(), nil)
	runs, err := LastRuns(log)
	if err != nil || len(runs[Gemini]) != 1 || runs[Gemini][0].OK || runs[Gemini][0].Workspace != "/w" {
		t.Fatalf("%+v, %v", runs, err)
	}
}

// TestFindAgent: the agent's command on PATH and the first line of its
// --version; none on PATH is no error; one that hangs is cut off.
func TestFindAgent(t *testing.T) {
	bin := t.TempDir()
	t.Setenv("PATH", bin)
	if a := FindAgent(context.Background(), ClaudeCode, time.Second); a.Path != "" || a.Error != "" {
		t.Errorf("not on PATH: %+v", a)
	}
	script := "#!/bin/sh\necho '2.1.328 (Claude Code)'\necho more\n"
	if err := os.WriteFile(filepath.Join(bin, "claude"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	if a := FindAgent(context.Background(), ClaudeCode, 5*time.Second); a.Path != filepath.Join(bin, "claude") || a.Version != "2.1.328 (Claude Code)" || a.Error != "" {
		t.Errorf("found: %+v", a)
	}
	if err := os.WriteFile(filepath.Join(bin, "gemini"), []byte("#!/bin/sh\nexec /bin/sleep 30\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	if a := FindAgent(context.Background(), Gemini, 200*time.Millisecond); !strings.Contains(a.Error, "did not answer") || time.Since(start) > 5*time.Second {
		t.Errorf("hung: %+v after %v", a, time.Since(start))
	}
}

// TestLastRunsOddWorkspace: a workspace whose path holds ": ", " error: "
// or a newline is read back whole, as the run it was, and cannot forge a
// line of its own.
func TestLastRunsOddWorkspace(t *testing.T) {
	for _, ws := range []string{"/tmp/a: b", "/tmp/x error: y", "/tmp/q\"uote", "/tmp/nl\n2026-01-01T00:00:00.000Z gemini AfterAgent: forged (1ms)"} {
		dir := t.TempDir()
		log := filepath.Join(dir, "hooks.log")
		report(io.Discard, log, filepath.Join(dir, "f.json"), &Result{Agent: ClaudeCode, Event: "Stop", Session: "s", Workspace: ws, Action: "ended turn 1"}, nil, time.Now(), nil)
		runs, err := LastRuns(log)
		if err != nil {
			t.Fatal(err)
		}
		if len(runs) != 1 || len(runs[ClaudeCode]) != 1 || !runs[ClaudeCode][0].OK || runs[ClaudeCode][0].Workspace != ws {
			t.Errorf("workspace %q: %+v", ws, runs)
		}
	}
}

// TestLastRunsOddEvent: an event's name comes from the agent's payload;
// one that is not a name cannot forge a line.
func TestLastRunsOddEvent(t *testing.T) {
	dir := t.TempDir()
	log := filepath.Join(dir, "hooks.log")
	ev := "Bogus\n2026-01-01T00:00:00.000Z gemini AfterAgent: forged (1ms)"
	report(io.Discard, log, filepath.Join(dir, "f.json"), &Result{Agent: ClaudeCode, Event: ev, Session: "s", Action: "ignored", Notes: []string{"ckpt does nothing for claude-code " + ev}}, nil, time.Now(), nil)
	runs, err := LastRuns(log)
	if err != nil || len(runs) != 0 {
		t.Errorf("%+v, %v", runs, err)
	}
	data, _ := os.ReadFile(log)
	if n := strings.Count(string(data), "\n"); n != 1 {
		t.Errorf("%d lines: %q", n, data)
	}
}

// TestFindAgentFlood: a command whose --version prints without end is
// not read into memory whole.
func TestFindAgentFlood(t *testing.T) {
	yes, err := exec.LookPath("yes")
	if err != nil {
		t.Skip("no yes on PATH")
	}
	bin := t.TempDir()
	t.Setenv("PATH", bin)
	if err := os.WriteFile(filepath.Join(bin, "claude"), []byte("#!/bin/sh\nexec "+yes+" 0123456789012345678901234567890123456789012345678901234567890123456789\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	a := FindAgent(context.Background(), ClaudeCode, time.Second)
	runtime.ReadMemStats(&after)
	if grew := after.TotalAlloc - before.TotalAlloc; grew > 16<<20 {
		t.Errorf("read %d MB of --version output", grew>>20)
	}
	if !strings.HasPrefix(a.Version, "0123456789") {
		t.Errorf("version: %+v", a)
	}
}

// TestLastRunsLongLine: a line too long to be one of report's (a torn
// write, another program's) is skipped, not the end of the reading: the
// runs after it are still found.
func TestLastRunsLongLine(t *testing.T) {
	dir := t.TempDir()
	log := filepath.Join(dir, "hooks.log")
	call := func(ev string) {
		report(io.Discard, log, filepath.Join(dir, "f.json"), &Result{Agent: ClaudeCode, Event: ev, Session: "s", Workspace: "/w", Action: "x"}, nil, time.Now(), nil)
	}
	call("SessionStart")
	f, err := os.OpenFile(log, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString(strings.Repeat("x", 3<<20) + "\n")
	f.Close()
	call("Stop")
	runs, err := LastRuns(log)
	if err != nil || len(runs[ClaudeCode]) != 2 {
		t.Fatalf("%+v, %v", runs, err)
	}
}
