package hooks

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/seed1cedbf7c/ckpt"
)

// Droid is Factory's Droid (npm @factory/cli, command droid). It runs
// Claude Code-style command hooks from the "hooks" of
// .factory/settings.json (the project's) and ~/.factory/settings.json (the
// user's), with Claude Code's payload fields, and tells them the project
// in $FACTORY_PROJECT_DIR.
const Droid = "droid"

// droidHook is what Droid writes on a hook's stdin: Claude Code's common
// fields (session_id, transcript_path, cwd, hook_event_name) and, per
// event, source (SessionStart), prompt (UserPromptSubmit), reason
// (SessionEnd), trigger (PreCompact). Its Stop carries no reply: the
// turn's messages come from the transcript.
type droidHook struct {
	common
}

// parseDroid reads Droid's hook payload. Its events are Claude Code's
// (see claudeEvent): SessionStart, UserPromptSubmit, PreToolUse (its
// Create, Edit and MultiEdit), Stop, SessionEnd and PreCompact; the others
// (PostToolUse, Notification, SubagentStop) are ignored.
func parseDroid(payload []byte) (*Event, error) {
	var h droidHook
	if err := decodeObject(Droid, payload, &h); err != nil {
		return nil, err
	}
	if h.HookEventName == "" {
		return nil, &ParseError{Droid, fmt.Errorf("no hook_event_name")}
	}
	return claudeEvent(Droid, &h.common), nil
}

// # Droid's transcript
//
// The transcript (~/.factory/sessions/<cwd with '/' as '-'>/<session_id>
// .jsonl) is JSON lines: a "session_start" record, then "message" records
// with an "id" and a "message" in the Messages API's shape — a role and a
// list of content blocks ("text", "tool_use" with name and input,
// "tool_result"). Droid records its hooks' runs there too, as user
// messages with "visibility": "user_only" and a "hookEventName", and the
// context it adds before a prompt as a user message whose id starts with
// "context-": neither is a prompt of the user's.

type droidRecord struct {
	Type    string `json:"type"`
	ID      string `json:"id"`
	Message *struct {
		Role          string        `json:"role"`
		Visibility    string        `json:"visibility"`
		HookEventName string        `json:"hookEventName"`
		Content       []claudeBlock `json:"content"`
	} `json:"message"`
}

func (r *droidRecord) text() string {
	var texts []string
	for _, b := range r.Message.Content {
		if b.Type == "text" {
			texts = append(texts, b.Text)
		}
	}
	return strings.Join(texts, "\n")
}

// isPrompt reports whether a record is a prompt the user sent.
func (r *droidRecord) isPrompt() bool {
	m := r.Message
	if m.Role != "user" || m.Visibility != "" || m.HookEventName != "" || strings.HasPrefix(r.ID, "context-") {
		return false
	}
	for _, b := range m.Content {
		if b.Type == "tool_result" {
			return false
		}
	}
	return strings.TrimSpace(r.text()) != ""
}

func parseDroidLine(l []byte) (droidRecord, bool) {
	var r droidRecord
	if json.Unmarshal(l, &r) != nil || r.Type != "message" || r.Message == nil {
		return r, false
	}
	return r, true
}

// droidTurn reads the turn whose prompt is prompt from Droid's
// transcript: its replies and tool calls.
func droidTurn(path, prompt string) ([]ckpt.Message, error) {
	start := promptStart(prompt, (*droidRecord).isPrompt, func(r *droidRecord) string { return r.text() })
	recs, found, err := findTurn(path, parseDroidLine, start)
	if err != nil {
		return nil, fmt.Errorf("transcript: %w", err)
	}
	if !found {
		return nil, fmt.Errorf("transcript %s: the turn's prompt is not in it", path)
	}
	var msgs []ckpt.Message
	seen := map[string]bool{}
	for _, r := range recs[1:] {
		if r.Message.Role != "assistant" {
			continue
		}
		for _, b := range r.Message.Content {
			switch b.Type {
			case "text":
				if t := strings.TrimSpace(b.Text); t != "" {
					msgs = append(msgs, ckpt.Message{Role: "assistant", Content: clip(t, maxAssistantText)})
				}
			case "tool_use":
				if b.ID != "" && seen[b.ID] {
					continue
				}
				seen[b.ID] = true
				msgs = append(msgs, ckpt.Message{Role: "tool", Tool: b.Name, Content: describeToolInput(b.Input)})
			}
		}
	}
	return msgs, nil
}
