package hooks

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/seed1cedbf7c/ckpt"
)

// Cursor is Cursor's agent — its CLI (cursor-agent) and its editor's
// agent alike. They run the command hooks of .cursor/hooks.json (the
// project's) and ~/.cursor/hooks.json (the user's): {"version": 1,
// "hooks": {"EVENT": [{"command": "..."}]}}, each entry a command, not a
// group of them as in Claude Code's settings.
const Cursor = "cursor"

// cursorHook is what Cursor writes on a hook's stdin, as its hooks
// documentation lists the fields: conversation_id, generation_id, model,
// hook_event_name, cursor_version, workspace_roots, user_email and
// transcript_path (null when there is none) with every event; session_id
// on sessionStart and sessionEnd (the conversation's id); prompt on
// beforeSubmitPrompt; status ("completed", "aborted", "error") and
// loop_count on stop; reason and final_status on sessionEnd.
type cursorHook struct {
	ConversationID string   `json:"conversation_id"`
	GenerationID   string   `json:"generation_id"`
	SessionID      string   `json:"session_id"`
	HookEventName  string   `json:"hook_event_name"`
	WorkspaceRoots []string `json:"workspace_roots"`
	TranscriptPath *string  `json:"transcript_path"`
	Prompt         string   `json:"prompt"`
	Status         string   `json:"status"`
	Reason         string   `json:"reason"`
	Trigger        string   `json:"trigger"`
	LoopCount      int      `json:"loop_count"`
}

// parseCursor reads Cursor's hook payload: sessionStart opens the
// session, beforeSubmitPrompt begins a turn, stop ends it (whatever its
// status), sessionEnd ends a turn still in progress, preCompact is noted;
// the other events (the tool and file events, afterAgentResponse, ...)
// are ignored. The session is the conversation (conversation_id); the
// workspace is found from the first of workspace_roots.
func parseCursor(payload []byte) (*Event, error) {
	var h cursorHook
	if err := decodeObject(Cursor, payload, &h); err != nil {
		return nil, err
	}
	if h.HookEventName == "" {
		return nil, &ParseError{Cursor, fmt.Errorf("no hook_event_name")}
	}
	sid := h.ConversationID
	if sid == "" {
		sid = h.SessionID
	}
	ev := &Event{Agent: Cursor, Name: h.HookEventName, SessionID: sid, StopHookActive: h.LoopCount > 0}
	if len(h.WorkspaceRoots) > 0 {
		ev.Cwd = h.WorkspaceRoots[0]
	}
	if h.TranscriptPath != nil {
		ev.Transcript = *h.TranscriptPath
	}
	switch h.HookEventName {
	case "sessionStart":
		ev.Kind = KindSessionStart
	case "beforeSubmitPrompt":
		ev.Kind, ev.Prompt = KindPrompt, h.Prompt
	case "stop":
		ev.Kind, ev.Detail = KindStop, h.Status
	case "sessionEnd":
		ev.Kind, ev.Detail = KindSessionEnd, h.Reason
	case "preCompact":
		ev.Kind, ev.Detail = KindCompact, h.Trigger
	default:
		ev.Kind = KindIgnore
	}
	return ev, nil
}

// CursorResponse is what `ckpt hook cursor` prints on stdout for a
// payload: Cursor reads a hook's stdout as JSON, and on
// beforeSubmitPrompt a "continue" that is not true drops the prompt. So
// the answer lets everything go on — {"continue": true} there, {} (no
// permission asked for, no follow-up message) for every other event —
// whatever ckpt made of the event, an unreadable payload included: one
// cut short (past the 16 MiB a hook reads) still names its event before
// the long prompt, and is answered by that name.
func CursorResponse(payload []byte) []byte {
	if cursorEventName(payload) == "beforeSubmitPrompt" {
		return []byte(`{"continue":true}` + "\n")
	}
	return []byte("{}\n")
}

// cursorEventName is the payload's hook_event_name, read key by key so
// that an object cut short, or with a value of the wrong type elsewhere,
// still gives the name if it comes before the damage ("" if it does
// not). Keys match as json.Unmarshal matches them, case-insensitively.
func cursorEventName(payload []byte) string {
	dec := json.NewDecoder(bytes.NewReader(payload))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return ""
	}
	for dec.More() {
		t, err := dec.Token()
		key, ok := t.(string)
		if err != nil || !ok {
			return ""
		}
		if !strings.EqualFold(key, "hook_event_name") {
			var skip json.RawMessage
			if dec.Decode(&skip) != nil {
				return ""
			}
			continue
		}
		var name string
		if dec.Decode(&name) != nil {
			return ""
		}
		return name
	}
	return ""
}

// # Cursor's transcript
//
// Cursor's transcript, when the payload names one, is JSON lines, one
// message each: {"role": "user"|"assistant", "message": {"content":
// [blocks]}}, blocks "text" and "tool_use" (name, input) as in the
// Messages API. A prompt's text is wrapped: "<user_query>\n...\n
// </user_query>", possibly after a "<timestamp>...</timestamp>" line.

type cursorLine struct {
	Role    string `json:"role"`
	Message *struct {
		Content []claudeBlock `json:"content"`
	} `json:"message"`
}

func parseCursorLine(l []byte) (cursorLine, bool) {
	var c cursorLine
	if json.Unmarshal(l, &c) != nil || c.Message == nil || (c.Role != "user" && c.Role != "assistant") {
		return c, false
	}
	return c, true
}

// query is a user message's prompt: the text inside <user_query>, if it
// is wrapped so, else the whole text.
func (c *cursorLine) query() string {
	var texts []string
	for _, b := range c.Message.Content {
		if b.Type == "text" {
			texts = append(texts, b.Text)
		}
	}
	s := strings.Join(texts, "\n")
	if _, rest, ok := strings.Cut(s, "<user_query>"); ok {
		s, _, _ = strings.Cut(rest, "</user_query>")
	}
	return strings.TrimSpace(s)
}

// cursorTurn reads the turn whose prompt is prompt from Cursor's
// transcript: its replies and tool calls.
func cursorTurn(path, prompt string) ([]ckpt.Message, error) {
	want := strings.TrimSpace(prompt)
	start := func(_ []byte, c *cursorLine) int {
		switch q := c.query(); {
		case c.Role != "user" || q == "":
			return noStart
		case q == want:
			return turnStart
		}
		return someStart
	}
	lines, found, err := findTurn(path, parseCursorLine, start)
	if err != nil {
		return nil, fmt.Errorf("transcript: %w", err)
	}
	if !found {
		return nil, fmt.Errorf("transcript %s: the turn's prompt is not in it", path)
	}
	var msgs []ckpt.Message
	for _, c := range lines[1:] {
		if c.Role != "assistant" {
			continue
		}
		for _, b := range c.Message.Content {
			switch b.Type {
			case "text":
				if t := strings.TrimSpace(b.Text); t != "" {
					msgs = append(msgs, ckpt.Message{Role: "assistant", Content: clip(t, maxAssistantText)})
				}
			case "tool_use":
				msgs = append(msgs, ckpt.Message{Role: "tool", Tool: b.Name, Content: describeToolInput(b.Input)})
			}
		}
	}
	return msgs, nil
}
