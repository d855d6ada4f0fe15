package httpserver_test

import (
	"io"
	"net/http"
	"testing"
	"time"

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
