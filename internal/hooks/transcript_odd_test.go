package hooks

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/seed1cedbf7c/ckpt/internal/testutil"
)

// Droid's, Copilot's and Cursor's transcripts when they are not what a
// transcript should be: a FIFO, a directory, /dev/zero — an error at once
// (Copilot's Stop, which waits for its transcript to catch up, waits no
// longer than its bound); lines cut short or not JSON are skipped.
func TestAgentTranscriptsOdd(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo.jsonl")
	if err := testutil.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	readers := map[string]func(string, string) error{
		"droid":   func(p, q string) error { _, err := droidTurn(p, q); return err },
		"cursor":  func(p, q string) error { _, err := cursorTurn(p, q); return err },
		"copilot": func(p, q string) error { _, err := copilotTurn(p, q, 300*time.Millisecond); return err },
	}
	for name, read := range readers {
		for _, p := range []string{fifo, dir, "/dev/zero", filepath.Join(dir, "missing")} {
			start := time.Now()
			done := make(chan error, 1)
			go func() { done <- read(p, "hi") }()
			select {
			case err := <-done:
				if err == nil {
					t.Errorf("%s %s: no error", name, p)
				}
				if d := time.Since(start); d > 2*time.Second {
					t.Errorf("%s %s: %v", name, p, d)
				}
			case <-time.After(20 * time.Second):
				t.Fatalf("%s %s: hangs", name, p)
			}
		}
	}
	// Lines cut short, NULs, a huge line without end: the turn is found
	// from the lines that read.
	lines := map[string][]string{
		"droid": {
			`{"type":"message","message":{"role":"user","content":[{"type":"text","text":"hi"}]}}`,
			`{"type":"message","message":{"role":"assistant","content":[{"type":"text","text":"hello"}]}}`,
		},
		"cursor": {
			`{"role":"user","message":{"content":[{"type":"text","text":"<user_query>\nhi\n</user_query>"}]}}`,
			`{"role":"assistant","message":{"content":[{"type":"text","text":"hello"}]}}`,
		},
		"copilot": {
			`{"type":"user.message","data":{"content":"hi"}}`,
			`{"type":"assistant.message","data":{"content":"hello"}}`,
		},
	}
	for name, ls := range lines {
		p := filepath.Join(dir, name+".jsonl")
		junk := `{"type":"message","mess` + "\n\x00\x00\x00\n" + strings.Repeat("x", 3<<20) + "\n"
		os.WriteFile(p, []byte(junk+ls[0]+"\n"+junk+ls[1]+"\n"+`{"type":"assistant.message","da`), 0o644)
		var err error
		var got string
		switch name {
		case "droid":
			m, e := droidTurn(p, "hi")
			err, got = e, lastAssistant(m)
		case "cursor":
			m, e := cursorTurn(p, "hi")
			err, got = e, lastAssistant(m)
		case "copilot":
			m, e := copilotTurn(p, "hi", 0)
			err, got = e, lastAssistant(m)
		}
		if err != nil || got != "hello" {
			t.Errorf("%s: %q, %v", name, got, err)
		}
	}
}
