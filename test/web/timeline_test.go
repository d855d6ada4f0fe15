package web_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"
	"github.com/seed1cedbf7c/ckpt"
	"github.com/seed1cedbf7c/ckpt/internal/testutil"
)

// The timeline's graph: a branch forked from main is a second line whose
// edge joins the first at the fork; nodes sit on their rows, shaped by
// kind, HEAD ringed; the rows stay the focus targets and the arrow keys
// walk them; a checkpoint another process saves joins the graph live.
func TestTimelineGraph(t *testing.T) {
	f := newFixture(t, map[string]string{"a.txt": "one\n"})
	ctx := context.Background()
	save := func(msg, kind string, files map[string]string) {
		t.Helper()
		testutil.WriteFiles(t, f.ws, files)
		if _, err := f.repo.Save(ctx, ckpt.SaveOptions{Message: msg, Kind: kind}); err != nil {
			t.Fatal(err)
		}
	}
	save("base", "manual", nil)
	save("two", "manual", map[string]string{"a.txt": "two\n"})
	if _, err := f.repo.CreateTag(ctx, "v1", "HEAD", false); err != nil {
		t.Fatal(err)
	}
	if _, err := f.repo.Switch(ctx, "side", ckpt.SwitchOptions{Create: true}); err != nil {
		t.Fatal(err)
	}
	save("side work", "turn", map[string]string{"side.txt": "side\n"})
	// Unsaved work on side: the switch back saves it there first.
	testutil.WriteFiles(t, f.ws, map[string]string{"side.txt": "side, more\n"})
	sw, err := f.repo.Switch(ctx, "main", ckpt.SwitchOptions{})
	if err != nil || sw.Saved == nil {
		t.Fatalf("switch back to main: %v, %+v", err, sw)
	}
	save("main work", "manual", map[string]string{"main.txt": "main\n"})

	f.login()
	f.do(chromedp.Navigate(f.base + "/#/timeline"))
	f.waitFor(`document.querySelectorAll("#graph g.cp").length === 5`, 5*time.Second)

	// The rows, newest first, and their columns: main's line, side's
	// two checkpoints beside it, joining it at "two".
	rows := eval[[]string](f, `[...document.querySelectorAll("#checkpoints .title")].map(e => e.textContent)`)
	if got, want := strings.Join(rows, "|"), "main work|before switching to main|side work|two|base"; got != want {
		t.Errorf("the rows: %s, want %s", got, want)
	}
	if cols := eval[string](f, `[...document.querySelectorAll("#graph g.cp")].map(g => g.dataset.col).join("")`); cols != "01100" {
		t.Errorf("the nodes' columns %s, want 01100", cols)
	}
	if n := eval[int](f, `new Set([...document.querySelectorAll("#graph g.cp")].map(g => g.dataset.col)).size`); n != 2 {
		t.Errorf("%d lines, want 2", n)
	}
	// The fork: side's first checkpoint's edge runs in its own column
	// and ends on "two"'s node, in main's.
	fork := eval[[]float64](f, `(() => {
		const e = document.querySelector('#graph path.edge[data-from="2"][data-to="3"]');
		const n = document.querySelector('#graph g.cp[data-row="3"] .node');
		if (!e || !n) return [];
		const end = e.getAttribute("d").trim().split(/[ ,CLM]+/).slice(-2).map(Number);
		return [+e.dataset.lane, end[0], end[1], +n.getAttribute("cx"), +n.getAttribute("cy")];
	})()`)
	if len(fork) != 5 || fork[0] != 1 || fork[1] != fork[3] || fork[2] != fork[4] {
		t.Errorf("the fork's edge (lane, end x, y, node x, y): %v, want lane 1 ending on the node", fork)
	}
	if n := eval[int](f, `document.querySelectorAll("#graph path.edge").length`); n != 4 {
		t.Errorf("%d edges, want 4", n)
	}
	// Each node sits on its row's title line.
	off := eval[[]float64](f, `[...document.querySelectorAll("#checkpoints li")].map((li, i) => {
		const t = li.querySelector(".title").getBoundingClientRect();
		const n = document.querySelector('#graph g.cp[data-row="' + i + '"] .node').getBoundingClientRect();
		return Math.abs((t.top + t.bottom) / 2 - (n.top + n.bottom) / 2);
	})`)
	for i, d := range off {
		if d > 2 {
			t.Errorf("row %d's node is %.1fpx off its title", i, d)
		}
	}
	// Shapes by kind, HEAD ringed, and a legend of what is on screen.
	shapes := eval[string](f, `[...document.querySelectorAll("#graph .node")].map(n => n.tagName + "." + n.classList[1]).join(" ")`)
	if want := "circle.manual circle.pre-restore rect.turn circle.manual circle.manual"; shapes != want {
		t.Errorf("the nodes: %s, want %s", shapes, want)
	}
	if rows := eval[string](f, `[...document.querySelectorAll("#graph circle.head")].map(c => c.closest("g.cp").dataset.row).join()`); rows != "0" {
		t.Errorf("HEAD is ringed on rows %q, want 0", rows)
	}
	if got := f.text(".graph-legend"); !strings.Contains(got, "manual") || !strings.Contains(got, "turn") || !strings.Contains(got, "pre-restore") || !strings.Contains(got, "HEAD") {
		t.Errorf("the legend: %q", got)
	}
	if got := f.text("#checkpoints"); !strings.Contains(got, "side") || !strings.Contains(got, "v1") || !strings.Contains(got, "main") {
		t.Errorf("the rows' names:\n%s", got)
	}

	// The keyboard: the rows are the focus targets; ↓ and End walk them,
	// the graph follows; Enter opens one.
	f.do(chromedp.Focus(chromedp.CSS(`#checkpoints a.item`)), chromedp.KeyEvent(kb.ArrowDown), chromedp.KeyEvent(kb.ArrowDown))
	if got := eval[string](f, `document.activeElement.querySelector(".title")?.textContent ?? document.activeElement.tagName`); got != "side work" {
		t.Errorf("after ↓ ↓ the focus is on %q, want side work", got)
	}
	if on := eval[string](f, `[...document.querySelectorAll("#graph g.cp.on")].map(g => g.dataset.row).join()`); on != "2" {
		t.Errorf("the graph marks row %q, want 2", on)
	}
	f.do(chromedp.KeyEvent(kb.Enter))
	f.waitFor(`document.querySelector("#detail h2")?.textContent === "side work"`, 5*time.Second)
	f.do(chromedp.Focus(chromedp.CSS(`#checkpoints a.item`)), chromedp.KeyEvent(kb.End))
	if got := eval[string](f, `document.activeElement.querySelector(".title")?.textContent`); got != "base" {
		t.Errorf("after End the focus is on %q, want base", got)
	}
	eval[bool](f, `(document.activeElement.blur(), true)`)
	f.do(chromedp.Navigate(f.base + "/#/timeline"))
	f.waitFor(`document.querySelector("#detail h2")?.textContent === "main work"`, 5*time.Second)
	f.screenshot("web-timeline-light.png")
	f.do(chromedp.Click(chromedp.ID("theme")))
	f.waitFor(`getComputedStyle(document.body).backgroundColor === "rgb(22, 24, 28)"`, 2*time.Second)
	f.screenshot("web-timeline-dark.png")
	f.do(chromedp.Click(chromedp.ID("theme")))

	// Another process switches to side and saves there: six nodes, and
	// side's line still forks from "two".
	f.ckpt("switch", "side")
	testutil.WriteFiles(t, f.ws, map[string]string{"side.txt": "side, again\n"})
	f.ckpt("save", "-m", "side again")
	f.waitFor(`document.querySelectorAll("#graph g.cp").length === 6`, 5*time.Second)
	top := eval[string](f, `document.querySelector("#checkpoints .title").textContent`)
	edges := eval[[]string](f, `[...document.querySelectorAll("#graph path.edge")].map(e => e.dataset.from + ">" + e.dataset.to)`)
	if top != "side again" || fmt.Sprint(edges) != "[0>2 1>4 2>3 3>4 4>5]" {
		t.Errorf("after the CLI's save: the first row %q, the edges %v", top, edges)
	}
}

// The graph of a long history, a page at a time: 1,050 checkpoints, main
// forked to side at the 300th and left at the 700th. The first page is
// one line running on dashed; once the pages reach the fork, its edge
// ends on its checkpoint's node.
func TestTimelineGraphPages(t *testing.T) {
	const n, fork, back = 1050, 300, 700
	start := time.Now()
	cfg := ckpt.DefaultConfig()
	cfg.Keep = n // gc would keep 100 per branch
	f := newFixtureWith(t, map[string]string{"a.txt": "0\n"}, ckpt.Options{Config: &cfg}, func(r *ckpt.Repo) {
		ctx := context.Background()
		for i := range n {
			switch i {
			case fork:
				if _, err := r.Switch(ctx, "side", ckpt.SwitchOptions{Create: true}); err != nil {
					t.Fatal(err)
				}
			case back:
				if _, err := r.Switch(ctx, "main", ckpt.SwitchOptions{}); err != nil {
					t.Fatal(err)
				}
			}
			testutil.WriteFiles(t, r.Root(), map[string]string{"a.txt": fmt.Sprintf("%d\n", i)})
			if _, err := r.Save(ctx, ckpt.SaveOptions{Message: fmt.Sprintf("save %d", i)}); err != nil {
				t.Fatal(err)
			}
		}
	})
	t.Logf("%d saves in %v", n, time.Since(start))
	f.login()
	f.do(chromedp.Navigate(f.base + "/#/timeline"))
	f.waitFor(`document.querySelectorAll("#graph g.cp").length === 100`, 5*time.Second)
	// Drawn, it stays: no redraw loop (a redraw replaces the svg).
	eval[bool](f, `(window.firstGraph = document.getElementById("graph"), true)`)
	time.Sleep(300 * time.Millisecond)
	if !eval[bool](f, `window.firstGraph === document.getElementById("graph")`) {
		t.Errorf("the graph is redrawn with nothing changed")
	}
	if got := eval[string](f, `[...document.querySelectorAll("#graph path.edge")].map(e => e.classList.contains("more") ? e.dataset.from : "").join("")`); got != "99" {
		t.Errorf("on the first page the dashed edges leave rows %q, want 99 only", got)
	}
	for page := 2; page <= (n+99)/100; page++ {
		began := time.Now()
		f.do(chromedp.Click(chromedp.ID("more")))
		f.waitFor(fmt.Sprintf(`document.querySelectorAll("#graph g.cp").length === %d`, min(n, page*100)), 10*time.Second)
		if page == (n+99)/100 {
			t.Logf("the last page drawn %v after its click: %d nodes", time.Since(began), n)
		}
	}
	cols := eval[[]int](f, `[...document.querySelectorAll("#graph g.cp")].map(g => +g.dataset.col)`)
	perCol := map[int]int{}
	for _, c := range cols {
		perCol[c]++
	}
	if want := map[int]int{0: n - (back - fork), 1: back - fork}; fmt.Sprint(perCol) != fmt.Sprint(want) {
		t.Errorf("nodes per column %v, want %v (side's in the second)", perCol, want)
	}
	// Rows are newest first: side's oldest is row n-fork-1 (after main's
	// newest n-back), the fork n-fork.
	end := eval[bool](f, fmt.Sprintf(`(() => {
		const e = document.querySelector('#graph path.edge[data-from="%d"][data-to="%d"]');
		const c = document.querySelector('#graph g.cp[data-row="%d"] .node');
		return !!e && !!c && e.dataset.lane === "1" && e.getAttribute("d").endsWith(c.getAttribute("cx") + "," + c.getAttribute("cy"));
	})()`, n-fork-1, n-fork, n-fork))
	if !end {
		t.Errorf("no edge from side's first checkpoint ends on the fork's node")
	}
	if !eval[bool](f, `document.getElementById("more") === null && document.querySelectorAll("#graph path.more").length === 0`) {
		t.Errorf("with every page loaded, a line still runs on to an older page")
	}
}
