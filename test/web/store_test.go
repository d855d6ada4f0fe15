package web_test

import (
	"context"
	"crypto/rand"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"
	"github.com/seed1cedbf7c/ckpt"
	"github.com/seed1cedbf7c/ckpt/internal/testutil"
)

// The store page: the size over time with a gc's drop, the checkpoints
// per day stacked by kind, the largest paths — each chart a tab stop
// whose arrow keys read its bars out — in both themes; another process's
// gc appears live as a drop.
func TestStorePage(t *testing.T) {
	// Eight checkpoints over two days, four each,
	// from an injected clock; the files grow, so the store does.
	now := time.Now()
	y := now.AddDate(0, 0, -1)
	yesterday := time.Date(y.Year(), y.Month(), y.Day(), 10, 0, 0, 0, time.Local)
	today := time.Date(now.Year(), now.Month(), now.Day(), 0, 30, 0, 0, time.Local)
	if today.After(now) {
		today = now
	}
	clk := testutil.NewClock(yesterday.Format(time.RFC3339))
	noise := func(n int) string {
		b := make([]byte, n)
		rand.Read(b)
		return string(b)
	}
	saves := []struct {
		at   time.Time
		kind string
		file string
		size int
	}{
		{yesterday, "manual", "big.bin", 200 << 10},
		{yesterday.Add(time.Hour), "turn", "big.bin", 200 << 10},
		{yesterday.Add(2 * time.Hour), "turn", "big.bin", 200 << 10},
		{yesterday.Add(3 * time.Hour), "manual", "src/main.go", 40 << 10},
		{today, "run", "big.bin", 200 << 10},
		{today.Add(time.Minute), "turn", "src/util.go", 16 << 10},
		{today.Add(2 * time.Minute), "manual", "notes.txt", 8 << 10},
		{today.Add(3 * time.Minute), "manual", "src/main.go", 48 << 10},
	}
	f := newFixtureWith(t, map[string]string{"README": "hello\n"}, ckpt.Options{Now: clk.Now}, func(r *ckpt.Repo) {
		for i, s := range saves {
			clk.Set(s.at.Format(time.RFC3339))
			testutil.WriteFiles(t, r.Root(), map[string]string{s.file: noise(s.size)})
			if _, err := r.Save(context.Background(), ckpt.SaveOptions{Message: fmt.Sprintf("save %d", i), Kind: s.kind}); err != nil {
				t.Fatal(err)
			}
		}
	})
	f.login()
	f.do(chromedp.Navigate(f.base + "/#/store"))
	f.waitFor(`document.querySelectorAll("#chart-size circle.pt").length === 8`, 5*time.Second)
	if n := eval[int](f, `document.querySelectorAll("#chart-perday g.day").length`); n != 2 {
		t.Errorf("%d day bars, want 2", n)
	}
	segs := eval[string](f, `[...document.querySelectorAll("#chart-perday g.day")].map(g => [...g.querySelectorAll("rect.seg")].map(r => r.classList[1]).join("+")).join(" ")`)
	if segs != "manual+turn manual+turn+run" {
		t.Errorf("day bars stacked %q, want manual+turn manual+turn+run", segs)
	}
	if n := eval[int](f, `document.querySelectorAll("#chart-largest g.file").length`); n != 5 {
		t.Errorf("%d largest-path bars, want 5", n)
	}
	if p := eval[string](f, `document.querySelector("#chart-largest g.file text.path").textContent`); p != "big.bin" {
		t.Errorf("the largest path is %q, want big.bin", p)
	}
	// Each chart names itself and has its numbers in a hidden table.
	for _, id := range []string{"chart-size", "chart-perday", "chart-largest"} {
		if name := eval[string](f, fmt.Sprintf(`document.querySelector("#%s svg").getAttribute("aria-labelledby")`, id)); name != id+"-title "+id+"-desc" {
			t.Errorf("%s is labelled by %q", id, name)
		}
		if n := eval[int](f, fmt.Sprintf(`document.querySelectorAll("#%s table.sr-only tbody tr").length`, id)); n == 0 {
			t.Errorf("%s has no data table", id)
		}
	}

	// The keyboard: Tab from the nav reaches the charts; arrows read
	// the bars out.
	f.do(chromedp.Focus(chromedp.CSS(`nav a[data-view="store"]`)))
	for range 3 {
		f.do(chromedp.KeyEvent(kb.Tab))
		if eval[string](f, `document.activeElement.closest("figure")?.id ?? ""`) == "chart-size" {
			break
		}
	}
	if id := eval[string](f, `document.activeElement.closest("figure")?.id ?? document.activeElement.id`); id != "chart-size" {
		t.Fatalf("Tab from the nav focuses %q, want the size chart", id)
	}
	f.do(chromedp.KeyEvent(kb.Tab))
	if id := eval[string](f, `document.activeElement.closest("figure")?.id ?? ""`); id != "chart-perday" {
		t.Fatalf("the next Tab focuses %q, want the per-day chart", id)
	}
	if r := f.text("#chart-perday-readout"); !strings.Contains(r, "4 checkpoints — 2 manual, 1 turn, 1 run") {
		t.Errorf("the per-day readout on focus: %q", r)
	}
	f.do(chromedp.KeyEvent(kb.ArrowLeft))
	if r := f.text("#chart-perday-readout"); !strings.Contains(r, "4 checkpoints — 2 manual, 2 turn") {
		t.Errorf("the per-day readout after ←: %q", r)
	}
	f.do(chromedp.KeyEvent(kb.Tab), chromedp.KeyEvent(kb.Home))
	if r := f.text("#chart-largest-readout"); !strings.HasPrefix(r, "big.bin: 200 KiB") {
		t.Errorf("the largest readout after Home: %q", r)
	}
	f.do(chromedp.KeyEvent(kb.ArrowDown))
	if r := f.text("#chart-largest-readout"); !strings.HasPrefix(r, "src/main.go: 48 KiB") {
		t.Errorf("the largest readout after ↓: %q", r)
	}

	// A gc in another process (the three oldest go): its drop appears
	// live.
	f.ckpt("gc", "--keep", "5")
	f.waitFor(`document.querySelectorAll("#chart-size g.gc").length === 1`, 5*time.Second)
	f.waitFor(`document.querySelectorAll("#chart-size circle.pt").length === 5`, 5*time.Second)
	drop := eval[[]float64](f, `(() => { const l = document.querySelector("#chart-size .gc-drop"); return [+l.getAttribute("y1"), +l.getAttribute("y2")]; })()`)
	if drop[1] <= drop[0] { // SVG's y grows downwards
		t.Errorf("the gc's mark %v is no drop", drop)
	}

	if n := eval[int](f, `document.querySelectorAll("#chart-perday g.day").length`); n != 2 {
		t.Errorf("after the gc, %d day bars, want 2", n)
	}
	eval[bool](f, `(document.activeElement.blur(), document.querySelectorAll("main, .store").forEach((e) => e.scrollTop = 0), window.scrollTo(0, 0), true)`)
	f.screenshot("web-store-light.png")
	f.do(chromedp.Click(chromedp.ID("theme")))
	f.screenshot("web-store-dark.png")
	f.do(chromedp.Click(chromedp.ID("theme")))
}
