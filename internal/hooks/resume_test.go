package hooks

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/seed1cedbf7c/ckpt"
)

// TestResumeBefore: Claude Code's conversation resumes before a turn at
// the message its prompt follows (uuid/parentUuid), as a fork; the first
// turn starts a new conversation; an unknown prompt, a session without a
// transcript and another agent's session cannot be resumed.
func TestResumeBefore(t *testing.T) {
	tr, err := filepath.Abs("testdata/claude-code/transcript.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	s := &ckpt.Session{ID: "2f9c7c1e-5b0a-4c51-9a7e-3d1f6b8e4a21", Agent: ClaudeCode, Transcript: tr}
	ar, err := ResumeBefore(s, &ckpt.Turn{Prompt: `Rename the greeting to "hello" and delete the unused notes file`}, ResumeOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if want := "claude --resume 2f9c7c1e-5b0a-4c51-9a7e-3d1f6b8e4a21 --resume-session-at 5e3a7b10-9c4d-4a2f-b1e8-7d6c0f9a2b44 --fork-session"; ar.String() != want {
		t.Errorf("got %s\nwant %s", ar, want)
	}
	if ar, err := ResumeBefore(s, &ckpt.Turn{Prompt: "What does this project do?"}, ResumeOptions{}); err != nil || ar.At != "" || ar.String() != "claude" {
		t.Errorf("first turn: %+v, %v", ar, err)
	}
	for name, c := range map[string]struct {
		s      *ckpt.Session
		prompt string
	}{
		"unknown prompt": {s, "never asked"},
		"no transcript":  {&ckpt.Session{ID: "x", Agent: ClaudeCode}, "p"},
		"another agent":  {&ckpt.Session{ID: "x", Agent: QwenCode, Transcript: tr}, "p"},
	} {
		if _, err := ResumeBefore(c.s, &ckpt.Turn{Prompt: c.prompt}, ResumeOptions{}); !errors.Is(err, ErrNoResume) {
			t.Errorf("%s: %v, want ErrNoResume", name, err)
		}
	}
}

// TestResumeBeforeRepeatedPrompt: a prompt sent again in a later turn
// ("go on") resumes before the turn asked for, not before the later one
// with the same words — counting the later turns a conversation rewind
// removed too, since Claude Code's transcript still holds them.
func TestResumeBeforeRepeatedPrompt(t *testing.T) {
	tr := filepath.Join(t.TempDir(), "t.jsonl")
	var lines []string
	parent := "null"
	prompts := []string{"go on", "other", "go on", "go on"}
	for i, p := range prompts {
		u, a := fmt.Sprintf("u%d", i+1), fmt.Sprintf("a%d", i+1)
		lines = append(lines,
			fmt.Sprintf(`{"type":"user","uuid":%q,"parentUuid":%s,"message":{"role":"user","content":%q}}`, u, parent, p),
			fmt.Sprintf(`{"type":"assistant","uuid":%q,"parentUuid":%q,"message":{"role":"assistant","content":[{"type":"text","text":"done"}]}}`, a, u))
		parent = fmt.Sprintf("%q", a)
	}
	if err := os.WriteFile(tr, []byte(strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	t0 := time.Now()
	var turns []*ckpt.Turn
	for i, p := range prompts {
		turns = append(turns, &ckpt.Turn{N: i + 1, Prompt: p, Started: t0.Add(time.Duration(i) * time.Second)})
	}
	// Turn 4 was removed by a conversation rewind: still in the transcript.
	s := &ckpt.Session{ID: "s", Agent: ClaudeCode, Transcript: tr, Turns: turns[:3], Rewound: turns[3:]}
	for n, want := range map[int]string{1: "claude", 2: "claude --resume s --resume-session-at a1 --fork-session",
		3: "claude --resume s --resume-session-at a2 --fork-session", 4: "claude --resume s --resume-session-at a3 --fork-session"} {
		ar, err := ResumeBefore(s, turns[n-1], ResumeOptions{})
		if err != nil || ar.String() != want {
			t.Errorf("turn %d: %v, %v; want %s", n, ar, err, want)
		}
	}
}

// Gemini CLI: resuming before a turn is a copy of its chat file with the
// rewind record Gemini CLI itself writes appended, to import with
// --session-file; the original stays as it is. A prompt sent again later
// ("go on") is told apart by the turns after it; messages a rewind in the
// chat dropped do not count.
func TestResumeBeforeGemini(t *testing.T) {
	dir := t.TempDir()
	chat := filepath.Join(dir, "session-2026-11-25T10-00-abcd1234.jsonl")
	lines := []string{
		`{"sessionId":"g-1","projectHash":"p","startTime":"2026-11-25T10:00:00Z","kind":"main"}`,
		`{"id":"u1","timestamp":"2026-11-25T10:00:01Z","type":"user","content":[{"text":"fix it"}]}`,
		`{"id":"m1","timestamp":"2026-11-25T10:00:02Z","type":"gemini","content":"Fixed."}`,
		`{"id":"u2","timestamp":"2026-11-25T10:00:03Z","type":"user","content":[{"text":"go on"}]}`,
		`{"id":"m2","timestamp":"2026-11-25T10:00:04Z","type":"gemini","content":"Going."}`,
		`{"id":"ux","timestamp":"2026-11-25T10:00:05Z","type":"user","content":[{"text":"go on"}]}`,
		`{"$rewindTo":"ux"}`,
		`{"id":"u3","timestamp":"2026-11-25T10:00:06Z","type":"user","content":[{"text":"go on"}]}`,
		`{"id":"m3","timestamp":"2026-11-25T10:00:07Z","type":"gemini","content":"Done."}`,
	}
	orig := strings.Join(lines, "\n") + "\n"
	if err := os.WriteFile(chat, []byte(orig), 0o600); err != nil {
		t.Fatal(err)
	}
	s := &ckpt.Session{ID: "g-1", Agent: Gemini, Transcript: chat}
	t1 := &ckpt.Turn{Prompt: "fix it", Started: time.Unix(1, 0)}
	t2 := &ckpt.Turn{Prompt: "go on", Started: time.Unix(2, 0)}
	t3 := &ckpt.Turn{Prompt: "go on", Started: time.Unix(3, 0)}
	s.Turns = []*ckpt.Turn{t1, t2, t3}
	forks := filepath.Join(dir, "forks")

	if ar, err := ResumeBefore(s, t1, ResumeOptions{Dir: forks}); err != nil || ar.String() != "gemini" || ar.File != "" {
		t.Fatalf("before turn 1: %+v, %v", ar, err)
	}
	dry, err := ResumeBefore(s, t2, ResumeOptions{Dir: forks, DryRun: true})
	if err != nil || dry.Written || dry.At != "u2" {
		t.Fatalf("dry run before turn 2: %+v, %v", dry, err)
	}
	if _, err := os.Stat(dry.File); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("a dry run wrote %s (%v)", dry.File, err)
	}
	ar, err := ResumeBefore(s, t2, ResumeOptions{Dir: forks})
	if err != nil || !ar.Written || ar.At != "u2" || ar.File != dry.File {
		t.Fatalf("before turn 2: %+v, %v", ar, err)
	}
	if want := "gemini --session-file " + ar.File; ar.String() != want {
		t.Errorf("command %q, want %q", ar.String(), want)
	}
	got, err := os.ReadFile(ar.File)
	if err != nil {
		t.Fatal(err)
	}
	if want := orig + `{"$rewindTo":"u2"}` + "\n"; string(got) != want {
		t.Errorf("the copy:\n%s\nwant:\n%s", got, want)
	}
	if after, _ := os.ReadFile(chat); string(after) != orig {
		t.Error("the original chat changed")
	}
	if ar, err := ResumeBefore(s, t3, ResumeOptions{Dir: forks}); err != nil || ar.At != "u3" {
		t.Errorf("before turn 3: %+v, %v", ar, err)
	}

	// The older single-JSON chat is not copied.
	legacy := filepath.Join(dir, "session-old.json")
	os.WriteFile(legacy, []byte(`{"sessionId":"g-1","messages":[{"id":"u1","type":"user","content":"fix it"}]}`), 0o600)
	s.Transcript = legacy
	if _, err := ResumeBefore(s, t2, ResumeOptions{Dir: forks}); !errors.Is(err, ErrNoResume) {
		t.Errorf("legacy chat: %v, want ErrNoResume", err)
	}
}
