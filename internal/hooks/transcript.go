package hooks

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"github.com/seed1cedbf7c/ckpt"
)

// Limits on what a turn records from a transcript: the messages are a
// record for the user, not a copy of the agent's log. maxTail also bounds
// what a hook reads of a transcript at all — JSON lines back from its end,
// a legacy Gemini transcript from its start — and it reads only a regular
// file (a transcript_path naming /dev/zero, a FIFO or a symlink to one is
// a note), so a hook's memory does not depend on what the payload names.
const (
	maxMessages      = 200      // per turn; the rest are counted in a note
	maxAssistantText = 64 << 10 // bytes of one assistant message
	maxToolText      = 2 << 10  // bytes of one tool call's description
	maxTail          = 16 << 20 // bytes of a transcript read, at most
)

// turnMessages returns the messages of the turn whose prompt is prompt,
// read from the agent's transcript (best effort: formats change, and a
// transcript may lag behind the agent), with the payload's last assistant
// message added when the transcript does not have it yet. The error, if
// any, is about the transcript; the messages are still usable.
func turnMessages(ev *Event, prompt string) ([]ckpt.Message, error) {
	var msgs []ckpt.Message
	var err error
	if ev.Agent == Generic || ev.Agent == OpenCode {
		// The turn's own messages, as the caller sent them.
		msgs = append(msgs, ev.Messages...)
	}
	if ev.Transcript != "" {
		switch ev.Agent {
		case ClaudeCode:
			msgs, err = claudeTurn(ev.Transcript, prompt)
			// Claude Code writes its transcript in the background: at
			// Stop the turn's last lines (the reply the payload carries,
			// and the tool calls before it) may not be in the file yet.
			if a := strings.TrimSpace(ev.Assistant); a != "" && ev.Kind == KindStop {
				for deadline := time.Now().Add(transcriptWait); !caughtUp(msgs, a) && time.Now().Before(deadline); {
					time.Sleep(transcriptPoll)
					msgs, err = claudeTurn(ev.Transcript, prompt)
				}
			}
		case Gemini:
			msgs, err = geminiTurn(ev.Transcript, prompt)
		case QwenCode:
			msgs, err = qwenTurn(ev.Transcript, prompt)
		case Droid:
			msgs, err = droidTurn(ev.Transcript, prompt)
		case Cursor:
			msgs, err = cursorTurn(ev.Transcript, prompt)
		case Copilot:
			// Copilot too appends to its transcript in the background.
			wait := time.Duration(0)
			if ev.Kind == KindStop {
				wait = transcriptWait
			}
			msgs, err = copilotTurn(ev.Transcript, prompt, wait)
		}
	}
	// A record without some of the turn's tool calls says so (a rewind
	// of another session takes a turn without tool calls for one that
	// wrote nothing, and one with a note for one that may have written
	// anything).
	var behind string
	switch a := strings.TrimSpace(ev.Assistant); {
	case err != nil:
		behind = "ckpt: this turn's tool calls could not be read from the agent's transcript"
	case ev.Agent == ClaudeCode && ev.Transcript != "" && ev.Kind == KindStop && a != "" && !caughtUp(msgs, a):
		behind = "ckpt: the agent's transcript had not caught up with the turn's end; some tool calls may be missing"
	}
	if a := strings.TrimSpace(ev.Assistant); a != "" {
		if lastAssistant(msgs) != clip(a, maxAssistantText) {
			msgs = append(msgs, ckpt.Message{Role: "assistant", Content: clip(a, maxAssistantText)})
		}
	}
	if behind != "" {
		msgs = append(msgs, ckpt.Message{Role: "system", Content: behind})
	}
	if len(msgs) > maxMessages {
		n := len(msgs) - maxMessages + 1
		msgs = append(msgs[:maxMessages-1], ckpt.Message{Role: "system", Content: fmt.Sprintf("ckpt: %d more messages of this turn are in the agent's transcript", n)})
	}
	return msgs, err
}

// How long Stop waits for Claude Code's transcript to catch up with the
// payload's last reply, and how often it looks.
const (
	transcriptWait = 2 * time.Second
	transcriptPoll = 20 * time.Millisecond
)

// transcriptReads counts transcript reads (for a test that appends to a
// transcript once it is being read).
var transcriptReads atomic.Int64

// caughtUp reports whether a transcript's turn ends with the reply a (the
// payload's, whole): its last assistant message is a, or the end of it (a
// reply of several text blocks is one message per block in the
// transcript, and all of them in the payload).
func caughtUp(msgs []ckpt.Message, a string) bool {
	// The turn ends with the reply: a tool call after the last text
	// means that text came earlier in the turn.
	if len(msgs) == 0 || msgs[len(msgs)-1].Role != "assistant" {
		return false
	}
	last := lastAssistant(msgs)
	if last == "" {
		return false
	}
	if strings.HasSuffix(a, last) {
		return true
	}
	// A block longer than a message keeps is clipped: what it kept is in
	// the reply.
	kept, clipped := strings.CutSuffix(last, "...")
	return clipped && len(last) > maxAssistantText-utf8.UTFMax-3 && strings.Contains(a, kept)
}

// lastAssistant is the last assistant message's text, trimmed.
func lastAssistant(msgs []ckpt.Message) string {
	for i := len(msgs) - 1; i >= 0; i-- {
		if msgs[i].Role == "assistant" {
			return strings.TrimSpace(msgs[i].Content)
		}
	}
	return ""
}

// readTail reads the end of a file: whole lines, at least want bytes back
// from the end (or the whole file), and whether it reached the start. It
// reads a regular file only (see [ckpt.OpenRegularFile]) and never more
// than want bytes, however the file grows meanwhile.
func readTail(path string, want int64) ([]byte, bool, error) {
	transcriptReads.Add(1)
	f, fi, err := ckpt.OpenRegularFile(path)
	if err != nil {
		return nil, false, err
	}
	defer f.Close()
	size := fi.Size()
	off := size - want
	if off <= 0 {
		data, err := io.ReadAll(io.LimitReader(f, size))
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

// Matches of a line against the turn's start.
const (
	noStart   = iota
	someStart // a prompt, not the turn's (used if the turn's is not found)
	turnStart // the turn's own prompt
)

// promptStart is the start function of findTurn for transcripts whose
// prompt records say whether they are the user's (isPrompt) and hold
// the prompt's words (text): the turn's own prompt is the one whose
// words are want's.
func promptStart[T any](want string, isPrompt func(*T) bool, text func(*T) string) func([]byte, *T) int {
	want = strings.TrimSpace(want)
	return func(_ []byte, r *T) int {
		switch {
		case !isPrompt(r):
			return noStart
		case strings.TrimSpace(text(r)) == want:
			return turnStart
		}
		return someStart
	}
}

// findTurn reads a transcript back from its end, one line at a time from
// the last, until start says a line is the turn's prompt; it returns the
// records from there on, oldest first, so a long transcript costs what
// its last turn costs. If the turn's prompt is not in the window read, the
// latest other prompt stands for it; if there is none, it reads more of
// the file (up to maxTail). found is false when no start was seen.
func findTurn[T any](path string, parse func([]byte) (T, bool), start func([]byte, *T) int) (recs []T, found bool, err error) {
	for want := int64(1 << 20); ; want *= 4 {
		data, whole, err := readTail(path, want)
		if err != nil {
			return nil, false, err
		}
		lines := jsonLines(data)
		var after []T // newest first
		fallback := -1
		for i := len(lines) - 1; i >= 0; i-- {
			r, ok := parse(lines[i])
			if !ok {
				continue
			}
			switch start(lines[i], &r) {
			case turnStart:
				after = append(after, r)
				slices.Reverse(after)
				return after, true, nil
			case someStart:
				if fallback < 0 {
					fallback = len(after)
				}
			}
			after = append(after, r)
		}
		if fallback >= 0 {
			after = after[:fallback+1]
			slices.Reverse(after)
			return after, true, nil
		}
		if whole || want >= maxTail {
			slices.Reverse(after)
			return after, false, nil
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
	UUID        string          `json:"uuid"`
	ParentUUID  string          `json:"parentUuid"`
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

func parseClaudeLine(l []byte) (claudeLine, bool) {
	var cl claudeLine
	if json.Unmarshal(l, &cl) != nil || len(cl.Message) == 0 || cl.IsSidechain {
		return cl, false
	}
	var m struct {
		Role    string          `json:"role"`
		ID      string          `json:"id"`
		Content json.RawMessage `json:"content"`
	}
	if json.Unmarshal(cl.Message, &m) != nil {
		return cl, false
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
	return cl, true
}

// isPrompt reports whether a line is a prompt the user typed (not a tool
// result, nor a meta line the agent adds).
func (cl *claudeLine) isPrompt() bool {
	return cl.Type == "user" && cl.role == "user" && !cl.IsMeta && !cl.results && strings.TrimSpace(cl.text) != ""
}

func claudeTurn(path, prompt string) ([]ckpt.Message, error) {
	want := strings.TrimSpace(prompt)
	start := func(_ []byte, cl *claudeLine) int {
		switch {
		case !cl.isPrompt():
			return noStart
		case strings.TrimSpace(cl.text) == want:
			return turnStart
		}
		return someStart
	}
	lines, found, err := findTurn(path, parseClaudeLine, start)
	if err != nil {
		return nil, fmt.Errorf("transcript: %w", err)
	}
	if !found {
		return nil, fmt.Errorf("transcript %s: the turn's prompt is not in it", path)
	}
	var msgs []ckpt.Message
	seenTool, seenText := map[string]bool{}, map[string]bool{}
	for _, cl := range lines[1:] {
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

func parseGeminiLine(l []byte) (geminiMessage, bool) {
	var m geminiMessage
	if json.Unmarshal(l, &m) != nil || (m.RewindTo == "" && (m.ID == "" || m.Type == "")) {
		return m, false
	}
	return m, true
}

// geminiMessages applies the records in order: a message appended again
// replaces the first (in its place), a rewind drops the messages from the
// one it names on. It is linear in the records (a transcript may hold
// thousands of rewinds): each message's place is in a map, and a rewind
// drops each message at most once.
func geminiMessages(recs []geminiMessage) []geminiMessage { return applyGemini(recs, nil) }

// applyGemini is geminiMessages counting in *steps, if not nil, the
// records and messages it touches (the test that keeps it linear).
func applyGemini(recs []geminiMessage, steps *int) []geminiMessage {
	step := func() {
		if steps != nil {
			*steps++
		}
	}
	var order []string     // message ids, in place order
	at := map[string]int{} // id -> its index in order
	byID := map[string]geminiMessage{}
	for _, m := range recs {
		step()
		if m.RewindTo != "" {
			if k, ok := at[m.RewindTo]; ok {
				for _, gone := range order[k:] {
					step()
					delete(byID, gone)
					delete(at, gone)
				}
				order = order[:k]
			}
			continue
		}
		if _, ok := at[m.ID]; !ok {
			at[m.ID] = len(order)
			order = append(order, m.ID)
		}
		byID[m.ID] = m
	}
	out := make([]geminiMessage, 0, len(order))
	for _, id := range order {
		step()
		out = append(out, byID[id])
	}
	return out
}

// geminiLegacy reads a transcript written as one JSON object (Gemini CLI
// before 2026), or reports that it is JSON lines.
func geminiLegacy(path string) ([]geminiMessage, bool, error) {
	f, _, err := ckpt.OpenRegularFile(path)
	if err != nil {
		return nil, false, err
	}
	defer f.Close()
	head := make([]byte, 64<<10)
	n, _ := io.ReadFull(f, head)
	head = head[:n]
	first := head
	if i := bytes.IndexByte(head, '\n'); i >= 0 {
		first = head[:i]
	}
	if json.Valid(first) && !bytes.Contains(first, []byte(`"messages"`)) {
		return nil, false, nil
	}
	data, err := io.ReadAll(io.LimitReader(io.MultiReader(bytes.NewReader(head), f), maxTail))
	if err != nil {
		return nil, true, err
	}
	var legacy struct {
		Messages []geminiMessage `json:"messages"`
	}
	if err := json.Unmarshal(data, &legacy); err != nil {
		return nil, true, err
	}
	return legacy.Messages, true, nil
}

func geminiTurn(path, prompt string) ([]ckpt.Message, error) {
	want := strings.TrimSpace(prompt)
	isTurn := func(m *geminiMessage) bool { return m.Type == "user" && strings.TrimSpace(m.text()) == want }
	ms, legacy, err := geminiLegacy(path)
	if err != nil {
		return nil, fmt.Errorf("transcript: %w", err)
	}
	if legacy {
		i := len(ms) - 1
		for i >= 0 && !isTurn(&ms[i]) {
			i--
		}
		if i < 0 {
			return nil, fmt.Errorf("transcript %s: the turn's prompt is not in it", path)
		}
		ms = ms[i:]
	} else {
		start := func(l []byte, m *geminiMessage) int {
			if bytes.Contains(l, []byte(`"user"`)) && isTurn(m) {
				return turnStart
			}
			return noStart
		}
		recs, found, err := findTurn(path, parseGeminiLine, start)
		if err != nil {
			return nil, fmt.Errorf("transcript: %w", err)
		}
		if !found {
			return nil, fmt.Errorf("transcript %s: the turn's prompt is not in it", path)
		}
		ms = geminiMessages(recs)
		if len(ms) == 0 || !isTurn(&ms[0]) {
			return nil, fmt.Errorf("transcript %s: the turn's prompt was rewound", path)
		}
	}
	var msgs []ckpt.Message
	for _, m := range ms[1:] {
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
