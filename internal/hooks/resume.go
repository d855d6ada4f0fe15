package hooks

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
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
	// for a new conversation: the turn was the first); for Gemini CLI, the
	// message of the turn's prompt, where the copy is rewound to; for
	// Codex, the turn the fork ends before.
	At string `json:"at,omitempty"`
	// File is the copy of the agent's chat ckpt wrote for it to import
	// (Gemini CLI), or would write (a dry run, Written false); for Codex,
	// the rollout file of the fork Codex wrote. A Codex dry run has no
	// File and no Command: the fork's id is Codex's to choose.
	File    string `json:"file,omitempty"`
	Written bool   `json:"written,omitempty"`
}

// ResumeOptions configure [ResumeBefore].
type ResumeOptions struct {
	// Dir receives the chat copies an agent imports (Gemini CLI); ""
	// for agent-forks in ckpt's state directory.
	Dir string
	// DryRun computes the command but writes nothing.
	DryRun bool
	// Context bounds the agent's own commands ckpt runs (Codex's app
	// server); nil for none.
	Context context.Context
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
// conversation rewind removed), as a fork: the agent's own files stay as
// they are.
//
//   - Claude Code: claude --resume ID --resume-session-at MESSAGE
//     --fork-session (its transcript is chained by uuid/parentUuid).
//   - Gemini CLI: gemini --session-file COPY, where COPY is its chat file
//     copied into o.Dir with a rewind to the turn's prompt appended (the
//     record Gemini CLI itself writes when it rewinds); Gemini CLI imports
//     it as a new session.
//   - Codex: codex resume FORK, where FORK is a new thread Codex's app
//     server forks from the session's before the turn (thread/fork with
//     beforeTurnId); see codexResume.
//
// For other agents it returns an error wrapping ErrNoResume. The turn's
// prompt is found from the transcript's end, skipping one prompt of the
// same words for each later turn that had them (a "go on" sent again),
// removed turns included: the agent's transcript still holds those.
func ResumeBefore(s *ckpt.Session, t *ckpt.Turn, o ResumeOptions) (*AgentResume, error) {
	if s.Agent != ClaudeCode && s.Agent != Gemini && s.Agent != Codex {
		return nil, fmt.Errorf("%w: ckpt resumes Claude Code's, Gemini CLI's and Codex's conversations only (this session's agent: %q)", ErrNoResume, s.Agent)
	}
	if s.Transcript == "" {
		return nil, fmt.Errorf("%w: the hooks have not named %s's transcript for session %s", ErrNoResume, agentTitle(s.Agent), s.ID)
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
	switch s.Agent {
	case Gemini:
		return geminiResume(s, want, later, o)
	case Codex:
		return codexResume(s, want, later, o)
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

func agentTitle(agent string) string {
	switch agent {
	case ClaudeCode:
		return "Claude Code"
	case Gemini:
		return "Gemini CLI"
	case Codex:
		return "Codex"
	}
	return agent
}

// geminiResume finds the turn's prompt in the Gemini CLI chat file (JSON
// lines, read whole, at most maxTail) and writes the copy to import.
func geminiResume(s *ckpt.Session, want string, later int, o ResumeOptions) (*AgentResume, error) {
	if _, legacy, err := geminiLegacy(s.Transcript); err != nil {
		return nil, fmt.Errorf("%w: transcript: %v", ErrNoResume, err)
	} else if legacy {
		return nil, fmt.Errorf("%w: %s is a chat in Gemini CLI's older single-JSON format, which ckpt does not copy", ErrNoResume, s.Transcript)
	}
	data, whole, err := readTail(s.Transcript, maxTail)
	if err != nil {
		return nil, fmt.Errorf("%w: transcript: %v", ErrNoResume, err)
	}
	if !whole {
		return nil, fmt.Errorf("%w: %s is larger than %d MiB", ErrNoResume, s.Transcript, maxTail>>20)
	}
	var recs []geminiMessage
	for _, l := range jsonLines(data) {
		if m, ok := parseGeminiLine(l); ok {
			recs = append(recs, m)
		}
	}
	msgs := geminiMessages(recs)
	at, n := -1, 0
	for i := len(msgs) - 1; i >= 0; i-- {
		if msgs[i].Type != "user" || strings.TrimSpace(msgs[i].text()) != want {
			continue
		}
		if n == later {
			at = i
			break
		}
		n++
	}
	if at < 0 {
		return nil, fmt.Errorf("%w: the turn's prompt is not in %s", ErrNoResume, s.Transcript)
	}
	first := true
	for _, m := range msgs[:at] {
		if m.Type == "user" {
			first = false
		}
	}
	if first {
		return &AgentResume{Agent: Gemini, Command: []string{"gemini"}}, nil // a new conversation
	}
	id := msgs[at].ID
	dir := o.Dir
	if dir == "" {
		d, err := ckpt.StateDir()
		if err != nil {
			return nil, fmt.Errorf("%w: %v", ErrNoResume, err)
		}
		dir = filepath.Join(d, "agent-forks")
	}
	file := filepath.Join(dir, "gemini-"+safeName(s.ID)+"-before-"+safeName(id)+".jsonl")
	ar := &AgentResume{Agent: Gemini, At: id, File: file, Command: []string{"gemini", "--session-file", file}}
	if o.DryRun {
		return ar, nil
	}
	var b bytes.Buffer
	b.Write(data)
	if len(data) > 0 && data[len(data)-1] != '\n' {
		b.WriteByte('\n')
	}
	rw, err := json.Marshal(map[string]string{"$rewindTo": id})
	if err != nil {
		return nil, err
	}
	b.Write(rw)
	b.WriteByte('\n')
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrNoResume, err)
	}
	if err := writeAtomic(file, b.Bytes(), nil, 0o600); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrNoResume, err)
	}
	ar.Written = true
	return ar, nil
}

// safeName keeps letters, digits, '.', '_' and '-' of an id for a file
// name (others become '_'), at most 80 bytes.
func safeName(id string) string {
	b := []byte(id)
	for i, c := range b {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '.' || c == '_' || c == '-') {
			b[i] = '_'
		}
	}
	if len(b) > 80 {
		b = b[:80]
	}
	if len(b) == 0 || b[0] == '.' {
		b = append([]byte{'_'}, b...)
	}
	return string(b)
}
