// Package mcpserver serves ckpt's engine as MCP tools (the Model Context
// Protocol, with the official Go SDK): the sandbox snapshot tools' snapshot_create,
// snapshot_list, snapshot_restore and snapshot_diff with their exact
// responses, plus snapshot_delete, checkpoint_list, checkpoint_diff,
// checkpoint_restore, undo and redo. Tools call the engine in-process; the
// server never runs the ckpt binary. [StdioTransport] is the transport
// `ckpt mcp` serves on: bad input is answered, never the session's end.
package mcpserver

import (
	"context"
	_ "embed"
	"errors"
	"net/url"
	"path/filepath"
	"runtime/debug"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/seed1cedbf7c/ckpt"
)

// Instructions are the server's instructions to the client's model.
//
//go:embed instructions.md
var Instructions string

// Options configure [New].
type Options struct {
	// Workspace pins the workspace. Empty: the client's first file:// root,
	// else the current directory.
	Workspace string
	// Open opens the repo for dir: the pinned Workspace, a client's root,
	// or "" for the current directory. It is called once per dir. Nil:
	// the workspace [ckpt.FindWorkspace] finds from dir, with default
	// options.
	Open func(ctx context.Context, dir string) (*ckpt.Repo, error)
	// Version is reported to clients (default: the module's version).
	Version string
}

// Server is ckpt's MCP server. It opens each workspace once and keeps it
// open until [Server.Close].
type Server struct {
	opts Options
	mcp  *mcp.Server

	mu    sync.Mutex
	repos map[string]*ckpt.Repo
	roots map[*mcp.ServerSession]string // first file:// root per session ("" if none)
}

// New returns a server with every tool registered.
func New(opts Options) *Server {
	if opts.Open == nil {
		opts.Open = func(ctx context.Context, dir string) (*ckpt.Repo, error) {
			if dir == "" {
				dir = "."
			}
			if dir != opts.Workspace {
				ws, err := ckpt.FindWorkspace(dir, "")
				if err != nil {
					return nil, err
				}
				dir = ws
			}
			return ckpt.Open(ctx, dir, ckpt.Options{})
		}
	}
	if opts.Version == "" {
		opts.Version = "(devel)"
		if bi, ok := debug.ReadBuildInfo(); ok && bi.Main.Version != "" {
			opts.Version = bi.Main.Version
		}
	}
	s := &Server{opts: opts, repos: map[string]*ckpt.Repo{}, roots: map[*mcp.ServerSession]string{}}
	s.mcp = mcp.NewServer(&mcp.Implementation{Name: "ckpt", Title: "ckpt: workspace snapshots and undo", Version: opts.Version},
		&mcp.ServerOptions{
			Instructions: Instructions,
			// Roots are deprecated by SEP-2577 but still how most clients
			// say which directory they work in.
			RootsListChangedHandler: func(ctx context.Context, req *mcp.RootsListChangedRequest) {
				s.mu.Lock()
				delete(s.roots, req.Session)
				s.mu.Unlock()
			},
		})
	s.addTools()
	return s
}

// MCP returns the underlying SDK server (to connect it to any transport).
func (s *Server) MCP() *mcp.Server { return s.mcp }

// Run serves one client on t until it disconnects or ctx is done.
func (s *Server) Run(ctx context.Context, t mcp.Transport) error {
	return s.mcp.Run(ctx, t)
}

// Close closes every workspace the server opened.
func (s *Server) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	var errs []error
	for k, r := range s.repos {
		errs = append(errs, r.Close())
		delete(s.repos, k)
	}
	return errors.Join(errs...)
}

// rootsKey names the roots request in a multi round-trip tool call.
const rootsKey = "ckpt_roots"

// workspace returns the directory a tool call acts on: the pinned one, the
// client's first file:// root, or "" (discover from the current
// directory). When the client has roots the server has not seen yet, it
// returns instead a result that asks for them: on protocol 2026-07-28 and
// later the client answers by calling again with the roots (SEP-2322);
// with older clients the server asks with roots/list directly.
func (s *Server) workspace(ctx context.Context, req *mcp.CallToolRequest) (string, *mcp.CallToolResult) {
	if s.opts.Workspace != "" {
		return s.opts.Workspace, nil
	}
	ss := req.Session
	if ss == nil {
		return "", nil
	}
	if resp, ok := req.Params.InputResponses[rootsKey].(*mcp.ListRootsResult); ok {
		return s.setRoots(ss, resp), nil
	}
	s.mu.Lock()
	dir, ok := s.roots[ss]
	s.mu.Unlock()
	if ok {
		return dir, nil
	}
	p := ss.InitializeParams()
	if p == nil || p.Capabilities == nil || p.Capabilities.RootsV2 == nil {
		return "", nil
	}
	if p.ProtocolVersion >= "2026-07-28" {
		return "", &mcp.CallToolResult{InputRequests: mcp.InputRequestMap{rootsKey: &mcp.ListRootsParams{}}}
	}
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	res, err := ss.ListRoots(ctx, nil)
	if err != nil {
		return "", nil // not remembered: ask again next time
	}
	return s.setRoots(ss, res), nil
}

// setRoots remembers the first file:// root of a session's roots (until
// the client says they changed) and returns it as a directory ("" if none).
func (s *Server) setRoots(ss *mcp.ServerSession, res *mcp.ListRootsResult) string {
	dir := ""
	for _, root := range res.Roots {
		u, err := url.Parse(root.URI)
		if err == nil && u.Scheme == "file" && u.Path != "" && (u.Host == "" || u.Host == "localhost") {
			dir = filepath.FromSlash(u.Path)
			break
		}
	}
	s.mu.Lock()
	s.roots[ss] = dir
	s.mu.Unlock()
	return dir
}

// repo returns the open workspace dir ("" as for [Options.Open]).
func (s *Server) repo(ctx context.Context, dir string) (*ckpt.Repo, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if r, ok := s.repos[dir]; ok {
		return r, nil
	}
	r, err := s.opts.Open(ctx, dir)
	if err != nil {
		return nil, err
	}
	s.repos[dir] = r
	return r, nil
}

// ErrorText is the text of a tool error: exactly what the ckpt command
// prints on stderr for the same error (without the final newline).
func ErrorText(err error) string {
	msg := "ckpt: " + err.Error()
	if h := ckpt.Hint(err); h != "" {
		msg += "\nckpt: hint: " + h
	}
	return msg
}

// toolError is a failed call's result (a tool error, not a protocol error,
// so the model sees the message).
func toolError(err error) *mcp.CallToolResult {
	res := &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: ErrorText(err)}}}
	res.SetError(err)
	return res
}

func textResult(text string) *mcp.CallToolResult {
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: text}}}
}

// handler adapts fn, which returns the response text, to the SDK: errors
// become tool errors with the CLI's text.
func handler[In any](s *Server, fn func(context.Context, *ckpt.Repo, In) (string, error)) mcp.ToolHandlerFor[In, any] {
	return func(ctx context.Context, req *mcp.CallToolRequest, in In) (*mcp.CallToolResult, any, error) {
		dir, ask := s.workspace(ctx, req)
		if ask != nil {
			return ask, nil, nil
		}
		r, err := s.repo(ctx, dir)
		if err != nil {
			return toolError(err), nil, nil
		}
		before := r.GitSyncError()
		text, err := fn(ctx, r, in)
		if err == nil {
			// On the git backend an operation succeeds in the store even
			// when updating the git refs after it fails: the CLI then exits
			// 1, and so the tool fails (a new error: a read-only tool
			// leaves the last one as it was).
			if serr := r.GitSyncError(); serr != nil && serr != before {
				err = serr
			}
		}
		if err != nil {
			return toolError(err), nil, nil
		}
		return textResult(text), nil, nil
	}
}

func shortTime(t time.Time) string { return t.UTC().Format(ckpt.SnapshotTimeLayout) }

func oneLine(s string) string {
	s, _, _ = strings.Cut(s, "\n")
	return strings.ReplaceAll(strings.TrimSuffix(s, "\r"), "\t", " ")
}
