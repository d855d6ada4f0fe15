package agents

import (
	"fmt"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/seed1cedbf7c/ckpt/bench"
)

// BenchmarkCodexHooks times ckpt's hooks as the real Codex runs them, per
// event, as BenchmarkClaudeCodeHooks does for Claude Code: on a copy of
// Go's source tree and on the generated 100,000-file tree, each iteration
// one turn (codex exec resume) in which the "agent" changes 20 files
// (bench.TurnIn) between UserPromptSubmit and Stop. The first, cold turn
// is not timed. Reported: each event's median and 95th percentile from
// the hook log.
//
//	go test ./test/agents -run '^$' -bench CodexHooks -benchtime 20x
func BenchmarkCodexHooks(b *testing.B) {
	for _, corpus := range []string{"gosrc", "gen100k"} {
		b.Run(corpus, func(b *testing.B) {
			benchCodexHooks(b, corpus)
		})
	}
}

func benchCodexHooks(b *testing.B, corpus string) {
	c := newCodex(b, nil, false)
	switch corpus {
	case "gosrc":
		goroot, err := exec.Command("go", "env", "GOROOT").Output()
		if err != nil {
			b.Fatalf("go env GOROOT: %v", err)
		}
		src := filepath.Join(strings.TrimSpace(string(goroot)), "src", ".")
		if out, err := exec.Command("cp", "-a", src, c.ws).CombinedOutput(); err != nil {
			b.Fatalf("copy GOROOT/src: %v\n%s", err, out)
		}
	case "gen100k":
		if _, err := bench.Generate(c.ws, 100000, 1); err != nil {
			b.Fatal(err)
		}
	}
	files, err := bench.Files(c.ws)
	if err != nil {
		b.Fatal(err)
	}
	c.model.turns = map[string][]step{"[t0]": nil}
	sid := c.prompt("", "[t0] cold start")
	c.resetHookLog()
	i := 0
	for b.Loop() {
		i++
		mk := fmt.Sprintf("[t%d]", i)
		n := i
		c.model.mu.Lock()
		c.model.turns[mk] = []step{{text: "changed 20 files", do: func() {
			var err error
			if files, err = bench.TurnIn(c.ws, files, n); err != nil {
				b.Error(err)
			}
		}}}
		c.model.mu.Unlock()
		c.prompt(sid, mk+" change 20 files")
	}
	times := c.hookTimes()
	events := make([]string, 0, len(times))
	for e := range times {
		events = append(events, e)
	}
	sort.Strings(events)
	for _, e := range events {
		ds := times[e]
		sort.Slice(ds, func(i, j int) bool { return ds[i] < ds[j] })
		med, p95 := ds[len(ds)/2], ds[min(len(ds)-1, (len(ds)*95+99)/100-1)]
		b.ReportMetric(float64(med)/float64(time.Millisecond), e+"-ms-median")
		b.ReportMetric(float64(p95)/float64(time.Millisecond), e+"-ms-p95")
	}
}
