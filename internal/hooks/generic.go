package hooks

import (
	"fmt"
	"strings"

	"github.com/seed1cedbf7c/ckpt"
)

// genericEvents maps the generic protocol's events to what ckpt does.
var genericEvents = map[string]Kind{
	"session_start": KindSessionStart,
	"turn_begin":    KindPrompt,
	"turn_end":      KindStop,
	"turn":          KindTurnComplete,
	"session_end":   KindSessionEnd,
	"compact":       KindCompact,
	"before_edit":   KindEdit,
}

// genericRoles are the roles a generic message may have.
var genericRoles = map[string]bool{"user": true, "assistant": true, "tool": true, "system": true}

// labelRE is what an agent label may be.
var labelRE = lazyRE(`^[A-Za-z0-9][A-Za-z0-9._ -]{0,63}$`)

// genericPayload is ckpt's own hook protocol, for any agent, script or
// harness: one JSON object per call on stdin.
//
//	{"event": "turn_begin", "session_id": "run-42", "prompt": "fix the tests"}
//	{"event": "turn_end", "session_id": "run-42",
//	 "messages": [{"role": "assistant", "content": "Fixed."},
//	              {"role": "tool", "tool": "Edit", "content": "src/a.go"}]}
//
//	{"event": "before_edit", "session_id": "run-42", "paths": [".env"]}
//
// event is session_start, turn_begin (prompt), turn_end (messages),
// turn (a whole turn after the fact: prompt and messages; it begins at
// the workspace's last checkpoint), session_end, compact, or before_edit
// (paths: files a tool is about to write, absolute or relative to cwd;
// those the ignore rules leave out are kept in the turn, so a rewind puts
// them back). session_id
// names the session (letters, digits, '.', '_', '-'; other characters
// become '_', see [SessionID]); cwd, if set, is where
// the workspace is looked for (default: the hook's directory); agent, if
// set, labels a session the call creates; reason is a detail kept with
// session_end and compact.
type genericPayload struct {
	Event     string           `json:"event"`
	SessionID string           `json:"session_id"`
	Cwd       string           `json:"cwd"`
	Agent     string           `json:"agent"`
	Prompt    string           `json:"prompt"`
	Reason    string           `json:"reason"`
	Messages  []genericMessage `json:"messages"`
	Paths     []string         `json:"paths"`
}

type genericMessage struct {
	Role    string `json:"role"`
	Content string `json:"content"`
	Tool    string `json:"tool"`
}

func parseGeneric(payload []byte) (*Event, error) {
	var g genericPayload
	if err := decodeObject(Generic, payload, &g); err != nil {
		return nil, err
	}
	kind, ok := genericEvents[g.Event]
	if !ok {
		return nil, &ParseError{Generic, fmt.Errorf("unknown event %q (want session_start, turn_begin, turn_end, turn, session_end, compact or before_edit)", clip(g.Event, 40))}
	}
	if g.Agent != "" && !labelRE().MatchString(g.Agent) {
		return nil, &ParseError{Generic, fmt.Errorf("agent %q: letters, digits, '.', '_', '-' and spaces, up to 64", clip(g.Agent, 80))}
	}
	ev := &Event{Agent: Generic, Name: g.Event, Kind: kind, SessionID: g.SessionID, Cwd: g.Cwd,
		Prompt: g.Prompt, Detail: g.Reason, Label: g.Agent}
	if len(g.Paths) > 0 && kind != KindEdit {
		return nil, &ParseError{Generic, fmt.Errorf("%s carries no paths (before_edit does)", g.Event)}
	}
	for i, p := range g.Paths {
		if p == "" || strings.ContainsRune(p, 0) {
			return nil, &ParseError{Generic, fmt.Errorf("paths[%d]: empty or with a NUL byte", i)}
		}
	}
	if len(g.Paths) > 1000 {
		return nil, &ParseError{Generic, fmt.Errorf("%d paths: at most 1000 in one before_edit", len(g.Paths))}
	}
	ev.Paths = g.Paths
	if len(g.Messages) > 0 && kind != KindStop && kind != KindTurnComplete {
		return nil, &ParseError{Generic, fmt.Errorf("%s carries no messages (turn_end and turn do)", g.Event)}
	}
	for i, m := range g.Messages {
		if !genericRoles[m.Role] {
			return nil, &ParseError{Generic, fmt.Errorf("messages[%d]: role %q (want user, assistant, tool or system)", i, clip(m.Role, 40))}
		}
		ev.Messages = append(ev.Messages, ckpt.Message{Role: m.Role, Tool: clip(strings.TrimSpace(m.Tool), 200), Content: clip(m.Content, maxAssistantText)})
	}
	return ev, nil
}
