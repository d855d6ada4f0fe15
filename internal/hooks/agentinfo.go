package hooks

import (
	"bufio"
	"context"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"time"
)

// Commands are the agents' own commands, as their npm packages install
// them.
var Commands = map[string]string{ClaudeCode: "claude", Gemini: "gemini", Codex: "codex", QwenCode: "qwen", OpenCode: "opencode",
	Copilot: "copilot", Droid: "droid", Cursor: "cursor-agent"}

// Agent is an agent's command as found on PATH.
type Agent struct {
	Agent string `json:"agent"`
	// Path is the command found on PATH ("": not found).
	Path string `json:"path,omitempty"`
	// Version is the first line the command's --version printed.
	Version string `json:"version,omitempty"`
	Error   string `json:"error,omitempty"`
}

// FindAgent looks for the agent's command on PATH and asks it for its
// version (within timeout; a command that does not answer is reported,
// not waited for).
func FindAgent(ctx context.Context, agent string, timeout time.Duration) *Agent {
	a := &Agent{Agent: agent}
	p, err := exec.LookPath(Commands[agent])
	if err != nil {
		return a
	}
	a.Path = p
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, p, "--version")
	cmd.Stdin = nil
	cmd.WaitDelay = time.Second
	// Only the start of the output is kept: a command that prints without
	// end is stopped once that much has come, not read into memory whole.
	out := &headBuffer{max: 64 << 10, full: cancel}
	cmd.Stdout = out
	err = cmd.Run()
	line, _, _ := strings.Cut(strings.TrimSpace(string(out.buf)), "\n")
	a.Version = clip(strings.TrimSpace(line), 200)
	switch {
	case out.over:
		// It said enough: its first line is the version.
	case ctx.Err() != nil:
		a.Error = "--version did not answer within " + timeout.String()
	case err != nil && a.Version == "":
		a.Error = "--version: " + err.Error()
	}
	return a
}

// headBuffer keeps the first max bytes written to it and calls full once
// more come; the rest is dropped.
type headBuffer struct {
	buf  []byte
	max  int
	over bool
	full func()
}

func (b *headBuffer) Write(p []byte) (int, error) {
	if n := b.max - len(b.buf); n > 0 {
		b.buf = append(b.buf, p[:min(n, len(p))]...)
	}
	if len(b.buf) >= b.max && !b.over {
		b.over = true
		b.full()
	}
	return len(p), nil
}

// LastRun is the last hook call of one agent's event the hook log has.
type LastRun struct {
	Event     string    `json:"event"`
	Time      time.Time `json:"time"`
	OK        bool      `json:"ok"`
	Millis    int       `json:"ms"`
	Workspace string    `json:"workspace,omitempty"`
}

// LastRuns reads the hook log (and the rotated one before it) and returns,
// per agent, the last call of each event, in the order the events were
// first seen. A log that is not there gives none.
func LastRuns(logPath string) (map[string][]LastRun, error) {
	out := map[string][]LastRun{}
	idx := map[string]int{} // agent+" "+event -> position in out[agent]
	for _, p := range []string{logPath + ".1", logPath} {
		f, err := os.Open(p)
		if err != nil {
			if os.IsNotExist(err) {
				continue
			}
			return nil, err
		}
		err = scanLog(io.LimitReader(f, 4*maxLog), func(agent string, run LastRun) {
			k := agent + " " + run.Event
			if i, ok := idx[k]; ok {
				out[agent][i] = run
				return
			}
			idx[k] = len(out[agent])
			out[agent] = append(out[agent], run)
		})
		f.Close()
		if err != nil {
			return nil, err
		}
	}
	return out, nil
}

// logLine is one line of the hook log as report writes it: "TIME AGENT
// [EVENT] [session=ID] [workspace=DIR]" then ": ACTION…" or " error: …",
// and " (Nms)" at the end.
var logLine = lazyRE(`^(\S+) (\S+?)(?: ([A-Za-z][\w-]*))?(?: session=(\S+?))?(?: workspace=("(?:[^"\\]|\\.)*"|.+?))?(:| error:) .*\((\d+)ms\)$`)

// eventRE is an event's name as the log's line names it bare.
var eventRE = lazyRE(`^[A-Za-z][\w-]{0,63}$`)

// logEvent is the event as the log's line names it: an event's name comes
// from the agent's payload, so one of another shape is quoted (and
// clipped), so that it cannot forge a line or be read as a run.
func logEvent(ev string) string {
	if eventRE().MatchString(ev) {
		return ev
	}
	return strconv.Quote(clip(ev, 80))
}

// logWorkspace is the workspace as the log's line names it: quoted (Go
// syntax) if it holds a space, a colon, a quote or a character that is
// not printable, so that no path can end the field early or forge a line.
func logWorkspace(ws string) string {
	if q := strconv.Quote(ws); q != `"`+ws+`"` || strings.ContainsAny(ws, " :") || strings.HasPrefix(ws, `"`) {
		return q
	}
	return ws
}

// maxLogLine is the longest log line scanLog parses; a longer one (a torn
// write, another program's) is skipped.
const maxLogLine = 1 << 20

// scanLog parses the log's lines, calling fn for each.
func scanLog(r io.Reader, fn func(agent string, run LastRun)) error {
	br := bufio.NewReaderSize(r, 64<<10)
	var buf []byte
	long := false
	for {
		chunk, isPrefix, err := br.ReadLine()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
		if !long {
			buf = append(buf, chunk...)
			long = len(buf) > maxLogLine
		}
		if isPrefix {
			continue
		}
		line := string(buf)
		skip := long
		buf, long = buf[:0], false
		if skip {
			continue
		}
		m := logLine().FindStringSubmatch(line)
		if m == nil {
			continue
		}
		t, err := time.Parse("2006-01-02T15:04:05.000Z", m[1])
		if err != nil {
			continue
		}
		// A call without an event: "AGENT error: …" (no event named
		// "error" exists).
		if _, ok := Commands[m[2]]; !ok || m[3] == "" || m[3] == "error" && m[6] == ":" {
			continue
		}
		ms, _ := strconv.Atoi(m[7])
		ws := m[5]
		if strings.HasPrefix(ws, `"`) {
			if u, err := strconv.Unquote(ws); err == nil {
				ws = u
			}
		}
		fn(m[2], LastRun{Event: m[3], Time: t, OK: m[6] == ":", Millis: ms, Workspace: ws})
	}
}
