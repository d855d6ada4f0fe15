package httpserver_test

import (
	"html"
	"net/http"
	"strings"
	"testing"

	"github.com/seed1cedbf7c/ckpt/internal/httpserver"
	"github.com/seed1cedbf7c/ckpt/internal/testutil"
)

// The web UI is embedded: the page at /, its files under /ui/, behind
// the token, with a content security policy that allows only the
// server's own scripts; no directory listings.
func TestUIFiles(t *testing.T) {
	f := newFixture(t, httpserver.Options{})
	r := f.do(request{method: "GET", path: "/"})
	if r.status != 200 || !strings.Contains(string(r.body), html.EscapeString(f.ws)) || !strings.Contains(string(r.body), `src="/ui/app.js"`) ||
		!strings.Contains(r.header.Get("Content-Security-Policy"), "default-src 'self'") {
		t.Errorf("GET /: %d %s\n%s", r.status, r.header, r.body)
	}
	for path, ctype := range map[string]string{
		"/ui/app.js": "text/javascript", "/ui/session.js": "text/javascript", "/ui/timeline.js": "text/javascript",
		"/ui/diff.js": "text/javascript", "/ui/menu.js": "text/javascript", "/ui/lib.js": "text/javascript", "/ui/graph.js": "text/javascript", "/ui/app.css": "text/css",
	} {
		r := f.do(request{method: "GET", path: path})
		if r.status != 200 || !strings.HasPrefix(r.header.Get("Content-Type"), ctype) || r.header.Get("Content-Security-Policy") == "" {
			t.Errorf("GET %s: %d %s", path, r.status, r.header)
		}
		if r := f.do(request{method: "GET", path: path, header: map[string]string{"Authorization": ""}}); r.status != http.StatusUnauthorized {
			t.Errorf("GET %s without the token: %d", path, r.status)
		}
	}
	for _, path := range []string{"/ui/", "/ui/index.html", "/ui/nosuch.js", "/ui/../api/status"} {
		if r := f.do(request{method: "GET", path: path}); r.status == 200 {
			t.Errorf("GET %s: %d %s", path, r.status, r.body)
		}
	}
}

// Options.UIDir serves the UI's files from a directory, to edit them
// without rebuilding.
func TestUIDir(t *testing.T) {
	dir := testutil.TempDir(t)
	testutil.WriteFiles(t, dir, map[string]string{"index.html": "<p>{{.Workspace}}</p>", "app.js": "// mine\n"})
	f := newFixture(t, httpserver.Options{UIDir: dir})
	if r := f.do(request{method: "GET", path: "/"}); string(r.body) != "<p>"+html.EscapeString(f.ws)+"</p>" {
		t.Errorf("GET /: %s", r.body)
	}
	if r := f.do(request{method: "GET", path: "/ui/app.js"}); string(r.body) != "// mine\n" {
		t.Errorf("GET /ui/app.js: %s", r.body)
	}
}
