package httpserver_test

import (
	"context"
	"html"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/seed1cedbf7c/ckpt"
	"github.com/seed1cedbf7c/ckpt/internal/httpserver"
	"github.com/seed1cedbf7c/ckpt/internal/testutil"
)

// multiFixture is ckpt serve --all over two workspaces with real stores,
// a and b, and a third whose directory is gone.
type multiFixture struct {
	root *fixture // requests to the server's own routes (/, /api/workspaces)
	a, b *fixture // requests to a workspace's routes (/w/ID/...)
	gone *ckpt.WorkspaceInfo
	m    *httpserver.Multi
}

func newMultiFixture(t *testing.T, opts httpserver.Options) *multiFixture {
	t.Helper()
	dir := testutil.TempDir(t)
	var infos []*ckpt.WorkspaceInfo
	for _, name := range []string{"a", "b"} {
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
	gone := &ckpt.WorkspaceInfo{Workspace: filepath.Join(dir, "gone"), Store: filepath.Join(dir, "state", "gone"), Gone: true}
	infos = append(infos, gone)
	ts := httptest.NewUnstartedServer(nil)
	opts.Addr = ts.Listener.Addr().String()
	if opts.PollInterval == 0 {
		opts.PollInterval = 50 * time.Millisecond
	}
	m, err := httpserver.NewMulti(httpserver.MultiOptions{Options: opts, Workspaces: infos,
		Open: func(ctx context.Context, w *ckpt.WorkspaceInfo) (*ckpt.Repo, error) {
			return ckpt.Open(ctx, w.Workspace, ckpt.Options{Store: w.Store})
		}})
	if err != nil {
		t.Fatal(err)
	}
	ts.Config.Handler = m.Handler()
	ts.Start()
	t.Cleanup(func() {
		ts.Close()
		if err := m.Close(); err != nil {
			t.Error(err)
		}
	})
	f := func(i int) *fixture {
		return &fixture{t: t, ws: infos[i].Workspace, store: infos[i].Store, ts: ts, token: m.Token(),
			base: ts.URL + "/w/" + httpserver.WorkspaceID(infos[i].Workspace)}
	}
	return &multiFixture{root: &fixture{t: t, ts: ts, base: ts.URL, token: m.Token()}, a: f(0), b: f(1), gone: gone, m: m}
}

// ckpt serve --all lists its workspaces, serves each one's API under
// /w/ID/ from its own store, opened on the first request, and a write to
// one leaves the other as it was.
func TestMultiWorkspaces(t *testing.T) {
	mf := newMultiFixture(t, httpserver.Options{})
	var list httpserver.WorkspacesResponse
	mf.root.ok(request{method: "GET", path: "/api/workspaces"}, 0, &list)
	if len(list.Workspaces) != 3 {
		t.Fatalf("workspaces: %+v", list)
	}
	for i, f := range []*fixture{mf.a, mf.b} {
		w := list.Workspaces[i]
		id := httpserver.WorkspaceID(f.ws)
		if w.ID != id || string(w.Workspace) != f.ws || string(w.Store) != f.store || w.Backend != "sqlite" || !w.Exists || w.Open ||
			w.URL != "/w/"+id+"/" {
			t.Errorf("workspace %d: %+v", i, w)
		}
	}
	if g := list.Workspaces[2]; g.Exists || g.Open {
		t.Errorf("the gone workspace: %+v", g)
	}
	if ids := mf.m.IDs(); len(ids) != 3 || ids[0] != list.Workspaces[0].ID {
		t.Errorf("IDs: %v", ids)
	}

	for _, f := range []*fixture{mf.a, mf.b} {
		var page httpserver.Page
		f.ok(request{method: "GET", path: "/api/checkpoints"}, 0, &page)
		name := filepath.Base(f.ws)
		if len(page.Checkpoints) != 1 || page.Checkpoints[0].Message != "first of "+name {
			t.Errorf("%s's checkpoints: %+v", name, page.Checkpoints)
		}
	}
	mf.root.ok(request{method: "GET", path: "/api/workspaces"}, 0, &list)
	if !list.Workspaces[0].Open || !list.Workspaces[1].Open || list.Workspaces[2].Open {
		t.Errorf("opened: %+v", list)
	}

	testutil.WriteFiles(t, mf.a.ws, map[string]string{"file.txt": "changed\n"})
	testutil.WriteFiles(t, mf.b.ws, map[string]string{"file.txt": "changed too\n"})
	mf.a.ok(request{method: "POST", path: "/api/checkpoints", body: httpserver.SaveRequest{Message: "second of a"}}, http.StatusCreated, nil)
	var page httpserver.Page
	mf.b.ok(request{method: "GET", path: "/api/checkpoints"}, 0, &page)
	if len(page.Checkpoints) != 1 {
		t.Errorf("b's checkpoints after a save to a: %+v", page.Checkpoints)
	}
	mf.a.ok(request{method: "GET", path: "/api/checkpoints"}, 0, &page)
	if len(page.Checkpoints) != 2 || page.Checkpoints[0].Message != "second of a" {
		t.Errorf("a's checkpoints: %+v", page.Checkpoints)
	}
	// b's restore puts b's file back, not a's.
	mf.b.ok(request{method: "POST", path: "/api/restore", body: httpserver.RestoreRequest{Rev: "HEAD"}}, 0, nil)
	if a, b := testutil.ReadFile(t, mf.a.ws, "file.txt"), testutil.ReadFile(t, mf.b.ws, "file.txt"); a != "changed\n" || b != "b\n" {
		t.Errorf("after b's restore: a's file %q, b's %q", a, b)
	}
}

// Each workspace has its own event stream: a checkpoint of one is told
// on its stream and not on the other's.
func TestMultiEvents(t *testing.T) {
	mf := newMultiFixture(t, httpserver.Options{})
	sa, sb := mf.a.events(nil), mf.b.events(nil)
	mf.a.ok(request{method: "POST", path: "/api/checkpoints", body: httpserver.SaveRequest{Message: "to a", AllowEmpty: true}}, http.StatusCreated, nil)
	if ev := sa.waitFor(ckpt.EventCheckpoint, 2*time.Second); ev.data.Message != "to a" || ev.data.Source != "server" {
		t.Errorf("a's event: %+v", ev)
	}
	mf.b.ok(request{method: "POST", path: "/api/checkpoints", body: httpserver.SaveRequest{Message: "to b", AllowEmpty: true}}, http.StatusCreated, nil)
	if ev := sb.waitFor(ckpt.EventCheckpoint, 2*time.Second); ev.data.Message != "to b" {
		t.Errorf("b's event: %+v", ev)
	}
	if ev, ok := sa.next(300 * time.Millisecond); ok {
		t.Errorf("a's stream told b's checkpoint: %+v", ev)
	}
	if ev, ok := sb.next(100 * time.Millisecond); ok {
		t.Errorf("b's stream told one more: %+v", ev)
	}
}

// The checks apply to every workspace's routes as to a single one's; an
// id the server does not serve is 404 (after the token), never a path.
func TestMultiChecks(t *testing.T) {
	mf := newMultiFixture(t, httpserver.Options{ReadOnly: true})
	noToken := map[string]string{"Authorization": ""}
	for _, path := range []string{"/w/0123456789abcdef/api/status", "/w/a/api/status", "/w/%2e%2e/api/status", "/w/../a/api/status"} {
		if r := mf.root.do(request{method: "GET", path: path, header: noToken}); r.status != http.StatusUnauthorized {
			t.Errorf("GET %s without a token: %d %s", path, r.status, r.body)
		}
		// 404, or for a path with .. the redirect to its clean form.
		if r := mf.root.do(request{method: "GET", path: path}); r.status != http.StatusNotFound && r.status != http.StatusTemporaryRedirect {
			t.Errorf("GET %s: %d %s", path, r.status, r.body)
		}
	}
	if r := mf.a.do(request{method: "GET", path: "/api/status", header: noToken}); r.status != http.StatusUnauthorized {
		t.Errorf("a's status without a token: %d", r.status)
	}
	foreign := map[string]string{"Origin": "http://evil.example", "Sec-Fetch-Site": "cross-site"}
	for _, path := range []string{"/api/events", "/mcp"} {
		if r := mf.a.do(request{method: "GET", path: path, header: foreign}); r.status != http.StatusForbidden || r.apiError(t).Code != "bad_origin" {
			t.Errorf("GET %s from another origin: %d %s", path, r.status, r.body)
		}
	}
	if r := mf.a.do(request{method: "POST", path: "/api/undo"}); r.status != http.StatusForbidden || r.apiError(t).Code != "read_only" {
		t.Errorf("POST /api/undo read-only: %d %s", r.status, r.body)
	}
	gone := "/w/" + httpserver.WorkspaceID(mf.gone.Workspace) + "/api/status"
	if r := mf.root.do(request{method: "GET", path: gone}); r.status != http.StatusNotFound ||
		!strings.Contains(r.apiError(t).Message, mf.gone.Workspace) {
		t.Errorf("GET %s: %d %s", gone, r.status, r.body)
	}
	// Not one login per workspace: the login URL is the server's.
	login := mf.m.LoginURL("")
	_, tok, _ := strings.Cut(login, "?token=")
	if r := mf.a.do(request{method: "GET", path: "/?token=" + tok, header: noToken}); r.status != http.StatusUnauthorized {
		t.Errorf("a workspace's page with the login token: %d", r.status)
	}
	r := mf.root.do(request{method: "GET", path: login, header: noToken})
	if r.status != http.StatusSeeOther || r.header.Get("Location") != "/" || len(r.header.Values("Set-Cookie")) != 1 {
		t.Errorf("login: %d %s", r.status, r.header)
	}
	if r := mf.root.do(request{method: "GET", path: login, header: noToken}); r.status != http.StatusUnauthorized {
		t.Errorf("login again: %d", r.status)
	}
}

// The web UI: / lists the workspaces, each a link to its page, whose
// API is under its /w/ID.
func TestMultiUI(t *testing.T) {
	mf := newMultiFixture(t, httpserver.Options{})
	id := httpserver.WorkspaceID(mf.a.ws)
	r := mf.root.do(request{method: "GET", path: "/"})
	body := string(r.body)
	if r.status != 200 || !strings.Contains(body, `href="/w/`+id+`/"`) || !strings.Contains(body, html.EscapeString(mf.b.ws)) ||
		!strings.Contains(body, "gone") || r.header.Get("Content-Security-Policy") == "" {
		t.Errorf("GET /: %d\n%s", r.status, body)
	}
	if r := mf.root.do(request{method: "GET", path: "/w/" + id}); r.status != http.StatusMovedPermanently || r.header.Get("Location") != "/w/"+id+"/" {
		t.Errorf("GET /w/ID: %d %s", r.status, r.header)
	}
	r = mf.a.do(request{method: "GET", path: "/"})
	body = string(r.body)
	if r.status != 200 || !strings.Contains(body, `<meta name="ckpt-base" content="/w/`+id+`">`) || !strings.Contains(body, html.EscapeString(mf.a.ws)) ||
		!strings.Contains(body, `<a class="brand" href="/"`) {
		t.Errorf("GET /w/ID/: %d\n%s", r.status, body)
	}
	for _, path := range []string{"/ui/app.js", "/ui/workspaces.js", "/api/openapi.json"} {
		if r := mf.root.do(request{method: "GET", path: path}); r.status != 200 {
			t.Errorf("GET %s: %d", path, r.status)
		}
	}
	if r := mf.root.do(request{method: "GET", path: "/ui/workspaces.html"}); r.status != http.StatusNotFound {
		t.Errorf("GET /ui/workspaces.html: %d", r.status)
	}
}
