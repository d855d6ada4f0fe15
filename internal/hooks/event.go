package hooks

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/seed1cedbf7c/ckpt"
)

// Agent names, as `ckpt hook AGENT` takes them and sessions record them.
const (
	ClaudeCode = "claude-code"
	Gemini     = "gemini"
	Codex      = "codex"
	QwenCode   = "qwen-code"
)

// Agents lists the supported agents.
var Agents = []string{ClaudeCode, Gemini, Codex, QwenCode, OpenCode, Copilot, Droid, Cursor}

// Generic is the hook program for any other agent, script or harness: it
// takes ckpt's own protocol (see [parseGeneric]) and has nothing to
// install.
const Generic = "generic"

// Programs lists every `ckpt hook NAME` program: the agents and Generic.
var Programs = append(append([]string{}, Agents...), Generic)

// Kind says what ckpt does for an event.
type Kind string

// Event kinds.
const (
	KindSessionStart Kind = "session-start" // open or resume the session
	KindPrompt       Kind = "prompt"        // a turn begins
	KindStop         Kind = "stop"          // the turn ends
	KindTurnComplete Kind = "turn-complete" // a whole turn, reported when it is over (Codex)
	KindSessionEnd   Kind = "session-end"   // end a turn still in progress
	KindCompact      Kind = "compact"       // the agent compacts its context
	KindEdit         Kind = "edit"          // an edit tool is about to change files (Paths)
	KindIgnore       Kind = "ignore"        // an event ckpt has nothing to do for
)

// Event is one hook call in the agent-neutral form [Handle] acts on.
type Event struct {
	Agent string `json:"agent"`
	// Name is the agent's own name for the event (hook_event_name, or
	// Codex's notification type).
	Name      string `json:"name"`
	Kind      Kind   `json:"kind"`
	SessionID string `json:"session_id"`
	// Cwd is the agent's working directory; the workspace is found from it.
	Cwd string `json:"cwd,omitempty"`
	// Prompt is the user's prompt (prompt events and Codex turns).
	Prompt string `json:"prompt,omitempty"`
	// Transcript is the agent's transcript file, if the payload names one.
	Transcript string `json:"transcript,omitempty"`
	// Assistant is the turn's last assistant message, when the payload
	// carries it (Claude Code's last_assistant_message, Gemini's
	// prompt_response, Codex's last-assistant-message).
	Assistant string `json:"assistant,omitempty"`
	// Detail is the event's reason or trigger: SessionStart's source,
	// SessionEnd's reason, a compaction's trigger.
	Detail string `json:"detail,omitempty"`
	// StopHookActive: the agent is continuing because a stop hook asked it
	// to (Claude Code's stop_hook_active, Gemini's AfterAgent retry).
	StopHookActive bool `json:"stop_hook_active,omitempty"`
	// Label names the agent on a session the event creates, when the
	// payload says (the generic protocol's "agent").
	Label string `json:"label,omitempty"`
	// Messages are the turn's messages, when the payload carries them
	// (the generic protocol's turn_end and turn).
	Messages []ckpt.Message `json:"messages,omitempty"`
	// Paths are the files an edit tool is about to change (KindEdit), as
	// the payload names them: absolute, or relative to Cwd.
	Paths []string `json:"paths,omitempty"`
}

// ParseError is a payload ckpt cannot read.
type ParseError struct {
	Agent string
	Err   error
}

// Error implements error.
func (e *ParseError) Error() string { return fmt.Sprintf("%s payload: %v", e.Agent, e.Err) }

// Unwrap returns the decoding error.
func (e *ParseError) Unwrap() error { return e.Err }

// Parse reads an agent's hook payload: the JSON Claude Code, Gemini CLI,
// Codex, Qwen Code, Droid and Cursor write on the hook's stdin, or the
// JSON argument Codex passes its legacy notify program.
func Parse(agent string, payload []byte) (*Event, error) {
	payload = bytes.TrimSpace(payload)
	if len(payload) == 0 {
		return nil, &ParseError{agent, fmt.Errorf("empty (the agent sends a JSON object)")}
	}
	switch agent {
	case ClaudeCode:
		return parseClaude(payload)
	case Gemini:
		return parseGemini(payload)
	case Codex:
		return parseCodex(payload)
	case QwenCode:
		return parseQwen(payload)
	case Droid:
		return parseDroid(payload)
	case Cursor:
		return parseCursor(payload)
	case Copilot:
		return parseCopilot(payload)
	case OpenCode:
		// ckpt's own protocol, which ckpt's OpenCode plugin speaks.
		ev, err := parseGeneric(payload)
		var pe *ParseError
		if errors.As(err, &pe) {
			pe.Agent = OpenCode
		}
		if ev != nil {
			ev.Agent = OpenCode
		}
		return ev, err
	case Generic:
		return parseGeneric(payload)
	}
	return nil, fmt.Errorf("unknown agent %q (want %s)", agent, strings.Join(Programs, ", "))
}

// common holds the fields Claude Code and Gemini CLI send with every event.
type common struct {
	SessionID      string `json:"session_id"`
	TranscriptPath string `json:"transcript_path"`
	Cwd            string `json:"cwd"`
	HookEventName  string `json:"hook_event_name"`
	// Event-specific fields, all optional.
	Prompt               string `json:"prompt"`
	Source               string `json:"source"`
	Reason               string `json:"reason"`
	Trigger              string `json:"trigger"`
	StopHookActive       bool   `json:"stop_hook_active"`
	LastAssistantMessage string `json:"last_assistant_message"`
	PromptResponse       string `json:"prompt_response"`
	// A tool's hooks (PreToolUse, BeforeTool): its name and arguments.
	ToolName  string          `json:"tool_name"`
	ToolInput json.RawMessage `json:"tool_input"`
}

// editTools are, per agent, the edit tools whose target file ckpt keeps
// before they run, even if it is ignored (see [KindEdit]), and the
// argument naming that file.
var editTools = map[string]map[string]string{
	ClaudeCode: {"Write": "file_path", "Edit": "file_path", "MultiEdit": "file_path", "NotebookEdit": "notebook_path"},
	Gemini:     {"write_file": "file_path", "replace": "file_path"},
	QwenCode:   {"write_file": "file_path", "edit": "file_path"},
	// Codex's apply_patch names its files in the patch (its "command").
	Codex: {"apply_patch": "command"},
	Droid: {"Create": "file_path", "Edit": "file_path", "MultiEdit": "file_path"},
	// Copilot CLI names its create and edit tools as Claude Code does in
	// the PascalCase events, with its own arguments.
	Copilot: {"Write": "path", "Edit": "path"},
}

// patchFileRE finds the files an apply_patch patch adds, updates, deletes
// or moves to.
var patchFileRE = lazyRE(`(?m)^\*\*\* (?:Add File|Update File|Delete File|Move to): (.+?)\r?$`)

// editEvent makes ev the KindEdit event of an edit tool's hook, if the
// tool is one of the agent's edit tools and names its file; otherwise an
// event to ignore.
func editEvent(ev *Event, c *common) {
	ev.Kind = KindIgnore
	arg, ok := editTools[ev.Agent][c.ToolName]
	if !ok {
		ev.Detail = "not an edit tool: " + c.ToolName
		return
	}
	var in map[string]json.RawMessage
	var p string
	if json.Unmarshal(c.ToolInput, &in) != nil || json.Unmarshal(in[arg], &p) != nil || p == "" || strings.ContainsRune(p, 0) {
		keys := slices.Sorted(maps.Keys(in))
		ev.Detail = fmt.Sprintf("%s names no file (no %s among its arguments %s)", c.ToolName, arg, clip(strings.Join(keys, ", "), 200))
		if len(c.ToolInput) > 0 && c.ToolInput[0] == '"' {
			ev.Detail = fmt.Sprintf("%s names no file (its arguments are a string, not an object)", c.ToolName)
		}
		return
	}
	paths := []string{p}
	if ev.Agent == Codex {
		paths = nil
		for _, m := range patchFileRE().FindAllStringSubmatch(p, 1000) {
			if f := strings.TrimSpace(m[1]); f != "" && !slices.Contains(paths, f) {
				paths = append(paths, f)
			}
		}
		if len(paths) == 0 {
			ev.Detail = c.ToolName + " names no file"
			return
		}
	}
	ev.Kind, ev.Detail, ev.Paths = KindEdit, c.ToolName, paths
}

func decodeObject(agent string, payload []byte, v any) error {
	if payload[0] != '{' {
		return &ParseError{agent, fmt.Errorf("not a JSON object: %s", clip(string(payload), 60))}
	}
	if err := json.Unmarshal(payload, v); err != nil {
		return &ParseError{agent, err}
	}
	return nil
}

func parseClaude(payload []byte) (*Event, error) {
	var c common
	if err := decodeObject(ClaudeCode, payload, &c); err != nil {
		return nil, err
	}
	if c.HookEventName == "" {
		return nil, &ParseError{ClaudeCode, fmt.Errorf("no hook_event_name")}
	}
	return claudeEvent(ClaudeCode, &c), nil
}

// claudeEvent maps the events of Claude Code's hooks, which Qwen Code,
// Droid and Copilot CLI's PascalCase events share: SessionStart (source),
// UserPromptSubmit (prompt), Stop and StopFailure (last_assistant_message,
// where sent), SessionEnd (reason), PreCompact (trigger) and PreToolUse
// (an edit tool's file, see editEvent); any other event is ignored.
func claudeEvent(agent string, c *common) *Event {
	ev := &Event{Agent: agent, Name: c.HookEventName, SessionID: c.SessionID, Cwd: c.Cwd,
		Transcript: c.TranscriptPath, StopHookActive: c.StopHookActive}
	switch c.HookEventName {
	case "SessionStart":
		ev.Kind, ev.Detail = KindSessionStart, c.Source
	case "UserPromptSubmit":
		ev.Kind, ev.Prompt = KindPrompt, c.Prompt
	case "Stop", "StopFailure":
		ev.Kind, ev.Assistant = KindStop, c.LastAssistantMessage
	case "SessionEnd":
		ev.Kind, ev.Detail = KindSessionEnd, c.Reason
	case "PreCompact":
		ev.Kind, ev.Detail = KindCompact, c.Trigger
	case "PreToolUse":
		editEvent(ev, c)
	default:
		ev.Kind = KindIgnore
	}
	return ev
}

func parseGemini(payload []byte) (*Event, error) {
	var c common
	if err := decodeObject(Gemini, payload, &c); err != nil {
		return nil, err
	}
	if c.HookEventName == "" {
		return nil, &ParseError{Gemini, fmt.Errorf("no hook_event_name")}
	}
	ev := &Event{Agent: Gemini, Name: c.HookEventName, SessionID: c.SessionID, Cwd: c.Cwd,
		Transcript: c.TranscriptPath, StopHookActive: c.StopHookActive}
	switch c.HookEventName {
	case "SessionStart":
		ev.Kind, ev.Detail = KindSessionStart, c.Source
	case "BeforeAgent":
		ev.Kind, ev.Prompt = KindPrompt, c.Prompt
	case "AfterAgent":
		ev.Kind, ev.Prompt, ev.Assistant = KindStop, c.Prompt, c.PromptResponse
	case "SessionEnd":
		ev.Kind, ev.Detail = KindSessionEnd, c.Reason
	case "PreCompress":
		ev.Kind, ev.Detail = KindCompact, c.Trigger
	case "BeforeTool":
		editEvent(ev, &c)
	default:
		ev.Kind = KindIgnore
	}
	return ev, nil
}

// codexNotification is what Codex passes its legacy notify program (the
// last argument): kebab-case keys, one type so far.
type codexNotification struct {
	Type                 string   `json:"type"`
	ThreadID             string   `json:"thread-id"`
	TurnID               string   `json:"turn-id"`
	Cwd                  string   `json:"cwd"`
	Client               string   `json:"client"`
	InputMessages        []string `json:"input-messages"`
	LastAssistantMessage *string  `json:"last-assistant-message"`
}

// codexHook is what Codex (0.169 and later) writes on a native hook's
// stdin: Claude Code's common fields, turn_id on turn-scoped events.
type codexHook struct {
	common
	TurnID string `json:"turn_id"`
}

// parseCodex reads either of Codex's payloads, told apart by content: a
// native hook's JSON (hook_event_name) or the legacy notify program's
// notification (type).
func parseCodex(payload []byte) (*Event, error) {
	var h codexHook
	if err := decodeObject(Codex, payload, &h); err != nil {
		return nil, err
	}
	if h.HookEventName != "" {
		return codexHookEvent(&h), nil
	}
	var n codexNotification
	if err := json.Unmarshal(payload, &n); err != nil {
		return nil, &ParseError{Codex, err}
	}
	if n.Type == "" {
		return nil, &ParseError{Codex, fmt.Errorf("neither hook_event_name (a hook) nor type (a notification)")}
	}
	ev := &Event{Agent: Codex, Name: n.Type, SessionID: n.ThreadID, Cwd: n.Cwd, Detail: n.TurnID}
	switch n.Type {
	case "agent-turn-complete":
		ev.Kind = KindTurnComplete
		// input-messages holds every user message of the thread so far,
		// not only this turn's: the last one is this turn's prompt.
		if k := len(n.InputMessages); k > 0 {
			ev.Prompt = n.InputMessages[k-1]
		}
		if n.LastAssistantMessage != nil {
			ev.Assistant = *n.LastAssistantMessage
		}
	default:
		ev.Kind = KindIgnore
	}
	return ev, nil
}

// codexHookEvent maps a native hook's payload: SessionStart (source),
// UserPromptSubmit (prompt: exactly this turn's), Stop
// (last_assistant_message) and SessionEnd (reason); turn_id is the
// Detail of the turn's events.
func codexHookEvent(h *codexHook) *Event {
	ev := &Event{Agent: Codex, Name: h.HookEventName, SessionID: h.SessionID, Cwd: h.Cwd,
		Transcript: h.TranscriptPath, StopHookActive: h.StopHookActive}
	switch h.HookEventName {
	case "SessionStart":
		ev.Kind, ev.Detail = KindSessionStart, h.Source
	case "UserPromptSubmit":
		ev.Kind, ev.Prompt, ev.Detail = KindPrompt, h.Prompt, h.TurnID
	case "Stop":
		ev.Kind, ev.Assistant, ev.Detail = KindStop, h.LastAssistantMessage, h.TurnID
	case "SessionEnd":
		ev.Kind, ev.Detail = KindSessionEnd, h.Reason
	case "PreToolUse":
		editEvent(ev, &h.common)
	default:
		ev.Kind = KindIgnore
	}
	return ev
}

// clip shortens s to at most max bytes (on a rune boundary), marking the cut.
func clip(s string, max int) string {
	if len(s) <= max {
		return s
	}
	cut := max - 3
	for cut > 0 && !isRuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "..."
}

func isRuneStart(b byte) bool { return b&0xC0 != 0x80 }
