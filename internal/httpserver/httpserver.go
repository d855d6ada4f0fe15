// Package httpserver serves a workspace over HTTP: a JSON API on the
// root package's API, a server-sent event stream of what happens to the
// workspace (in this process or any other), and ckpt's MCP tools over the
// Streamable HTTP transport at /mcp. docs/http.md describes it; the
// routes are in openapi.json, served at /api/openapi.json.
//
// The server can rewrite the workspace, so every request is checked: a
// token (a bearer header, or the cookie the one-time login URL sets), a
// Host header naming the bound address, the Origin of every request that
// changes something and of the event stream, the size of the body, and
// every path it names. It sends no CORS headers.
package httpserver

import (
	"context"
	_ "embed"
	"errors"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/seed1cedbf7c/ckpt"
	"github.com/seed1cedbf7c/ckpt/internal/mcpserver"
)

// OpenAPI is the OpenAPI 3.1 description of the API.
//
//go:embed openapi.json
var OpenAPI []byte

// Options configure [New].
type Options struct {
	// Repo is the workspace served. The server does not close it.
	Repo *ckpt.Repo
	// Addr is the address the server is reached at (host:port, as the
	// listener reports it): requests must name it in their Host header.
	Addr string
	// TLS says the server is reached over HTTPS (for the Origin check).
	TLS bool
	// Token is the secret every request carries (Authorization: Bearer,
	// or the session cookie). Empty: a random one.
	Token string
	// LoginToken is the one-time token of the login URL, exchanged once
	// for the session cookie. Empty: a random one.
	LoginToken string
	// ReadOnly refuses every request that would change something.
	ReadOnly bool
	// PollInterval is how often the server looks for changes made by
	// other processes (default 150ms).
	PollInterval time.Duration
	// Heartbeat is the interval of the event stream's comment lines
	// (default 15s).
	Heartbeat time.Duration
	// Ring is the number of recent events kept for Last-Event-ID (default
	// 4096).
	Ring int
	// MaxBody limits request bodies (default 1 MiB; /mcp: 4 MiB).
	MaxBody int64
	// UIDir serves the web UI's files from this directory instead of
	// the embedded ones (internal/httpserver/ui, to edit them live).
	UIDir string
}

// Server serves one workspace.
type Server struct {
	*gate
	opts Options
	repo *ckpt.Repo
	mux  *http.ServeMux
	// base is the path the workspace's routes are under: "" alone,
	// /w/ID in a [Multi].
	base string
	// done is closed when the watcher has stopped.
	done chan struct{}

	// opMu serializes the changes made through this server with the
	// poller, so that a change is reported once: by the engine's event,
	// not again as another process's.
	opMu sync.Mutex

	events    *broker
	streams   atomic.Int64     // open event streams (at most maxStreams)
	tell      func(ckpt.Event) // the watcher's: an engine event was published
	watch     *watcher
	sizes     *sizeLog                       // the store's size and gc runs since the start
	statsRun  *coalesced[*ckpt.StoreStats]   // GET /api/stats, one run at a time
	growthRun *coalesced[[]ckpt.GrowthPoint] // GET /api/stats/history's growth, the same
	closing   chan struct{}
	once      sync.Once
	cancel    func()

	mcp *mcpserver.Server
}

// route is one endpoint of the API.
type route struct {
	method, path string
	// write marks requests that change the workspace or the store: they
	// need a matching Origin and are refused in read-only mode.
	write bool
	h     handler
}

// New returns a server for opts.Repo. Call [Server.Close] when done.
func New(opts Options) (*Server, error) {
	if opts.Repo == nil {
		return nil, errors.New("httpserver: no repository")
	}
	g, err := newGate(opts)
	if err != nil {
		return nil, err
	}
	return newServer(opts, g, ""), nil
}

// newServer returns a server for opts.Repo whose requests g checks,
// with its routes under base.
func newServer(opts Options, g *gate, base string) *Server {
	if opts.PollInterval <= 0 {
		opts.PollInterval = 150 * time.Millisecond
	}
	if opts.Heartbeat <= 0 {
		opts.Heartbeat = 15 * time.Second
	}
	if opts.Ring <= 0 {
		opts.Ring = 4096
	}
	s := &Server{gate: g, opts: opts, repo: opts.Repo, mux: http.NewServeMux(), base: base,
		closing: make(chan struct{}), done: make(chan struct{})}
	s.events = newBroker(opts.Ring)
	s.sizes = newSizeLog(s.repo)
	s.statsRun = newCoalesced(s.repo.Stats)
	s.growthRun = newCoalesced(s.repo.Growth)
	ctx, cancel := context.WithCancel(context.Background())
	s.cancel = cancel
	w := newWatcher(s)
	unsub := s.repo.Subscribe(s.engineEvent)
	go func() {
		defer close(s.done)
		w.run(ctx)
		unsub()
	}()
	for _, rt := range s.routes() {
		s.mux.Handle(rt.method+" "+rt.path, s.api(rt))
	}
	s.mux.Handle("/mcp", s.mcpHandler())
	s.mux.HandleFunc("GET /{$}", s.index)
	s.mux.Handle("GET /ui/", assets(opts.UIDir))
	s.mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		writeError(w, &apiError{status: http.StatusNotFound, code: "not_found", msg: "no such endpoint: " + r.Method + " " + r.URL.Path,
			hint: "GET /api/openapi.json lists the endpoints"})
	})
	return s
}

// Handler returns the server's HTTP handler, every check included.
func (s *Server) Handler() http.Handler { return s.guard(s.mux) }

// Close stops the event stream's watcher and ends the streams. It does
// not close the repository.
func (s *Server) Close() error {
	s.once.Do(func() {
		close(s.closing)
		s.cancel()
	})
	return nil
}

// Serve serves on ln until ctx is done, then shuts down: open event
// streams end at once, requests in progress have grace to finish.
func (s *Server) Serve(ctx context.Context, ln net.Listener, grace time.Duration) error {
	return serve(ctx, ln, grace, s.Handler(), s.Close)
}

// serve serves h on ln until ctx is done; then stop ends the event
// streams and requests in progress have grace to finish.
func serve(ctx context.Context, ln net.Listener, grace time.Duration, h http.Handler, stop func() error) error {
	base, cancelBase := context.WithCancel(context.Background())
	defer cancelBase()
	hs := &http.Server{
		Handler:           h,
		ReadHeaderTimeout: 10 * time.Second,
		// An idle keep-alive connection goes (no ReadTimeout: it would
		// cut the event streams).
		IdleTimeout: 2 * time.Minute,
		BaseContext: func(net.Listener) context.Context { return base },
	}
	errc := make(chan error, 1)
	go func() { errc <- hs.Serve(ln) }()
	select {
	case err := <-errc:
		stop()
		return err
	case <-ctx.Done():
	}
	stop() // event streams end
	sctx, cancel := context.WithTimeout(context.Background(), grace)
	defer cancel()
	err := hs.Shutdown(sctx)
	if err != nil {
		cancelBase() // what is left (an MCP stream) is cut short
		hs.Close()
	}
	if serr := <-errc; !errors.Is(serr, http.ErrServerClosed) {
		return serr
	}
	return nil
}

// mcpHandler serves the MCP tools with the Streamable HTTP transport.
// Changes made through it take the server's operation lock, as the API's
// do. In read-only mode only the tools that read are offered.
func (s *Server) mcpHandler() http.Handler {
	s.mcp = mcpserver.New(mcpserver.Options{
		Workspace: s.repo.Root(),
		Open:      func(context.Context, string) (*ckpt.Repo, error) { return s.repo, nil },
	})
	if s.opts.ReadOnly {
		s.mcp.MCP().RemoveTools(mcpserver.WriteTools...)
	}
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s.mcp.MCP() },
		&mcp.StreamableHTTPOptions{MaxRequestBodyBytes: 4 << 20, PropagateRequestCancellation: true})
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost {
			// Read the body first: a slow client must not hold the lock.
			if err := bufferBody(r); err != nil {
				writeError(w, err)
				return
			}
			s.serverOp(func() { h.ServeHTTP(w, r) })
			return
		}
		h.ServeHTTP(w, r)
	})
}
