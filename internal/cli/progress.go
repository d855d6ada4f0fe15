package cli

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/seed1cedbf7c/ckpt"
	"golang.org/x/term"
)

func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}

// progressBar renders ckpt.Progress reports on a terminal's stderr once an
// operation has run for half a second; it redraws at most 10 times a second.
type progressBar struct {
	w       io.Writer
	mu      sync.Mutex
	start   time.Time
	last    time.Time
	shown   bool
	stopped bool
	delay   time.Duration
}

func newProgressBar(w io.Writer) *progressBar {
	d := 500 * time.Millisecond
	if os.Getenv("CKPT_PROGRESS") == "always" {
		d = 0
	}
	return &progressBar{w: w, start: time.Now(), delay: d}
}

func (b *progressBar) update(p ckpt.Progress) {
	b.mu.Lock()
	defer b.mu.Unlock()
	now := time.Now()
	if b.stopped || now.Sub(b.start) < b.delay || (b.shown && now.Sub(b.last) < 100*time.Millisecond && p.Files != p.TotalFiles) {
		return
	}
	b.last = now
	b.shown = true
	fmt.Fprintf(b.w, "\r\x1b[K%s", renderProgress(p, 30))
}

// renderProgress formats one progress line.
func renderProgress(p ckpt.Progress, width int) string {
	verb := map[string]string{"scan": "scanning", "restore": "restoring", "verify": "verifying", "fsck": "checking", "push": "pushing", "pull": "pulling"}[p.Op]
	if verb == "" {
		verb = p.Op
	}
	frac := 0.0
	switch {
	case p.TotalBytes > 0:
		frac = float64(p.Bytes) / float64(p.TotalBytes)
	case p.TotalFiles > 0:
		frac = float64(p.Files) / float64(p.TotalFiles)
	}
	if frac > 1 {
		frac = 1
	}
	n := int(frac * float64(width))
	bar := strings.Repeat("=", n)
	if n < width {
		bar += ">" + strings.Repeat(" ", width-n-1)
	}
	unit := "files"
	if p.Op == "push" || p.Op == "pull" {
		unit = "objects"
	}
	s := fmt.Sprintf("%s [%s] %3.0f%% %d/%d %s", verb, bar, frac*100, p.Files, p.TotalFiles, unit)
	if p.TotalBytes > 0 {
		s += fmt.Sprintf(", %s/%s", ckpt.HumanSize(p.Bytes), ckpt.HumanSize(p.TotalBytes))
	}
	return s
}

// clear erases the bar so a message can be printed.
func (b *progressBar) clear() {
	if b == nil {
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.shown {
		fmt.Fprint(b.w, "\r\x1b[K")
		b.shown = false
	}
}

func (b *progressBar) stop() {
	if b == nil {
		return
	}
	b.clear()
	b.mu.Lock()
	b.stopped = true
	b.mu.Unlock()
}

// jsonLines writes progress reports and events as JSON lines (for tools
// that drive ckpt: --progress json).
type jsonLines struct {
	mu sync.Mutex
	w  io.Writer
}

func (j *jsonLines) write(v any) {
	b, err := json.Marshal(v)
	if err != nil {
		return
	}
	j.mu.Lock()
	defer j.mu.Unlock()
	j.w.Write(append(b, '\n'))
}

func (j *jsonLines) progress(p ckpt.Progress) {
	j.write(struct {
		Type string `json:"type"`
		ckpt.Progress
	}{"progress", p})
}

func (j *jsonLines) event(ev ckpt.Event) {
	j.write(struct {
		Type string `json:"type"`
		ckpt.Event
	}{"event", ev})
}
