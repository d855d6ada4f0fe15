package httpserver_test

import (
	"io"
	"net/http"
	"net/http/cookiejar"
	"testing"
	"time"

	"github.com/seed1cedbf7c/ckpt"
	"github.com/seed1cedbf7c/ckpt/internal/httpserver"
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
