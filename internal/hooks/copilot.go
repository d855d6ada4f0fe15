package hooks

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/seed1cedbf7c/ckpt"
)

// Copilot is GitHub Copilot CLI (@github/copilot). It runs command hooks
// from every *.json file in the repository's .github/hooks/ (only once
// the user trusts the folder) and in the user's $COPILOT_HOME/hooks/
// (~/.copilot/hooks/), each {"version": 1, "hooks": {EVENT: [{"type":
// "command", "bash": ..., "timeoutSec": ...}]}}. It waits for each hook,
// one after another. ckpt's install writes a file of its own there,
// ckpt.json, with the events named in PascalCase: for those Copilot
// sends Claude Code's snake_case fields, hook_event_name included (for
// its camelCase names, sessionStart and the rest, the payload has no
// event name; see [parseCopilot]).
const Copilot = "copilot"

// copilotHook is what Copilot writes on a hook's stdin: for the
// PascalCase events, hook_event_name, session_id, timestamp (ISO 8601),
// cwd, and source and initial_prompt (SessionStart), prompt
// (UserPromptSubmit), transcript_path, stop_reason and stop_hook_active
// (Stop), reason (SessionEnd), trigger (PreCompact); for the camelCase
// events the same in camelCase (sessionId, transcriptPath, stopReason,
// toolName), a timestamp in milliseconds, and no event name.
type copilotHook struct {
	common
	CamelSessionID  *string         `json:"sessionId"`
	CamelTranscript string          `json:"transcriptPath"`
	StopReason      string          `json:"stopReason"`
	CamelToolName   string          `json:"toolName"`
	AgentName       string          `json:"agentName"`
	Error           json.RawMessage `json:"error"`
}

// parseCopilot reads Copilot's hook payload. With hook_event_name (the
// PascalCase events ckpt installs) it maps SessionStart (source),
// UserPromptSubmit (prompt), Stop (transcript_path), SessionEnd (reason)
// and PreCompact (trigger) as Claude Code's. Without it (a camelCase
// entry of the user's that runs ckpt's hook), the event is told from the
// fields Copilot sends with it: prompt (userPromptSubmitted),
// transcriptPath and stopReason (agentStop), reason (sessionEnd), source
// (sessionStart), trigger (preCompact); a tool's, a subagent's or an
// error's payload is ignored.
func parseCopilot(payload []byte) (*Event, error) {
	var h copilotHook
	if err := decodeObject(Copilot, payload, &h); err != nil {
		return nil, err
	}
	if h.HookEventName == "" {
		var p struct {
			Prompt *string `json:"prompt"`
		}
		json.Unmarshal(payload, &p) // decoded above
		return copilotCamel(&h, p.Prompt != nil)
	}
	ev := claudeEvent(Copilot, &h.common)
	if ev.SessionID == "" && h.CamelSessionID != nil { // Notification's fields are camelCase
		ev.SessionID = *h.CamelSessionID
	}
	return ev, nil
}

// copilotCamel maps a camelCase event's payload, told by its fields.
func copilotCamel(h *copilotHook, hasPrompt bool) (*Event, error) {
	if h.CamelSessionID == nil {
		return nil, &ParseError{Copilot, fmt.Errorf("neither hook_event_name nor sessionId")}
	}
	ev := &Event{Agent: Copilot, SessionID: *h.CamelSessionID, Cwd: h.Cwd, Transcript: h.CamelTranscript,
		StopHookActive: h.StopHookActive}
	switch {
	case h.CamelToolName != "" || h.AgentName != "" || len(h.Error) > 0:
		ev.Name, ev.Kind = "a tool's, subagent's or error's event", KindIgnore
	case hasPrompt:
		ev.Name, ev.Kind, ev.Prompt = "userPromptSubmitted", KindPrompt, h.Prompt
	case h.StopReason != "" || h.CamelTranscript != "" && h.Trigger == "":
		ev.Name, ev.Kind = "agentStop", KindStop
	case h.Reason != "":
		ev.Name, ev.Kind, ev.Detail = "sessionEnd", KindSessionEnd, h.Reason
	case h.Source != "":
		ev.Name, ev.Kind, ev.Detail = "sessionStart", KindSessionStart, h.Source
	case h.Trigger != "":
		ev.Name, ev.Kind, ev.Detail = "preCompact", KindCompact, h.Trigger
	default:
		ev.Name, ev.Kind = "an event without hook_event_name", KindIgnore
	}
	return ev, nil
}

// # Copilot's transcript
//
// The transcript (transcript_path, $COPILOT_HOME/session-state/<session
// id>/events.jsonl) is the session's event log, JSON lines: {"type",
// "data", "id", "timestamp", "parentId"}, and "agentId" on a subagent's
// events. "user.message" carries the prompt as the user typed it
// (data.content; data.source names messages the CLI injects);
// "assistant.message" a reply's text (data.content) and its tool calls
// (data.toolRequests: "name", "arguments"); data.parentToolCallId marks
// a subagent's. Hook runs, tool results, usage and the rest are events of
// other types.

type copilotRecord struct {
	Type    string `json:"type"`
	AgentID string `json:"agentId"`
	Data    struct {
		Content          string `json:"content"`
		Source           string `json:"source"`
		ParentToolCallID string `json:"parentToolCallId"`
		ToolRequests     []struct {
			ToolCallID string          `json:"toolCallId"`
			Name       string          `json:"name"`
			Arguments  json.RawMessage `json:"arguments"`
		} `json:"toolRequests"`
	} `json:"data"`
}

// isPrompt reports whether a record is a prompt of the user's (not a
// subagent's, nor a message the CLI injects).
func (r *copilotRecord) isPrompt() bool {
	return r.Type == "user.message" && (r.Data.Source == "" || r.Data.Source == "user") && strings.TrimSpace(r.Data.Content) != ""
}

func parseCopilotLine(l []byte) (copilotRecord, bool) {
	var r copilotRecord
	if json.Unmarshal(l, &r) != nil || r.AgentID != "" || r.Data.ParentToolCallID != "" ||
		(r.Type != "user.message" && r.Type != "assistant.message") {
		return r, false
	}
	return r, true
}

// copilotTurn reads the turn whose prompt is prompt from Copilot's
// transcript: its replies and tool calls. Copilot appends to the file in
// the background, and at Stop the turn's last events may not be in it
// yet: it reads again (for up to wait) until the turn is there and ends
// with a reply that calls no tool, and says so in a message if it never
// does.
func copilotTurn(path, prompt string, wait time.Duration) ([]ckpt.Message, error) {
	msgs, done, err := copilotTurnOnce(path, prompt)
	for deadline := time.Now().Add(wait); !done && time.Now().Before(deadline); {
		time.Sleep(transcriptPoll)
		msgs, done, err = copilotTurnOnce(path, prompt)
	}
	if err == nil && !done {
		msgs = append(msgs, ckpt.Message{Role: "system", Content: "ckpt: the agent's transcript had not caught up with the turn's end; some tool calls may be missing"})
	}
	return msgs, err
}

// copilotTurnOnce reads the turn once; done reports that the transcript
// holds the turn's own prompt and, after it, a reply without tool calls
// (the model's last word, which ends the turn).
func copilotTurnOnce(path, prompt string) (msgs []ckpt.Message, done bool, err error) {
	start := promptStart(prompt, (*copilotRecord).isPrompt, func(r *copilotRecord) string { return r.Data.Content })
	recs, found, err := findTurn(path, parseCopilotLine, start)
	if err != nil {
		return nil, false, fmt.Errorf("transcript: %w", err)
	}
	if !found {
		return nil, false, nil
	}
	seen := map[string]bool{}
	for _, r := range recs[1:] {
		if r.Type != "assistant.message" {
			continue
		}
		if t := strings.TrimSpace(r.Data.Content); t != "" {
			msgs = append(msgs, ckpt.Message{Role: "assistant", Content: clip(t, maxAssistantText)})
		}
		done = len(r.Data.ToolRequests) == 0
		for _, tr := range r.Data.ToolRequests {
			if tr.ToolCallID != "" && seen[tr.ToolCallID] {
				continue
			}
			seen[tr.ToolCallID] = true
			msgs = append(msgs, ckpt.Message{Role: "tool", Tool: tr.Name, Content: describeToolInput(tr.Arguments)})
		}
	}
	return msgs, done && strings.TrimSpace(recs[0].Data.Content) == strings.TrimSpace(prompt), nil
}

// # ckpt's hooks file
//
// Copilot reads every *.json file in its hooks directories, so ckpt's
// hooks go in a file of their own, ckpt.json. A file by that name is
// ckpt's when each of its hooks runs exactly the command install writes
// (see [isOursCommand]); install rewrites such a file, uninstall removes
// it, and both leave any other file alone.

// copilotHandler is one entry of ckpt's hooks file, keys in this order.
type copilotHandler struct {
	Type       string `json:"type"`
	Bash       string `json:"bash"`
	TimeoutSec int    `json:"timeoutSec"`
}

// copilotFile is ckpt's hooks file for command (the ckpt binary).
func copilotFile(command string) []byte {
	var b bytes.Buffer
	b.WriteString("{\n  \"version\": 1,\n  \"hooks\": {")
	for i, e := range Events[Copilot] {
		if i > 0 {
			b.WriteByte(',')
		}
		h, _ := json.MarshalIndent([]copilotHandler{{Type: "command", Bash: hookCommand(command, Copilot), TimeoutSec: hookTimeout}}, "    ", "  ")
		k, _ := json.Marshal(e)
		fmt.Fprintf(&b, "\n    %s: %s", k, h)
	}
	b.WriteString("\n  }\n}\n")
	return b.Bytes()
}

// copilotHooks reads a hooks file: the ckpt command of each event whose
// hooks all run ckpt's hook as install writes it, and whether the whole
// file is ckpt's (every hook in it is).
func copilotHooks(src []byte) (cmds map[string]string, ours bool) {
	var f struct {
		Version json.RawMessage              `json:"version"`
		Hooks   map[string][]json.RawMessage `json:"hooks"`
	}
	if json.Unmarshal(src, &f) != nil || string(f.Version) != "1" || len(f.Hooks) == 0 {
		return nil, false
	}
	cmds, ours = map[string]string{}, true
	for event, hs := range f.Hooks {
		if len(hs) != 1 {
			ours = false
			continue
		}
		var h struct {
			Type string `json:"type"`
			Bash string `json:"bash"`
		}
		if json.Unmarshal(hs[0], &h) != nil || h.Type != "command" || !isOursCommand(h.Bash, Copilot) {
			ours = false
			continue
		}
		cmds[event] = shellFields(h.Bash)[0]
	}
	return cmds, ours
}

// copilotInstall writes ckpt's hooks file, or rewrites one install wrote
// (another ckpt path, an event missing); a file by that name with any
// other hook in it is left alone.
func copilotInstall(file string, opts InstallOptions, ch *Change) error {
	ch.Command = hookCommand(opts.Command, Copilot)
	return editFile(file, opts, ch, func(src []byte) ([]byte, error) {
		want := copilotFile(opts.Command)
		if len(bytes.TrimSpace(src)) == 0 {
			ch.Added = append(ch.Added, Events[Copilot]...)
			return want, nil
		}
		cmds, ours := copilotHooks(src)
		if !ours {
			return nil, fmt.Errorf("%s is not ckpt's hooks file (it holds hooks that do not run 'ckpt hook copilot' as install writes it): ckpt leaves it alone; move it, or install in the other scope", file)
		}
		if bytes.Equal(src, want) {
			return src, nil
		}
		for _, e := range Events[Copilot] {
			switch c, ok := cmds[e]; {
			case !ok:
				ch.Added = append(ch.Added, e)
			case c != opts.Command:
				ch.Updated = append(ch.Updated, e)
			}
		}
		return want, nil
	})
}

// copilotUninstall removes ckpt's hooks file (kept in the backups first);
// a file by that name that is not ckpt's stays.
func copilotUninstall(file string, opts InstallOptions, ch *Change) error {
	return removeOwnFile(Copilot, file, opts, ch, func(src []byte) (bool, []string) {
		cmds, ours := copilotHooks(src)
		var events []string
		for _, e := range Events[Copilot] {
			if c, ok := cmds[e]; ok {
				if ours {
					events = append(events, e)
				} else {
					events = append(events, e+": "+hookCommand(c, Copilot))
				}
			}
		}
		return ours, events
	})
}

// copilotStatus fills in what ckpt's hooks file installs.
func copilotStatus(in *Installed) {
	src, _, err := readSettings(in.File)
	if err != nil {
		if !errors.Is(err, fs.ErrNotExist) {
			in.Error = err.Error()
		}
		in.Missing = append(in.Missing, Events[Copilot]...)
		return
	}
	in.Exists = true
	cmds, _ := copilotHooks(src)
	for _, e := range Events[Copilot] {
		c, ok := cmds[e]
		if !ok {
			in.Missing = append(in.Missing, e)
			continue
		}
		in.Events = append(in.Events, e)
		if hc := hookCommand(c, Copilot); !slices.Contains(in.Commands, hc) {
			in.Commands = append(in.Commands, hc)
		}
	}
}

// copilotHome is Copilot's user directory: $COPILOT_HOME, else ~/.copilot.
func copilotHome() (string, error) {
	if d := os.Getenv("COPILOT_HOME"); d != "" {
		return d, nil
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return "", err
	}
	return filepath.Join(home, ".copilot"), nil
}
