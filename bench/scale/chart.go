package main

import (
	"fmt"
	"html"
	"io"
	"math"
	"strings"
)

// A point of a series: a tree size (files) and a cost (seconds).
type point struct {
	Files   float64
	Seconds float64
}

// A series is one method's line in a panel; style picks its colour and
// dash (see styles).
type series struct {
	Name   string
	Style  string
	Points []point
}

// A panel is one operation's small chart.
type panel struct {
	Title  string
	Note   string
	Series []series
}

type lineStyle struct {
	Label, Color, Dash string
}

// styles are the methods' looks, in legend order.
var styles = []struct {
	Key string
	lineStyle
}{
	{"ckpt", lineStyle{"ckpt", "#1f5fbf", ""}},
	{"ckpt-watch", lineStyle{"ckpt, watch mode", "#1f5fbf", "6,4"}},
	{"shadow", lineStyle{"shadow repository (git add + commit)", "#e07b00", ""}},
	{"sandbox", lineStyle{"sandbox tools (temporary-index git)", "#c0392b", ""}},
	{"floor", lineStyle{"floor: git status (turn), cat | sha256sum (cold)", "#777777", "2,3"}},
}

func styleOf(key string) lineStyle {
	for _, s := range styles {
		if s.Key == key {
			return s.lineStyle
		}
	}
	return lineStyle{key, "#000000", ""}
}

// Chart geometry (pixels): two columns of panels, README width.
const (
	chartW   = 860
	panelW   = 410
	panelH   = 230
	padLeft  = 62 // room for the cost labels
	padRight = 16
	padTop   = 28 // the panel's title
	padBot   = 34 // the size labels
	legendH  = 78
	titleH   = 30
	columns  = 2
	gapX     = 20
	gapY     = 16
	fontSize = 12
)

// writeChart draws panels as an SVG document: cost (log scale) against
// tree size (log scale, ticks at sizes), one line per series.
func writeChart(w io.Writer, title string, sizes []int, panels []panel) error {
	rows := (len(panels) + columns - 1) / columns
	h := titleH + legendH + rows*(panelH+gapY)
	var b strings.Builder
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" viewBox="0 0 %d %d" font-family="Helvetica, Arial, sans-serif" font-size="%d">`+"\n",
		chartW, h, chartW, h, fontSize)
	fmt.Fprintf(&b, `<rect width="%d" height="%d" fill="#ffffff"/>`+"\n", chartW, h)
	fmt.Fprintf(&b, `<text x="%d" y="20" font-size="15" font-weight="bold">%s</text>`+"\n", 10, esc(title))
	legend(&b, titleH)
	for i, p := range panels {
		x := 10 + (i%columns)*(panelW+gapX)
		y := titleH + legendH + (i/columns)*(panelH+gapY)
		drawPanel(&b, x, y, sizes, p)
	}
	b.WriteString("</svg>\n")
	_, err := io.WriteString(w, b.String())
	return err
}

func legend(b *strings.Builder, y int) {
	fmt.Fprintf(b, `<g class="legend">`+"\n")
	for i, s := range styles {
		lx := 10 + (i%2)*420
		ly := y + 14 + (i/2)*20
		fmt.Fprintf(b, `<line x1="%d" y1="%d" x2="%d" y2="%d" stroke="%s" stroke-width="2.5"%s/>`, lx, ly, lx+30, ly, s.Color, dashAttr(s.Dash))
		fmt.Fprintf(b, `<text x="%d" y="%d">%s</text>`+"\n", lx+38, ly+4, esc(s.Label))
	}
	fmt.Fprintf(b, `<text x="10" y="%d" fill="#555555">cost per operation (log scale) against files in the tree (log scale); median of the runs</text>`+"\n", y+14+3*20)
	b.WriteString("</g>\n")
}

func drawPanel(b *strings.Builder, x0, y0 int, sizes []int, p panel) {
	fmt.Fprintf(b, `<g class="panel" data-title="%s">`+"\n", esc(p.Title))
	left, top := float64(x0+padLeft), float64(y0+padTop)
	w, h := float64(panelW-padLeft-padRight), float64(panelH-padTop-padBot)
	fmt.Fprintf(b, `<text x="%d" y="%d" font-size="13" font-weight="bold">%s</text>`, x0+padLeft, y0+16, esc(p.Title))
	if p.Note != "" {
		fmt.Fprintf(b, `<text x="%d" y="%d" text-anchor="end" fill="#555555" font-size="10">%s</text>`, x0+panelW-padRight, y0+16, esc(p.Note))
	}
	b.WriteString("\n")
	fmt.Fprintf(b, `<rect x="%s" y="%s" width="%s" height="%s" fill="none" stroke="#bbbbbb"/>`+"\n", f(left), f(top), f(w), f(h))

	xlo, xhi := xRange(sizes)
	ylo, yhi := yRange(p)
	xpos := func(files float64) float64 { return left + (math.Log10(files)-xlo)/(xhi-xlo)*w }
	ypos := func(sec float64) float64 { return top + h - (math.Log10(sec)-ylo)/(yhi-ylo)*h }
	for d := ylo; d <= yhi+1e-9; d++ {
		y := ypos(math.Pow(10, d))
		fmt.Fprintf(b, `<line x1="%s" y1="%s" x2="%s" y2="%s" stroke="#e5e5e5"/>`, f(left), f(y), f(left+w), f(y))
		fmt.Fprintf(b, `<text x="%s" y="%s" text-anchor="end" fill="#333333">%s</text>`+"\n", f(left-6), f(y+4), esc(secondsLabel(math.Pow(10, d))))
	}
	for _, n := range sizes {
		if n <= 0 {
			continue
		}
		x := xpos(float64(n))
		fmt.Fprintf(b, `<line x1="%s" y1="%s" x2="%s" y2="%s" stroke="#e5e5e5"/>`, f(x), f(top), f(x), f(top+h))
		fmt.Fprintf(b, `<text x="%s" y="%s" text-anchor="middle" fill="#333333">%s</text>`+"\n", f(x), f(top+h+16), esc(filesLabel(n)))
	}
	fmt.Fprintf(b, `<text x="%s" y="%s" text-anchor="middle" fill="#555555" font-size="10">files</text>`+"\n", f(left+w/2), f(top+h+29))
	for _, s := range p.Series {
		pts := usable(s.Points)
		if len(pts) == 0 {
			continue
		}
		st := styleOf(s.Style)
		var coords []string
		for _, pt := range pts {
			coords = append(coords, f(xpos(pt.Files))+","+f(ypos(pt.Seconds)))
		}
		fmt.Fprintf(b, `<g class="series" data-series="%s"><title>%s</title>`, esc(s.Name), esc(s.Name))
		fmt.Fprintf(b, `<polyline points="%s" fill="none" stroke="%s" stroke-width="2.2"%s/>`, strings.Join(coords, " "), st.Color, dashAttr(st.Dash))
		for _, pt := range pts {
			fmt.Fprintf(b, `<circle cx="%s" cy="%s" r="3" fill="%s"/>`, f(xpos(pt.Files)), f(ypos(pt.Seconds)), st.Color)
		}
		b.WriteString("</g>\n")
	}
	b.WriteString("</g>\n")
}

// usable keeps the points a log scale can draw.
func usable(pts []point) []point {
	var out []point
	for _, p := range pts {
		if p.Files > 0 && p.Seconds > 0 && !math.IsInf(p.Seconds, 0) && !math.IsNaN(p.Seconds) {
			out = append(out, p)
		}
	}
	return out
}

// xRange is the log10 range of the sizes, padded by a fifth of a decade
// each side (half a decade for a single size).
func xRange(sizes []int) (lo, hi float64) {
	lo, hi = math.Inf(1), math.Inf(-1)
	for _, n := range sizes {
		if n > 0 {
			lo, hi = min(lo, math.Log10(float64(n))), max(hi, math.Log10(float64(n)))
		}
	}
	if math.IsInf(lo, 0) {
		return 3, 6
	}
	if hi-lo < 0.5 {
		return lo - 0.5, hi + 0.5
	}
	return lo - 0.2, hi + 0.2
}

// yRange is the panel's cost range in whole decades of seconds.
func yRange(p panel) (lo, hi float64) {
	lo, hi = math.Inf(1), math.Inf(-1)
	for _, s := range p.Series {
		for _, pt := range usable(s.Points) {
			l := math.Log10(pt.Seconds)
			lo, hi = min(lo, l), max(hi, l)
		}
	}
	if math.IsInf(lo, 0) {
		return -3, 0
	}
	lo, hi = math.Floor(lo), math.Ceil(hi)
	if hi <= lo {
		hi = lo + 1
	}
	return lo, hi
}

func secondsLabel(s float64) string {
	switch {
	case s >= 1:
		return fmt.Sprintf("%g s", math.Round(s))
	case s >= 1e-3:
		return fmt.Sprintf("%g ms", math.Round(s*1e3))
	}
	return fmt.Sprintf("%g µs", math.Round(s*1e6))
}

// filesLabel writes 10000 as 10k and 1000000 as 1M.
func filesLabel(n int) string {
	switch {
	case n >= 1e6 && n%1e5 == 0:
		return fmt.Sprintf("%gM", float64(n)/1e6)
	case n >= 1e3 && n%100 == 0:
		return fmt.Sprintf("%gk", float64(n)/1e3)
	}
	return fmt.Sprint(n)
}

func dashAttr(d string) string {
	if d == "" {
		return ""
	}
	return fmt.Sprintf(` stroke-dasharray="%s"`, d)
}

// f writes a coordinate with one decimal.
func f(v float64) string { return fmt.Sprintf("%.1f", v) }

func esc(s string) string { return html.EscapeString(s) }
