package httpserver

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/seed1cedbf7c/ckpt"
)

// MultiOptions configure [NewMulti].
type MultiOptions struct {
	// Options apply to every workspace served; Repo must be nil.
	Options
	// Workspaces are the workspaces served (as [ckpt.Workspaces] lists
	// them), each under /w/ID/ with ID its [WorkspaceID].
	Workspaces []*ckpt.WorkspaceInfo
	// Open opens a workspace's store, on the first request for it. The
	// server closes what it opened in [Multi.Close].
	Open func(ctx context.Context, w *ckpt.WorkspaceInfo) (*ckpt.Repo, error)
}

// Multi serves several workspaces with one token and one login: each
// one's API, event stream, MCP tools and web UI under /w/ID/ (the routes
// of a [Server] serving it alone, prefixed), the list of them at GET
// /api/workspaces and, for a browser, at /. A workspace's store is opened
// on the first request for it; it gets its own [Server], with its own
// event stream and watcher.
type Multi struct {
	*gate
	opts MultiOptions
	list []*workspace
	byID map[string]*workspace
	mux  *http.ServeMux

	mu     sync.Mutex
	closed bool
}

// workspace is one of a Multi's workspaces.
type workspace struct {
	id      string
	info    *ckpt.WorkspaceInfo
	backend string

	openMu sync.Mutex // held while its store is opened
	srv    *Server    // nil until opened
}

// WorkspaceID returns the id a [Multi] serves the workspace at path
// under (/w/ID/): the engine's [ckpt.WorkspaceKey], as the default
// store's name ends.
func WorkspaceID(path string) string { return ckpt.WorkspaceKey(path) }

// NewMulti returns a server for opts.Workspaces. Call [Multi.Close] when
// done: it closes the stores it opened.
func NewMulti(opts MultiOptions) (*Multi, error) {
	if opts.Repo != nil {
		return nil, errors.New("httpserver: NewMulti opens its workspaces' stores itself: no Repo")
	}
	if opts.Open == nil {
		return nil, errors.New("httpserver: NewMulti needs Open")
	}
	g, err := newGate(opts.Options)
	if err != nil {
		return nil, err
	}
	// The workspaces' servers share the gate: its tokens, not their own.
	opts.Token, opts.LoginToken = g.token, g.loginToken
	m := &Multi{gate: g, opts: opts, byID: map[string]*workspace{}, mux: http.NewServeMux()}
	for _, info := range opts.Workspaces {
		id := WorkspaceID(info.Workspace)
		if m.byID[id] != nil {
			// Two stores name the same workspace (one was copied or
			// renamed): the other gets its store's hash.
			id = WorkspaceID(info.Store)
		}
		backend := ckpt.BackendSQLite
		if set, err := ckpt.ConfigSet(info.Store); err == nil && set["backend"] != "" {
			backend = set["backend"]
		}
		w := &workspace{id: id, info: info, backend: backend}
		m.list = append(m.list, w)
		m.byID[id] = w
	}
	m.mux.HandleFunc("GET /{$}", m.index)
	m.mux.Handle("GET /ui/", assets(opts.UIDir))
	m.mux.HandleFunc("GET /api/workspaces", m.workspaces)
	m.mux.HandleFunc("GET /api/openapi.json", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Write(OpenAPI)
	})
	m.mux.HandleFunc("/w/", m.dispatch)
	m.mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		writeError(w, &apiError{status: http.StatusNotFound, code: "not_found", msg: "no such endpoint: " + r.Method + " " + r.URL.Path,
			hint: "ckpt serve --all serves each workspace's API under /w/ID/api/; GET /api/workspaces lists the ids"})
	})
	return m, nil
}

// Handler returns the server's HTTP handler, every check included.
func (m *Multi) Handler() http.Handler { return m.guard(m.mux) }

// Serve serves on ln until ctx is done, then shuts down as
// [Server.Serve] does.
func (m *Multi) Serve(ctx context.Context, ln net.Listener, grace time.Duration) error {
	return serve(ctx, ln, grace, m.Handler(), m.stop)
}

// IDs returns the ids of the workspaces served, in the order of
// MultiOptions.Workspaces.
func (m *Multi) IDs() []string {
	ids := make([]string, len(m.list))
	for i, w := range m.list {
		ids[i] = w.id
	}
	return ids
}

// stop ends the event streams and watchers of the workspaces opened, and
// opens no more.
func (m *Multi) stop() error {
	m.mu.Lock()
	m.closed = true
	m.mu.Unlock()
	for _, s := range m.opened() {
		s.Close()
	}
	return nil
}

// Close stops the server's streams and watchers and closes the stores
// it opened.
func (m *Multi) Close() error {
	m.stop()
	var errs []error
	for _, s := range m.opened() {
		<-s.done
		if err := s.repo.Close(); err != nil {
			errs = append(errs, fmt.Errorf("close %s: %w", s.repo.Root(), err))
		}
	}
	return errors.Join(errs...)
}

// opened returns the servers of the workspaces opened so far.
func (m *Multi) opened() []*Server {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []*Server
	for _, w := range m.list {
		if w.srv != nil {
			out = append(out, w.srv)
		}
	}
	return out
}

// server returns w's server, opening its store the first time.
func (m *Multi) server(ctx context.Context, w *workspace) (*Server, error) {
	w.openMu.Lock()
	defer w.openMu.Unlock()
	m.mu.Lock()
	srv, closed := w.srv, m.closed
	m.mu.Unlock()
	if srv != nil {
		return srv, nil
	}
	if closed {
		return nil, &apiError{status: http.StatusServiceUnavailable, code: "closing", msg: "the server is shutting down"}
	}
	if fi, err := os.Stat(w.info.Workspace); err != nil || !fi.IsDir() {
		return nil, &apiError{status: http.StatusNotFound, code: "not_found",
			msg:  fmt.Sprintf("workspace %s no longer exists (its store is %s)", w.info.Workspace, w.info.Store),
			hint: "`ckpt workspaces --prune` removes the stores of workspaces that are gone"}
	}
	repo, err := m.opts.Open(context.WithoutCancel(ctx), w.info)
	if err != nil {
		return nil, fmt.Errorf("open %s: %w", w.info.Workspace, err)
	}
	opts := m.opts.Options
	opts.Repo = repo
	srv = newServer(opts, m.gate, "/w/"+w.id)
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.closed {
		// Shut down while the store was opened.
		srv.Close()
		<-srv.done
		repo.Close()
		return nil, &apiError{status: http.StatusServiceUnavailable, code: "closing", msg: "the server is shutting down"}
	}
	w.srv = srv
	return srv, nil
}

// dispatch serves /w/ID/...: the workspace's own routes, with the
// prefix taken off. An id that names no workspace served is 404: the
// path of a workspace never comes from a request.
func (m *Multi) dispatch(rw http.ResponseWriter, r *http.Request) {
	id, _, slash := strings.Cut(strings.TrimPrefix(r.URL.Path, "/w/"), "/")
	w := m.byID[id]
	if w == nil {
		writeError(rw, &apiError{status: http.StatusNotFound, code: "not_found", msg: fmt.Sprintf("no workspace %q is served here", id),
			hint: "GET /api/workspaces lists the workspaces and their ids"})
		return
	}
	if !slash {
		// /w/ID is the page at /w/ID/, whose relative links need the slash.
		http.Redirect(rw, r, "/w/"+id+"/", http.StatusMovedPermanently)
		return
	}
	srv, err := m.server(r.Context(), w)
	if err != nil {
		writeError(rw, err)
		return
	}
	http.StripPrefix("/w/"+id, srv.mux).ServeHTTP(rw, r)
}

// WorkspaceEntry is one workspace of GET /api/workspaces.
type WorkspaceEntry struct {
	// ID names the workspace in paths: /w/ID/api/..., /w/ID/mcp.
	ID string `json:"id"`
	// Workspace is the workspace's path.
	Workspace ckpt.Path `json:"workspace"`
	// Store is its store's directory.
	Store ckpt.Path `json:"store"`
	// Backend is the store's backend.
	Backend string `json:"backend"`
	// Exists reports whether the workspace directory exists now.
	Exists bool `json:"exists"`
	// Open reports whether the server has opened its store.
	Open bool `json:"open"`
	// URL is the workspace's page, and the prefix of its API.
	URL string `json:"url"`
}

// WorkspacesResponse is the answer of GET /api/workspaces.
type WorkspacesResponse struct {
	Workspaces []WorkspaceEntry `json:"workspaces"`
}

// entries lists the workspaces served, checking that each still exists.
func (m *Multi) entries() []WorkspaceEntry {
	out := []WorkspaceEntry{}
	for _, w := range m.list {
		fi, err := os.Stat(w.info.Workspace)
		m.mu.Lock()
		open := w.srv != nil
		m.mu.Unlock()
		out = append(out, WorkspaceEntry{ID: w.id, Workspace: ckpt.Path(w.info.Workspace), Store: ckpt.Path(w.info.Store),
			Backend: w.backend, Exists: err == nil && fi.IsDir(), Open: open, URL: "/w/" + w.id + "/"})
	}
	return out
}

func (m *Multi) workspaces(w http.ResponseWriter, r *http.Request) {
	writeJSON(w, http.StatusOK, WorkspacesResponse{Workspaces: m.entries()})
}

// index is the list of workspaces, each a link to its page.
func (m *Multi) index(w http.ResponseWriter, r *http.Request) {
	page(w, m.opts.UIDir, "workspaces.html", m.entries())
}
