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
	ar, err := ResumeBefore(s, &ckpt.Turn{Prompt: `Rename the greeting to "hello" and delete the unused notes file`})
	if err != nil {
		t.Fatal(err)
	}
	if want := "claude --resume 2f9c7c1e-5b0a-4c51-9a7e-3d1f6b8e4a21 --resume-session-at 5e3a7b10-9c4d-4a2f-b1e8-7d6c0f9a2b44 --fork-session"; ar.String() != want {
		t.Errorf("got %s\nwant %s", ar, want)
	}
	if ar, err := ResumeBefore(s, &ckpt.Turn{Prompt: "What does this project do?"}); err != nil || ar.At != "" || ar.String() != "claude" {
		t.Errorf("first turn: %+v, %v", ar, err)
	}
	for name, c := range map[string]struct {
		s      *ckpt.Session
		prompt string
	}{
		"unknown prompt": {s, "never asked"},
		"no transcript":  {&ckpt.Session{ID: "x", Agent: ClaudeCode}, "p"},
		"another agent":  {&ckpt.Session{ID: "x", Agent: Gemini, Transcript: tr}, "p"},
	} {
		if _, err := ResumeBefore(c.s, &ckpt.Turn{Prompt: c.prompt}); !errors.Is(err, ErrNoResume) {
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
		ar, err := ResumeBefore(s, turns[n-1])
		if err != nil || ar.String() != want {
			t.Errorf("turn %d: %v, %v; want %s", n, ar, err, want)
		}
	}
}
