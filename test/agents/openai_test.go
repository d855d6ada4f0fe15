package agents

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/klauspost/compress/zstd"
)

// responsesModel serves OpenAI's Responses API (POST …/responses,
// streamed as server-sent events) from a script, for Codex. A step's tool
// is called as the request's tools declare it: a function tool
// (exec_command: input {"cmd": …}) as a function_call with the input as
// its JSON arguments, a custom (freeform) tool (apply_patch) as a
// custom_tool_call whose input is the step's input["input"], the raw text
// (for apply_patch, "*** Begin Patch … *** End Patch"). Each response is
// one output item, so the model responses after a prompt are the
// conversation's tool calls and assistant messages after it.
func responsesModel(t testing.TB, turns map[string][]step) *model {
	var ids atomic.Int64
	return newModel(t, turns, func(m *model, w http.ResponseWriter, r *http.Request, body []byte) {
		if r.Method == http.MethodGet && strings.HasSuffix(r.URL.Path, "/models") {
			writeJSON(w, map[string]any{"object": "list", "data": []any{}, "models": []any{}})
			return
		}
		if r.Method != http.MethodPost || !strings.HasSuffix(r.URL.Path, "/responses") {
			http.NotFound(w, r)
			return
		}
		body, err := decodeBody(r.Header.Get("Content-Encoding"), body)
		if err != nil {
			http.Error(w, err.Error(), 400)
			return
		}
		var req struct {
			Model string `json:"model"`
			Tools []struct {
				Type string `json:"type"`
				Name string `json:"name"`
			} `json:"tools"`
			Input []struct {
				Type    string          `json:"type"`
				Role    string          `json:"role"`
				Content json.RawMessage `json:"content"`
			} `json:"input"`
		}
		if err := json.Unmarshal(body, &req); err != nil {
			http.Error(w, err.Error(), 400)
			return
		}
		var items []item
		for _, in := range req.Input {
			switch {
			case in.Type == "message" && in.Role == "user":
				var parts []struct {
					Type string `json:"type"`
					Text string `json:"text"`
				}
				var s string
				text := ""
				if json.Unmarshal(in.Content, &s) == nil {
					text = s
				} else {
					json.Unmarshal(in.Content, &parts)
					for _, p := range parts {
						if p.Type == "input_text" {
							text += p.Text + "\n"
						}
					}
				}
				items = append(items, item{user: true, text: text})
				checkNoHookOutput(m.t, text)
			case in.Type == "message" && in.Role == "developer":
				checkNoHookOutput(m.t, string(in.Content))
			case in.Type == "message" && in.Role == "assistant", in.Type == "function_call", in.Type == "custom_tool_call":
				items = append(items, item{turn: true})
			}
		}
		custom := map[string]bool{}
		for _, tl := range req.Tools {
			if tl.Type == "custom" {
				custom[tl.Name] = true
			}
		}
		st, _ := m.next(r.URL.Path, items, len(req.Tools) > 0)
		n := ids.Add(1)
		rid := fmt.Sprintf("resp_%d", n)
		var out map[string]any
		switch {
		case st.tool == "":
			out = map[string]any{"type": "message", "id": fmt.Sprintf("msg_%d", n), "role": "assistant", "status": "completed",
				"content": []any{map[string]any{"type": "output_text", "text": st.text, "annotations": []any{}}}}
		case custom[st.tool]:
			in, _ := st.input["input"].(string)
			out = map[string]any{"type": "custom_tool_call", "id": fmt.Sprintf("ctc_%d", n), "status": "completed",
				"call_id": fmt.Sprintf("call_%d", n), "name": st.tool, "input": in}
		default:
			out = map[string]any{"type": "function_call", "id": fmt.Sprintf("fc_%d", n), "status": "completed",
				"call_id": fmt.Sprintf("call_%d", n), "name": st.tool, "arguments": mustJSON(st.input)}
		}
		usage := map[string]any{"input_tokens": 10, "input_tokens_details": map[string]any{"cached_tokens": 0},
			"output_tokens": 5, "output_tokens_details": map[string]any{"reasoning_tokens": 0}, "total_tokens": 15}
		sse(w,
			"response.created", map[string]any{"type": "response.created", "response": map[string]any{"id": rid, "model": req.Model, "status": "in_progress"}},
			"response.output_item.added", map[string]any{"type": "response.output_item.added", "output_index": 0, "item": out},
			"response.output_item.done", map[string]any{"type": "response.output_item.done", "output_index": 0, "item": out},
			"response.completed", map[string]any{"type": "response.completed", "response": map[string]any{"id": rid, "model": req.Model,
				"status": "completed", "output": []any{out}, "usage": usage}},
		)
	})
}

// decodeBody undoes a request body's Content-Encoding (Codex may
// compress its requests with zstd).
func decodeBody(enc string, body []byte) ([]byte, error) {
	switch strings.ToLower(strings.TrimSpace(enc)) {
	case "", "identity":
		return body, nil
	case "zstd":
		d, err := zstd.NewReader(nil)
		if err != nil {
			return nil, err
		}
		defer d.Close()
		return d.DecodeAll(body, nil)
	case "gzip":
		z, err := gzip.NewReader(bytes.NewReader(body))
		if err != nil {
			return nil, err
		}
		return io.ReadAll(z)
	}
	return nil, fmt.Errorf("content encoding %q", enc)
}

// checkNoHookOutput: ckpt's hooks print nothing Codex would add to the
// model's context (a hook's plain stdout on SessionStart or
// UserPromptSubmit becomes a message). The tests' prompts never name ckpt.
func checkNoHookOutput(t testing.TB, text string) {
	if strings.Contains(strings.ToLower(text), "ckpt") {
		t.Errorf("ckpt's hook output reached the model: %.300q", text)
	}
}

// patch is a step that calls Codex's apply_patch tool with the patch's
// lines.
func patch(lines ...string) step {
	return call("apply_patch", map[string]any{"input": "*** Begin Patch\n" + strings.Join(lines, "\n") + "\n*** End Patch\n"})
}

// shell is a step that runs a command with Codex's exec_command tool.
func shell(cmd string) step { return call("exec_command", map[string]any{"cmd": cmd}) }

// TestDecodeBody: the Responses adapter reads requests compressed as
// Codex may send them (Content-Encoding zstd or gzip), and plain ones.
func TestDecodeBody(t *testing.T) {
	const body = `{"model":"gpt-5.5","input":[]}`
	enc, err := zstd.NewWriter(nil)
	if err != nil {
		t.Fatal(err)
	}
	zs := enc.EncodeAll([]byte(body), nil)
	enc.Close()
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	zw.Write([]byte(body))
	zw.Close()
	for _, c := range []struct {
		enc  string
		data []byte
	}{{"", []byte(body)}, {"identity", []byte(body)}, {"zstd", zs}, {"gzip", gz.Bytes()}, {" ZSTD ", zs}} {
		got, err := decodeBody(c.enc, c.data)
		if err != nil || string(got) != body {
			t.Errorf("Content-Encoding %q: %q, %v", c.enc, got, err)
		}
	}
	if _, err := decodeBody("br", []byte(body)); err == nil {
		t.Error("Content-Encoding br: no error")
	}
}
