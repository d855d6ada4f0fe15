package httpserver

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"mime"
	"net/http"
	"path"
	"strconv"
	"strings"

	"github.com/seed1cedbf7c/ckpt"
	"github.com/seed1cedbf7c/ckpt/internal/snaptext"
)

// text is a response that is not JSON (a unified diff).
type text struct {
	contentType string
	body        []byte
}

// created marks a response with status 201.
type created struct{ v any }

// handler computes a response: a value written as JSON, a text, or an
// error written as [Error].
type handler func(r *http.Request) (any, error)

func (s *Server) routes() []route {
	return []route{
		{"GET", "/api/openapi.json", false, s.openapi},
		{"GET", "/api/events", false, nil}, // s.serveEvents, wired in api()
		{"GET", "/api/status", false, s.status},
		{"GET", "/api/checkpoints", false, s.checkpoints},
		{"POST", "/api/checkpoints", true, s.save},
		{"GET", "/api/checkpoints/{rev}", false, s.checkpoint},
		{"GET", "/api/checkpoints/{rev}/manifest", false, s.manifest},
		{"GET", "/api/diff", false, s.diff},
		{"POST", "/api/restore", true, s.restore},
		{"POST", "/api/undo", true, s.undo},
		{"POST", "/api/redo", true, s.redo},
		{"GET", "/api/branches", false, s.branches},
		{"GET", "/api/tags", false, s.tags},
		{"GET", "/api/snapshots", false, s.snapshots},
		{"POST", "/api/snapshots", true, s.snapshotCreate},
		{"GET", "/api/snapshots/{name}/diff", false, s.snapshotDiff},
		{"POST", "/api/snapshots/{name}/restore", true, s.snapshotRestore},
		{"DELETE", "/api/snapshots/{name}", true, s.snapshotDelete},
		{"GET", "/api/sessions", false, s.sessions},
		{"GET", "/api/sessions/{id}", false, s.session},
		{"POST", "/api/sessions/{id}/rewind", true, s.rewind},
		{"POST", "/api/sessions/{id}/fork", true, s.fork},
		{"POST", "/api/sessions/{id}/summarize", true, s.summarize},
		{"GET", "/api/stats", false, s.stats},
		{"GET", "/api/stats/history", false, s.storeHistory},
		{"POST", "/api/gc", true, s.gc},
	}
}

// api adapts a route's handler: read-only mode refuses writes (403);
// writes hold the operation lock and fail, as the CLI does, when the git
// backend's refs could not follow a change the store made.
func (s *Server) api(rt route) http.Handler {
	if rt.path == "/api/events" {
		return http.HandlerFunc(s.serveEvents)
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if rt.write && s.opts.ReadOnly {
			writeError(w, forbidden("read_only", "the server is read-only (ckpt serve --read-only): "+r.Method+" "+r.URL.Path+" is refused", ""))
			return
		}
		if rt.write && !jsonBody(r) {
			writeError(w, &apiError{status: http.StatusUnsupportedMediaType, code: "bad_content_type",
				msg:  fmt.Sprintf("Content-Type %q: %s %s takes JSON", r.Header.Get("Content-Type"), r.Method, r.URL.Path),
				hint: "send Content-Type: application/json, or no Content-Type"})
			return
		}
		var v any
		var err error
		if rt.write {
			// The body is read before the operation lock is taken: a
			// client that sends it slowly holds up nobody but itself.
			if err := bufferBody(r); err != nil {
				writeError(w, err)
				return
			}
			s.serverOp(func() {
				before := s.repo.GitSyncError()
				v, err = rt.h(r)
				if serr := s.repo.GitSyncError(); err == nil && serr != nil && serr != before {
					err = serr
				}
			})
		} else {
			v, err = rt.h(r)
		}
		if err != nil {
			writeError(w, err)
			return
		}
		switch v := v.(type) {
		case text:
			w.Header().Set("Content-Type", v.contentType)
			w.Write(v.body)
		case created:
			writeJSON(w, http.StatusCreated, v.v)
		default:
			writeJSON(w, http.StatusOK, v)
		}
	})
}

func (s *Server) openapi(*http.Request) (any, error) {
	return text{"application/json", OpenAPI}, nil
}

// jsonBody reports whether a write's Content-Type is JSON or absent.
// An HTML form on any site can POST text/plain, urlencoded or multipart
// bodies without a CORS preflight; refusing them keeps a browser that
// sends no Origin from being a way in.
func jsonBody(r *http.Request) bool {
	ct := r.Header.Get("Content-Type")
	if ct == "" {
		return true
	}
	mt, _, err := mime.ParseMediaType(ct)
	return err == nil && mt == "application/json"
}

// bufferBody reads the request's whole body (within the guard's limit)
// into memory, so that the handler's reads do not wait on the client.
func bufferBody(r *http.Request) error {
	data, err := io.ReadAll(r.Body)
	if err != nil {
		return err // a *http.MaxBytesError: 413
	}
	r.Body.Close()
	r.Body = io.NopCloser(bytes.NewReader(data))
	return nil
}

// readBody decodes the JSON body into v; an empty body leaves v as it is.
func readBody(r *http.Request, v any) error {
	data, err := io.ReadAll(r.Body)
	if err != nil {
		return err // a *http.MaxBytesError: 413
	}
	if len(bytes.TrimSpace(data)) == 0 {
		return nil
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return badRequest("request body: " + err.Error())
	}
	if dec.More() {
		return badRequest("request body: more than one JSON value")
	}
	return nil
}

// workspacePaths validates paths from a request like any untrusted path:
// workspace-relative, slash-separated, clean (no "..", ".", empty names
// or leading "/"), no NUL, nothing inside .git, .ckpt or .decree. A path
// in git's quoted form (see [ckpt.EncodePath]) is decoded first. One
// trailing "/" is allowed.
func workspacePaths(ps []string) ([]string, error) {
	out := make([]string, 0, len(ps))
	for _, p := range ps {
		q := p
		if strings.HasPrefix(p, `"`) {
			d, err := ckpt.DecodePath(p)
			if err != nil {
				return nil, badRequest(fmt.Sprintf("path %s: %v", p, err))
			}
			q = d
		}
		q = strings.TrimSuffix(q, "/")
		if q == "" || q == "." || strings.ContainsRune(q, 0) || strings.HasPrefix(q, "/") ||
			path.Clean(q) != q || q == ".." || strings.HasPrefix(q, "../") {
			return nil, &apiError{status: http.StatusBadRequest, code: "bad_path",
				msg:  fmt.Sprintf("path %q is not a workspace-relative path", p),
				hint: "name paths relative to the workspace's top, with / between names and no . or .. components"}
		}
		for c := range strings.SplitSeq(q, "/") {
			if ckpt.ReservedName(c) {
				return nil, &apiError{status: http.StatusBadRequest, code: "bad_path",
					msg:  fmt.Sprintf("path %q is inside %s, which ckpt never checkpoints", p, c),
					hint: "ckpt always leaves .git, .ckpt and .decree alone, in any letter case"}
			}
		}
		out = append(out, q)
	}
	return out, nil
}

func intParam(r *http.Request, name string, def int) (int, error) {
	v := r.URL.Query().Get(name)
	if v == "" {
		return def, nil
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 0 {
		return 0, badRequest(fmt.Sprintf("?%s=%s: want a number 0 or above", name, v))
	}
	return n, nil
}

func boolParam(r *http.Request, name string, def bool) (bool, error) {
	v := r.URL.Query().Get(name)
	if v == "" {
		return def, nil
	}
	b, err := strconv.ParseBool(v)
	if err != nil {
		return false, badRequest(fmt.Sprintf("?%s=%s: want true or false", name, v))
	}
	return b, nil
}

func (s *Server) status(r *http.Request) (any, error) {
	changes, err := boolParam(r, "changes", true)
	if err != nil {
		return nil, err
	}
	return s.repo.Status(r.Context(), changes)
}

// Page is a page of checkpoints, newest first. Next, when set, is the
// before= of the next page.
type Page struct {
	Checkpoints []*ckpt.Checkpoint `json:"checkpoints"`
	Next        string             `json:"next,omitempty"`
}

const defaultPage, maxPage = 50, 1000

func (s *Server) checkpoints(r *http.Request) (any, error) {
	limit, err := intParam(r, "limit", defaultPage)
	if err != nil {
		return nil, err
	}
	if limit == 0 || limit > maxPage {
		limit = min(max(limit, defaultPage), maxPage)
	}
	ctx, q := r.Context(), r.URL.Query()
	opts := ckpt.ListOptions{Kind: q.Get("kind"), Limit: limit + 1}
	if before := q.Get("before"); before != "" {
		if opts.Before, err = s.repo.Resolve(ctx, before); err != nil {
			return nil, err
		}
	}
	cps, err := s.repo.List(ctx, opts)
	if err != nil {
		return nil, err
	}
	p := Page{Checkpoints: cps}
	if len(cps) > limit {
		p.Checkpoints = cps[:limit]
		p.Next = cps[limit-1].ID.String()
	}
	if p.Checkpoints == nil {
		p.Checkpoints = []*ckpt.Checkpoint{}
	}
	return p, nil
}

// SaveRequest is POST /api/checkpoints's body.
type SaveRequest struct {
	Message string `json:"message,omitempty"`
	// Paths make a partial checkpoint of just these paths.
	Paths []string `json:"paths,omitempty"`
	// AllowEmpty records a checkpoint even if nothing changed.
	AllowEmpty bool `json:"allow_empty,omitempty"`
}

// save checkpoints the workspace (201), or answers 200 when nothing
// changed.
func (s *Server) save(r *http.Request) (any, error) {
	var in SaveRequest
	if err := readBody(r, &in); err != nil {
		return nil, err
	}
	paths, err := workspacePaths(in.Paths)
	if err != nil {
		return nil, err
	}
	res, err := s.repo.Save(r.Context(), ckpt.SaveOptions{Message: in.Message, Paths: paths, AllowEmpty: in.AllowEmpty})
	if err != nil {
		return nil, err
	}
	out := SaveResponse{Checkpoint: res.Checkpoint, Created: res.Created, Skipped: nonNil(res.Skipped)}
	if !res.Created {
		return out, nil
	}
	return created{out}, nil
}

// SaveResponse is POST /api/checkpoints's answer.
type SaveResponse struct {
	// Checkpoint is the new checkpoint, or HEAD when nothing changed
	// (Created false; null before the first checkpoint).
	Checkpoint *ckpt.Checkpoint `json:"checkpoint"`
	Created    bool             `json:"created"`
	// Skipped are paths not captured (FIFOs, devices, files over the
	// size limit).
	Skipped []ckpt.Skipped `json:"skipped"`
}

func (s *Server) checkpoint(r *http.Request) (any, error) {
	return s.repo.Show(r.Context(), r.PathValue("rev"))
}

func (s *Server) manifest(r *http.Request) (any, error) {
	return s.repo.Manifest(r.Context(), r.PathValue("rev"))
}

func (s *Server) diff(r *http.Request) (any, error) {
	q := r.URL.Query()
	paths, err := workspacePaths(q["path"])
	if err != nil {
		return nil, err
	}
	if err := checkFormat(q.Get("format")); err != nil {
		return nil, err
	}
	d, err := s.repo.Diff(r.Context(), ckpt.DiffOptions{From: q.Get("from"), To: q.Get("to"), Paths: paths})
	if err != nil {
		return nil, err
	}
	return renderDiff(r, d)
}

func checkFormat(f string) error {
	switch f {
	case "", "json", "unified":
		return nil
	}
	return badRequest(fmt.Sprintf("?format=%s: want json or unified", f))
}

// renderDiff answers a diff as ?format asks: json (a [ckpt.DiffReport],
// the default) or unified (git's text).
func renderDiff(r *http.Request, d *ckpt.DiffResult) (any, error) {
	if r.URL.Query().Get("format") == "unified" {
		var b bytes.Buffer
		if err := d.WritePatch(r.Context(), &b); err != nil {
			return nil, err
		}
		return text{"text/x-diff; charset=utf-8", b.Bytes()}, nil
	}
	return d.Report(r.Context())
}

// RestoreRequest is POST /api/restore's body.
type RestoreRequest struct {
	Rev    string   `json:"rev"`
	Paths  []string `json:"paths,omitempty"`
	DryRun bool     `json:"dry_run,omitempty"`
}

func (s *Server) restore(r *http.Request) (any, error) {
	var in RestoreRequest
	if err := readBody(r, &in); err != nil {
		return nil, err
	}
	if in.Rev == "" {
		return nil, badRequest("restore: rev is required")
	}
	paths, err := workspacePaths(in.Paths)
	if err != nil {
		return nil, err
	}
	return s.repo.Restore(r.Context(), in.Rev, ckpt.RestoreOptions{Paths: paths, DryRun: in.DryRun})
}

func (s *Server) undo(r *http.Request) (any, error) {
	if err := readBody(r, &struct{}{}); err != nil {
		return nil, err
	}
	return s.repo.Undo(r.Context())
}

func (s *Server) redo(r *http.Request) (any, error) {
	if err := readBody(r, &struct{}{}); err != nil {
		return nil, err
	}
	return s.repo.Redo(r.Context())
}

func (s *Server) branches(r *http.Request) (any, error) {
	bs, err := s.repo.Branches(r.Context())
	return map[string]any{"branches": nonNil(bs)}, err
}

func (s *Server) tags(r *http.Request) (any, error) {
	ts, err := s.repo.Tags(r.Context())
	return map[string]any{"tags": nonNil(ts)}, err
}

func nonNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}

// The snapshot endpoints are the MCP tools' (internal/mcpserver) with
// JSON around their responses: "text" is the tool's answer, byte for byte.

// SnapshotRequest is POST /api/snapshots's body (snapshot_create's
// arguments).
type SnapshotRequest struct {
	Name        string `json:"name"`
	Description string `json:"description,omitempty"`
	Force       bool   `json:"force,omitempty"`
	TTL         string `json:"ttl,omitempty"`
}

func (s *Server) snapshots(r *http.Request) (any, error) {
	snaps, err := s.repo.Snapshots(r.Context())
	if err != nil {
		return nil, err
	}
	return map[string]any{"snapshots": nonNil(snaps), "text": snaptext.List(snaps)}, nil
}

func (s *Server) snapshotCreate(r *http.Request) (any, error) {
	var in SnapshotRequest
	if err := readBody(r, &in); err != nil {
		return nil, err
	}
	opts := ckpt.SnapshotOptions{Description: in.Description, Force: in.Force}
	if in.TTL != "" {
		d, err := ckpt.ParseDuration(in.TTL)
		if err != nil {
			return nil, badRequest("ttl: " + err.Error())
		}
		opts.TTL = d
		if d == 0 {
			opts.TTL = ckpt.NoExpiry
		}
	}
	snap, err := s.repo.SnapshotCreate(r.Context(), in.Name, opts)
	if err != nil {
		return nil, err
	}
	return created{map[string]any{"snapshot": snap, "text": snaptext.Created(snap)}}, nil
}

func (s *Server) snapshotDiff(r *http.Request) (any, error) {
	if err := checkFormat(r.URL.Query().Get("format")); err != nil {
		return nil, err
	}
	d, err := s.repo.SnapshotDiff(r.Context(), r.PathValue("name"))
	if err != nil {
		return nil, err
	}
	return renderDiff(r, d)
}

func (s *Server) snapshotRestore(r *http.Request) (any, error) {
	if err := readBody(r, &struct{}{}); err != nil {
		return nil, err
	}
	name := r.PathValue("name")
	res, err := s.repo.SnapshotRestore(r.Context(), name)
	if err != nil {
		return nil, err
	}
	return map[string]any{"restore": res, "text": snaptext.Restored(name, res)}, nil
}

func (s *Server) snapshotDelete(r *http.Request) (any, error) {
	name := r.PathValue("name")
	snap, err := s.repo.SnapshotDelete(r.Context(), name)
	if err != nil {
		return nil, err
	}
	return map[string]any{"snapshot": snap, "text": snaptext.Deleted(name)}, nil
}

func (s *Server) sessions(r *http.Request) (any, error) {
	ss, err := s.repo.Sessions(r.Context())
	return map[string]any{"sessions": nonNil(ss)}, err
}

// sessionID is the {id} of a session route: an id, a unique prefix, or
// "current" (the most recently active session).
func sessionID(r *http.Request) string {
	id := r.PathValue("id")
	if id == "current" {
		return ""
	}
	return id
}

// SessionDetail is GET /api/sessions/{id}: the session, its turns as the
// rewind picker lists them, and its conversation.
type SessionDetail struct {
	Session  *ckpt.Session   `json:"session"`
	Turns    []ckpt.TurnInfo `json:"turns"`
	Messages []*ckpt.Message `json:"messages"`
}

func (s *Server) session(r *http.Request) (any, error) {
	all, err := boolParam(r, "all", false)
	if err != nil {
		return nil, err
	}
	ctx := r.Context()
	c, sess, err := s.repo.Controller(ctx, ckpt.ControllerOptions{ID: sessionID(r)})
	if err != nil {
		return nil, err
	}
	turns, err := c.Checkpoints(ctx)
	if err != nil {
		return nil, err
	}
	msgs, err := c.Messages(ctx, all)
	if err != nil {
		return nil, err
	}
	return SessionDetail{Session: sess, Turns: nonNil(turns), Messages: nonNil(msgs)}, nil
}

// RewindRequest is POST /api/sessions/{id}/rewind's body.
type RewindRequest struct {
	Turn   int    `json:"turn"`
	Scope  string `json:"scope,omitempty"`
	Exact  bool   `json:"exact,omitempty"`
	DryRun bool   `json:"dry_run,omitempty"`
}

func (s *Server) rewind(r *http.Request) (any, error) {
	var in RewindRequest
	if err := readBody(r, &in); err != nil {
		return nil, err
	}
	scope := ckpt.Scope(in.Scope)
	switch scope {
	case "":
		scope = ckpt.ScopeCode
	case ckpt.ScopeCode, ckpt.ScopeConversation, ckpt.ScopeBoth:
	default:
		return nil, badRequest(fmt.Sprintf("scope %q: want code, conversation or both", in.Scope))
	}
	if in.Turn < 1 {
		return nil, badRequest("turn: want a turn number, 1 or above")
	}
	c, _, err := s.repo.Controller(r.Context(), ckpt.ControllerOptions{ID: sessionID(r)})
	if err != nil {
		return nil, err
	}
	return c.Rewind(r.Context(), in.Turn, scope, ckpt.RewindOptions{Exact: in.Exact, DryRun: in.DryRun})
}

// TurnRequest is the body of fork and summarize.
type TurnRequest struct {
	Turn int `json:"turn"`
	// Direction (summarize): "from" summarizes the turns from Turn on,
	// "upto" those up to and including it.
	Direction string `json:"direction,omitempty"`
}

func (s *Server) fork(r *http.Request) (any, error) {
	var in TurnRequest
	if err := readBody(r, &in); err != nil {
		return nil, err
	}
	if in.Turn < 1 {
		return nil, badRequest("turn: want a turn number, 1 or above")
	}
	c, _, err := s.repo.Controller(r.Context(), ckpt.ControllerOptions{ID: sessionID(r)})
	if err != nil {
		return nil, err
	}
	return c.Fork(r.Context(), in.Turn)
}

func (s *Server) summarize(r *http.Request) (any, error) {
	var in TurnRequest
	if err := readBody(r, &in); err != nil {
		return nil, err
	}
	dir := ckpt.Direction(in.Direction)
	if dir != ckpt.SummarizeFrom && dir != ckpt.SummarizeUpto {
		return nil, badRequest(fmt.Sprintf("direction %q: want from or upto", in.Direction))
	}
	if in.Turn < 1 {
		return nil, badRequest("turn: want a turn number, 1 or above")
	}
	c, _, err := s.repo.Controller(r.Context(), ckpt.ControllerOptions{ID: sessionID(r)})
	if err != nil {
		return nil, err
	}
	return c.Summarize(r.Context(), in.Turn, dir)
}

func (s *Server) stats(r *http.Request) (any, error) {
	return s.statsRun.do(r.Context())
}

// GCRequest is POST /api/gc's body: the store's retention applies.
type GCRequest struct {
	DryRun bool `json:"dry_run,omitempty"`
}

func (s *Server) gc(r *http.Request) (any, error) {
	var in GCRequest
	if err := readBody(r, &in); err != nil {
		return nil, err
	}
	return s.repo.GC(r.Context(), ckpt.GCOptions{DryRun: in.DryRun})
}
