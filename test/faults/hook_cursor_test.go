//go:build unix

package faults

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/seed1cedbf7c/ckpt"
)

// cursorPayload is a Cursor hook payload for this workspace.
func (e *env) cursorPayload(event string, extra map[string]any) string {
	e.T.Helper()
	m := map[string]any{"conversation_id": "c1", "generation_id": "g1", "hook_event_name": event,
		"workspace_roots": []string{e.WS}, "transcript_path": nil}
	for k, v := range extra {
		m[k] = v
	}
	b, err := json.Marshal(m)
	if err != nil {
		e.T.Fatal(err)
	}
	return string(b)
}

// checkCursorAnswer fails the test unless the hook call exited with code
// and printed on stdout exactly want: one JSON object, one line, nothing
// else — Cursor reads a hook's stdout as its answer.
func checkCursorAnswer(t *testing.T, what string, r hookResult, code int, want string) {
	t.Helper()
	if r.code != code || r.stdout != want+"\n" {
		t.Errorf("%s: exit %d, stdout %q; want %d and %q\nstderr: %.2000s", what, r.code, r.stdout, code, want+"\n", r.stderr)
		return
	}
	var v map[string]any
	if err := json.Unmarshal([]byte(r.stdout), &v); err != nil {
		t.Errorf("%s: stdout %q is not a JSON object: %v", what, r.stdout, err)
	}
}

// TestHookCursorAnswerWhateverHappens: `ckpt hook cursor` prints the
// answer that lets Cursor's agent go on — {"continue":true} for
// beforeSubmitPrompt, {} otherwise — and nothing else on stdout, whatever
// becomes of the event: the store locked, unreadable or a file, the
// handling process crashing or hanging, --strict (exit 1, the answer
// still printed).
func TestHookCursorAnswerWhateverHappens(t *testing.T) {
	const cont, empty = `{"continue":true}`, `{}`
	prompt := func(e *env) string { return e.cursorPayload("beforeSubmitPrompt", map[string]any{"prompt": "hi"}) }
	stop := func(e *env) string { return e.cursorPayload("stop", map[string]any{"status": "completed"}) }

	t.Run("ok", func(t *testing.T) {
		e := newEnv(t)
		e.Write(map[string]string{"a.txt": "a\n"})
		checkCursorAnswer(t, "prompt", e.hook("cursor", prompt(e)), 0, cont)
		checkCursorAnswer(t, "stop", e.hook("cursor", stop(e)), 0, empty)
		if !strings.Contains(e.hookLog(), "ended turn 1") {
			t.Errorf("log:\n%s", e.hookLog())
		}
	})
	t.Run("crash", func(t *testing.T) {
		e := newEnv(t)
		e.Extra = []string{"CKPT_TEST_HOOK_CHILD=crash"}
		checkCursorAnswer(t, "prompt", e.hook("cursor", prompt(e)), 0, cont)
		checkCursorAnswer(t, "stop", e.hook("cursor", stop(e)), 0, empty)
		checkCursorAnswer(t, "prompt --strict", e.hook("cursor", prompt(e), "--strict"), 1, cont)
	})
	t.Run("hang", func(t *testing.T) {
		e := newEnv(t)
		e.Extra = []string{"CKPT_TEST_HOOK_CHILD=hang"}
		r := e.hook("cursor", prompt(e), "--timeout", "300ms")
		checkCursorAnswer(t, "prompt", r, 0, cont)
		if !strings.Contains(r.stderr, "ran past --timeout") {
			t.Errorf("stderr %q, want the kill reported", r.stderr)
		}
	})
	t.Run("store_locked", func(t *testing.T) {
		e := newEnv(t)
		e.Write(map[string]string{"a.txt": "a\n"})
		e.Must("save", "-q")
		r := e.Open(ckpt.Options{})
		defer r.Close()
		held, release := make(chan struct{}), make(chan struct{})
		go r.HoldLock(context.Background(), func() { close(held); <-release })
		<-held
		defer close(release)
		res := e.hook("cursor", prompt(e), "--lock-timeout", "100ms")
		checkCursorAnswer(t, "prompt", res, 0, cont)
		if !strings.Contains(res.stderr, "locked") {
			t.Errorf("stderr %q, want the lock reported", res.stderr)
		}
		checkCursorAnswer(t, "prompt --strict", e.hook("cursor", prompt(e), "--lock-timeout", "100ms", "--strict"), 1, cont)
	})
	t.Run("store_is_a_file", func(t *testing.T) {
		e := newEnv(t)
		must(t, os.MkdirAll(filepath.Dir(e.Store), 0o755))
		must(t, os.WriteFile(e.Store, []byte("not a store\n"), 0o644))
		checkCursorAnswer(t, "prompt", e.hook("cursor", prompt(e)), 0, cont)
		checkCursorAnswer(t, "prompt --strict", e.hook("cursor", prompt(e), "--strict"), 1, cont)
		checkCursorAnswer(t, "stop --strict", e.hook("cursor", stop(e), "--strict"), 1, empty)
	})
	t.Run("store_corrupt", func(t *testing.T) {
		e := newEnv(t)
		e.Write(map[string]string{"a.txt": "a\n"})
		e.Must("save", "-q")
		filepath.Walk(e.Store, func(p string, fi os.FileInfo, err error) error {
			if err == nil && fi.Mode().IsRegular() && strings.HasSuffix(p, ".db") {
				os.WriteFile(p, []byte(strings.Repeat("garbage ", 1000)), 0o644)
			}
			return nil
		})
		checkCursorAnswer(t, "prompt", e.hook("cursor", prompt(e)), 0, cont)
		checkCursorAnswer(t, "prompt --strict", e.hook("cursor", prompt(e), "--strict"), 1, cont)
	})
	t.Run("payloads", func(t *testing.T) {
		e := newEnv(t)
		huge := e.cursorPayload("beforeSubmitPrompt", map[string]any{"prompt": strings.Repeat("x", 17<<20)})
		// A payload past 16 MiB is cut there: unreadable, but its event
		// name, before the prompt, still says which answer Cursor needs.
		truncated := `{"hook_event_name": "beforeSubmitPrompt", "prompt": "` + strings.Repeat("x", 1000)
		for _, c := range []struct {
			name, payload, want string
			fails               bool
		}{
			{"empty", "", empty, true},
			{"garbage", "\x00\xff not json {", empty, true},
			{"array", `[1,2]`, empty, true},
			{"null", `null`, empty, true},
			{"no_event", `{"conversation_id": "c1"}`, empty, true},
			{"prompt_bad_roots", `{"hook_event_name": "beforeSubmitPrompt", "workspace_roots": 7}`, cont, true},
			{"prompt_truncated", truncated, cont, true},
			{"prompt_huge", huge, cont, true},
			{"prompt_trailing_garbage", prompt(e) + "}}}garbage", cont, false},
		} {
			code := 0
			if c.fails {
				code = 1
			}
			checkCursorAnswer(t, c.name, e.hook("cursor", c.payload), 0, c.want)
			checkCursorAnswer(t, c.name+" --strict", e.hook("cursor", c.payload, "--strict"), code, c.want)
		}
	})
}
