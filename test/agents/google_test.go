package agents

import (
	"encoding/json"
	"net/http"
	"os"
	"strings"
	"sync"
	"testing"
)

// geminiModel serves the Gemini API (generativelanguage v1beta) from a
// script, for Gemini CLI: POST /v1beta/models/MODEL:streamGenerateContent
// (server-sent events, ?alt=sse), :generateContent and :countTokens.
//
// Besides the conversation, Gemini CLI asks the model things on the side,
// each without tools: which model to route a prompt to, whether the model
// or the user speaks next, whether the session loops. A request that
// wants JSON (generationConfig.responseMimeType application/json, or a
// responseJsonSchema/responseSchema) gets a JSON answer that makes the
// CLI carry on: see sideJSON.
func geminiModel(t *testing.T, turns map[string][]step) *model {
	var logMu sync.Mutex
	logPath := os.Getenv("CKPT_GEMINI_REQUEST_LOG") // for finding out what the CLI sends
	return newModel(t, turns, func(m *model, w http.ResponseWriter, r *http.Request, body []byte) {
		if logPath != "" {
			logMu.Lock()
			if f, err := os.OpenFile(logPath, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644); err == nil {
				f.Write([]byte(r.Method + " " + r.URL.String() + "\n" + string(body) + "\n\n"))
				f.Close()
			}
			logMu.Unlock()
		}
		path := r.URL.Path
		i := strings.LastIndex(path, ":")
		if r.Method != http.MethodPost || !strings.HasPrefix(path, "/v1beta/models/") || i < 0 {
			http.NotFound(w, r)
			return
		}
		method := path[i+1:]
		var req struct {
			Contents []struct {
				Role  string `json:"role"`
				Parts []struct {
					Text             string          `json:"text"`
					FunctionResponse json.RawMessage `json:"functionResponse"`
				} `json:"parts"`
			} `json:"contents"`
			Tools []struct {
				FunctionDeclarations []json.RawMessage `json:"functionDeclarations"`
			} `json:"tools"`
			GenerationConfig struct {
				ResponseMimeType   string          `json:"responseMimeType"`
				ResponseSchema     json.RawMessage `json:"responseSchema"`
				ResponseJSONSchema json.RawMessage `json:"responseJsonSchema"`
			} `json:"generationConfig"`
		}
		if err := json.Unmarshal(body, &req); err != nil {
			http.Error(w, err.Error(), 400)
			return
		}
		if method == "countTokens" {
			writeJSON(w, map[string]any{"totalTokens": 10})
			return
		}
		if method != "generateContent" && method != "streamGenerateContent" {
			http.NotFound(w, r)
			return
		}
		var items []item
		for _, c := range req.Contents {
			if c.Role == "model" {
				items = append(items, item{turn: true})
				continue
			}
			var text string
			tool := false
			for _, p := range c.Parts {
				if len(p.FunctionResponse) > 0 {
					tool = true
				}
				text += p.Text
			}
			if !tool {
				items = append(items, item{user: true, text: text})
			}
		}
		tools := false
		for _, tl := range req.Tools {
			if len(tl.FunctionDeclarations) > 0 {
				tools = true
			}
		}
		// A side request that wants JSON is logged as the path with the
		// schema's required properties ("...:generateContent json:a,b"),
		// so a test can tell the router's, the next-speaker check's and
		// the loop check's apart.
		gc := req.GenerationConfig
		side := !tools && wantsJSON(gc.ResponseMimeType, gc.ResponseSchema, gc.ResponseJSONSchema)
		seenPath := path
		if side {
			seenPath += " json:" + strings.Join(required(gc.ResponseSchema, gc.ResponseJSONSchema), ",")
		}
		st, _ := m.next(seenPath, items, tools)
		var part map[string]any
		switch {
		case st.tool != "":
			part = map[string]any{"functionCall": map[string]any{"name": st.tool, "args": st.input}}
		case side:
			part = map[string]any{"text": sideJSON(gc.ResponseSchema, gc.ResponseJSONSchema)}
		default:
			part = map[string]any{"text": st.text}
		}
		resp := map[string]any{
			"candidates": []any{map[string]any{
				"content":      map[string]any{"role": "model", "parts": []any{part}},
				"finishReason": "STOP",
				"index":        0,
			}},
			"usageMetadata": map[string]any{"promptTokenCount": 10, "candidatesTokenCount": 5, "totalTokenCount": 15},
			"modelVersion":  strings.TrimPrefix(path[:i], "/v1beta/models/"),
		}
		if method == "generateContent" {
			writeJSON(w, resp)
			return
		}
		sse(w, "", resp)
	})
}

func wantsJSON(mime string, schemas ...json.RawMessage) bool {
	if mime == "application/json" {
		return true
	}
	for _, s := range schemas {
		if len(s) > 0 && string(s) != "null" {
			return true
		}
	}
	return false
}

// required is the required properties of the first schema that has any.
func required(schemas ...json.RawMessage) []string {
	for _, s := range schemas {
		var sc struct {
			Required []string `json:"required"`
		}
		if json.Unmarshal(s, &sc) == nil && len(sc.Required) > 0 {
			return sc.Required
		}
	}
	return nil
}

// sideJSON answers a side request that wants JSON with an object that
// has the schema's required properties, each an empty value of its type,
// and these answers: the prompt's complexity for the model router
// ("complexity_score": low, so it routes to the flash model), who speaks
// next ("next_speaker": the user, so the turn ends when the model has
// said it is done), loop detection (after 30 model calls in a turn:
// "unproductive_state_confidence" 0, no loop).
func sideJSON(schemas ...json.RawMessage) string {
	type schema struct {
		Type       string             `json:"type"`
		Properties map[string]*schema `json:"properties"`
		Required   []string           `json:"required"`
	}
	var sc schema
	for _, s := range schemas {
		var x schema
		if json.Unmarshal(s, &x) == nil && x.Properties != nil {
			sc = x
		}
	}
	zero := func(s *schema) any {
		if s == nil {
			return ""
		}
		switch strings.ToLower(s.Type) {
		case "integer", "number":
			return 0
		case "boolean":
			return false
		case "array":
			return []any{}
		case "object":
			return map[string]any{}
		}
		return ""
	}
	out := map[string]any{}
	for _, k := range sc.Required {
		out[k] = zero(sc.Properties[k])
	}
	answers := map[string]any{
		"complexity_score":              10,
		"complexity_reasoning":          "A simple task.",
		"next_speaker":                  "user",
		"reasoning":                     "The model has finished.",
		"unproductive_state_confidence": 0,
		"unproductive_state_analysis":   "Progress is being made.",
	}
	for k := range sc.Properties {
		if v, ok := answers[k]; ok {
			out[k] = v
		}
	}
	return mustJSON(out)
}
