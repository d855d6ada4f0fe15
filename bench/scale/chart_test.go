package main

import (
	"encoding/xml"
	"errors"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/seed1cedbf7c/ckpt/bench/internal/harness"
)

// fixedReport is a three-size run with made-up numbers, the sandbox
// tools' restore skipped at the largest size and one zero median.
func fixedReport() report {
	rep := report{Machine: "test", Command: "bench/scale.sh -sizes 10000,100000,1000000"}
	for i, n := range []int{10000, 100000, 1000000} {
		s := sizeRun{Corpus: "gen", Files: n, Bytes: int64(n) * 3700, Reps: 5, SlowReps: 1, Skipped: map[string]string{}}
		scale := math.Pow(10, float64(i))
		for j, name := range measurementOrder {
			d := time.Duration(float64(j+1) * 3 * scale * float64(time.Millisecond))
			if name == xRestore && n > 100000 {
				s.Skipped[name] = "not measured"
				continue
			}
			if name == mLog && i == 0 {
				d = 0 // a log scale cannot draw it: left out, not NaN
			}
			s.Results = append(s.Results, &harness.Result{Name: name, Median: d, Min: d, Runs: 5})
		}
		rep.Sizes = append(rep.Sizes, s)
	}
	return rep
}

// svgDoc is what the test reads back from the chart.
type svgDoc struct {
	root   string
	series map[string][]string // panel title -> series names
	nums   []string            // every coordinate written
}

// parseSVG decodes the whole document with encoding/xml (so it must be
// well-formed) and collects the panels' series and every coordinate.
func parseSVG(t *testing.T, doc string) svgDoc {
	t.Helper()
	d := xml.NewDecoder(strings.NewReader(doc))
	out := svgDoc{series: map[string][]string{}}
	var panelTitle string
	for {
		tok, err := d.Token()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatalf("not well-formed XML: %v\n%s", err, doc)
		}
		se, ok := tok.(xml.StartElement)
		if !ok {
			continue
		}
		if out.root == "" {
			out.root = se.Name.Local
		}
		for _, a := range se.Attr {
			switch a.Name.Local {
			case "data-title":
				panelTitle = a.Value
			case "data-series":
				out.series[panelTitle] = append(out.series[panelTitle], a.Value)
			case "x", "y", "x1", "x2", "y1", "y2", "cx", "cy", "width", "height", "r":
				out.nums = append(out.nums, a.Value)
			case "points":
				for _, xy := range strings.Fields(a.Value) {
					out.nums = append(out.nums, strings.Split(xy, ",")...)
				}
			}
		}
	}
	return out
}

func TestChartWellFormed(t *testing.T) {
	var b strings.Builder
	if err := chart(&b, fixedReport()); err != nil {
		t.Fatal(err)
	}
	doc := parseSVG(t, b.String())
	if doc.root != "svg" {
		t.Fatalf("root element %q, want svg", doc.root)
	}
	want := map[string][]string{
		"20-file turn":      {mTurn, mWatch, sTurn, xSnapshot, mStatus},
		"cold checkpoint":   {mCold, sCold, mCat},
		"restore of a turn": {mRestore, sRestore, xRestore},
		"diff of a turn":    {mDiff, sDiff},
		"log":               {mLog, sLog},
		"gc":                {mGC, sGC},
		"fsck":              {mFsck, sFsck},
	}
	for title, names := range want {
		if got := doc.series[title]; !slices.Equal(got, names) {
			t.Errorf("panel %q: series %q, want %q", title, got, names)
		}
	}
	if len(doc.series) != len(want) {
		t.Errorf("panels %v, want %d", doc.series, len(want))
	}
	checkNumbers(t, doc.nums)
	if !strings.Contains(b.String(), "not measured at 1M") {
		t.Errorf("the skipped sandbox restore at 1M is not said on the chart")
	}
}

// TestChartOneSize: a single size (no x range) and a panel with no data
// still give finite coordinates.
func TestChartOneSize(t *testing.T) {
	rep := fixedReport()
	rep.Sizes = rep.Sizes[:1]
	rep.Sizes[0].Results = rep.Sizes[0].Results[:2]
	var b strings.Builder
	if err := chart(&b, rep); err != nil {
		t.Fatal(err)
	}
	doc := parseSVG(t, b.String())
	if got := doc.series["20-file turn"]; !slices.Equal(got, []string{mStatus}) {
		t.Errorf("turn panel series %q, want only %q", got, mStatus)
	}
	checkNumbers(t, doc.nums)
}

func checkNumbers(t *testing.T, nums []string) {
	t.Helper()
	if len(nums) == 0 {
		t.Fatal("no coordinates")
	}
	for _, s := range nums {
		v, err := strconv.ParseFloat(s, 64)
		if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
			t.Fatalf("coordinate %q is not a finite number", s)
		}
	}
}

// TestMarkdownTable: one row per operation, size x method columns, the
// skipped measurement said, and pipes in names escaped.
func TestMarkdownTable(t *testing.T) {
	md := markdown(fixedReport())
	var header string
	rows := map[string]int{}
	for _, l := range strings.Split(md, "\n") {
		if strings.HasPrefix(l, "| operation |") {
			header = l
		}
		if strings.HasPrefix(l, "| ") {
			rows[strings.Split(l, " |")[0]]++
		}
	}
	if got, want := strings.Count(header, "|")-1, 1+3*len(methods); got != want {
		t.Errorf("header has %d columns, want %d: %s", got, want, header)
	}
	for _, op := range operations {
		if rows["| "+op.Title] != 1 {
			t.Errorf("row %q appears %d times, want once", op.Title, rows["| "+op.Title])
		}
	}
	if !strings.Contains(md, "not measured") || !strings.Contains(md, `cat \| sha256sum`) {
		t.Errorf("table lacks the skipped note or an escaped pipe:\n%s", md)
	}
}
