//go:build unix

package faults

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// TestHookTranscriptSpecialFiles: a Stop whose transcript_path is
// /dev/zero, a FIFO, or a symlink to either is answered at once with a
// note — the turn is ended and checkpointed, exit 0 — rather than read
// until memory runs out (a crash: exit 2, which Claude Code takes as
// "block") or until --timeout (misreported as a timeout).
func TestHookTranscriptSpecialFiles(t *testing.T) {
	e := newEnv(t)
	e.Write(map[string]string{"a.txt": "a\n"})
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	for _, target := range []string{"/dev/zero", fifo} {
		link := filepath.Join(dir, "to-"+filepath.Base(target)+".jsonl")
		if err := os.Symlink(target, link); err != nil {
			t.Fatal(err)
		}
		for i, tp := range []string{target, link} {
			session := fmt.Sprintf("s-%s-%d", filepath.Base(target), i)
			e.mustHook("claude-code", e.claudePayload("UserPromptSubmit", session, map[string]any{"prompt": "edit a"}))
			e.Write(map[string]string{"a.txt": session + "\n"})
			r := e.hook("claude-code", e.claudePayload("Stop", session, map[string]any{"transcript_path": tp}), "--timeout", "10s")
			if r.code != 0 || r.stdout != "" {
				t.Fatalf("%s: exit %d, stdout %q; want 0 and nothing\nstderr: %.2000s", tp, r.code, r.stdout, r.stderr)
			}
			if !strings.Contains(r.stderr, "not a regular file") || strings.Contains(r.stderr, "timed out") {
				t.Errorf("%s: stderr %q, want a note that it is not a regular file", tp, r.stderr)
			}
			if !strings.Contains(e.hookLog(), "session="+session+" workspace="+e.WS+": ended turn 1") {
				t.Errorf("%s: the turn was not ended; log:\n%s", tp, e.hookLog())
			}
		}
	}
}
