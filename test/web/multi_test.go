package web_test

import (
	"context"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/seed1cedbf7c/ckpt"
	"github.com/seed1cedbf7c/ckpt/internal/httpserver"
	"github.com/seed1cedbf7c/ckpt/internal/testutil"
)

// TestServeAllPages: ckpt serve --all in the browser — one login, the
// list of workspaces at /, each workspace's pages under /w/ID/ reading
// its own store (the timeline shows its checkpoints, not the other's),
// and the header's "ckpt" leading back to the list.
func TestServeAllPages(t *testing.T) {
	testutil.Long(t, "a real Chromium")
	if _, err := os.Stat(chromium); err != nil {
		t.Fatalf("the browser tests need %s (Debian's chromium package; ./scripts/test installs it): %v", chromium, err)
	}
	dir := testutil.TempDir(t)
	var infos []*ckpt.WorkspaceInfo
	for _, name := range []string{"alpha", "beta"} {
		ws, store := filepath.Join(dir, name), filepath.Join(dir, "state", name)
		testutil.WriteFiles(t, ws, map[string]string{"file.txt": name + "\n"})
		r, err := ckpt.Open(context.Background(), ws, ckpt.Options{Store: store})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := r.Save(context.Background(), ckpt.SaveOptions{Message: "first of " + name}); err != nil {
			t.Fatal(err)
		}
		r.Close()
		infos = append(infos, &ckpt.WorkspaceInfo{Workspace: ws, Store: store, Exists: true})
	}
	ts := httptest.NewUnstartedServer(nil)
	m, err := httpserver.NewMulti(httpserver.MultiOptions{Options: httpserver.Options{Addr: ts.Listener.Addr().String()},
		Workspaces: infos,
		Open: func(ctx context.Context, w *ckpt.WorkspaceInfo) (*ckpt.Repo, error) {
			return ckpt.Open(ctx, w.Workspace, ckpt.Options{Store: w.Store})
		}})
	if err != nil {
		t.Fatal(err)
	}
	ts.Config.Handler = m.Handler()
	ts.Start()
	t.Cleanup(func() { ts.Close(); m.Close() })

	f := &fixture{t: t, base: ts.URL}
	f.startBrowser()

	// One login, at /: the list of workspaces.
	f.do(chromedp.Navigate(m.LoginURL(ts.URL)))
	f.waitFor(`document.body.innerText.includes("alpha") && document.body.innerText.includes("beta")`, 10*time.Second)
	beta := "/w/" + httpserver.WorkspaceID(infos[1].Workspace) + "/"
	if n := eval[int](f, `document.querySelectorAll('a[href$="`+beta+`"]').length`); n == 0 {
		t.Fatalf("the list links to no %s:\n%s", beta, eval[string](f, "document.body.innerHTML"))
	}
	// beta's timeline: its checkpoint, not alpha's.
	f.do(chromedp.Navigate(ts.URL + beta + "#/timeline"))
	f.waitFor(`document.body.innerText.includes("first of beta")`, 10*time.Second)
	if strings.Contains(eval[string](f, "document.body.innerText"), "first of alpha") {
		t.Error("beta's timeline shows alpha's checkpoint")
	}
	f.waitFor(`document.getElementById("live")?.textContent === "live"`, 10*time.Second)
	// The header's "ckpt" leads back to the list.
	if href := eval[string](f, `document.querySelector('header a')?.getAttribute("href") ?? ""`); href != "/" {
		t.Errorf("the header's link goes to %q, want /", href)
	}
}
