//go:build unix

package agents

import (
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/seed1cedbf7c/ckpt/bench"
)

// BenchmarkClaudeCodeHooks times ckpt's hooks as the real Claude Code
// runs them, per event, on a copy of Go's source tree and on the
// generated 100,000-file tree: each iteration is one turn (claude -p,
// resumed) in which the "agent" changes 20 files (bench.TurnIn: 18 edits,
// one added, one deleted) between UserPromptSubmit and Stop, and writes one
// file with its edit tool (PreToolUse: a file no rule ignores, so nothing
// to keep; the cost every edit-tool call pays). The first,
// cold turn is not timed. Reported: each event's median and 95th
// percentile from the hook log (docs/benchmarks.md).
//
//	go test ./test/agents -run '^$' -bench ClaudeCodeHooks -benchtime 20x
func BenchmarkClaudeCodeHooks(b *testing.B) {
	for _, corpus := range []string{"gosrc", "gen100k"} {
		b.Run(corpus, func(b *testing.B) {
			const sid = "9e8d7c6b-5a49-4382-9170-6f5e4d3c2b1a"
			c := newClaude(b, nil)
			benchHooks(b, c.world, c.model, corpus,
				func(p string) { c.prompt(sid, true, p) },
				func(p string) { c.prompt(sid, false, p) },
				func(n int) step {
					return call("Write", map[string]any{"file_path": filepath.Join(c.ws, "bench-note.txt"), "content": fmt.Sprintln(n)})
				})
		})
	}
}

// BenchmarkCodexHooks does the same with the real Codex (codex exec
// resume).
//
//	go test ./test/agents -run '^$' -bench CodexHooks -benchtime 20x
func BenchmarkCodexHooks(b *testing.B) {
	for _, corpus := range []string{"gosrc", "gen100k"} {
		b.Run(corpus, func(b *testing.B) {
			c := newCodex(b, nil, false)
			var sid string
			benchHooks(b, c.world, c.model, corpus,
				func(p string) { sid = c.prompt("", p) },
				func(p string) { c.prompt(sid, p) },
				func(n int) step { return patch("*** Add File: bench-note-"+fmt.Sprint(n)+".txt", "+note") })
		})
	}
}

// benchHooks fills the workspace with the corpus, runs a cold first turn
// (first), then b.N timed turns (next) in each of which the scripted
// model calls its edit tool once (edit) and changes 20 files, and reports
// each hook event's median and 95th percentile from the hook log.
func benchHooks(b *testing.B, w *world, m *model, corpus string, first, next func(prompt string), edit func(n int) step) {
	switch corpus {
	case "gosrc":
		goroot, err := exec.Command("go", "env", "GOROOT").Output()
		if err != nil {
			b.Fatalf("go env GOROOT: %v", err)
		}
		src := filepath.Join(strings.TrimSpace(string(goroot)), "src", ".")
		if out, err := exec.Command("cp", "-a", src, w.ws).CombinedOutput(); err != nil {
			b.Fatalf("copy GOROOT/src: %v\n%s", err, out)
		}
	case "gen100k":
		if _, err := bench.Generate(w.ws, 100000, 1); err != nil {
			b.Fatal(err)
		}
	}
	files, err := bench.Files(w.ws)
	if err != nil {
		b.Fatal(err)
	}
	m.mu.Lock()
	m.turns = map[string][]step{"[t0]": nil}
	m.mu.Unlock()
	first("[t0] cold start")
	w.resetHookLog()
	i := 0
	for b.Loop() {
		i++
		mk := fmt.Sprintf("[t%d]", i)
		n := i
		m.mu.Lock()
		m.turns[mk] = []step{edit(n), {text: "changed 20 files", do: func() {
			var err error
			if files, err = bench.TurnIn(w.ws, files, n); err != nil {
				b.Error(err)
			}
		}}}
		m.mu.Unlock()
		next(mk + " change 20 files")
	}
	for _, s := range w.hookStats() {
		b.ReportMetric(float64(s.median)/float64(time.Millisecond), s.event+"-ms-median")
		b.ReportMetric(float64(s.p95)/float64(time.Millisecond), s.event+"-ms-p95")
	}
}
