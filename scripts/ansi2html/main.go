// Command ansi2html renders a terminal capture with SGR escape sequences
// (tmux capture-pane -e) as a standalone HTML page, for screenshots of the
// rewind picker in the docs (scripts/picker-screenshots).
//
//	tmux capture-pane -e -p | go run ./scripts/ansi2html -title picker > picker.html
package main

import (
	"bufio"
	"flag"
	"fmt"
	"html"
	"io"
	"os"
	"strconv"
	"strings"
)

// A dark palette for the 16 ANSI colors.
var palette = [16]string{
	"#1e1e2e", "#f38ba8", "#a6e3a1", "#f9e2af", "#89b4fa", "#f5c2e7", "#94e2d5", "#bac2de",
	"#585b70", "#f38ba8", "#a6e3a1", "#f9e2af", "#89b4fa", "#f5c2e7", "#94e2d5", "#a6adc8",
}

const (
	defaultFG = "#cdd6f4"
	defaultBG = "#1e1e2e"
)

type attrs struct {
	fg, bg                                 string
	bold, faint, italic, underline, invert bool
}

func (a attrs) style() string {
	fg, bg := a.fg, a.bg
	if a.invert {
		if fg == "" {
			fg = defaultFG
		}
		if bg == "" {
			bg = defaultBG
		}
		fg, bg = bg, fg
	}
	var s []string
	if fg != "" {
		s = append(s, "color:"+fg)
	}
	if bg != "" {
		s = append(s, "background:"+bg)
	}
	if a.bold {
		s = append(s, "font-weight:bold")
	}
	if a.faint {
		s = append(s, "opacity:0.6")
	}
	if a.italic {
		s = append(s, "font-style:italic")
	}
	if a.underline {
		s = append(s, "text-decoration:underline")
	}
	return strings.Join(s, ";")
}

// color256 returns the CSS color of an xterm 256-color index.
func color256(n int) string {
	switch {
	case n < 16:
		return palette[n]
	case n < 232:
		n -= 16
		level := func(v int) int {
			if v == 0 {
				return 0
			}
			return 55 + 40*v
		}
		return fmt.Sprintf("#%02x%02x%02x", level(n/36), level(n/6%6), level(n%6))
	default:
		g := 8 + 10*(n-232)
		return fmt.Sprintf("#%02x%02x%02x", g, g, g)
	}
}

// sgr applies one Select Graphic Rendition sequence's parameters.
func (a *attrs) sgr(params []int) {
	if len(params) == 0 {
		params = []int{0}
	}
	for i := 0; i < len(params); i++ {
		p := params[i]
		switch {
		case p == 0:
			*a = attrs{}
		case p == 1:
			a.bold = true
		case p == 2:
			a.faint = true
		case p == 3:
			a.italic = true
		case p == 4:
			a.underline = true
		case p == 7:
			a.invert = true
		case p == 22:
			a.bold, a.faint = false, false
		case p == 23:
			a.italic = false
		case p == 24:
			a.underline = false
		case p == 27:
			a.invert = false
		case p >= 30 && p <= 37:
			a.fg = palette[p-30]
		case p == 39:
			a.fg = ""
		case p >= 40 && p <= 47:
			a.bg = palette[p-40]
		case p == 49:
			a.bg = ""
		case p >= 90 && p <= 97:
			a.fg = palette[p-90+8]
		case p >= 100 && p <= 107:
			a.bg = palette[p-100+8]
		case (p == 38 || p == 48) && i+2 < len(params) && params[i+1] == 5:
			c := color256(params[i+2])
			if p == 38 {
				a.fg = c
			} else {
				a.bg = c
			}
			i += 2
		case (p == 38 || p == 48) && i+4 < len(params) && params[i+1] == 2:
			c := fmt.Sprintf("#%02x%02x%02x", params[i+2], params[i+3], params[i+4])
			if p == 38 {
				a.fg = c
			} else {
				a.bg = c
			}
			i += 4
		}
	}
}

// convert renders the capture's lines as HTML spans.
func convert(in string) string {
	var b strings.Builder
	var cur attrs
	open := false
	text := func(s string) {
		if s == "" {
			return
		}
		if !open {
			if st := cur.style(); st != "" {
				fmt.Fprintf(&b, `<span style="%s">`, st)
				open = true
			}
		}
		b.WriteString(html.EscapeString(s))
	}
	closeSpan := func() {
		if open {
			b.WriteString("</span>")
			open = false
		}
	}
	for i := 0; i < len(in); {
		if in[i] != 0x1b {
			j := strings.IndexByte(in[i:], 0x1b)
			if j < 0 {
				j = len(in) - i
			}
			text(in[i : i+j])
			i += j
			continue
		}
		// ESC [ params final
		if i+1 < len(in) && in[i+1] == '[' {
			j := i + 2
			for j < len(in) && (in[j] < 0x40 || in[j] > 0x7e) {
				j++
			}
			if j >= len(in) {
				break
			}
			if in[j] == 'm' {
				var params []int
				for _, f := range strings.FieldsFunc(in[i+2:j], func(r rune) bool { return r == ';' || r == ':' }) {
					n, _ := strconv.Atoi(f)
					params = append(params, n)
				}
				closeSpan()
				cur.sgr(params)
			}
			i = j + 1
			continue
		}
		i++ // another escape: skip the ESC
	}
	closeSpan()
	return b.String()
}

func main() {
	title := flag.String("title", "ckpt", "the page's title")
	flag.Parse()
	data, err := io.ReadAll(bufio.NewReader(os.Stdin))
	if err != nil {
		fmt.Fprintln(os.Stderr, "ansi2html:", err)
		os.Exit(1)
	}
	body := convert(strings.TrimRight(string(data), "\n"))
	fmt.Printf(`<!doctype html>
<html><head><meta charset="utf-8"><title>%s</title>
<style>
html, body { margin: 0; background: %s; }
pre { margin: 0; padding: 16px; color: %s; font: 14px/1.3 "DejaVu Sans Mono", "Menlo", monospace; }
</style></head>
<body><pre>%s</pre></body></html>
`, html.EscapeString(*title), defaultBG, defaultFG, body)
}
