// Package web_test drives ckpt serve's web UI in a real Chromium (Debian's
// chromium package, through chromedp): log in with the one-time URL, see a
// turn another process records appear live, rewind from a user message
// after reading the plan, undo, fork, read diffs and the timeline's graph.
//
// CKPT_UPDATE_SCREENSHOTS=1 also writes docs/images/web-session-light.png
// and web-session-dark.png, web-store-light.png and web-store-dark.png,
// web-timeline-light.png and web-timeline-dark.png.
package web_test

import (
	"context"
	"fmt"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"
	"github.com/seed1cedbf7c/ckpt"
	"github.com/seed1cedbf7c/ckpt/internal/cli"
	"github.com/seed1cedbf7c/ckpt/internal/httpserver"
	"github.com/seed1cedbf7c/ckpt/internal/testutil"
)

// TestMain runs the CLI when the test binary is called as ckpt (see
// testutil.CkptBinary): the other process that records turns.
func TestMain(m *testing.M) {
	if filepath.Base(os.Args[0]) == "ckpt" {
		os.Exit(cli.Run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
	}
	os.Exit(m.Run())
}

// chromium is Debian's chromium package's browser; ./scripts/test
// installs it.
const chromium = "/usr/bin/chromium"

// fixture is a workspace with a store served over loopback, and a
// browser tab.
type fixture struct {
	t     *testing.T
	ws    string
	store string
	repo  *ckpt.Repo
	srv   *httpserver.Server
	base  string
	tab   context.Context

	mu      sync.Mutex
	console []string // errors the page logged
}

func newFixture(t *testing.T, files map[string]string) *fixture {
	t.Helper()
	return newFixtureWith(t, files, ckpt.Options{}, nil)
}

// newFixtureWith is newFixture with the repository's options (its Store
// is the fixture's), and prepare run on the repository before the server
// starts.
func newFixtureWith(t *testing.T, files map[string]string, ropts ckpt.Options, prepare func(*ckpt.Repo)) *fixture {
	t.Helper()
	testutil.Long(t, "a real Chromium")
	if _, err := os.Stat(chromium); err != nil {
		t.Fatalf("the browser tests need %s (Debian's chromium package; ./scripts/test installs it): %v", chromium, err)
	}
	f := &fixture{t: t, ws: testutil.TempDir(t)}
	f.store = filepath.Join(testutil.TempDir(t), "store")
	testutil.WriteFiles(t, f.ws, files)
	ropts.Store = f.store
	r, err := ckpt.Open(context.Background(), f.ws, ropts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close() })
	f.repo = r
	if prepare != nil {
		prepare(r)
	}
	ts := httptest.NewUnstartedServer(nil)
	f.srv, err = httpserver.New(httpserver.Options{Repo: r, Addr: ts.Listener.Addr().String()})
	if err != nil {
		t.Fatal(err)
	}
	ts.Config.Handler = f.srv.Handler()
	ts.Start()
	t.Cleanup(func() { f.srv.Close(); ts.Close() })
	f.base = ts.URL

	f.startBrowser()
	return f
}

// chromiumTemps lists what Chromium keeps in the system's TMPDIR.
func chromiumTemps(t *testing.T) []string {
	t.Helper()
	m, err := filepath.Glob(filepath.Join(os.TempDir(), "org.chromium.Chromium.*"))
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// startBrowser starts Chromium with a tab of its own for f; an error
// the page logs fails the test.
func (f *fixture) startBrowser() {
	t := f.t
	before := chromiumTemps(t)
	t.Cleanup(func() { // runs after the browser is gone
		for _, d := range chromiumTemps(t) {
			if !slices.Contains(before, d) {
				t.Errorf("the browser left %s in TMPDIR", d)
				os.RemoveAll(d)
			}
		}
	})
	alloc, cancelAlloc := chromedp.NewExecAllocator(context.Background(),
		append(chromedp.DefaultExecAllocatorOptions[:],
			chromedp.ExecPath(chromium), chromedp.NoSandbox, chromedp.WindowSize(1280, 900),
			chromedp.Flag("disable-dev-shm-usage", true),
			chromedp.UserDataDir(testutil.TempDir(t)),
			// Chromium keeps its singleton socket in a directory of
			// TMPDIR, left behind when the test ends it: one per browser.
			chromedp.Env("TMPDIR="+testutil.TempDir(t)))...)
	tab, cancelTab := chromedp.NewContext(alloc)
	t.Cleanup(func() { cancelTab(); cancelAlloc() })
	f.tab = tab
	if err := chromedp.Do(tab); err != nil { // starts the browser
		t.Fatalf("starting %s: %v", chromium, err)
	}
	go func() {
		for m, err := range chromedp.Console(tab) {
			if err != nil {
				return
			}
			if m.IsException() || m.Type == "error" {
				f.mu.Lock()
				f.console = append(f.console, m.String())
				f.mu.Unlock()
			}
		}
	}()
	t.Cleanup(func() {
		f.mu.Lock()
		defer f.mu.Unlock()
		for _, m := range f.console {
			t.Errorf("the page's console: %s", m)
		}
	})
}

// do runs browser actions, each step bounded. A step whose element the
// page replaced between finding and using it (a live event re-rendered
// the view) runs again, a few times: the page's state is what counts.
func (f *fixture) do(steps ...chromedp.Action[chromedp.Void]) {
	f.t.Helper()
	for _, step := range steps {
		for try := 1; ; try++ {
			ctx, cancel := context.WithTimeout(f.tab, 20*time.Second)
			err := chromedp.Do(ctx, step)
			cancel()
			if err == nil {
				break
			}
			if try < 5 && strings.Contains(err.Error(), "Could not find node with given id") {
				time.Sleep(100 * time.Millisecond)
				continue
			}
			f.t.Fatal(err)
		}
	}
}

// eval evaluates a JavaScript expression in the page.
func eval[T any](f *fixture, js string) T {
	f.t.Helper()
	ctx, cancel := context.WithTimeout(f.tab, 10*time.Second)
	defer cancel()
	v, err := chromedp.Run(ctx, chromedp.Evaluate[T](js))
	if err != nil {
		f.t.Fatalf("%s: %v", js, err)
	}
	return v
}

// waitFor waits until the JavaScript expression is true, at most d.
func (f *fixture) waitFor(js string, d time.Duration) {
	f.t.Helper()
	ctx, cancel := context.WithTimeout(f.tab, d+time.Second)
	defer cancel()
	if _, err := chromedp.Run(ctx, chromedp.Poll[bool](js, chromedp.WithPollingTimeout(d), chromedp.WithPollingInterval(20*time.Millisecond))); err != nil {
		f.t.Fatalf("waiting %v for %s: %v\nthe page: %s", d, js, err, f.text("main"))
	}
}

// text is the visible text of the first element sel matches.
func (f *fixture) text(sel string) string {
	ctx, cancel := context.WithTimeout(f.tab, 5*time.Second)
	defer cancel()
	v, _ := chromedp.Run(ctx, chromedp.Evaluate[string](fmt.Sprintf(`document.querySelector(%q)?.innerText ?? ""`, sel)))
	return v
}

// login opens the one-time login URL; it must land on / with the cookie.
func (f *fixture) login() {
	f.t.Helper()
	f.do(chromedp.Navigate(f.srv.LoginURL(f.base)))
	f.waitFor(`document.getElementById("live")?.textContent === "live"`, 5*time.Second)
	if loc := eval[string](f, "location.href"); loc != f.base+"/" {
		f.t.Errorf("after login the address is %s, want %s/", loc, f.base)
	}
	if c := eval[string](f, "document.cookie"); c != "" {
		f.t.Errorf("the session cookie is readable by scripts: %q", c)
	}
}

// ckpt runs the CLI in another process on the fixture's workspace and
// store, and returns when it has exited.
func (f *fixture) ckpt(args ...string) {
	f.t.Helper()
	bin := filepath.Join(filepath.Dir(f.store), "bin", "ckpt")
	if _, err := os.Stat(bin); err != nil {
		testutil.CkptBinary(f.t, filepath.Dir(bin))
	}
	cmd := exec.Command(bin, append([]string{"--store", f.store, "--workspace", f.ws}, args...)...)
	cmd.Env = append(os.Environ(), "CKPT_NO_WATCH=1", "XDG_STATE_HOME="+filepath.Dir(f.store))
	if code, stdout, stderr := testutil.Run(f.t, cmd); code != 0 {
		f.t.Fatalf("ckpt %v: exit %d\n%s%s", args, code, stdout, stderr)
	}
}

// files reads the workspace: path -> content.
func (f *fixture) files() map[string]string {
	f.t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(f.ws, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := os.ReadFile(p)
		rel, _ := filepath.Rel(f.ws, p)
		out[filepath.ToSlash(rel)] = string(data)
		return err
	})
	if err != nil {
		f.t.Fatal(err)
	}
	return out
}

func (f *fixture) wantFiles(want map[string]string) {
	f.t.Helper()
	got := f.files()
	if fmt.Sprint(got) != fmt.Sprint(want) {
		f.t.Errorf("workspace %v, want %v", got, want)
	}
}

// hover moves the mouse over the element sel matches.
func (f *fixture) hover(sel string) {
	f.t.Helper()
	xy := eval[[]float64](f, fmt.Sprintf(`(() => { const e = document.querySelector(%q); e.scrollIntoView({block: "center"});
		const r = e.getBoundingClientRect(); return [r.x + r.width / 2, r.y + r.height / 2]; })()`, sel))
	f.do(chromedp.MouseEvent("mouseMoved", xy[0], xy[1]))
}

// screenshot writes docs/images/NAME when CKPT_UPDATE_SCREENSHOTS is set.
func (f *fixture) screenshot(name string) {
	f.t.Helper()
	if os.Getenv("CKPT_UPDATE_SCREENSHOTS") == "" {
		return
	}
	ctx, cancel := context.WithTimeout(f.tab, 10*time.Second)
	defer cancel()
	png, err := chromedp.Run(ctx, chromedp.CaptureScreenshot())
	if err != nil {
		f.t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join("..", "..", "docs", "images", name), png, 0o644); err != nil {
		f.t.Fatal(err)
	}
}

// The session view: a turn another process records appears live; the
// rewind control on a user message shows the plan, rewinds the code to
// the turn's start, and Undo takes it back; fork from the keyboard.
func TestSessionRewind(t *testing.T) {
	f := newFixture(t, map[string]string{"a.txt": "one\n", "b.txt": "bee\n"})
	ctx := context.Background()
	if _, err := f.repo.Save(ctx, ckpt.SaveOptions{Message: "first"}); err != nil {
		t.Fatal(err)
	}
	if _, err := f.repo.NewSession(ctx, ckpt.SessionOptions{Title: "make a count"}); err != nil {
		t.Fatal(err)
	}
	c, _, err := f.repo.Controller(ctx, ckpt.ControllerOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.BeginTurn(ctx, "Make a.txt say two."); err != nil {
		t.Fatal(err)
	}
	testutil.WriteFiles(t, f.ws, map[string]string{"a.txt": "two\n"})
	for _, m := range []ckpt.Message{
		{Role: "tool", Tool: "Edit", Content: "a.txt: one → two"},
		{Role: "assistant", Content: "a.txt says two now."},
	} {
		if _, err := c.AddMessage(ctx, m); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := c.EndTurn(ctx); err != nil {
		t.Fatal(err)
	}

	f.login()
	f.waitFor(`document.querySelector('[data-turn="1"] .msg.assistant')?.innerText.includes("two now")`, 5*time.Second)

	// Turn 2, recorded by another process, appears without a reload.
	f.ckpt("turn", "begin", "-m", "Now three, and a c.txt.")
	testutil.WriteFiles(t, f.ws, map[string]string{"a.txt": "three\n", "c.txt": "sea\n"})
	f.ckpt("turn", "message", "--role", "assistant", "-m", "Done: a.txt says three, c.txt is new.")
	f.ckpt("turn", "end")
	// Within a second on an idle machine (logged, not asserted: a loaded
	// one may take longer).
	ended := time.Now()
	f.waitFor(`(() => { const t = document.querySelector('[data-turn="2"]');
		return t && t.innerText.includes("c.txt is new") && t.querySelector(".files")?.innerText.includes("c.txt"); })()`, 10*time.Second)
	t.Logf("turn 2 appeared %v after its end was recorded", time.Since(ended))

	// The rewind control shows on hover.
	if op := eval[string](f, `getComputedStyle(document.getElementById("rewind-2")).opacity`); op != "0" {
		t.Errorf("the rewind button's opacity before hovering: %s", op)
	}
	f.hover(`[data-turn="2"] .msg.user`)
	f.waitFor(`getComputedStyle(document.getElementById("rewind-2")).opacity === "1"`, 2*time.Second)
	f.do(chromedp.Click(chromedp.ID("rewind-2")))
	f.waitFor(`document.querySelector('[role="menu"]') !== null && document.activeElement.textContent === "Rewind code"`, 2*time.Second)
	items := eval[[]string](f, `[...document.querySelectorAll('[role="menuitem"]')].map(b => b.textContent)`)
	want := "Rewind code|Rewind conversation|Rewind code and conversation|Fork from here|Summarize from here|Summarize up to here"
	if got := strings.Join(items, "|"); got != want {
		t.Errorf("the menu: %s, want %s", got, want)
	}
	f.screenshot("web-session-light.png")
	// The theme toggle (its click closes the menu), in the dark.
	f.do(chromedp.Click(chromedp.ID("theme")))
	f.waitFor(`getComputedStyle(document.body).backgroundColor === "rgb(22, 24, 28)" && !document.querySelector('[role="menu"]')`, 2*time.Second)
	f.hover(`[data-turn="2"] .msg.user`)
	f.do(chromedp.Click(chromedp.ID("rewind-2")))
	f.waitFor(`document.querySelector('[role="menu"]') !== null`, 2*time.Second)
	f.screenshot("web-session-dark.png")
	f.do(chromedp.Click(chromedp.ID("theme")))
	f.waitFor(`getComputedStyle(document.body).backgroundColor === "rgb(251, 251, 250)"`, 2*time.Second)
	f.hover(`[data-turn="2"] .msg.user`)
	f.do(chromedp.Click(chromedp.ID("rewind-2")))

	// Rewind code: the plan, then Confirm.
	f.do(chromedp.Click(chromedp.CSS(`[role="menu"] button:first-child`)))
	f.waitFor(`document.getElementById("plan").open && document.getElementById("plan-body").innerText.includes("Files to change")`, 5*time.Second)
	plan := f.text("#plan")
	for _, w := range []string{"Rewind the code to before turn 2", "a.txt", "c.txt", "delete"} {
		if !strings.Contains(plan, w) {
			t.Errorf("the plan does not say %q:\n%s", w, plan)
		}
	}
	f.wantFiles(map[string]string{"a.txt": "three\n", "b.txt": "bee\n", "c.txt": "sea\n"}) // a plan changes nothing
	f.do(chromedp.Click(chromedp.ID("plan-confirm")))
	f.waitFor(`document.getElementById("undo") !== null`, 5*time.Second)
	f.wantFiles(map[string]string{"a.txt": "two\n", "b.txt": "bee\n"}) // turn 2's start

	// Undo.
	f.do(chromedp.Click(chromedp.ID("undo")))
	f.waitFor(`document.querySelector(".notice")?.innerText.startsWith("Undone")`, 5*time.Second)
	f.wantFiles(map[string]string{"a.txt": "three\n", "b.txt": "bee\n", "c.txt": "sea\n"})

	// Escape closes the menu and gives the focus back to its button.
	f.do(chromedp.Focus(chromedp.ID("rewind-2")), chromedp.KeyEvent(kb.Enter))
	f.waitFor(`document.activeElement?.getAttribute("role") === "menuitem"`, 2*time.Second)
	f.do(chromedp.KeyEvent(kb.Escape))
	f.waitFor(`!document.querySelector('[role="menu"]') && document.activeElement?.id === "rewind-2"`, 2*time.Second)

	// Fork from turn 2, from the keyboard: the fourth item, Enter, Enter.
	parent := eval[string](f, `location.hash`)
	f.do(chromedp.KeyEvent(kb.Enter))
	f.waitFor(`document.activeElement?.textContent === "Rewind code"`, 2*time.Second)
	f.do(chromedp.KeyEvent(kb.ArrowDown), chromedp.KeyEvent(kb.ArrowDown), chromedp.KeyEvent(kb.ArrowDown))
	f.waitFor(`document.activeElement?.textContent === "Fork from here"`, 2*time.Second)
	f.do(chromedp.KeyEvent(kb.Enter))
	f.waitFor(`document.getElementById("plan").open && document.activeElement?.id === "plan-confirm"`, 5*time.Second)
	if plan := f.text("#plan"); !strings.Contains(plan, "Fork from turn 2") || !strings.Contains(plan, "c.txt") {
		t.Errorf("the fork's plan:\n%s", plan)
	}
	f.do(chromedp.KeyEvent(kb.Enter))
	f.waitFor(`location.hash.startsWith("#/sessions/") && document.querySelector(".conversation .meta")?.innerText.includes("at turn 2")`, 5*time.Second)
	f.wantFiles(map[string]string{"a.txt": "two\n", "b.txt": "bee\n"})
	ss, err := f.repo.Sessions(ctx)
	if err != nil || len(ss) != 2 {
		t.Fatalf("sessions %v, %v", ss, err)
	}
	if hash := eval[string](f, `location.hash`); hash == parent || !strings.Contains(f.text(".conversation header"), "forked from") {
		t.Errorf("after the fork: %s, %s", hash, f.text(".conversation header"))
	}

	// Back in the first session: summarize up to turn 2 (the sixth item).
	first := ss[0]
	if first.Parent != "" {
		first = ss[1]
	}
	f.do(chromedp.Navigate(f.base + "/#/sessions/" + first.ID))
	f.waitFor(`document.getElementById("rewind-2") !== null`, 5*time.Second)
	f.do(chromedp.Focus(chromedp.ID("rewind-2")), chromedp.KeyEvent(kb.Enter))
	f.waitFor(`document.activeElement?.textContent === "Rewind code"`, 2*time.Second)
	f.do(chromedp.KeyEvent(kb.End))
	f.waitFor(`document.activeElement?.textContent === "Summarize up to here"`, 2*time.Second)
	f.do(chromedp.KeyEvent(kb.Enter))
	f.waitFor(`document.getElementById("plan").open && document.activeElement?.id === "plan-confirm"`, 5*time.Second)
	if plan := f.text("#plan"); !strings.Contains(plan, "Summarize up to turn 2") {
		t.Errorf("the summary's plan:\n%s", plan)
	}
	f.do(chromedp.KeyEvent(kb.Enter))
	f.waitFor(`document.querySelector(".notice")?.innerText.startsWith("Summarized turns 1–2")`, 5*time.Second)
	f.waitFor(`[...document.querySelectorAll(".conversation h3")].length === 1 && document.querySelector(".conversation h3 .chip")?.innerText === "summary"`, 5*time.Second)
	f.wantFiles(map[string]string{"a.txt": "two\n", "b.txt": "bee\n"}) // the files stay
}

// The timeline lists checkpoints with their names; a checkpoint's diff
// shows the right hunks, unified and split, binary files summarized; and
// the working tree can be compared.
func TestTimelineDiff(t *testing.T) {
	lines := func(five string) string {
		var b strings.Builder
		for i := 1; i <= 9; i++ {
			if i == 5 {
				b.WriteString(five + "\n")
				continue
			}
			fmt.Fprintf(&b, "line %d\n", i)
		}
		return b.String()
	}
	f := newFixture(t, map[string]string{"a.txt": lines("line 5"), "gone.txt": "bye\n", "bin.dat": "\x00\x01\x02"})
	ctx := context.Background()
	if _, err := f.repo.Save(ctx, ckpt.SaveOptions{Message: "first"}); err != nil {
		t.Fatal(err)
	}
	f.ckpt("tag", "v1")
	testutil.WriteFiles(t, f.ws, map[string]string{"a.txt": lines("line five"), "new.txt": "hello\n", "bin.dat": "\x00\x01\x02\x03"})
	os.Remove(filepath.Join(f.ws, "gone.txt"))
	second, err := f.repo.Save(ctx, ckpt.SaveOptions{Message: "second"})
	if err != nil {
		t.Fatal(err)
	}

	f.login()
	f.do(chromedp.Navigate(f.base + "/#/timeline/" + second.Checkpoint.ID.String()))
	f.waitFor(`document.querySelector('details.file[data-path="a.txt"]') !== null`, 5*time.Second)
	if got := f.text("#checkpoints"); !strings.Contains(got, "second") || !strings.Contains(got, "v1") || !strings.Contains(got, "main") {
		t.Errorf("the timeline:\n%s", got)
	}
	hunk := eval[[]string](f, `[...document.querySelectorAll('details.file[data-path="a.txt"] tr:not(.hunk)')].map(r => r.innerText.replace(/\s+/g, " ").trim())`)
	wantHunk := []string{"2 2 line 2", "3 3 line 3", "4 4 line 4", "5 -line 5", "5 +line five", "6 6 line 6", "7 7 line 7", "8 8 line 8"}
	if strings.Join(hunk, "|") != strings.Join(wantHunk, "|") {
		t.Errorf("a.txt's hunk:\n%s\nwant\n%s", strings.Join(hunk, "\n"), strings.Join(wantHunk, "\n"))
	}
	if got := f.text(`details.file[data-path="new.txt"]`); !strings.Contains(got, "hello") {
		t.Errorf("new.txt: %s", got)
	}
	if got := f.text(`details.file[data-path="gone.txt"]`); !strings.Contains(got, "bye") {
		t.Errorf("gone.txt: %s", got)
	}
	if got := f.text(`details.file[data-path="bin.dat"]`); !strings.Contains(got, "Binary file 3 B → 4 B") {
		t.Errorf("bin.dat: %s", got)
	}

	// Split: the deleted and the added line side by side.
	f.do(chromedp.Click(chromedp.ID("diff-split")))
	f.waitFor(`document.querySelector(".diff.split") !== null`, 2*time.Second)
	row := eval[[]string](f, `[...document.querySelectorAll('details.file[data-path="a.txt"] tr')].map(r => r.innerText.replace(/\s+/g, " ").trim()).filter(t => t.includes("five"))`)
	if len(row) != 1 || row[0] != "5 line 5 5 line five" {
		t.Errorf("the split row: %q", row)
	}

	// Against the working tree.
	testutil.WriteFiles(t, f.ws, map[string]string{"new.txt": "hello, world\n"})
	f.do(chromedp.Click(chromedp.ID("diff-worktree")))
	f.waitFor(`document.querySelectorAll("details.file").length === 1 && document.querySelector('details.file[data-path="new.txt"]')?.innerText.includes("hello, world")`, 5*time.Second)

	// A checkpoint another process makes appears.
	f.ckpt("save", "-m", "by the CLI")
	f.waitFor(`document.getElementById("checkpoints").innerText.includes("by the CLI")`, 2*time.Second)
}
