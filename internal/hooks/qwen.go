package hooks

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/seed1cedbf7c/ckpt"
)

// qwenHook is what Qwen Code writes on a hook's stdin: Claude Code's
// common fields (session_id, transcript_path, cwd, hook_event_name) and,
// on UserPromptSubmit, submitted_prompt — the words the user sent, when
// prompt is the model-bound prompt they expanded to.
type qwenHook struct {
	common
	SubmittedPrompt string `json:"submitted_prompt"`
}

// parseQwen reads Qwen Code's hook payload. Its events are Claude Code's:
// SessionStart (source), UserPromptSubmit (submitted_prompt, else
// prompt), Stop and StopFailure (last_assistant_message), SessionEnd
// (reason), PreCompact (trigger). A UserPromptSubmit with neither (Qwen
// Code sends one with each batch of tool results) is ignored.
func parseQwen(payload []byte) (*Event, error) {
	var h qwenHook
	if err := decodeObject(QwenCode, payload, &h); err != nil {
		return nil, err
	}
	if h.HookEventName == "" {
		return nil, &ParseError{QwenCode, fmt.Errorf("no hook_event_name")}
	}
	ev := claudeEvent(QwenCode, &h.common)
	if ev.Kind == KindPrompt {
		switch {
		case strings.TrimSpace(h.SubmittedPrompt) != "":
			ev.Prompt = h.SubmittedPrompt
		case strings.TrimSpace(h.Prompt) == "":
			// Qwen Code runs UserPromptSubmit also when it sends the
			// model its tools' results, in the middle of a turn: no
			// words of the user's, no submitted_prompt.
			ev.Kind, ev.Detail = KindIgnore, "tool results sent back to the model, not a prompt"
		}
	}
	return ev, nil
}

// # Qwen Code's transcript
//
// The transcript (its chat recording, ~/.qwen/projects/<project>/chats/
// <session_id>.jsonl) is JSON lines: records with "uuid", "parentUuid",
// "type" ("user", "assistant", "tool_result", "system"), "provenance"
// ("real_user" on the user's prompts) and a "message" in Gemini's
// Content shape: a role and "parts", each "text" or a "functionCall"
// with "name" and "args".

type qwenRecord struct {
	Type       string `json:"type"`
	Provenance string `json:"provenance"`
	Message    *struct {
		Parts []struct {
			Text         string `json:"text"`
			Thought      bool   `json:"thought"`
			FunctionCall *struct {
				ID   string          `json:"id"`
				Name string          `json:"name"`
				Args json.RawMessage `json:"args"`
			} `json:"functionCall"`
		} `json:"parts"`
	} `json:"message"`
}

func (r *qwenRecord) text() string {
	if r.Message == nil {
		return ""
	}
	var b strings.Builder
	for _, p := range r.Message.Parts {
		if !p.Thought {
			b.WriteString(p.Text)
		}
	}
	return b.String()
}

// isPrompt reports whether a record is a prompt of the user's (not tool
// results, nor a message the agent adds).
func (r *qwenRecord) isPrompt() bool {
	return r.Type == "user" && (r.Provenance == "" || r.Provenance == "real_user") && strings.TrimSpace(r.text()) != ""
}

func parseQwenLine(l []byte) (qwenRecord, bool) {
	var r qwenRecord
	if json.Unmarshal(l, &r) != nil || r.Message == nil || (r.Type != "user" && r.Type != "assistant") {
		return r, false
	}
	return r, true
}

// qwenTurn reads the turn whose prompt is prompt from Qwen Code's
// transcript: its replies and tool calls.
func qwenTurn(path, prompt string) ([]ckpt.Message, error) {
	start := promptStart(prompt, (*qwenRecord).isPrompt, func(r *qwenRecord) string { return r.text() })
	recs, found, err := findTurn(path, parseQwenLine, start)
	if err != nil {
		return nil, fmt.Errorf("transcript: %w", err)
	}
	if !found {
		return nil, fmt.Errorf("transcript %s: the turn's prompt is not in it", path)
	}
	var msgs []ckpt.Message
	seen := map[string]bool{}
	for _, r := range recs[1:] {
		if r.Type != "assistant" {
			continue
		}
		if t := strings.TrimSpace(r.text()); t != "" {
			msgs = append(msgs, ckpt.Message{Role: "assistant", Content: clip(t, maxAssistantText)})
		}
		for _, p := range r.Message.Parts {
			fc := p.FunctionCall
			if fc == nil || fc.ID != "" && seen[fc.ID] {
				continue
			}
			seen[fc.ID] = true
			msgs = append(msgs, ckpt.Message{Role: "tool", Tool: fc.Name, Content: describeToolInput(fc.Args)})
		}
	}
	return msgs, nil
}
