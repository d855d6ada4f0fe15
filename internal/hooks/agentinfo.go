package hooks

import (
	"bufio"
	"context"
	"io"
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// Commands are the agents' own commands, as their npm packages install
// them.
var Commands = map[string]string{ClaudeCode: "claude", Gemini: "gemini", Codex: "codex"}

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
	out, err := cmd.Output()
	line, _, _ := strings.Cut(strings.TrimSpace(string(out)), "\n")
	a.Version = clip(strings.TrimSpace(line), 200)
	switch {
	case ctx.Err() != nil:
		a.Error = "--version did not answer within " + timeout.String()
	case err != nil && a.Version == "":
		a.Error = "--version: " + err.Error()
	}
	return a
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
var logLine = regexp.MustCompile(`^(\S+) (\S+?)(?: ([A-Za-z][\w-]*))?(?: session=(\S+?))?(?: workspace=(.+?))?(:| error:) .*\((\d+)ms\)$`)

// scanLog parses the log's lines, calling fn for each.
func scanLog(r io.Reader, fn func(agent string, run LastRun)) error {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		m := logLine.FindStringSubmatch(sc.Text())
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
		fn(m[2], LastRun{Event: m[3], Time: t, OK: m[6] == ":", Millis: ms, Workspace: m[5]})
	}
	return sc.Err()
}
