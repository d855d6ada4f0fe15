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
// it was just before the turn whose prompt is given. Only Claude Code's
// is resumable this way (claude --resume ID --resume-session-at MESSAGE
// --fork-session: its transcript is chained by uuid/parentUuid); for
// others it returns an error wrapping ErrNoResume.
func ResumeBefore(s *ckpt.Session, prompt string) (*AgentResume, error) {
	if s.Agent != ClaudeCode {
		return nil, fmt.Errorf("%w: ckpt resumes Claude Code's conversations only (this session's agent: %q)", ErrNoResume, s.Agent)
	}
	if s.Transcript == "" {
		return nil, fmt.Errorf("%w: the hooks have not named Claude Code's transcript for session %s", ErrNoResume, s.ID)
	}
	want := strings.TrimSpace(prompt)
	start := func(_ []byte, cl *claudeLine) int {
		if cl.isPrompt() && strings.TrimSpace(cl.text) == want {
			return turnStart
		}
		return noStart
	}
	lines, found, err := findTurn(s.Transcript, parseClaudeLine, start)
	if err != nil {
		return nil, fmt.Errorf("%w: transcript: %v", ErrNoResume, err)
	}
	if !found || len(lines) == 0 || lines[0].UUID == "" {
		return nil, fmt.Errorf("%w: the turn's prompt is not in %s", ErrNoResume, s.Transcript)
	}
	ar := &AgentResume{Agent: ClaudeCode, At: lines[0].ParentUUID}
	if ar.At == "" {
		ar.Command = []string{"claude"} // the first turn: a new conversation
		return ar, nil
	}
	ar.Command = []string{"claude", "--resume", s.ID, "--resume-session-at", ar.At, "--fork-session"}
	return ar, nil
}
