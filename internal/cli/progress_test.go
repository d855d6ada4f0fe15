package cli

import (
	"bytes"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/seed1cedbf7c/ckpt"
	"github.com/vbauerster/mpb/v8"
)

// screen replays what the bars write to a terminal: lines, cursor-up and
// erase-below. Its lines are what a person sees.
type screen struct {
	lines []string
	row   int
	raw   strings.Builder // everything written
}

var escape = regexp.MustCompile(`^\x1b\[(\d*)([A-Za-z])`)

func (s *screen) Write(b []byte) (int, error) {
	s.raw.Write(b)
	for t := string(b); t != ""; {
		if m := escape.FindStringSubmatch(t); m != nil {
			n, _ := strconv.Atoi(m[1])
			switch m[2] {
			case "A":
				s.row = max(s.row-max(n, 1), 0)
			case "J":
				s.lines = s.lines[:min(s.row, len(s.lines))]
			}
			t = t[len(m[0]):]
			continue
		}
		line, rest, nl := strings.Cut(t, "\n")
		if i := strings.IndexByte(line, '\x1b'); i >= 0 {
			line, rest, nl = t[:i], t[i:], false
		}
		for len(s.lines) <= s.row {
			s.lines = append(s.lines, "")
		}
		s.lines[s.row] += line
		if nl {
			s.row++
		}
		t = rest
	}
	return len(b), nil
}

// frames passes each write of the container on, to wait for a render.
type frames chan []byte

func (f frames) Write(b []byte) (int, error) {
	f <- bytes.Clone(b)
	return len(b), nil
}

// barDriver feeds reports to a progressBar whose clock and refreshes the
// test drives, and returns the screen after each report.
type barDriver struct {
	t       *testing.T
	b       *progressBar
	clock   time.Time
	refresh chan any
	out     frames
	scr     screen
}

func newBarDriver(t *testing.T) *barDriver {
	d := &barDriver{t: t, clock: time.Unix(1e9, 0), refresh: make(chan any), out: make(frames, 64)}
	d.b = &progressBar{w: d.out, start: d.clock, now: func() time.Time { return d.clock },
		opts: []mpb.ContainerOption{mpb.WithManualRefresh(d.refresh), mpb.WithWidth(100)}}
	t.Cleanup(d.b.stop)
	return d
}

// report passes p after step of (test) time, renders, and returns what
// the screen shows.
func (d *barDriver) report(step time.Duration, p ckpt.Progress) []string {
	d.t.Helper()
	d.clock = d.clock.Add(step)
	d.b.update(p)
	d.refresh <- d.clock
	select {
	case f := <-d.out:
		d.scr.Write(f)
	case <-time.After(time.Minute):
		d.t.Fatalf("no frame rendered after %+v", p)
	}
	return append([]string(nil), d.scr.lines...)
}

var (
	totalRe   = regexp.MustCompile(`(\d+)/(\d+) files, [^,/]+/([^,]+),`)
	spinnerRe = regexp.MustCompile(`^scanning [⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏] (\d+) files, \S+ \S+ so far, \d+(\.\d)? (B|KiB|MiB)/s$`)
	barRe     = regexp.MustCompile(`^scanning \[[=>-]{28}\] +\d+% \d+/\d+ files, .*, \d+(\.\d)? (B|KiB|MiB)/s, ETA (\d+m)?\d+s$`)
)

// TestProgressBarCountingThenFinal drives the bar with a scan's reports: a
// spinner, with counts and rate but no total, while the total grows; then
// a bar whose total never changes, with rate and ETA.
func TestProgressBarCountingThenFinal(t *testing.T) {
	d := newBarDriver(t)
	const kib = 1024 * 1024 // MiB, reported every second: ETAs of seconds
	var reports []ckpt.Progress
	for i := int64(1); i <= 4; i++ { // counting: the total found grows
		reports = append(reports, ckpt.Progress{Op: "scan", Files: 5 * i, TotalFiles: 8 * i, Bytes: 5 * i * kib, TotalBytes: 8 * i * kib, Counting: true})
	}
	for i := int64(4); i <= 8; i++ {
		reports = append(reports, ckpt.Progress{Op: "scan", Files: 5 * i, TotalFiles: 40, Bytes: 5 * i * kib, TotalBytes: 40 * kib})
	}
	final := ""
	spinners, bars := 0, 0
	for i, p := range reports {
		lines := d.report(time.Second, p)
		if len(lines) == 0 && !(i == len(reports)-1) {
			t.Fatalf("report %d %+v: nothing shown", i, p)
		}
		for _, l := range lines {
			t.Logf("%d: %s", i, l)
			if len(l) > 100 {
				t.Errorf("line wider than 100: %q", l)
			}
			if m := totalRe.FindStringSubmatch(l); m != nil {
				total := m[2] + " " + m[3]
				if p.Counting {
					t.Errorf("report %d (counting): a total shown: %q", i, l)
				}
				if final != "" && total != final {
					t.Errorf("report %d: total %s after the final %s: %q", i, total, final, l)
				}
				final = total
			}
			switch {
			case i == 0 && l == "scanning ⠋ 5 files, 5.0 MiB so far":
				// no rate measured yet: none shown
				spinners++
			case spinnerRe.MatchString(l):
				spinners++
			case barRe.MatchString(l):
				bars++
			default:
				t.Errorf("report %d %+v: got %q, want a spinner or a bar with rate and ETA", i, p, l)
			}
		}
		if p.Counting && (len(lines) != 1 || !strings.HasPrefix(lines[0], "scanning ⠋") && !spinnerRe.MatchString(lines[0])) {
			t.Errorf("report %d (counting): got %q, want one spinner", i, lines)
		}
	}
	if final != "40 40 MiB" {
		t.Errorf("final total %q, want 40 files, 40 MiB", final)
	}
	if spinners == 0 || bars == 0 {
		t.Errorf("%d spinner lines, %d bar lines", spinners, bars)
	}
}

// TestProgressBarNeverGoesBack: reports from concurrent workers arrive out
// of order; the bar shows the most done so far, and a rate once measured.
func TestProgressBarNeverGoesBack(t *testing.T) {
	d := newBarDriver(t)
	d.report(time.Second, ckpt.Progress{Op: "restore", Files: 128, TotalFiles: 1000})
	if lines := d.report(time.Second, ckpt.Progress{Op: "restore", Files: 64, TotalFiles: 1000}); len(lines) != 1 || !strings.Contains(lines[0], " 128/1000 files") {
		t.Errorf("got %q, want 128/1000 files", lines)
	}
	lines := d.report(time.Second, ckpt.Progress{Op: "restore", Files: 192, TotalFiles: 1000})
	if len(lines) != 1 || !regexp.MustCompile(` 192/1000 files, 32 files/s, ETA 25s$`).MatchString(lines[0]) {
		t.Errorf("got %q, want 192/1000 files, 32 files/s, ETA 25s", lines)
	}
}

// TestProgressBarClears: clear leaves a clean screen for a message, the
// bar comes back below it, and stop leaves only the message.
func TestProgressBarClears(t *testing.T) {
	var scr screen
	b := &progressBar{w: &scr, start: time.Now(), now: time.Now,
		opts: []mpb.ContainerOption{mpb.WithRefreshRate(time.Hour)}}
	b.update(ckpt.Progress{Op: "push", Files: 1, TotalFiles: 3, Bytes: 100})
	b.clear()
	if len(scr.lines) != 0 || !strings.Contains(scr.raw.String(), "pushing [") {
		t.Fatalf("after clear the screen shows %q; written: %q", scr.lines, scr.raw.String())
	}
	scr.Write([]byte("ckpt: warning: something\n"))
	b.update(ckpt.Progress{Op: "push", Files: 2, TotalFiles: 3, Bytes: 200})
	b.stop()
	b.update(ckpt.Progress{Op: "push", Files: 3, TotalFiles: 3, Bytes: 300})
	if want := []string{"ckpt: warning: something"}; !slices.Equal(scr.lines, want) {
		t.Errorf("after stop the screen shows %q, want %q", scr.lines, want)
	}
}
