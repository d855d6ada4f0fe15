package agents

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"sync"
	"testing"
)

// A step is one model response: a call of one of the agent's tools, or
// (tool "") a text reply, which ends the turn.
type step struct {
	tool  string
	input map[string]any
	text  string
	// do, if set, runs when the step is chosen, before the response: a
	// change the "agent" makes to the workspace in the middle of a turn.
	do func()
}

func call(tool string, input map[string]any) step { return step{tool: tool, input: input} }
func say(text string) step                        { return step{text: text} }

// A model answers requests from a script: the turn is the last user
// message carrying a marker "[tN]", the step the number of model
// responses after it. A request without tools (an agent's side request:
// a title, a summary) gets a short text.
type model struct {
	t     testing.TB
	mu    sync.Mutex
	turns map[string][]step
	log   []seen
	srv   *httptest.Server
}

// seen is what the model saw in one request: the markers of the user
// messages in the conversation, in order.
type seen struct {
	Path    string
	Markers []string
	Tools   bool
}

var markerRE = regexp.MustCompile(`\[t[0-9]+\]`)

// item is one message of a conversation as a provider adapter reads it.
type item struct {
	user bool   // a user message with the user's own text (not a tool result)
	text string // its text
	turn bool   // a model response (text or tool call)
}

func newModel(t testing.TB, turns map[string][]step, handler func(m *model, w http.ResponseWriter, r *http.Request, body []byte)) *model {
	m := &model{t: t, turns: turns}
	m.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, err := io.ReadAll(r.Body)
		if err != nil {
			http.Error(w, err.Error(), 400)
			return
		}
		handler(m, w, r, body)
	}))
	t.Cleanup(m.srv.Close)
	return m
}

// next picks the step for a conversation and records the request.
func (m *model) next(path string, items []item, tools bool) (step, bool) {
	st, ok := m.pick(path, items, tools)
	if st.do != nil {
		st.do() // outside the lock: it may wait for another request
	}
	return st, ok
}

func (m *model) pick(path string, items []item, tools bool) (step, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	var markers []string
	last, after := "", 0
	for _, it := range items {
		if it.user {
			if mk := markerRE.FindString(it.text); mk != "" {
				markers = append(markers, mk)
				last, after = mk, 0
			}
			continue
		}
		if it.turn {
			after++
		}
	}
	m.log = append(m.log, seen{Path: path, Markers: markers, Tools: tools})
	if !tools || last == "" {
		return say("ok"), false
	}
	steps := m.turns[last]
	if after < len(steps) {
		return steps[after], true
	}
	return say("Done with " + last + "."), true
}

// requests returns what the model has seen so far (only requests that
// offered tools: the agent's main conversation).
func (m *model) requests() []seen {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []seen
	for _, s := range m.log {
		if s.Tools {
			out = append(out, s)
		}
	}
	return out
}

func (m *model) reset() {
	m.mu.Lock()
	m.log = nil
	m.mu.Unlock()
}

// sse writes server-sent events: each event a name (or "") and a JSON value.
func sse(w http.ResponseWriter, events ...any) {
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(200)
	for i := 0; i < len(events); i += 2 {
		name, _ := events[i].(string)
		data, err := json.Marshal(events[i+1])
		if err != nil {
			panic(err)
		}
		if name != "" {
			fmt.Fprintf(w, "event: %s\n", name)
		}
		fmt.Fprintf(w, "data: %s\n\n", data)
	}
	if f, ok := w.(http.Flusher); ok {
		f.Flush()
	}
}

func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(v)
}

func mustJSON(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return string(b)
}
