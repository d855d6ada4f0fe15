package httpserver_test

import (
	"context"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/seed1cedbf7c/ckpt"
	"github.com/seed1cedbf7c/ckpt/internal/httpserver"
	"github.com/seed1cedbf7c/ckpt/internal/testutil"
)

// A client that sends its body slowly (or never finishes it) holds up
// nobody but itself: other writes and the event stream go on.
func TestSlowBodyBlocksNobody(t *testing.T) {
	f := newFixture(t, httpserver.Options{})
	f.save("first")
	for _, path := range []string{"/api/snapshots", "/mcp"} {
		pr, pw := io.Pipe()
		hr, _ := http.NewRequest("POST", f.base+path, pr)
		hr.Header.Set("Authorization", "Bearer "+f.srv.Token())
		hr.Header.Set("Content-Type", "application/json")
		hr.Header.Set("Accept", "application/json, text/event-stream")
		go func() {
			if resp, err := f.ts.Client().Do(hr); err == nil {
				resp.Body.Close()
			}
		}()
		pw.Write([]byte(`{"name":`)) // returns once the server reads it
		done := make(chan response, 1)
		go func() {
			done <- f.do(request{method: "POST", path: "/api/snapshots", body: `{"name":"quick","force":true}`})
		}()
		select {
		case r := <-done:
			if r.status != 201 {
				t.Errorf("%s: a write beside a slow body: %d %s", path, r.status, r.body)
			}
		case <-time.After(3 * time.Second):
			t.Errorf("%s: a slow body holds up other writes", path)
		}
		pw.CloseWithError(io.ErrUnexpectedEOF)
	}
}

// A browser that reconnects to a new server (ckpt serve restarted on the
// same address) sends the last id the earlier server gave: it missed
// everything in between, so the new server must say resync, not carry
// on from its own event of the same number.
func TestEventsIDFromEarlierServer(t *testing.T) {
	a := newFixture(t, httpserver.Options{})
	a.save("first")
	s := a.events(nil)
	a.ok(request{method: "POST", path: "/api/snapshots", body: httpserver.SnapshotRequest{Name: "a"}}, 201, nil)
	seen := s.waitFor(ckpt.EventSnapshotCreated, 2*time.Second)
	s.close()
	b := newFixture(t, httpserver.Options{})
	b.save("first")
	for _, n := range []string{"a", "b", "c"} {
		b.ok(request{method: "POST", path: "/api/snapshots", body: httpserver.SnapshotRequest{Name: n}}, 201, nil)
	}
	s = b.events(map[string]string{"Last-Event-ID": seen.id})
	if ev, ok := s.next(2 * time.Second); !ok || ev.data.Kind != httpserver.EventResync {
		t.Errorf("resuming from the earlier server's %s: first event %+v, want resync", seen.id, ev.data)
	}
}

// Cookies do not tell ports apart: two servers on 127.0.0.1 share a
// browser's cookies. Logging in to the second must not log the browser
// out of the first (whose one-time URL is used up).
func TestLoginTwoServers(t *testing.T) {
	a := newFixture(t, httpserver.Options{})
	b := newFixture(t, httpserver.Options{})
	jar, _ := cookiejar.New(nil)
	browser := &http.Client{Jar: jar}
	for _, f := range []*fixture{a, b} {
		resp, err := browser.Get(f.srv.LoginURL(f.base))
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
	}
	for _, f := range []*fixture{a, b} {
		resp, err := browser.Get(f.base + "/api/status?changes=false")
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != 200 {
			t.Errorf("%s after logging in to both: %d", f.base, resp.StatusCode)
		}
	}
}

// An HTML form (or fetch without CORS) can POST text/plain, urlencoded
// or multipart bodies to any site: the JSON routes refuse those types
// whatever the Origin says, and nothing is written.
func TestFormPostRefused(t *testing.T) {
	f := newFixture(t, httpserver.Options{})
	f.save("first")
	for _, ct := range []string{"text/plain", "text/plain;charset=UTF-8", "application/x-www-form-urlencoded", "multipart/form-data; boundary=x", "application/jsonx"} {
		for _, req := range []request{
			{method: "POST", path: "/api/snapshots", body: `{"name":"s"}`},
			{method: "POST", path: "/api/undo"},
			{method: "POST", path: "/mcp", body: `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}`},
		} {
			req.header = map[string]string{"Content-Type": ct, "Accept": "application/json, text/event-stream"}
			if r := f.do(req); r.status != http.StatusUnsupportedMediaType {
				t.Errorf("%s %s as %s: %d %s", req.method, req.path, ct, r.status, r.body)
			}
		}
	}
	if snaps, _ := f.repo.Snapshots(context.Background()); len(snaps) != 0 {
		t.Errorf("snapshots %v: a form wrote", snaps)
	}
	for _, ct := range []string{"application/json", "application/json; charset=utf-8", ""} {
		r := f.do(request{method: "POST", path: "/api/snapshots", body: `{"name":"ok","force":true}`, header: map[string]string{"Content-Type": ct}})
		if r.status != 201 {
			t.Errorf("JSON as %q: %d %s", ct, r.status, r.body)
		}
	}
}

// .git, .ckpt and .decree are never checkpointed: a request naming a
// path in one is a bad path (400), not a server error, and nothing in
// them is touched.
func TestReservedPaths(t *testing.T) {
	f := newFixture(t, httpserver.Options{})
	testutil.WriteFiles(t, f.ws, map[string]string{".git/config": "[core]\n"})
	first := f.save("first")
	for _, p := range []string{".git", ".GIT/config", "sub/.ckpt", ".Decree/x"} {
		for _, req := range []request{
			{method: "POST", path: "/api/restore", body: map[string]any{"rev": first.ID.String(), "paths": []string{p}}},
			{method: "POST", path: "/api/checkpoints", body: map[string]any{"paths": []string{p}, "allow_empty": true}},
			{method: "GET", path: "/api/diff?path=" + p},
		} {
			r := f.do(req)
			if r.status != 400 || r.apiError(t).Code != "bad_path" {
				t.Errorf("%s %s %s: %d %s", req.method, req.path, p, r.status, r.body)
			}
		}
	}
	if got := testutil.ReadFile(t, f.ws, ".git/config"); got != "[core]\n" {
		t.Errorf(".git/config = %q", got)
	}
}

// On the scheme's default port (80, or 443 over TLS) browsers send Host
// and Origin without the port: that is the bound address all the same.
func TestDefaultPortHost(t *testing.T) {
	f := newFixture(t, httpserver.Options{})
	for _, c := range []struct {
		addr, scheme string
		tls          bool
	}{{"127.0.0.1:80", "http", false}, {"127.0.0.1:443", "https", true}} {
		srv, err := httpserver.New(httpserver.Options{Repo: f.repo, Addr: c.addr, TLS: c.tls})
		if err != nil {
			t.Fatal(err)
		}
		defer srv.Close()
		_, port, _ := strings.Cut(c.addr, ":")
		for host, want := range map[string]int{
			"127.0.0.1": 409, "localhost": 409, "127.0.0.1:" + port: 409, "LOCALHOST:" + port: 409,
			"127.0.0.1:1": 403, "evil.example": 403,
		} {
			for _, origin := range []string{c.scheme + "://" + host, c.scheme + "://" + strings.TrimSuffix(host, ":"+port)} {
				req := httptest.NewRequest("POST", "/api/undo", nil)
				req.Host = host
				req.Header.Set("Authorization", "Bearer "+srv.Token())
				req.Header.Set("Origin", origin)
				req.Header.Set("Sec-Fetch-Site", "same-origin")
				rec := httptest.NewRecorder()
				srv.Handler().ServeHTTP(rec, req)
				if rec.Code != want { // 409: nothing to undo, past every check
					t.Errorf("%s, Host %s, Origin %s: %d %s", c.addr, host, origin, rec.Code, rec.Body)
				}
			}
		}
	}
}

// Event streams are bounded: one over the limit gets 503 with a hint,
// and a stream that closes makes room again.
func TestEventStreamsBounded(t *testing.T) {
	defer httpserver.SetMaxStreams(2)()
	f := newFixture(t, httpserver.Options{})
	a := f.events(nil)
	f.events(nil)
	r := f.do(request{method: "GET", path: "/api/events"})
	if r.status != http.StatusServiceUnavailable || !strings.Contains(string(r.body), "too_many_streams") {
		t.Fatalf("a third stream: %d %s", r.status, r.body)
	}
	a.close()
	deadline := time.Now().Add(2 * time.Second)
	for {
		ctx, cancel := context.WithCancel(context.Background())
		hr, _ := http.NewRequestWithContext(ctx, "GET", f.base+"/api/events", nil)
		hr.Header.Set("Authorization", "Bearer "+f.srv.Token())
		resp, err := f.ts.Client().Do(hr)
		if err != nil {
			cancel()
			t.Fatal(err)
		}
		status := resp.StatusCode
		cancel()
		resp.Body.Close()
		if status == http.StatusOK {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no room after a stream closed: %d", status)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
