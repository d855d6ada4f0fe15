package hooks

import (
	"errors"
	"fmt"
	"strings"

	"github.com/seed1cedbf7c/ckpt"
)

// AgentResume says how to resume the agent's own conversation as it was
// before a turn: as a fork, so the agent's original transcript stays as
// it is.
type AgentResume struct {
	Agent string `json:"agent"`
	// Command resumes it (argv).
	Command []string `json:"command"`
	// At is the agent's message the resumed conversation ends with (""
	// for a new conversation: the turn was the first).
	At string `json:"at,omitempty"`
}

// String is the command as a shell line.
func (a *AgentResume) String() string {
	q := make([]string, len(a.Command))
	for i, w := range a.Command {
		q[i] = shellQuote(w)
	}
	return strings.Join(q, " ")
}

// ErrNoResume: the agent's conversation cannot be resumed before the turn
// (an agent ckpt cannot fork, no transcript recorded, or the turn's
// prompt not in it).
var ErrNoResume = errors.New("cannot resume the agent's conversation before the turn")

// ResumeBefore returns how to resume the session's agent conversation as
// it was just before turn t (one of the session's turns, or of those a
// conversation rewind removed). Only Claude Code's is resumable this way
// (claude --resume ID --resume-session-at MESSAGE --fork-session: its
// transcript is chained by uuid/parentUuid); for others it returns an
// error wrapping ErrNoResume. The turn's prompt is found from the
// transcript's end, skipping one prompt of the same words for each later
// turn that had them (a "go on" sent again), removed turns included: the
// agent's transcript still holds those.
func ResumeBefore(s *ckpt.Session, t *ckpt.Turn) (*AgentResume, error) {
	if s.Agent != ClaudeCode {
		return nil, fmt.Errorf("%w: ckpt resumes Claude Code's conversations only (this session's agent: %q)", ErrNoResume, s.Agent)
	}
	if s.Transcript == "" {
		return nil, fmt.Errorf("%w: the hooks have not named Claude Code's transcript for session %s", ErrNoResume, s.ID)
	}
	want := strings.TrimSpace(t.Prompt)
	later := 0
	for _, ts := range [][]*ckpt.Turn{s.Turns, s.Rewound} {
		for _, o := range ts {
			if o != t && o.Started.After(t.Started) && strings.TrimSpace(o.Prompt) == want {
				later++
			}
		}
	}
	uuid, parent, err := findPrompt(s.Transcript, want, later)
	if err != nil {
		return nil, fmt.Errorf("%w: transcript: %v", ErrNoResume, err)
	}
	if uuid == "" {
		return nil, fmt.Errorf("%w: the turn's prompt is not in %s", ErrNoResume, s.Transcript)
	}
	ar := &AgentResume{Agent: ClaudeCode, At: parent}
	if ar.At == "" {
		ar.Command = []string{"claude"} // the first turn: a new conversation
		return ar, nil
	}
	ar.Command = []string{"claude", "--resume", s.ID, "--resume-session-at", ar.At, "--fork-session"}
	return ar, nil
}

// findPrompt reads a Claude Code transcript back from its end (up to
// maxTail) for the prompt with the words want, skipping the last skip
// such prompts, and returns its uuid and parentUuid ("" uuid: not found).
func findPrompt(path, want string, skip int) (uuid, parent string, err error) {
	for size := int64(1 << 20); ; size *= 4 {
		data, whole, err := readTail(path, size)
		if err != nil {
			return "", "", err
		}
		lines := jsonLines(data)
		n := 0
		for i := len(lines) - 1; i >= 0; i-- {
			cl, ok := parseClaudeLine(lines[i])
			if !ok || !cl.isPrompt() || strings.TrimSpace(cl.text) != want {
				continue
			}
			if n == skip {
				return cl.UUID, cl.ParentUUID, nil
			}
			n++
		}
		if whole || size >= maxTail {
			return "", "", nil
		}
	}
}
