// Command hookcost measures what ckpt's agent hooks add to each agent turn
// (docs/benchmarks.md, "Agent hooks"): on a generated tree (100,000 files
// by default) it runs `ckpt hook claude-code` as Claude Code does — a new
// process, the hook's JSON on stdin — for UserPromptSubmit before and Stop
// after each 20-file turn (bench.TurnIn), and reports the median and 90th
// percentile of each call and of their sum per turn.
//
//	go run ./bench/hookcost                      # 100,000 files, 20 turns
//	go run ./bench/hookcost -files 10000 -turns 10
//
// The tree is generated once into -dir and reused by later runs (delete
// -dir to start over); each run uses a fresh store. Before each timed call
// it runs sync (untimed), so a call pays only for its own writes. The Stop
// payloads name a transcript that grows by one turn of messages (20 tool
// calls and two replies) per turn, as Claude Code's does, so reading it and
// recording the messages is in the measurement.
package main

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"time"

	"github.com/seed1cedbf7c/ckpt/bench"
)

var (
	dir   = flag.String("dir", filepath.Join(os.TempDir(), "ckpt-hookcost"), "work directory (the tree is kept there)")
	files = flag.Int("files", 100000, "files in the generated tree")
	turns = flag.Int("turns", 20, "agent turns to time")
	bin   = flag.String("ckpt", "", "ckpt binary (default: build ./cmd/ckpt into -dir)")
	noMsg = flag.Bool("no-messages", false, "run the hooks with --no-messages (no transcript reading, no message recording)")
	noWat = flag.Bool("no-watch", false, "run the hooks with --no-watch (no watcher: every checkpoint scans the whole tree)")
)

func main() {
	flag.Parse()
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "hookcost:", err)
		os.Exit(1)
	}
}

const sessionID = "5d0c8f3e-7a41-4b2e-9c6d-1e8f2a4b7c90"

type hookRunner struct {
	ckpt, ws, store, state, transcript string
}

// call runs one hook process with the payload on stdin and returns its
// wall time; a hook that reports anything on stderr is an error here (the
// benchmark must measure the path that works).
func (h *hookRunner) call(payload map[string]any) (time.Duration, error) {
	return h.callNotes(payload, false)
}

func (h *hookRunner) callNotes(payload map[string]any, notesOK bool) (time.Duration, error) {
	payload["session_id"] = sessionID
	payload["cwd"] = h.ws
	payload["transcript_path"] = h.transcript
	data, _ := json.Marshal(payload)
	exec.Command("sync").Run()
	args := []string{"hook", "claude-code", "--strict"}
	if *noMsg {
		args = append(args, "--no-messages")
	}
	if *noWat {
		args = append(args, "--no-watch")
	}
	cmd := exec.Command(h.ckpt, args...)
	cmd.Dir = h.ws
	cmd.Env = append(os.Environ(), "CKPT_STORE="+h.store, "XDG_STATE_HOME="+h.state, "CLAUDE_PROJECT_DIR="+h.ws)
	cmd.Stdin = bytes.NewReader(data)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	start := time.Now()
	err := cmd.Run()
	d := time.Since(start)
	if err != nil || (stderr.Len() > 0 && !notesOK) {
		return d, fmt.Errorf("ckpt hook claude-code %s: %v: %s", payload["hook_event_name"], err, stderr.String())
	}
	return d, nil
}

// appendTranscript adds one turn to the transcript, in Claude Code's
// layout: the prompt, a reply, a tool call and its result for each file
// touched, a final reply.
func (h *hookRunner) appendTranscript(prompt string, touched []string) error {
	f, err := os.OpenFile(h.transcript, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return err
	}
	defer f.Close()
	enc := json.NewEncoder(f)
	line := func(typ string, msg map[string]any) {
		enc.Encode(map[string]any{"type": typ, "isSidechain": false, "userType": "external", "cwd": h.ws,
			"sessionId": sessionID, "version": "2.1.63", "timestamp": time.Now().UTC().Format(time.RFC3339Nano), "message": msg})
	}
	line("user", map[string]any{"role": "user", "content": prompt})
	line("assistant", map[string]any{"role": "assistant", "id": "msg_a", "content": []any{map[string]any{"type": "text", "text": "I'll make the changes."}}})
	for i, p := range touched {
		id := fmt.Sprintf("toolu_%d_%d", len(prompt), i)
		line("assistant", map[string]any{"role": "assistant", "id": "msg_b" + id, "content": []any{
			map[string]any{"type": "tool_use", "id": id, "name": "Edit", "input": map[string]any{"file_path": filepath.Join(h.ws, p), "old_string": "x", "new_string": "y"}}}})
		line("user", map[string]any{"role": "user", "content": []any{map[string]any{"type": "tool_result", "tool_use_id": id, "content": "The file has been updated."}}})
	}
	line("assistant", map[string]any{"role": "assistant", "id": "msg_c", "content": []any{map[string]any{"type": "text", "text": "Done."}}})
	return nil
}

func run() error {
	if err := os.MkdirAll(*dir, 0o755); err != nil {
		return err
	}
	ckptBin := *bin
	if ckptBin == "" {
		ckptBin = filepath.Join(*dir, "ckpt")
		if out, err := exec.Command("go", "build", "-o", ckptBin, "./cmd/ckpt").CombinedOutput(); err != nil {
			return fmt.Errorf("go build: %v\n%s", err, out)
		}
	}
	ws := filepath.Join(*dir, fmt.Sprintf("tree-%d", *files))
	done := ws + ".done"
	if _, err := os.Stat(done); err != nil {
		os.RemoveAll(ws)
		fmt.Fprintf(os.Stderr, "generating %d files in %s...\n", *files, ws)
		c, err := bench.Generate(ws, *files, 1)
		if err != nil {
			return err
		}
		if err := os.WriteFile(done, []byte(fmt.Sprintf("%d files, %d bytes\n", c.Files, c.Bytes)), 0o644); err != nil {
			return err
		}
	}
	list, err := bench.Files(ws)
	if err != nil {
		return err
	}
	h := &hookRunner{ckpt: ckptBin, ws: ws, store: filepath.Join(*dir, "store"), state: filepath.Join(*dir, "state"),
		transcript: filepath.Join(*dir, "transcript.jsonl")}
	for _, p := range []string{h.store, h.state, h.transcript} {
		os.RemoveAll(p)
	}
	// The watcher the SessionStart hook starts (watch mode) is stopped at
	// the end.
	defer func() {
		cmd := exec.Command(h.ckpt, "watch", "--stop")
		cmd.Dir = h.ws
		cmd.Env = append(os.Environ(), "CKPT_STORE="+h.store, "XDG_STATE_HOME="+h.state)
		cmd.Run()
	}()
	if *noWat {
		fmt.Fprintln(os.Stderr, "no watcher (--no-watch): every checkpoint scans the whole tree")
	} else {
		fmt.Fprintln(os.Stderr, "watch mode: the SessionStart hook starts a watcher")
	}

	// Untimed set-up, as in a real session: SessionStart, and one turn that
	// takes the workspace's first (cold) checkpoint.
	var fixed, cold time.Duration
	if _, err := h.call(map[string]any{"hook_event_name": "SessionStart", "source": "startup"}); err != nil {
		return err
	}
	if cold, err = h.call(map[string]any{"hook_event_name": "UserPromptSubmit", "prompt": "turn 0"}); err != nil {
		return err
	}
	if err := h.appendTranscript("turn 0", nil); err != nil {
		return err
	}
	if _, err := h.call(map[string]any{"hook_event_name": "Stop", "last_assistant_message": "Done."}); err != nil {
		return err
	}
	// A hook process's fixed cost: an event ckpt ignores (no store opened).
	var fixedRuns []time.Duration
	for i := 0; i < 5; i++ {
		if fixed, err = h.callNotes(map[string]any{"hook_event_name": "Notification", "message": "m"}, true); err != nil {
			return err
		}
		fixedRuns = append(fixedRuns, fixed)
	}

	// The floor for any whole-tree checkpoint by a new process: `ckpt save`
	// of the unchanged tree right after Stop (it scans, finds nothing new
	// and records nothing).
	save := func() (time.Duration, error) {
		exec.Command("sync").Run()
		cmd := exec.Command(h.ckpt, "save", "-q")
		cmd.Dir = h.ws
		cmd.Env = append(os.Environ(), "CKPT_STORE="+h.store, "XDG_STATE_HOME="+h.state)
		start := time.Now()
		out, err := cmd.CombinedOutput()
		if err != nil {
			return 0, fmt.Errorf("ckpt save: %v: %s", err, out)
		}
		return time.Since(start), nil
	}
	var begins, ends, perTurn, saves []time.Duration
	base := 1000 // turn numbers the tree has not seen in earlier runs
	if b, err := os.ReadFile(ws + ".turns"); err == nil {
		fmt.Sscan(string(b), &base)
	}
	for t := base; t < base+*turns; t++ {
		prompt := fmt.Sprintf("turn %d: edit 18 files, add one, delete one", t)
		b, err := h.call(map[string]any{"hook_event_name": "UserPromptSubmit", "permission_mode": "default", "prompt": prompt})
		if err != nil {
			return err
		}
		before := list
		if list, err = bench.TurnIn(ws, list, t); err != nil {
			return err
		}
		if err := h.appendTranscript(prompt, touched(before, list, t)); err != nil {
			return err
		}
		e, err := h.call(map[string]any{"hook_event_name": "Stop", "permission_mode": "default", "stop_hook_active": false, "last_assistant_message": "Done."})
		if err != nil {
			return err
		}
		begins, ends, perTurn = append(begins, b), append(ends, e), append(perTurn, b+e)
		sv, err := save()
		if err != nil {
			return err
		}
		saves = append(saves, sv)
	}
	os.WriteFile(ws+".turns", []byte(fmt.Sprint(base+*turns)), 0o644)

	load, _ := os.ReadFile("/proc/loadavg")
	mode := "with messages"
	if *noMsg {
		mode = "--no-messages"
	}
	fmt.Printf("ckpt hook claude-code (%s) on %d files, %d turns of %d files (%s, %d CPUs, load %s)\n\n",
		mode, len(list), *turns, bench.TurnFiles, runtime.GOOS, runtime.NumCPU(), strings.Join(strings.Fields(string(load))[:3], " "))
	fmt.Printf("| hook call | median | p90 | min | max |\n|---|---:|---:|---:|---:|\n")
	row := func(name string, ds []time.Duration) {
		s := slices.Clone(ds)
		slices.Sort(s)
		fmt.Printf("| %s | %s | %s | %s | %s |\n", name, ms(pct(s, 50)), ms(pct(s, 90)), ms(s[0]), ms(s[len(s)-1]))
	}
	row("UserPromptSubmit (begin: checkpoint)", begins)
	row("Stop (end: checkpoint, files, messages)", ends)
	row("per turn (both)", perTurn)
	row("fixed cost of a hook process (ignored event)", fixedRuns)
	row("`ckpt save` of the unchanged tree (scan floor)", saves)
	fmt.Printf("\nfirst UserPromptSubmit of the workspace (cold, first checkpoint): %s\n", ms(cold))
	log, _ := os.ReadFile(filepath.Join(h.state, "ckpt", "hooks.log"))
	if n := bytes.Count(log, []byte("error")); n > 0 {
		return fmt.Errorf("the hook log has %d errors", n)
	}
	return nil
}

// touched lists the files a turn changed (for the transcript): those added
// or removed from the list, and, standing for the edits, 18 of the rest.
func touched(before, after []string, t int) []string {
	in := map[string]bool{}
	for _, p := range before {
		in[p] = true
	}
	var out []string
	for _, p := range after {
		if !in[p] {
			out = append(out, p)
		}
	}
	for i := 0; len(out) < bench.TurnFiles && i < len(after); i += len(after)/bench.TurnFiles + 1 {
		out = append(out, after[(i+t)%len(after)])
	}
	return out
}

func pct(sorted []time.Duration, p int) time.Duration {
	i := (len(sorted)*p + 99) / 100
	if i < 1 {
		i = 1
	}
	return sorted[i-1]
}

func ms(d time.Duration) string {
	return fmt.Sprintf("%d ms", d.Round(time.Millisecond).Milliseconds())
}
