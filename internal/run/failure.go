package run

import (
	"bytes"
	"fmt"
	"io"
	"strings"

	"github.com/seed1cedbf7c/ckpt/internal/fsroot"
)

// TailLines is how much of each failed attempt's log failure-context.md
// shows: its last TailLines lines, and no more than TailBytes of them.
const (
	TailLines = 200
	TailBytes = 64 << 10
)

// Tail returns the last n lines of a file, at most TailBytes of them (or
// a note that it is missing). It reads only the end of the file: a log
// can be far larger than memory. A line cut by the byte limit starts with
// "[...]".
func Tail(path string, n int) string {
	f, err := fsroot.OpenNoFollow(path)
	if err != nil {
		return "(no log: " + err.Error() + ")"
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil || !fi.Mode().IsRegular() {
		return "(no log: not a regular file)"
	}
	off := max(fi.Size()-TailBytes, 0)
	data, err := io.ReadAll(io.NewSectionReader(f, off, TailBytes))
	if err != nil {
		return "(no log: " + err.Error() + ")"
	}
	return tailLines(data, n, off > 0)
}

// tailLines returns the last n lines of data; cut says data is the end of
// something longer, so its first line may be partial.
func tailLines(data []byte, n int, cut bool) string {
	lines := strings.SplitAfter(string(bytes.TrimRight(data, "\n")), "\n")
	if len(lines) > n {
		lines, cut = lines[len(lines)-n:], false
	}
	if cut && len(lines) > 0 {
		lines[0] = "[...]" + lines[0]
	}
	return strings.TrimRight(strings.Join(lines, ""), "\n")
}

// StatLines bounds the diffstat kept for each attempt in run.json and
// failure-context.md: its first StatLines files and its summary line.
const StatLines = 100

// TrimStat bounds a diffstat to [StatLines] files, its summary line kept.
func TrimStat(stat string) string {
	lines := strings.SplitAfter(strings.TrimRight(stat, "\n"), "\n")
	if len(lines) <= StatLines+1 {
		return stat
	}
	more := len(lines) - 1 - StatLines
	return strings.Join(lines[:StatLines], "") + fmt.Sprintf(" ... and %d more file(s)\n", more) + strings.TrimRight(lines[len(lines)-1], "\n") + "\n"
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
