package hooks

import (
	"errors"
	"path/filepath"
	"testing"

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
	ar, err := ResumeBefore(s, `Rename the greeting to "hello" and delete the unused notes file`)
	if err != nil {
		t.Fatal(err)
	}
	if want := "claude --resume 2f9c7c1e-5b0a-4c51-9a7e-3d1f6b8e4a21 --resume-session-at 5e3a7b10-9c4d-4a2f-b1e8-7d6c0f9a2b44 --fork-session"; ar.String() != want {
		t.Errorf("got %s\nwant %s", ar, want)
	}
	if ar, err := ResumeBefore(s, "What does this project do?"); err != nil || ar.At != "" || ar.String() != "claude" {
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
		if _, err := ResumeBefore(c.s, c.prompt); !errors.Is(err, ErrNoResume) {
			t.Errorf("%s: %v, want ErrNoResume", name, err)
		}
	}
}
