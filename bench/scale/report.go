package main

import (
	"fmt"
	"io"
	"strings"
	"time"
)

// methods are the table's columns within a size.
var methods = []struct{ Key, Head string }{
	{"ckpt", "ckpt"},
	{"shadow", "shadow repo"},
	{"sandbox", "sandbox tools"},
	{"floor", "floor"},
}

// An operation is a table row (and a chart panel): the measurement of
// each method, "" where the method has none.
type operation struct {
	Title string
	Cells map[string]string // method key -> measurement
	// Watch: the ckpt measurement in watch mode, drawn beside ckpt.
	Watch string
}

var operations = []operation{
	{Title: "20-file turn", Cells: map[string]string{"ckpt": mTurn, "shadow": sTurn, "sandbox": xSnapshot, "floor": mStatus}, Watch: mWatch},
	{Title: "20-file turn, watch mode", Cells: map[string]string{"ckpt": mWatch, "floor": mStatus}},
	{Title: "cold checkpoint", Cells: map[string]string{"ckpt": mCold, "shadow": sCold, "floor": mCat}},
	{Title: "restore of a turn", Cells: map[string]string{"ckpt": mRestore, "shadow": sRestore, "sandbox": xRestore}},
	{Title: "diff of a turn", Cells: map[string]string{"ckpt": mDiff, "shadow": sDiff}},
	{Title: "log", Cells: map[string]string{"ckpt": mLog, "shadow": sLog}},
	{Title: "gc", Cells: map[string]string{"ckpt": mGC, "shadow": sGC}},
	{Title: "fsck", Cells: map[string]string{"ckpt": mFsck, "shadow": sFsck}},
}

// markdown is the report: what was run and where, one table of medians
// (rows: operations; columns: size x method), one of ckpt/other ratios.
func markdown(rep report) string {
	var b strings.Builder
	fmt.Fprintf(&b, "`%s`\n\n", strings.ReplaceAll(rep.Command, "\n", "` then `"))
	fmt.Fprintf(&b, "Machine: %s; %s; %s.\n\n", rep.Machine, rep.Git, rep.Go)
	for _, s := range rep.Sizes {
		fmt.Fprintf(&b, "- %s files (%s corpus, %.0f MB): %s, load average %s before, %s after; %d turns, median of %d runs (cold save, gc, fsck, sandbox tools' restore: %d; shadow cold: 1)\n",
			filesLabel(s.Files), s.Corpus, float64(s.Bytes)/1e6, s.Date, s.LoadBefore, s.LoadAfter, s.Reps, s.Reps, s.SlowReps)
	}
	b.WriteString("\nMedian times (floor: `git status --porcelain` for turns, `cat | sha256sum` of every file for a cold checkpoint):\n\n")
	b.WriteString("| operation |")
	for _, s := range rep.Sizes {
		for _, m := range methods {
			fmt.Fprintf(&b, " %s %s |", filesLabel(s.Files), m.Head)
		}
	}
	b.WriteString("\n|---|" + strings.Repeat("---:|", len(rep.Sizes)*len(methods)) + "\n")
	var notes []string
	for _, op := range operations {
		fmt.Fprintf(&b, "| %s |", op.Title)
		for _, s := range rep.Sizes {
			for _, m := range methods {
				name := op.Cells[m.Key]
				cell := ""
				if r := s.get(name); name != "" && r != nil {
					cell = dur(r.Median)
				} else if why, ok := s.Skipped[name]; name != "" && ok {
					cell = "not measured*"
					note := fmt.Sprintf("\\* %s at %s files: %s.", name, filesLabel(s.Files), why)
					notes = append(notes, note)
				}
				fmt.Fprintf(&b, " %s |", cell)
			}
		}
		b.WriteString("\n")
	}
	// Sizes and memory, ckpt and shadow only.
	extra := func(title string, v func(s sizeRun, method string) string) {
		fmt.Fprintf(&b, "| %s |", title)
		for _, s := range rep.Sizes {
			for _, m := range methods {
				fmt.Fprintf(&b, " %s |", v(s, m.Key))
			}
		}
		b.WriteString("\n")
	}
	extra("store growth per turn", func(s sizeRun, method string) string {
		switch method {
		case "ckpt":
			return fmt.Sprintf("%d KB", s.CkptGrowth/1024)
		case "shadow":
			return fmt.Sprintf("%d KB", s.ShadowGrowth/1024)
		}
		return ""
	})
	for _, m := range [][2]string{{mCold, "cold save"}, {mTurn, "turn"}} {
		name := m[0]
		extra("ckpt peak RSS per file, "+m[1], func(s sizeRun, method string) string {
			if r := s.get(name); r != nil && method == "ckpt" && s.Files > 0 {
				return fmt.Sprintf("%.0f B (%.0f MB)", float64(r.MaxRSS)*1024/float64(s.Files), float64(r.MaxRSS)/1024)
			}
			return ""
		})
	}
	for _, n := range notes {
		b.WriteString("\n" + n + "\n")
	}
	ratios(&b, rep)
	return b.String()
}

// ratios writes ckpt's time divided by each other method's, per size
// (under 1: ckpt is faster).
func ratios(b *strings.Builder, rep report) {
	b.WriteString("\nckpt ÷ other method (below 1: ckpt is faster), same run:\n\n| ratio |")
	for _, s := range rep.Sizes {
		fmt.Fprintf(b, " %s |", filesLabel(s.Files))
	}
	b.WriteString("\n|---|" + strings.Repeat("---:|", len(rep.Sizes)) + "\n")
	for _, op := range operations {
		for _, m := range methods[1:] {
			other := op.Cells[m.Key]
			if other == "" || op.Cells["ckpt"] == "" {
				continue
			}
			head := m.Head
			if m.Key == "floor" {
				head = other
			}
			fmt.Fprintf(b, "| %s: ckpt ÷ %s |", op.Title, cell(head))
			for _, s := range rep.Sizes {
				a, o := s.get(op.Cells["ckpt"]), s.get(other)
				if a == nil || o == nil || o.Median == 0 {
					b.WriteString(" |")
					continue
				}
				fmt.Fprintf(b, " %.2f |", float64(a.Median)/float64(o.Median))
			}
			b.WriteString("\n")
		}
	}
	fmt.Fprintf(b, "| store growth per turn: ckpt ÷ shadow repo |")
	for _, s := range rep.Sizes {
		if s.ShadowGrowth > 0 {
			fmt.Fprintf(b, " %.2f |", float64(s.CkptGrowth)/float64(s.ShadowGrowth))
		} else {
			b.WriteString(" |")
		}
	}
	b.WriteString("\n")
}

// cell escapes the pipes of a table cell.
func cell(s string) string { return strings.ReplaceAll(s, "|", `\|`) }

// dur writes a duration with three significant digits at most.
func dur(d time.Duration) string {
	s := d.Seconds()
	switch {
	case s >= 100:
		return fmt.Sprintf("%.0f s", s)
	case s >= 10:
		return fmt.Sprintf("%.1f s", s)
	case s >= 1:
		return fmt.Sprintf("%.2f s", s)
	case s >= 0.01:
		return fmt.Sprintf("%.0f ms", s*1e3)
	}
	return fmt.Sprintf("%.1f ms", s*1e3)
}

// chart draws one panel per operation (the watch-mode turn drawn in the
// turn's panel): each method's median against the tree size.
func chart(w io.Writer, rep report) error {
	var sizes []int
	corpora := map[string]bool{}
	for _, s := range rep.Sizes {
		sizes = append(sizes, s.Files)
		corpora[s.Corpus] = true
	}
	var panels []panel
	for _, op := range operations {
		if op.Title == "20-file turn, watch mode" {
			continue
		}
		p := panel{Title: op.Title}
		add := func(style, name string) {
			if name == "" {
				return
			}
			sr := series{Name: name, Style: style}
			for _, s := range rep.Sizes {
				if r := s.get(name); r != nil {
					sr.Points = append(sr.Points, point{float64(s.Files), r.Median.Seconds()})
				} else if _, ok := s.Skipped[name]; ok {
					p.Note = fmt.Sprintf("sandbox tools: not measured at %s", filesLabel(s.Files))
				}
			}
			p.Series = append(p.Series, sr)
		}
		add("ckpt", op.Cells["ckpt"])
		add("ckpt-watch", op.Watch)
		for _, m := range methods[1:] {
			add(m.Key, op.Cells[m.Key])
		}
		panels = append(panels, p)
	}
	var cs []string
	for c := range corpora {
		cs = append(cs, c)
	}
	title := fmt.Sprintf("How the cost of each operation grows with the tree (%s corpus)", strings.Join(cs, ", "))
	return writeChart(w, title, sizes, panels)
}
