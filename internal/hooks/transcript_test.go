package hooks

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/seed1cedbf7c/ckpt"
	"github.com/seed1cedbf7c/ckpt/internal/testutil"
)

// A transcript_path naming something other than a regular file — a
// device, a FIFO, a directory, a symlink to one — is a note, read neither
// forever nor at all.
func TestTranscriptMustBeRegular(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo")
	if err := testutil.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	for _, target := range []string{"/dev/zero", fifo, dir} {
		link := filepath.Join(dir, "link-"+filepath.Base(target))
		if err := os.Symlink(target, link); err != nil {
			t.Fatal(err)
		}
		for _, p := range []string{target, link} {
			if _, err := claudeTurn(p, "the prompt"); !errors.Is(err, ckpt.ErrNotRegular) {
				t.Errorf("claude %s: %v, want not a regular file", p, err)
			}
			if _, err := geminiTurn(p, "the prompt"); !errors.Is(err, ckpt.ErrNotRegular) {
				t.Errorf("gemini %s: %v, want not a regular file", p, err)
			}
		}
	}
}

// A transcript far larger than maxTail is read only as far back as
// maxTail from its end (a sparse file: nothing is written).
func TestHugeTranscriptReadFromItsEndOnly(t *testing.T) {
	p := filepath.Join(t.TempDir(), "t.jsonl")
	f, err := os.Create(p)
	if err != nil {
		t.Fatal(err)
	}
	tail := `{"type":"user","message":{"role":"user","content":"the prompt"}}` + "\n" +
		`{"type":"assistant","message":{"role":"assistant","id":"m","content":[{"type":"text","text":"the answer"}]}}` + "\n"
	if _, err := f.WriteAt([]byte("\n"+tail), 64<<30); err != nil { // 64 GiB of holes first
		// A file system without files that large: four times the bound
		// proves the same (zeros where it has no holes).
		t.Logf("no 64 GiB file here (%v): %d bytes before the tail instead", err, 4*maxTail)
		if err := f.Truncate(0); err != nil {
			t.Fatal(err)
		}
		if _, err := f.WriteAt([]byte("\n"+tail), 4*maxTail); err != nil {
			t.Fatal(err)
		}
	}
	f.Close()
	data, whole, err := readTail(p, maxTail)
	if err != nil || whole || int64(len(data)) > maxTail {
		t.Fatalf("read %d bytes (whole %v), %v; want at most %d", len(data), whole, err, maxTail)
	}
	got, err := claudeTurn(p, "the prompt")
	if err != nil || len(got) != 1 || got[0].Content != "the answer" {
		t.Fatalf("%+v, %v", got, err)
	}
	// A legacy Gemini transcript is read from its start, at most maxTail.
	if _, err := geminiTurn(p, "the prompt"); err == nil {
		t.Fatal("a legacy transcript larger than maxTail was read")
	}
}

// Gemini's rewinds cost linear time: n records — messages, and rewinds
// to the last message, to a missing one, to the first — touch at most a
// small multiple of n messages (they touched n²/4 before).
func TestGeminiRewindsLinear(t *testing.T) {
	patterns := map[string]func(i int) []geminiMessage{
		// message, message, rewind to the latter: the order stays short
		// but every rewind used to scan it from the start.
		"rewind-last": func(i int) []geminiMessage {
			a, b := fmt.Sprint("a", i), fmt.Sprint("b", i)
			return []geminiMessage{{ID: a, Type: "gemini"}, {ID: b, Type: "gemini"}, {RewindTo: b}}
		},
		// a rewind to an id that is not there scanned every message.
		"rewind-missing": func(i int) []geminiMessage {
			return []geminiMessage{{ID: fmt.Sprint("m", i), Type: "gemini"}, {RewindTo: "missing"}}
		},
		// the same message written again and again.
		"rewrite": func(i int) []geminiMessage {
			return []geminiMessage{{ID: fmt.Sprint("m", i%7), Type: "gemini"}, {ID: "x", Type: "user"}}
		},
	}
	for name, gen := range patterns {
		for _, n := range []int{10000, 20000} {
			var recs []geminiMessage
			for i := 0; len(recs) < n; i++ {
				recs = append(recs, gen(i)...)
			}
			steps := 0
			applyGemini(recs, &steps)
			if steps > 3*len(recs) {
				t.Errorf("%s: %d records took %d steps, want at most %d", name, len(recs), steps, 3*len(recs))
			}
		}
	}
	// And the result is what applying them in order gives.
	recs := []geminiMessage{{ID: "1", Type: "user"}, {ID: "2", Type: "gemini"}, {ID: "3", Type: "gemini"},
		{ID: "2", Type: "gemini", Content: []byte(`"again"`)}, {RewindTo: "3"}, {RewindTo: "nope"}, {ID: "4", Type: "gemini"}}
	var ids []string
	for _, m := range geminiMessages(recs) {
		ids = append(ids, m.ID+m.text())
	}
	if got := strings.Join(ids, ","); got != "1,2again,4" {
		t.Fatalf("got %s, want 1,2again,4", got)
	}
}

// Claude Code writes its transcript in the background: when its Stop hook
// runs, the turn's last lines may not be in the file yet (seen with two
// sessions running at once). The payload's last_assistant_message says
// what the transcript must end with; Stop waits a little for it, so the
// turn's tool calls are recorded too.
func TestClaudeStopWaitsForTheTranscript(t *testing.T) {
	head := `{"type":"user","uuid":"u1","message":{"role":"user","content":"the prompt"}}` + "\n"
	rest := `{"type":"assistant","uuid":"a1","parentUuid":"u1","message":{"role":"assistant","id":"m1","content":[{"type":"tool_use","id":"t1","name":"Write","input":{"file_path":"/w/a.txt","content":"x"}}]}}` + "\n" +
		`{"type":"user","uuid":"r1","parentUuid":"a1","message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"t1","content":"ok"}]}}` + "\n" +
		`{"type":"assistant","uuid":"a2","parentUuid":"r1","message":{"role":"assistant","id":"m2","content":[{"type":"text","text":"Done."}]}}` + "\n"
	got := stopWhileCatchingUp(t, ClaudeCode, head, rest, "Done.")
	if want := []string{"tool Write /w/a.txt", "assistant  Done."}; fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("messages %q, want %q", got, want)
	}
}

// stopWhileCatchingUp records an agent's Stop (whose payload's reply is
// reply, if it has one) on a transcript that holds head, while the
// agent's background writer appends rest once the hook has read the
// transcript once. It returns the turn's messages, each "ROLE TOOL
// CONTENT".
func stopWhileCatchingUp(t *testing.T, agent, head, rest, reply string) []string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "t.jsonl")
	if err := os.WriteFile(p, []byte(head), 0o600); err != nil {
		t.Fatal(err)
	}
	ev := &Event{Agent: agent, Kind: KindStop, Transcript: p, Assistant: reply}
	before := transcriptReads.Load()
	wrote := make(chan error, 1)
	go func() {
		for transcriptReads.Load() == before {
			runtime.Gosched()
		}
		f, err := os.OpenFile(p, os.O_APPEND|os.O_WRONLY, 0)
		if err == nil {
			_, err = f.WriteString(rest)
			f.Close()
		}
		wrote <- err
	}()
	msgs, err := turnMessages(ev, "the prompt")
	if err := <-wrote; err != nil {
		t.Fatal(err)
	}
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, m := range msgs {
		got = append(got, m.Role+" "+m.Tool+" "+m.Content)
	}
	return got
}

// A transcript that never catches up (or cannot be read) leaves the
// turn's tool calls out of its record. The record says so in a note: a
// rewind of another session running side by side takes a turn whose
// record has a note for one that may have written anything, and one
// without tool calls for one that wrote nothing.
func TestClaudeStopTranscriptBehindIsNoted(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "t.jsonl")
	head := `{"type":"user","uuid":"u1","message":{"role":"user","content":"the prompt"}}` + "\n"
	if err := os.WriteFile(p, []byte(head), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tp := range []string{p, filepath.Join(dir, "missing.jsonl")} {
		ev := &Event{Agent: ClaudeCode, Kind: KindStop, Transcript: tp, Assistant: "Done."}
		msgs, _ := turnMessages(ev, "the prompt")
		noted := false
		for _, m := range msgs {
			noted = noted || m.Role == "system"
		}
		if !noted {
			t.Errorf("%s: messages %+v: no note that the tool calls may be missing", filepath.Base(tp), msgs)
		}
	}
}

// A reply of several text blocks longer than what a message keeps: the
// payload carries all of it, clipped; the transcript's last block is its
// end. The transcript has caught up: Stop reads it once, and its record
// has no note.
func TestClaudeStopLongMultiBlockReplyCaughtUp(t *testing.T) {
	p := filepath.Join(t.TempDir(), "t.jsonl")
	long := strings.Repeat("x", maxAssistantText)
	line := func(s string) string { b, _ := json.Marshal(s); return string(b) }
	data := `{"type":"user","uuid":"u1","message":{"role":"user","content":"the prompt"}}` + "\n" +
		`{"type":"assistant","uuid":"a1","parentUuid":"u1","message":{"role":"assistant","id":"m1","content":[{"type":"text","text":` + line(long) + `}]}}` + "\n" +
		`{"type":"assistant","uuid":"a2","parentUuid":"a1","message":{"role":"assistant","id":"m2","content":[{"type":"text","text":"Done."}]}}` + "\n"
	if err := os.WriteFile(p, []byte(data), 0o600); err != nil {
		t.Fatal(err)
	}
	ev := &Event{Agent: ClaudeCode, Kind: KindStop, Transcript: p, Assistant: long + "\n\nDone."}
	before := transcriptReads.Load()
	msgs, err := turnMessages(ev, "the prompt")
	if err != nil {
		t.Fatal(err)
	}
	if n := transcriptReads.Load() - before; n != 1 {
		t.Errorf("read the transcript %d times, want 1", n)
	}
	for _, m := range msgs {
		if m.Role == "system" {
			t.Errorf("note %q", m.Content)
		}
	}
}

// The reply's text came earlier in the turn too ("Done." before more tool
// calls): a transcript whose last lines so far are that text and a tool
// call has not caught up. Stop waits for the turn's end, so the tool calls
// after it are recorded.
func TestClaudeStopEarlierSameTextIsNotTheEnd(t *testing.T) {
	head := `{"type":"user","uuid":"u1","message":{"role":"user","content":"the prompt"}}` + "\n" +
		`{"type":"assistant","uuid":"a1","parentUuid":"u1","message":{"role":"assistant","id":"m1","content":[{"type":"text","text":"Done."},{"type":"tool_use","id":"t1","name":"Write","input":{"file_path":"/w/a.txt","content":"x"}}]}}` + "\n"
	rest := `{"type":"user","uuid":"r1","parentUuid":"a1","message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"t1","content":"ok"}]}}` + "\n" +
		`{"type":"assistant","uuid":"a2","parentUuid":"r1","message":{"role":"assistant","id":"m2","content":[{"type":"tool_use","id":"t2","name":"Bash","input":{"command":"make"}}]}}` + "\n" +
		`{"type":"user","uuid":"r2","parentUuid":"a2","message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"t2","content":"ok"}]}}` + "\n" +
		`{"type":"assistant","uuid":"a3","parentUuid":"r2","message":{"role":"assistant","id":"m3","content":[{"type":"text","text":"Done."}]}}` + "\n"
	got := stopWhileCatchingUp(t, ClaudeCode, head, rest, "Done.")
	if want := []string{"assistant  Done.", "tool Write /w/a.txt", "tool Bash make", "assistant  Done."}; fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("messages %q, want %q", got, want)
	}
}
