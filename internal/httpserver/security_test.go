package httpserver_test

import (
	"io"
	"net/http"
	"net/http/cookiejar"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/seed1cedbf7c/ckpt/internal/httpserver"
	"github.com/seed1cedbf7c/ckpt/internal/testutil"
)

func TestToken(t *testing.T) {
	f := newFixture(t, httpserver.Options{})
	for _, auth := range []string{"", "Bearer wrong", "Basic " + f.srv.Token(), "Bearer " + f.srv.Token() + "x"} {
		h := map[string]string{"Authorization": auth}
		if auth == "" {
			h = map[string]string{"Authorization": ""}
		}
		for _, path := range []string{"/api/status", "/api/events", "/mcp", "/", "/api/nosuch"} {
			r := f.do(request{method: "GET", path: path, header: h})
			if r.status != http.StatusUnauthorized || r.apiError(t).Code != "unauthorized" || r.header.Get("WWW-Authenticate") == "" {
				t.Errorf("%q %s: %d %s", auth, path, r.status, r.body)
			}
		}
	}
	// The cookie alone will do.
	r := f.do(request{method: "GET", path: "/api/status", header: map[string]string{"Authorization": "", "Cookie": f.srv.CookieName() + "=" + f.srv.Token()}})
	if r.status != 200 {
		t.Errorf("cookie: %d %s", r.status, r.body)
	}
}

// The login URL sets the session cookie once, then leads to / without
// the token; the token is then used up.
func TestLogin(t *testing.T) {
	f := newFixture(t, httpserver.Options{})
	jar, _ := cookiejar.New(nil)
	browser := &http.Client{Jar: jar}
	var redirects []string
	browser.CheckRedirect = func(req *http.Request, via []*http.Request) error {
		redirects = append(redirects, req.URL.String())
		return nil
	}
	resp, err := browser.Get(f.srv.LoginURL(f.base))
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || len(redirects) != 1 || redirects[0] != f.base+"/" || !strings.Contains(string(body), f.ws) {
		t.Fatalf("login: %d, redirects %v: %s", resp.StatusCode, redirects, body)
	}
	cookies := jar.Cookies(resp.Request.URL)
	if len(cookies) != 1 || cookies[0].Name != f.srv.CookieName() {
		t.Fatalf("cookies %v", cookies)
	}
	// The login token is used up.
	raw := f.do(request{method: "GET", path: f.srv.LoginURL(""), header: map[string]string{"Authorization": ""}})
	if raw.status != http.StatusUnauthorized {
		t.Errorf("login URL a second time: %d %s", raw.status, raw.body)
	}
	resp, err = browser.Get(f.base + "/api/status")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Errorf("status with the cookie: %d", resp.StatusCode)
	}

	// The cookie is HttpOnly and SameSite=Strict.
	g := newFixture(t, httpserver.Options{})
	first := g.do(request{method: "GET", path: g.srv.LoginURL(""), header: map[string]string{"Authorization": ""}})
	if first.status != http.StatusSeeOther {
		t.Fatalf("login: %d %s", first.status, first.body)
	}
	sc := first.header.Get("Set-Cookie")
	for _, want := range []string{g.srv.CookieName() + "=" + g.srv.Token(), "HttpOnly", "SameSite=Strict", "Path=/"} {
		if !strings.Contains(sc, want) {
			t.Errorf("Set-Cookie %q lacks %q", sc, want)
		}
	}
	if loc := first.header.Get("Location"); loc != "/" {
		t.Errorf("Location %q", loc)
	}
}

// DNS rebinding: a Host header that does not name the bound address is
// refused, token or not.
func TestHost(t *testing.T) {
	f := newFixture(t, httpserver.Options{})
	_, port, _ := strings.Cut(strings.TrimPrefix(f.base, "http://"), ":")
	for host, want := range map[string]int{
		"evil.example:" + port: 403,
		"evil.example":         403,
		"127.0.0.1:1":          403,
		"127.0.0.1:" + port:    200,
		"localhost:" + port:    200,
		"[::1]:" + port:        200,
	} {
		r := f.do(request{method: "GET", path: "/api/status?changes=false", header: map[string]string{"Host": host}})
		if r.status != want {
			t.Errorf("Host %s: %d, want %d: %s", host, r.status, want, r.body)
		}
		if want == 403 && r.apiError(t).Code != "bad_host" {
			t.Errorf("Host %s: %s", host, r.body)
		}
	}
}

// CSRF: a foreign Origin (or Sec-Fetch-Site) is refused on every request
// that changes something and on the event stream; no CORS headers are
// ever sent.
func TestOrigin(t *testing.T) {
	f := newFixture(t, httpserver.Options{})
	f.save("first")
	foreign := []map[string]string{
		{"Origin": "http://evil.example"},
		{"Origin": "null"},
		{"Origin": "http://127.0.0.1:1"},
		{"Sec-Fetch-Site": "cross-site"},
		{"Sec-Fetch-Site": "same-site", "Origin": f.base},
	}
	for _, h := range foreign {
		for _, req := range []request{
			{method: "POST", path: "/api/undo"},
			{method: "POST", path: "/api/snapshots", body: `{"name":"x"}`},
			{method: "DELETE", path: "/api/snapshots/x"},
			{method: "GET", path: "/api/events"},
			{method: "POST", path: "/mcp", body: "{}"},
		} {
			req.header = h
			r := f.do(req)
			if r.status != 403 || r.apiError(t).Code != "bad_origin" {
				t.Errorf("%v %s %s: %d %s", h, req.method, req.path, r.status, r.body)
			}
			if v := r.header.Get("Access-Control-Allow-Origin"); v != "" {
				t.Errorf("CORS header %q", v)
			}
		}
	}
	// A page of the server itself may; so may a program (no Origin).
	for _, h := range []map[string]string{{"Origin": f.base, "Sec-Fetch-Site": "same-origin"}, nil} {
		r := f.do(request{method: "POST", path: "/api/snapshots", body: `{"name":"ok","force":true}`, header: h})
		if r.status != 201 {
			t.Errorf("%v: %d %s", h, r.status, r.body)
		}
	}
	// A foreign page's GET of data is not refused by the server (the
	// browser keeps the answer from it: no CORS headers), and carries no
	// CORS header.
	r := f.do(request{method: "GET", path: "/api/status", header: map[string]string{"Origin": "http://evil.example"}})
	if r.status != 200 || r.header.Get("Access-Control-Allow-Origin") != "" {
		t.Errorf("GET with a foreign Origin: %d %v", r.status, r.header)
	}
	r = f.do(request{method: "OPTIONS", path: "/api/undo", header: map[string]string{"Origin": "http://evil.example", "Access-Control-Request-Method": "POST"}})
	if r.header.Get("Access-Control-Allow-Origin") != "" || r.header.Get("Access-Control-Allow-Methods") != "" {
		t.Errorf("preflight answered with CORS headers: %v", r.header)
	}
}

func TestBodyLimit(t *testing.T) {
	f := newFixture(t, httpserver.Options{MaxBody: 1 << 10})
	f.save("first")
	big := `{"rev": "HEAD", "paths": ["` + strings.Repeat("a", 2<<10) + `"]}`
	r := f.do(request{method: "POST", path: "/api/restore", body: big})
	if r.status != http.StatusRequestEntityTooLarge || r.apiError(t).Code != "too_large" {
		t.Errorf("big body: %d %s", r.status, r.body)
	}
	// Without a Content-Length the limit holds as the body is read.
	hr, _ := http.NewRequest("POST", f.base+"/api/restore", io.MultiReader(strings.NewReader(big)))
	hr.ContentLength = -1
	hr.Header.Set("Authorization", "Bearer "+f.srv.Token())
	resp, err := f.ts.Client().Do(hr)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusRequestEntityTooLarge {
		t.Errorf("chunked big body: %d", resp.StatusCode)
	}
}

// A path that is not workspace-relative is a 400, and nothing is
// written (not even the pre-restore checkpoint).
func TestPathEscape(t *testing.T) {
	f := newFixture(t, httpserver.Options{})
	first := f.save("first")
	testutil.WriteFiles(t, f.ws, map[string]string{"a.txt": "edited\n"})
	outside := filepath.Join(filepath.Dir(f.ws), "outside.txt")
	for _, p := range []string{"../outside.txt", "/etc/passwd", outside, "a/../../x", "", ".", "a\x00b", "./a.txt", "a//b", `"\056\056/x"`} {
		r := f.do(request{method: "POST", path: "/api/restore", body: map[string]any{"rev": first.ID.String(), "paths": []string{p}}})
		if r.status != 400 || r.apiError(t).Exit != 2 {
			t.Errorf("path %q: %d %s", p, r.status, r.body)
		}
		r = f.do(request{method: "GET", path: "/api/diff?path=" + strings.ReplaceAll(p, "\x00", "%00")})
		if r.status != 400 {
			t.Errorf("diff path %q: %d %s", p, r.status, r.body)
		}
	}
	if got := testutil.ReadFile(t, f.ws, "a.txt"); got != "edited\n" {
		t.Errorf("a.txt = %q: written", got)
	}
	if _, err := os.Stat(outside); err == nil {
		t.Errorf("%s written", outside)
	}
	var st struct{ Checkpoints int }
	f.ok(request{method: "GET", path: "/api/status?changes=false"}, 0, &st)
	if st.Checkpoints != 1 {
		t.Errorf("%d checkpoints: something was saved", st.Checkpoints)
	}
}
