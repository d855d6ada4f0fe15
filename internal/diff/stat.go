package diff

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"strconv"
	"strings"
)

// FileStat summarizes one change for WriteStat.
type FileStat struct {
	Path string
	// OldPath, when set and not Path, is the name a renamed file had.
	OldPath    string
	Insertions int // added lines (text only)
	Deletions  int // deleted lines (text only)
	Binary     bool
	// OldSize and NewSize are the byte sizes of a binary change; both are
	// zero when only the mode changed.
	OldSize, NewSize int64
}

// Stat counts the lines a change inserts and deletes, as git diff --stat
// does; a change between a file and a symlink counts as one.
func Stat(c Change) FileStat {
	st := FileStat{Path: c.Path, OldPath: c.OldPath}
	var oc, nc []byte
	if c.Old != nil {
		oc = c.Old.Content
		st.Binary = IsBinary(oc)
	}
	if c.New != nil {
		nc = c.New.Content
		st.Binary = st.Binary || IsBinary(nc)
	}
	typeChange := c.Old != nil && c.New != nil && c.Old.Mode&modeTypeMask != c.New.Mode&modeTypeMask
	switch {
	case !typeChange && c.Old != nil && c.New != nil && bytes.Equal(oc, nc):
		// only the mode changed
	case st.Binary:
		st.OldSize, st.NewSize = int64(len(oc)), int64(len(nc))
	case typeChange:
		// shown as a deletion and an addition
		st.Insertions, st.Deletions = len(splitLines(string(nc))), len(splitLines(string(oc)))
	default:
		st.Insertions, st.Deletions = lineCounts(oc, nc)
	}
	return st
}

// statWidth is the line width WriteStat fits its graph into, git's default
// when output is not a terminal.
const statWidth = 80

// StatOptions select how [WriteStatOptions] writes a summary.
type StatOptions struct {
	// Width is the line width to fit (0: 80, git's when output is not a
	// terminal).
	Width int
	// Color writes the graph's '+' green and '-' red, as git does.
	Color bool
}

// WriteStat writes stats the way git diff --stat does at 80 columns: one
// " path | N +++--" line per file (" path | Bin 10 -> 12 bytes" for binary
// files), then " N files changed, X insertions(+), Y deletions(-)". It
// writes nothing for no stats.
func WriteStat(w io.Writer, stats []FileStat) error {
	return WriteStatOptions(w, stats, StatOptions{})
}

// WriteStatOptions writes stats as [WriteStat] does, as o says. Long
// names are cut at the front to "..." as git cuts them, and the graph is
// scaled to fit.
func WriteStatOptions(w io.Writer, stats []FileStat, o StatOptions) error {
	if len(stats) == 0 {
		return nil
	}
	green, red, reset := "", "", ""
	if o.Color {
		green, red, reset = colorNew, colorOld, colorReset
	}
	names := make([]string, len(stats))
	maxLen, maxChange, binWidth, numberWidth := 0, 0, 0, 0
	for i, st := range stats {
		names[i] = QuotePath(st.Path)
		if st.OldPath != "" && st.OldPath != st.Path {
			names[i] = RenameName(st.OldPath, st.Path)
		}
		maxLen = max(maxLen, len(names[i]))
		if st.Binary {
			binWidth = max(binWidth, 14+decimalWidth(st.OldSize)+decimalWidth(st.NewSize))
			numberWidth = 3
			continue
		}
		maxChange = max(maxChange, st.Insertions+st.Deletions)
	}
	width := o.Width
	if width <= 0 {
		width = statWidth
	}
	numberWidth = max(numberWidth, decimalWidth(int64(maxChange)))
	width = max(width, 16+6+numberWidth)
	graphWidth := maxChange
	if maxChange+4 <= binWidth {
		graphWidth = binWidth - 4
	}
	nameWidth := maxLen
	if nameWidth+numberWidth+6+graphWidth > width {
		if graphWidth > width*3/8-numberWidth-6 {
			graphWidth = max(width*3/8-numberWidth-6, 6)
		}
		if nameWidth > width-numberWidth-6-graphWidth {
			nameWidth = width - numberWidth - 6 - graphWidth
		} else {
			graphWidth = width - numberWidth - 6 - nameWidth
		}
	}

	bw := bufio.NewWriter(w)
	ins, del := 0, 0
	for i, st := range stats {
		name, prefix, n := names[i], "", nameWidth
		if nameWidth < len(name) {
			prefix = "..."
			n -= 3
			name = name[len(name)-n:]
			if j := strings.IndexByte(name, '/'); j >= 0 {
				name = name[j:]
			}
		}
		fmt.Fprintf(bw, " %s%-*s |", prefix, n, name)
		if st.Binary {
			fmt.Fprintf(bw, " %*s", numberWidth, "Bin")
			if st.OldSize != 0 || st.NewSize != 0 {
				fmt.Fprintf(bw, " %s%d%s -> %s%d%s bytes", red, st.OldSize, reset, green, st.NewSize, reset)
			}
			bw.WriteByte('\n')
			continue
		}
		ins += st.Insertions
		del += st.Deletions
		add, rem := st.Insertions, st.Deletions
		if graphWidth <= maxChange {
			total := scaleLinear(add+rem, graphWidth, maxChange)
			if total < 2 && add > 0 && rem > 0 {
				total = 2
			}
			if add < rem {
				add = scaleLinear(add, graphWidth, maxChange)
				rem = total - add
			} else {
				rem = scaleLinear(rem, graphWidth, maxChange)
				add = total - rem
			}
		}
		fmt.Fprintf(bw, " %*d", numberWidth, st.Insertions+st.Deletions)
		if st.Insertions+st.Deletions > 0 {
			bw.WriteByte(' ')
		}
		if add > 0 {
			bw.WriteString(green + strings.Repeat("+", add) + reset)
		}
		if rem > 0 {
			bw.WriteString(red + strings.Repeat("-", rem) + reset)
		}
		bw.WriteByte('\n')
	}
	bw.WriteString(statSummary(len(stats), ins, del) + "\n")
	return bw.Flush()
}

// statSummary is git's " N files changed, X insertions(+), Y deletions(-)",
// which leaves out a zero count unless both are zero.
func statSummary(files, ins, del int) string {
	s := " " + plural(files, "file", "files") + " changed"
	if ins != 0 || del == 0 {
		s += ", " + plural(ins, "insertion(+)", "insertions(+)")
	}
	if del != 0 || ins == 0 {
		s += ", " + plural(del, "deletion(-)", "deletions(-)")
	}
	return s
}

func plural(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return strconv.Itoa(n) + " " + many
}

func scaleLinear(it, width, maxChange int) int {
	if it == 0 {
		return 0
	}
	return 1 + it*(width-1)/maxChange
}

func decimalWidth(n int64) int {
	return len(strconv.FormatInt(n, 10))
}
