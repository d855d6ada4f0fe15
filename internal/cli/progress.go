package cli

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/VividCortex/ewma"
	"github.com/seed1cedbf7c/ckpt"
	"github.com/vbauerster/mpb/v8"
	"github.com/vbauerster/mpb/v8/decor"
	"golang.org/x/term"
)

func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}

// progressBar renders ckpt.Progress reports on stderr with mpb, once an
// operation has run for half a second (CKPT_PROGRESS=always: at once).
//
// Each operation (a report's Op) gets its own bar. While a report says the
// total is still being counted, it is a spinner with what is done so far
// and the rate, never a total; once the total is final it is a bar with
// count/total, bytes where the operation knows them, rate and ETA. The
// shown counts never go back and a final total never changes: a report
// that contradicts one begins a new bar.
type progressBar struct {
	w     io.Writer
	start time.Time
	delay time.Duration
	now   func() time.Time
	// opts are more container options (tests: a manual refresh).
	opts []mpb.ContainerOption

	mu      sync.Mutex
	stopped bool
	p       *mpb.Progress
	ph      *phase
}

// phase is one operation's bar (or spinner, while counting).
type phase struct {
	op       string
	counting bool
	byBytes  bool  // the bar measures bytes, not files
	total    int64 // files, once final
	totalB   int64
	files    int64 // shown so far: never less than before
	bytes    int64
	cur      int64 // the bar's current
	last     time.Time
	// speed is the rate's moving average (time per unit), kept when the
	// spinner becomes a bar.
	speed ewma.MovingAverage
	bar   *mpb.Bar
	// shown is what the bar's decorators draw: each bar has its own, so
	// a spinner on its way out keeps saying what it said.
	shown *atomic.Pointer[ckpt.Progress]
}

// progressWidth is the line's width when stderr is no terminal (forced).
const progressWidth = 120

func newProgressBar(w io.Writer) *progressBar {
	d := 500 * time.Millisecond
	if os.Getenv("CKPT_PROGRESS") == "always" {
		d = 0
	}
	return &progressBar{w: w, start: time.Now(), delay: d, now: time.Now}
}

func (b *progressBar) update(p ckpt.Progress) {
	b.mu.Lock()
	defer b.mu.Unlock()
	now := b.now()
	if b.stopped || now.Sub(b.start) < b.delay {
		return
	}
	if b.p == nil {
		opts := []mpb.ContainerOption{mpb.WithOutput(b.w), mpb.WithWidth(progressWidth),
			mpb.WithRefreshRate(100 * time.Millisecond), mpb.WithAutoRefresh()}
		b.p = mpb.New(append(opts, b.opts...)...)
	}
	ph := b.ph
	empty := !p.Counting && p.TotalFiles == 0 && p.TotalBytes == 0
	switch {
	case ph == nil || ph.op != p.Op || (!ph.counting && p.Counting) ||
		(!ph.counting && (p.TotalFiles != ph.total || p.TotalBytes != ph.totalB)) ||
		(ph.counting && ph.byBytes != (p.TotalBytes > 0)):
		// Another operation, or the same one again.
		b.drop()
		if empty {
			return // nothing to do: nothing to show
		}
		ph = &phase{op: p.Op, counting: p.Counting, byBytes: p.TotalBytes > 0,
			total: p.TotalFiles, totalB: p.TotalBytes, speed: decor.NewThreadSafeMovingAverage(ewma.NewMovingAverage())}
		ph.shown = new(atomic.Pointer[ckpt.Progress])
		ph.advance(p)
		ph.bar = b.newBar(ph)
		ph.bar.SetCurrent(ph.cur)
		b.ph = ph
	case ph.counting && !p.Counting:
		// The total is final now: the spinner becomes a bar.
		if empty {
			b.drop()
			return
		}
		ph.bar.Abort(true)
		ph.bar.Wait()
		ph.counting, ph.total, ph.totalB = false, p.TotalFiles, p.TotalBytes
		prev := ph.cur
		ph.shown = new(atomic.Pointer[ckpt.Progress])
		ph.advance(p)
		ph.bar = b.newBar(ph)
		ph.bar.SetCurrent(prev)
		ph.bar.EwmaSetCurrent(ph.cur, now.Sub(ph.last))
	default:
		ph.advance(p)
		ph.bar.EwmaSetCurrent(ph.cur, now.Sub(ph.last))
	}
	ph.last = now
}

// advance takes p's counts, never going back nor past a final total.
func (ph *phase) advance(p ckpt.Progress) {
	ph.files, ph.bytes = max(ph.files, p.Files), max(ph.bytes, p.Bytes)
	if !ph.counting {
		ph.files = min(ph.files, ph.total)
	}
	if !ph.counting && ph.totalB > 0 {
		ph.bytes = min(ph.bytes, ph.totalB)
	}
	ph.cur = ph.files
	if ph.byBytes {
		ph.cur = ph.bytes
	}
	ph.shown.Store(&ckpt.Progress{Op: ph.op, Files: ph.files, TotalFiles: ph.total,
		Bytes: ph.bytes, TotalBytes: ph.totalB, Counting: ph.counting})
}

// newBar adds ph's spinner or bar to the container.
func (b *progressBar) newBar(ph *phase) *mpb.Bar {
	verb := map[string]string{"scan": "scanning", "restore": "restoring", "fsck": "checking", "push": "pushing", "pull": "pulling"}[ph.op]
	if verb == "" {
		verb = ph.op
	}
	var speed decor.Decorator
	if ph.byBytes {
		// mpb says "b/s" for bytes
		speed = decor.Meta(decor.MovingAverageSpeed(decor.SizeB1024(0), "% .1f", ph.speed),
			func(s string) string { return strings.Replace(s, " b/s", " B/s", 1) })
	} else {
		speed = decor.MovingAverageSpeed(0, "%.0f "+unit(ph.op)+"/s", ph.speed)
	}
	shown := ph.shown
	counts := decor.Any(func(decor.Statistics) string { return progressCounts(*shown.Load()) })
	speed = rated{speed, ", ", ph.speed}
	if ph.counting {
		return b.p.New(0, mpb.SpinnerStyle(), mpb.BarWidth(1), mpb.BarRemoveOnComplete(),
			mpb.PrependDecorators(decor.Name(verb)),
			mpb.AppendDecorators(counts, speed))
	}
	// The ETA starts from the rate measured while counting.
	avg := decor.NewThreadSafeMovingAverage(ewma.NewMovingAverage())
	avg.Set(ph.speed.Value())
	eta := decor.MovingAverageETA(decor.ET_STYLE_GO, avg, nil)
	total := ph.total
	if ph.byBytes {
		total = ph.totalB
	}
	return b.p.New(total, mpb.BarStyle(), mpb.BarWidth(30), mpb.BarRemoveOnComplete(),
		mpb.PrependDecorators(decor.Name(verb)),
		mpb.AppendDecorators(decor.NewPercentage("%d", decor.WC{W: 4}), decor.Name(" "), counts,
			speed, rated{eta, ", ETA ", ph.speed}))
}

// rated shows a rate or an ETA, after prefix, once avg has measured a
// rate: a first report has none, and a made-up "0 B/s" would be a lie.
type rated struct {
	decor.Decorator
	prefix string
	avg    ewma.MovingAverage
}

func (r rated) Decor(s decor.Statistics) (string, int) {
	str, w := r.Decorator.Decor(s) // always: decorators may sync widths
	if r.avg.Value() == 0 {
		return "", 0
	}
	return r.prefix + str, w + len(r.prefix)
}

// Unwrap lets the bar find the rate's EWMA under the wrapper.
func (r rated) Unwrap() decor.Decorator { return r.Decorator }

func unit(op string) string {
	if op == "push" || op == "pull" || op == "fsck" {
		return "objects"
	}
	return "files"
}

// progressCounts formats a report's counts: "5/10 files, 512 B/1.0 KiB"
// once the total is final, "5 files, 512 B so far" while counting.
func progressCounts(p ckpt.Progress) string {
	switch {
	case p.Counting && p.Bytes > 0:
		return fmt.Sprintf("%d %s, %s so far", p.Files, unit(p.Op), ckpt.HumanSize(p.Bytes))
	case p.Counting:
		return fmt.Sprintf("%d %s so far", p.Files, unit(p.Op))
	case p.TotalBytes > 0:
		return fmt.Sprintf("%d/%d %s, %s/%s", p.Files, p.TotalFiles, unit(p.Op), ckpt.HumanSize(p.Bytes), ckpt.HumanSize(p.TotalBytes))
	case p.Bytes > 0:
		verb := "sent"
		if p.Op == "pull" {
			verb = "received"
		}
		return fmt.Sprintf("%d/%d %s, %s %s", p.Files, p.TotalFiles, unit(p.Op), ckpt.HumanSize(p.Bytes), verb)
	}
	return fmt.Sprintf("%d/%d %s", p.Files, p.TotalFiles, unit(p.Op))
}

// drop removes the current bar from the screen. Called with b.mu held.
func (b *progressBar) drop() {
	if b.ph == nil {
		return
	}
	b.ph.bar.Abort(true)
	b.ph.bar.Wait()
	b.ph = nil
}

// clear erases the bar so a message can be printed; the next report
// draws it again below the message.
func (b *progressBar) clear() {
	if b == nil {
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.p == nil {
		return
	}
	b.drop()
	b.p.Shutdown()
	b.p = nil
}

// stop erases the bar for good (the operation ended, well or not).
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
