package agents

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// openAIChatModel serves OpenAI's Chat Completions API (POST
// .../chat/completions, streamed as server-sent events or not) from a
// script, for the agents that talk to any OpenAI-compatible endpoint
// (Qwen Code, OpenCode). GET .../models lists one model.
func openAIChatModel(t testing.TB, turns map[string][]step) *model {
	var ids atomic.Int64
	return newModel(t, turns, func(m *model, w http.ResponseWriter, r *http.Request, body []byte) {
		if r.Method == http.MethodGet && strings.HasSuffix(r.URL.Path, "/models") {
			writeJSON(w, map[string]any{"object": "list", "data": []any{
				map[string]any{"id": "scripted-model", "object": "model", "created": 0, "owned_by": "test"}}})
			return
		}
		if !strings.HasSuffix(r.URL.Path, "/chat/completions") {
			http.NotFound(w, r)
			return
		}
		var req struct {
			Model    string `json:"model"`
			Stream   bool   `json:"stream"`
			Tools    []any  `json:"tools"`
			Messages []struct {
				Role      string          `json:"role"`
				Content   json.RawMessage `json:"content"`
				ToolCalls []any           `json:"tool_calls"`
			} `json:"messages"`
		}
		if err := json.Unmarshal(body, &req); err != nil {
			http.Error(w, err.Error(), 400)
			return
		}
		var items []item
		for _, msg := range req.Messages {
			switch msg.Role {
			case "assistant":
				items = append(items, item{turn: true})
			case "user":
				items = append(items, item{user: true, text: chatText(msg.Content)})
			}
		}
		st, _ := m.next(r.URL.Path, items, len(req.Tools) > 0)
		id := fmt.Sprintf("chatcmpl-%d", ids.Add(1))
		created := time.Now().Unix()
		usage := map[string]any{"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15}
		finish := "stop"
		var call map[string]any
		if st.tool != "" {
			finish = "tool_calls"
			call = map[string]any{"id": fmt.Sprintf("call_%d", ids.Add(1)), "type": "function",
				"function": map[string]any{"name": st.tool, "arguments": mustJSON(st.input)}}
		}
		if !req.Stream {
			msg := map[string]any{"role": "assistant", "content": st.text}
			if call != nil {
				msg = map[string]any{"role": "assistant", "content": nil, "tool_calls": []any{call}}
			}
			writeJSON(w, map[string]any{"id": id, "object": "chat.completion", "created": created, "model": req.Model,
				"choices": []any{map[string]any{"index": 0, "message": msg, "finish_reason": finish}}, "usage": usage})
			return
		}
		chunk := func(delta map[string]any, finish any) map[string]any {
			return map[string]any{"id": id, "object": "chat.completion.chunk", "created": created, "model": req.Model,
				"choices": []any{map[string]any{"index": 0, "delta": delta, "finish_reason": finish}}}
		}
		var events []any
		if call != nil {
			call["index"] = 0
			events = append(events, "", chunk(map[string]any{"role": "assistant", "tool_calls": []any{call}}, nil))
		} else {
			events = append(events, "", chunk(map[string]any{"role": "assistant", "content": st.text}, nil))
		}
		last := chunk(map[string]any{}, finish)
		last["usage"] = usage
		events = append(events, "", last)
		sse(w, events...)
		fmt.Fprint(w, "data: [DONE]\n\n")
		if f, ok := w.(http.Flusher); ok {
			f.Flush()
		}
	})
}

// chatText is a Chat Completions message's text: a string, or the text
// parts of a list.
func chatText(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var parts []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	}
	json.Unmarshal(raw, &parts)
	var b strings.Builder
	for _, p := range parts {
		if p.Type == "text" {
			b.WriteString(p.Text + "\n")
		}
	}
	return b.String()
}
