package httpserver_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/seed1cedbf7c/ckpt"
	"github.com/seed1cedbf7c/ckpt/internal/cli"
	"github.com/seed1cedbf7c/ckpt/internal/httpserver"
	"github.com/seed1cedbf7c/ckpt/internal/testutil"
)

// TestMain runs the CLI when the test binary is called as ckpt (see
// testutil.CkptBinary): the other process of the event tests.
func TestMain(m *testing.M) {
	if filepath.Base(os.Args[0]) == "ckpt" {
		os.Exit(cli.Run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
	}
	code := m.Run()
	if bigDir != "" { // BenchmarkListPage's history
		os.RemoveAll(bigDir)
	}
	os.Exit(code)
}

// fixture is a workspace with a store, served over a real loopback
// listener.
type fixture struct {
	t     *testing.T
	ws    string
	store string
	repo  *ckpt.Repo
	srv   *httpserver.Server
	ts    *httptest.Server
	base  string // http://127.0.0.1:PORT, or a workspace's under ckpt serve --all
	token string
}

func newFixture(t *testing.T, opts httpserver.Options) *fixture {
	t.Helper()
	return newFixtureWith(t, opts, ckpt.Options{})
}

// newFixtureWith is newFixture with the repository's options (its Store
// is the fixture's).
func newFixtureWith(t *testing.T, opts httpserver.Options, ropts ckpt.Options) *fixture {
	t.Helper()
	ws := testutil.TempDir(t)
	store := filepath.Join(testutil.TempDir(t), "store")
	testutil.WriteFiles(t, ws, map[string]string{"a.txt": "one\n", "b.txt": "bee\n"})
	ropts.Store = store
	r, err := ckpt.Open(context.Background(), ws, ropts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close() })
	ts := httptest.NewUnstartedServer(nil)
	opts.Repo, opts.Addr = r, ts.Listener.Addr().String()
	if opts.PollInterval == 0 {
		opts.PollInterval = 50 * time.Millisecond
	}
	srv, err := httpserver.New(opts)
	if err != nil {
		t.Fatal(err)
	}
	ts.Config.Handler = srv.Handler()
	ts.Start()
	t.Cleanup(func() { srv.Close(); ts.Close() })
	return &fixture{t: t, ws: ws, store: store, repo: r, srv: srv, ts: ts, base: ts.URL, token: srv.Token()}
}

// request is one request to the fixture's server.
type request struct {
	method, path string
	body         any               // marshalled as JSON unless a string
	header       map[string]string // added; "Authorization": "" removes the token
}

type response struct {
	status int
	header http.Header
	body   []byte
}

func (r response) json(t *testing.T, v any) {
	t.Helper()
	if err := json.Unmarshal(r.body, v); err != nil {
		t.Fatalf("response %d %s: %v", r.status, r.body, err)
	}
}

// apiError decodes an error response.
func (r response) apiError(t *testing.T) httpserver.Error {
	t.Helper()
	var e httpserver.Error
	r.json(t, &e)
	return e
}

func (f *fixture) do(req request) response {
	f.t.Helper()
	var body io.Reader
	switch b := req.body.(type) {
	case nil:
	case string:
		body = strings.NewReader(b)
	default:
		data, err := json.Marshal(b)
		if err != nil {
			f.t.Fatal(err)
		}
		body = bytes.NewReader(data)
	}
	hr, err := http.NewRequest(req.method, f.base+req.path, body)
	if err != nil {
		f.t.Fatal(err)
	}
	hr.Header.Set("Authorization", "Bearer "+f.token)
	for k, v := range req.header {
		if v == "" {
			hr.Header.Del(k)
			continue
		}
		if strings.EqualFold(k, "Host") {
			hr.Host = v
			continue
		}
		hr.Header.Set(k, v)
	}
	c := *f.ts.Client()
	c.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	resp, err := c.Do(hr)
	if err != nil {
		f.t.Fatal(err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		f.t.Fatal(err)
	}
	return response{resp.StatusCode, resp.Header, data}
}

// ok makes a request that must answer want (200 when 0) and decodes it
// into v (when not nil).
func (f *fixture) ok(req request, want int, v any) response {
	f.t.Helper()
	if want == 0 {
		want = http.StatusOK
	}
	r := f.do(req)
	if r.status != want {
		f.t.Fatalf("%s %s: status %d, want %d: %s", req.method, req.path, r.status, want, r.body)
	}
	if v != nil {
		r.json(f.t, v)
	}
	return r
}

func (f *fixture) save(msg string) *ckpt.Checkpoint {
	f.t.Helper()
	res, err := f.repo.Save(context.Background(), ckpt.SaveOptions{Message: msg})
	if err != nil {
		f.t.Fatal(err)
	}
	return res.Checkpoint
}

// sse reads a server-sent event stream.
type sse struct {
	t      *testing.T
	resp   *http.Response
	events chan sseEvent
	cancel func()
}

type sseEvent struct {
	id, kind string
	data     httpserver.StreamEvent
	comment  string // a comment line instead of an event
}

func (f *fixture) events(header map[string]string) *sse {
	f.t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	hr, _ := http.NewRequestWithContext(ctx, "GET", f.base+"/api/events", nil)
	hr.Header.Set("Authorization", "Bearer "+f.token)
	for k, v := range header {
		hr.Header.Set(k, v)
	}
	resp, err := f.ts.Client().Do(hr)
	if err != nil {
		cancel()
		f.t.Fatal(err)
	}
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(resp.Body)
		cancel()
		f.t.Fatalf("events: status %d: %s", resp.StatusCode, b)
	}
	s := &sse{t: f.t, resp: resp, events: make(chan sseEvent, 1000), cancel: cancel}
	go func() {
		defer close(s.events)
		sc := bufio.NewScanner(resp.Body)
		var ev sseEvent
		for sc.Scan() {
			line := sc.Text()
			switch {
			case line == "":
				if ev.kind != "" {
					s.events <- ev
				}
				ev = sseEvent{}
			case strings.HasPrefix(line, ":"):
				s.events <- sseEvent{comment: strings.TrimSpace(line[1:])}
			case strings.HasPrefix(line, "id: "):
				ev.id = line[4:]
			case strings.HasPrefix(line, "event: "):
				ev.kind = line[7:]
			case strings.HasPrefix(line, "data: "):
				if err := json.Unmarshal([]byte(line[6:]), &ev.data); err != nil {
					f.t.Errorf("event data %s: %v", line, err)
				}
			}
		}
	}()
	f.t.Cleanup(s.close)
	return s
}

func (s *sse) close() { s.cancel(); s.resp.Body.Close() }

// next returns the next event (not a comment) within d.
func (s *sse) next(d time.Duration) (sseEvent, bool) {
	deadline := time.After(d)
	for {
		select {
		case ev, ok := <-s.events:
			if !ok {
				return sseEvent{}, false
			}
			if ev.comment != "" {
				continue
			}
			return ev, true
		case <-deadline:
			return sseEvent{}, false
		}
	}
}

// waitFor returns the first event of kind within d, failing otherwise.
func (s *sse) waitFor(kind ckpt.EventKind, d time.Duration) sseEvent {
	s.t.Helper()
	deadline := time.Now().Add(d)
	var seen []string
	for {
		ev, ok := s.next(time.Until(deadline))
		if !ok {
			s.t.Fatalf("no %s event within %v (saw %v)", kind, d, seen)
		}
		if ev.data.Kind == kind {
			return ev
		}
		seen = append(seen, string(ev.data.Kind))
	}
}
