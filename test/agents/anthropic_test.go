package agents

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
)

// anthropicModel serves Anthropic's Messages API (POST /v1/messages,
// streamed as server-sent events or not) from a script, for Claude Code.
func anthropicModel(t testing.TB, turns map[string][]step) *model {
	var ids atomic.Int64
	return newModel(t, turns, func(m *model, w http.ResponseWriter, r *http.Request, body []byte) {
		if !strings.HasPrefix(r.URL.Path, "/v1/messages") {
			http.NotFound(w, r)
			return
		}
		var req struct {
			Model    string `json:"model"`
			Stream   bool   `json:"stream"`
			Tools    []any  `json:"tools"`
			Messages []struct {
				Role    string          `json:"role"`
				Content json.RawMessage `json:"content"`
			} `json:"messages"`
		}
		if err := json.Unmarshal(body, &req); err != nil {
			http.Error(w, err.Error(), 400)
			return
		}
		if strings.HasSuffix(r.URL.Path, "/count_tokens") {
			writeJSON(w, map[string]any{"input_tokens": 10})
			return
		}
		var items []item
		for _, msg := range req.Messages {
			if msg.Role == "assistant" {
				items = append(items, item{turn: true})
				continue
			}
			var text string
			var s string
			if json.Unmarshal(msg.Content, &s) == nil {
				text = s
			} else {
				var blocks []struct {
					Type string `json:"type"`
					Text string `json:"text"`
				}
				json.Unmarshal(msg.Content, &blocks)
				for _, b := range blocks {
					if b.Type == "text" {
						text += b.Text + "\n"
					}
				}
			}
			items = append(items, item{user: true, text: text})
		}
		st, _ := m.next(r.URL.Path, items, len(req.Tools) > 0)
		id := fmt.Sprintf("msg_%d", ids.Add(1))
		var block, delta map[string]any
		stop := "end_turn"
		if st.tool != "" {
			tid := fmt.Sprintf("toolu_%d", ids.Add(1))
			block = map[string]any{"type": "tool_use", "id": tid, "name": st.tool, "input": map[string]any{}}
			delta = map[string]any{"type": "input_json_delta", "partial_json": mustJSON(st.input)}
			stop = "tool_use"
		} else {
			block = map[string]any{"type": "text", "text": ""}
			delta = map[string]any{"type": "text_delta", "text": st.text}
		}
		usage := map[string]any{"input_tokens": 10, "output_tokens": 5, "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0}
		if !req.Stream {
			full := map[string]any{"type": "text", "text": st.text}
			if st.tool != "" {
				full = map[string]any{"type": "tool_use", "id": block["id"], "name": st.tool, "input": st.input}
			}
			writeJSON(w, map[string]any{"id": id, "type": "message", "role": "assistant", "model": req.Model,
				"content": []any{full}, "stop_reason": stop, "stop_sequence": nil, "usage": usage})
			return
		}
		sse(w,
			"message_start", map[string]any{"type": "message_start", "message": map[string]any{"id": id, "type": "message", "role": "assistant",
				"model": req.Model, "content": []any{}, "stop_reason": nil, "stop_sequence": nil, "usage": usage}},
			"content_block_start", map[string]any{"type": "content_block_start", "index": 0, "content_block": block},
			"content_block_delta", map[string]any{"type": "content_block_delta", "index": 0, "delta": delta},
			"content_block_stop", map[string]any{"type": "content_block_stop", "index": 0},
			"message_delta", map[string]any{"type": "message_delta", "delta": map[string]any{"stop_reason": stop, "stop_sequence": nil}, "usage": map[string]any{"output_tokens": 5}},
			"message_stop", map[string]any{"type": "message_stop"},
		)
	})
}
