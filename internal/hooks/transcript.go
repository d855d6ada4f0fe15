package hooks

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/seed1cedbf7c/ckpt"
)

// Limits on what a turn records from a transcript: the messages are a
// record for the user, not a copy of the agent's log.
const (
	maxMessages      = 200      // per turn; the rest are counted in a note
	maxAssistantText = 64 << 10 // bytes of one assistant message
	maxToolText      = 2 << 10  // bytes of one tool call's description
	maxTail          = 64 << 20 // bytes of a transcript read back from its end
)

// turnMessages returns the messages of the turn whose prompt is prompt,
// read from the agent's transcript (best effort: formats change, and a
// transcript may lag behind the agent), with the payload's last assistant
// message added when the transcript does not have it yet. The error, if
// any, is about the transcript; the messages are still usable.
func turnMessages(ev *Event, prompt string) ([]ckpt.Message, error) {
	var msgs []ckpt.Message
	var err error
	if ev.Transcript != "" {
		switch ev.Agent {
		case ClaudeCode:
			msgs, err = claudeTurn(ev.Transcript, prompt)
		case Gemini:
			msgs, err = geminiTurn(ev.Transcript, prompt)
		}
	}
	if a := strings.TrimSpace(ev.Assistant); a != "" {
		last := ""
		for i := len(msgs) - 1; i >= 0; i-- {
			if msgs[i].Role == "assistant" {
				last = strings.TrimSpace(msgs[i].Content)
				break
			}
		}
		if last != clip(a, maxAssistantText) {
			msgs = append(msgs, ckpt.Message{Role: "assistant", Content: clip(a, maxAssistantText)})
		}
	}
	if len(msgs) > maxMessages {
		n := len(msgs) - maxMessages + 1
		msgs = append(msgs[:maxMessages-1], ckpt.Message{Role: "system", Content: fmt.Sprintf("ckpt: %d more messages of this turn are in the agent's transcript", n)})
	}
	return msgs, err
}

// readTail reads the end of a file: whole lines, at least want bytes back
// from the end (or the whole file), and whether it reached the start.
func readTail(path string, want int64) ([]byte, bool, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, false, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, false, err
	}
	size := fi.Size()
	off := size - want
	if off <= 0 {
		data, err := io.ReadAll(f)
		return data, true, err
	}
	data := make([]byte, size-off)
	if _, err := f.ReadAt(data, off); err != nil && !errors.Is(err, io.EOF) {
		return nil, false, err
	}
	if i := bytes.IndexByte(data, '\n'); i >= 0 {
		data = data[i+1:] // drop the partial first line
	}
	return data, false, nil
}

// jsonLines splits data into non-empty lines.
func jsonLines(data []byte) [][]byte {
	var out [][]byte
	for _, l := range bytes.Split(data, []byte{'\n'}) {
		if l = bytes.TrimSpace(l); len(l) > 0 {
			out = append(out, l)
		}
	}
	return out
}

// findTurn reads a transcript's end, growing the window until start finds
// the turn's first line (or the whole file has been read).
func findTurn[T any](path string, parse func([][]byte) []T, start func([]T) int) ([]T, int, error) {
	for want := int64(1 << 20); ; want *= 4 {
		data, whole, err := readTail(path, want)
		if err != nil {
			return nil, -1, err
		}
		recs := parse(jsonLines(data))
		if i := start(recs); i >= 0 {
			return recs, i, nil
		}
		if whole || want >= maxTail {
			return recs, -1, nil
		}
	}
}

// # Claude Code
//
// The transcript is JSON lines; conversation lines carry "type" ("user",
// "assistant", ...), "isSidechain" (subagents), "isMeta" and a "message"
// in the Messages API's shape: a role and content that is a string or a
// list of blocks ("text", "tool_use" with name and input, "tool_result",
// "thinking"). An assistant reply is written one content block per line.

type claudeLine struct {
	Type        string          `json:"type"`
	IsSidechain bool            `json:"isSidechain"`
	IsMeta      bool            `json:"isMeta"`
	Message     json.RawMessage `json:"message"`
	// Parsed from Message.
	role    string
	id      string
	text    string // the text of a string content or of its text blocks
	results bool   // has tool_result blocks
	blocks  []claudeBlock
}

type claudeBlock struct {
	Type  string          `json:"type"`
	Text  string          `json:"text"`
	ID    string          `json:"id"`
	Name  string          `json:"name"`
	Input json.RawMessage `json:"input"`
}

func parseClaudeLines(lines [][]byte) []claudeLine {
	var out []claudeLine
	for _, l := range lines {
		var cl claudeLine
		if json.Unmarshal(l, &cl) != nil || len(cl.Message) == 0 || cl.IsSidechain {
			continue
		}
		var m struct {
			Role    string          `json:"role"`
			ID      string          `json:"id"`
			Content json.RawMessage `json:"content"`
		}
		if json.Unmarshal(cl.Message, &m) != nil {
			continue
		}
		cl.role, cl.id = m.Role, m.ID
		var s string
		if json.Unmarshal(m.Content, &s) == nil {
			cl.text = s
		} else if json.Unmarshal(m.Content, &cl.blocks) == nil {
			var texts []string
			for _, b := range cl.blocks {
				switch b.Type {
				case "text":
					texts = append(texts, b.Text)
				case "tool_result":
					cl.results = true
				}
			}
			cl.text = strings.Join(texts, "\n")
		}
		out = append(out, cl)
	}
	return out
}

// isPrompt reports whether a line is a prompt the user typed (not a tool
// result, nor a meta line the agent adds).
func (cl *claudeLine) isPrompt() bool {
	return cl.Type == "user" && cl.role == "user" && !cl.IsMeta && !cl.results && strings.TrimSpace(cl.text) != ""
}

func claudeTurn(path, prompt string) ([]ckpt.Message, error) {
	want := strings.TrimSpace(prompt)
	start := func(ls []claudeLine) int {
		for i := len(ls) - 1; i >= 0; i-- {
			if ls[i].isPrompt() && strings.TrimSpace(ls[i].text) == want {
				return i
			}
		}
		return -1
	}
	lines, i, err := findTurn(path, parseClaudeLines, start)
	if err != nil {
		return nil, fmt.Errorf("transcript: %w", err)
	}
	if i < 0 {
		// Not found (the prompt was expanded, or the transcript lags):
		// take what follows the last prompt, if any.
		for j := len(lines) - 1; j >= 0; j-- {
			if lines[j].isPrompt() {
				i = j
				break
			}
		}
		if i < 0 {
			return nil, fmt.Errorf("transcript %s: the turn's prompt is not in it", path)
		}
	}
	var msgs []ckpt.Message
	seenTool, seenText := map[string]bool{}, map[string]bool{}
	for _, cl := range lines[i+1:] {
		if cl.Type != "assistant" || cl.role != "assistant" {
			continue
		}
		for _, b := range cl.blocks {
			switch b.Type {
			case "text":
				key := cl.id + "\x00" + b.Text
				if strings.TrimSpace(b.Text) == "" || seenText[key] {
					continue
				}
				seenText[key] = true
				msgs = append(msgs, ckpt.Message{Role: "assistant", Content: clip(strings.TrimSpace(b.Text), maxAssistantText)})
			case "tool_use":
				if b.ID != "" && seenTool[b.ID] {
					continue
				}
				seenTool[b.ID] = true
				msgs = append(msgs, ckpt.Message{Role: "tool", Tool: b.Name, Content: describeToolInput(b.Input)})
			}
		}
	}
	return msgs, nil
}

// describeToolInput renders a tool call's input for the conversation: the
// command, path, pattern or URL it names, else its JSON.
func describeToolInput(input json.RawMessage) string {
	var m map[string]any
	if json.Unmarshal(input, &m) == nil {
		for _, k := range []string{"command", "file_path", "notebook_path", "absolute_path", "path", "dir_path", "pattern", "url", "query", "description", "prompt"} {
			if s, ok := m[k].(string); ok && s != "" {
				return clip(s, maxToolText)
			}
		}
	}
	var b bytes.Buffer
	if json.Compact(&b, input) != nil || b.Len() == 0 || b.String() == "null" {
		return ""
	}
	return clip(b.String(), maxToolText)
}

// # Gemini CLI
//
// The transcript is JSON lines (since 2026; before that one JSON object
// with a "messages" list): a metadata line, then message records with an
// "id" and a "type" ("user", "gemini", "info", ...), "content" as a
// string or a list of parts with "text", and, on gemini messages,
// "toolCalls" with "name" and "args". A message is appended again, whole,
// when it changes; {"$rewindTo": id} drops the messages from id on.

type geminiMessage struct {
	ID        string          `json:"id"`
	Type      string          `json:"type"`
	Content   json.RawMessage `json:"content"`
	ToolCalls []struct {
		ID   string          `json:"id"`
		Name string          `json:"name"`
		Args json.RawMessage `json:"args"`
	} `json:"toolCalls"`
	RewindTo string `json:"$rewindTo"`
}

func (m *geminiMessage) text() string {
	var s string
	if json.Unmarshal(m.Content, &s) == nil {
		return s
	}
	var parts []struct {
		Text string `json:"text"`
	}
	if json.Unmarshal(m.Content, &parts) == nil {
		var texts []string
		for _, p := range parts {
			if p.Text != "" {
				texts = append(texts, p.Text)
			}
		}
		return strings.Join(texts, "")
	}
	return ""
}

func parseGeminiLines(lines [][]byte) []geminiMessage {
	// The whole file as one legacy JSON object.
	if len(lines) > 0 && bytes.HasPrefix(lines[0], []byte("{")) {
		var legacy struct {
			Messages []geminiMessage `json:"messages"`
		}
		if json.Unmarshal(bytes.Join(lines, []byte("\n")), &legacy) == nil && legacy.Messages != nil {
			return legacy.Messages
		}
	}
	var order []string
	byID := map[string]geminiMessage{}
	for _, l := range lines {
		var m geminiMessage
		if json.Unmarshal(l, &m) != nil {
			continue
		}
		switch {
		case m.RewindTo != "":
			for k, id := range order {
				if id == m.RewindTo {
					for _, gone := range order[k:] {
						delete(byID, gone)
					}
					order = order[:k]
					break
				}
			}
		case m.ID != "" && m.Type != "":
			if _, ok := byID[m.ID]; !ok {
				order = append(order, m.ID)
			}
			byID[m.ID] = m
		}
	}
	out := make([]geminiMessage, 0, len(order))
	for _, id := range order {
		out = append(out, byID[id])
	}
	return out
}

func geminiTurn(path, prompt string) ([]ckpt.Message, error) {
	want := strings.TrimSpace(prompt)
	start := func(ms []geminiMessage) int {
		for i := len(ms) - 1; i >= 0; i-- {
			if ms[i].Type == "user" && strings.TrimSpace(ms[i].text()) == want {
				return i
			}
		}
		return -1
	}
	ms, i, err := findTurn(path, parseGeminiLines, start)
	if err != nil {
		return nil, fmt.Errorf("transcript: %w", err)
	}
	if i < 0 {
		return nil, fmt.Errorf("transcript %s: the turn's prompt is not in it", path)
	}
	var msgs []ckpt.Message
	for _, m := range ms[i+1:] {
		if m.Type != "gemini" {
			continue
		}
		if t := strings.TrimSpace(m.text()); t != "" {
			msgs = append(msgs, ckpt.Message{Role: "assistant", Content: clip(t, maxAssistantText)})
		}
		for _, tc := range m.ToolCalls {
			msgs = append(msgs, ckpt.Message{Role: "tool", Tool: tc.Name, Content: describeToolInput(tc.Args)})
		}
	}
	return msgs, nil
}
