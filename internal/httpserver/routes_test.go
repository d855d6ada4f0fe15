package httpserver

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/seed1cedbf7c/ckpt"
	"github.com/seed1cedbf7c/ckpt/internal/testutil"
)

func testServer(t *testing.T, opts Options) (*Server, string) {
	t.Helper()
	ws := testutil.TempDir(t)
	testutil.WriteFiles(t, ws, map[string]string{"a.txt": "one\n"})
	r, err := ckpt.Open(context.Background(), ws, ckpt.Options{Store: filepath.Join(testutil.TempDir(t), "store")})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close() })
	if _, err := r.Save(context.Background(), ckpt.SaveOptions{Message: "first"}); err != nil {
		t.Fatal(err)
	}
	opts.Repo, opts.Addr = r, "127.0.0.1:8731"
	s, err := New(opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s, ws
}

// Every route is in openapi.json, and every path and method there is a
// route.
func TestOpenAPI(t *testing.T) {
	var doc struct {
		OpenAPI string                                `json:"openapi"`
		Paths   map[string]map[string]json.RawMessage `json:"paths"`
	}
	if err := json.Unmarshal(OpenAPI, &doc); err != nil {
		t.Fatalf("openapi.json: %v", err)
	}
	if doc.OpenAPI != "3.1.0" {
		t.Errorf("openapi %q", doc.OpenAPI)
	}
	s, _ := testServer(t, Options{})
	var routes, documented []string
	for _, rt := range s.routes() {
		routes = append(routes, strings.ToLower(rt.method)+" "+rt.path)
	}
	for _, m := range []string{"get", "post", "delete"} {
		routes = append(routes, m+" /mcp") // the MCP transport's
	}
	routes = append(routes, "get /api/workspaces") // Multi's, ckpt serve --all
	for p, ops := range doc.Paths {
		for m, op := range ops {
			if m == "servers" || m == "parameters" || m == "summary" || m == "description" {
				continue // the path's fields, not an operation
			}
			documented = append(documented, m+" "+p)
			var o struct {
				Responses map[string]json.RawMessage `json:"responses"`
			}
			json.Unmarshal(op, &o)
			if o.Responses["401"] == nil {
				t.Errorf("%s %s: no 401 response", m, p)
			}
		}
	}
	slices.Sort(routes)
	slices.Sort(documented)
	for _, r := range routes {
		if !slices.Contains(documented, r) {
			t.Errorf("route %s is not in openapi.json", r)
		}
	}
	for _, d := range documented {
		if !slices.Contains(routes, d) {
			t.Errorf("openapi.json documents %s, which is no route", d)
		}
	}
	// The document is served as it is.
	req := httptest.NewRequest("GET", "http://127.0.0.1:8731/api/openapi.json", nil)
	req.Header.Set("Authorization", "Bearer "+s.Token())
	w := httptest.NewRecorder()
	s.Handler().ServeHTTP(w, req)
	if w.Code != 200 || w.Body.String() != string(OpenAPI) || w.Header().Get("Content-Type") != "application/json" {
		t.Errorf("GET /api/openapi.json: %d %s", w.Code, w.Header())
	}
}

// --read-only refuses every route that writes, before reading its body,
// and changes nothing.
func TestReadOnly(t *testing.T) {
	s, ws := testServer(t, Options{ReadOnly: true})
	testutil.WriteFiles(t, ws, map[string]string{"a.txt": "edited\n"})
	n := 0
	for _, rt := range s.routes() {
		path := strings.NewReplacer("{rev}", "HEAD", "{name}", "snap", "{id}", "current").Replace(rt.path)
		req := httptest.NewRequest(rt.method, "http://127.0.0.1:8731"+path, strings.NewReader(`{"rev":"HEAD","name":"snap","turn":1,"direction":"from"}`))
		req.Header.Set("Authorization", "Bearer "+s.Token())
		w := httptest.NewRecorder()
		if rt.path == "/api/events" {
			continue // a stream; it only reads
		}
		s.Handler().ServeHTTP(w, req)
		var e Error
		json.Unmarshal(w.Body.Bytes(), &e)
		switch {
		case rt.write && (w.Code != http.StatusForbidden || e.Code != "read_only"):
			t.Errorf("%s %s: %d %s, want 403 read_only", rt.method, path, w.Code, w.Body)
		case !rt.write && e.Code == "read_only":
			t.Errorf("%s %s refused: %s", rt.method, path, w.Body)
		}
		if rt.write {
			n++
		}
	}
	if n < 10 {
		t.Errorf("only %d write routes", n)
	}
	if got := testutil.ReadFile(t, ws, "a.txt"); got != "edited\n" {
		t.Errorf("a.txt = %q", got)
	}
	st, err := s.repo.Status(context.Background(), false)
	if err != nil || st.Checkpoints != 1 {
		t.Errorf("status %+v, %v: something was saved", st, err)
	}
}
