package run

import (
	"bytes"
	"fmt"
	"os"
	"strings"
)

// TailLines is how much of each failed attempt's log failure-context.md
// shows.
const TailLines = 200

// Tail returns the last n lines of a file (or a note that it is missing).
func Tail(path string, n int) string {
	data, err := os.ReadFile(path)
	if err != nil {
		return "(no log: " + err.Error() + ")"
	}
	lines := strings.SplitAfter(string(bytes.TrimRight(data, "\n")), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.TrimRight(strings.Join(lines, ""), "\n")
}

// FailureContext renders failure-context.md, Decree's format, with each
// attempt's changes added: what it changed, its exit status, its log tail.
func FailureContext(attempts []Attempt, logTail func(n int) string) []byte {
	var b bytes.Buffer
	fmt.Fprintf(&b, "# Failure Context\n\nThis message has failed %d previous attempt(s). This is the final retry with a clean slate.\n", len(attempts))
	for _, a := range attempts {
		fmt.Fprintf(&b, "\n## Attempt %d\n\n", a.N)
		code := fmt.Sprint(a.Exit.Code)
		if a.Exit.Signal != "" {
			code = "killed by signal " + a.Exit.Signal
		} else if a.Exit.Error != "" {
			code += " (" + a.Exit.Error + ")"
		}
		fmt.Fprintf(&b, "Exit code: %s\n\n", code)
		fmt.Fprintf(&b, "Changes: +%d ~%d -%d (all reverted before this attempt)\n", a.Added, a.Modified, a.Deleted)
		if a.Stat != "" {
			fmt.Fprintf(&b, "\n```\n%s\n```\n", strings.TrimRight(a.Stat, "\n"))
		}
		fmt.Fprintf(&b, "\nLog (last %d lines):\n\n```\n%s\n```\n", TailLines, logTail(a.N))
	}
	return b.Bytes()
}
