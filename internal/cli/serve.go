package cli

import (
	"context"
	"crypto/tls"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"time"

	"github.com/seed1cedbf7c/ckpt"
	"github.com/seed1cedbf7c/ckpt/internal/httpserver"
	"github.com/spf13/cobra"
)

type serveOptions struct {
	addr, tlsCert, tlsKey, tokenFile string
	open, readOnly, all              bool
}

// server is what ckpt serve runs: an httpserver.Server (one workspace)
// or an httpserver.Multi (--all).
type server interface {
	Token() string
	LoginURL(base string) string
	Serve(ctx context.Context, ln net.Listener, grace time.Duration) error
	Close() error
}

// serveGrace is how long requests in progress have to finish after
// SIGINT or SIGTERM: within the CLI's InterruptGrace.
const serveGrace = 500 * time.Millisecond

// serveLockTimeout bounds a request's wait for a store another process
// holds (CKPT_LOCK_TIMEOUT overrides it).
const serveLockTimeout = 5 * time.Second

func newServeCmd(e *env) *cobra.Command {
	o := &serveOptions{}
	c := &cobra.Command{
		Use:   "serve [--all] [--addr HOST:PORT] [--open] [--read-only]",
		Short: "Serve the workspace over HTTP: a JSON API, live events, MCP",
		Long: `Serve serves the workspace over HTTP until Ctrl-C: a JSON API (checkpoints,
diffs, restore, undo and redo, snapshots, sessions, rewind and fork), a
server-sent event stream of everything that happens to the workspace —
changes made by other ckpt processes and agents' hooks included, within a
quarter of a second — and the MCP tools over the Streamable HTTP transport
at /mcp. docs/http.md describes the API; GET /api/openapi.json lists it.

It listens on 127.0.0.1 and a free port unless --addr says otherwise, and
prints on stdout a URL with a one-time token: opening it sets a session
cookie (HttpOnly, SameSite=Strict) and the token is used up. Programs send
the API token instead, as Authorization: Bearer TOKEN: it is printed on
stderr, written to --token-file FILE (mode 0600) if asked, or taken from
CKPT_SERVE_TOKEN. Every request needs one or the other.

The server can rewrite the workspace, so it also refuses a Host header that
does not name its address (DNS rebinding), a request from another origin
that changes something or opens the event stream, a body over 1 MiB, and a
path outside the workspace. It sends no CORS headers. An address other than
loopback needs --tls-cert and --tls-key; --read-only refuses every change.

--all serves every workspace with a store (those ckpt workspaces lists
when the server starts) with one token and one login: each workspace's API
under /w/ID/api/..., its MCP tools at /w/ID/mcp and its pages at /w/ID/,
ID the first 16 hex digits of the SHA-256 of its path. GET /api/workspaces
lists them; the page at / links to each.

SIGINT or SIGTERM stops it: event streams end, requests in progress finish.`,
		Example: `  ckpt serve                         # http://127.0.0.1:PORT/?token=...
  ckpt serve --open                  # and open it in the browser
  ckpt serve --addr 127.0.0.1:8731 --read-only
  ckpt serve --all                   # every workspace with a store, at /w/ID/
  ckpt serve --token-file ~/.ckpt-token &
  curl -H "Authorization: Bearer $(cat ~/.ckpt-token)" http://127.0.0.1:8731/api/status
  claude mcp add --transport http ckpt http://127.0.0.1:8731/mcp \
    --header "Authorization: Bearer $(cat ~/.ckpt-token)"
  ckpt serve --addr 0.0.0.0:8443 --tls-cert cert.pem --tls-key key.pem`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error { return runServe(e, o) },
	}
	f := c.Flags()
	f.StringVar(&o.addr, "addr", "127.0.0.1:0", "listen on `HOST:PORT` (port 0: a free one)")
	f.BoolVar(&o.open, "open", false, "open the URL in the browser (xdg-open)")
	f.BoolVar(&o.all, "all", false, "serve every workspace with a store (ckpt workspaces), each under /w/ID/")
	f.BoolVar(&o.readOnly, "read-only", false, "refuse every request that would change the workspace or the store")
	f.StringVar(&o.tlsCert, "tls-cert", "", "serve HTTPS with the certificate in `FILE` (PEM)")
	f.StringVar(&o.tlsKey, "tls-key", "", "the certificate's private key `FILE` (PEM)")
	f.StringVar(&o.tokenFile, "token-file", "", "write the API token to `FILE` (mode 0600) once listening")
	return c
}

func runServe(e *env, o *serveOptions) error {
	host, _, err := net.SplitHostPort(o.addr)
	if err != nil {
		return usagef("--addr %s: want HOST:PORT, such as 127.0.0.1:8731: %v", o.addr, err)
	}
	if (o.tlsCert == "") != (o.tlsKey == "") {
		return usagef("--tls-cert and --tls-key go together")
	}
	useTLS := o.tlsCert != ""
	loopback := httpserver.IsLoopback(host)
	if !loopback && !useTLS {
		return usagef("refusing to serve on %s, which is not loopback, without TLS: anyone who can reach it and learns the token can rewrite the workspace\nbind 127.0.0.1, or pass --tls-cert and --tls-key", o.addr)
	}
	token := os.Getenv("CKPT_SERVE_TOKEN")
	if token != "" && len(token) < 32 {
		return usagef("CKPT_SERVE_TOKEN: want at least 32 characters")
	}
	if o.all && (e.workspace != "" || e.store != "" || e.backend != "" || e.dir != "") {
		return usagef("--all serves every workspace with a store, as ckpt workspaces lists them: it takes no -C, --workspace, --store or --backend")
	}
	// A request waits for another process's lock as long as a client
	// sensibly waits for an answer, then gets 503 with Retry-After; the
	// CLI's ten minutes would hold it, and every write queued behind it.
	e.lockTimeout = serveLockTimeout
	var r *ckpt.Repo
	var ws []*ckpt.WorkspaceInfo
	if o.all {
		ws, err = ckpt.Workspaces()
	} else {
		r, err = e.open(true)
	}
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", o.addr)
	if err != nil {
		return fmt.Errorf("serve: %w", err)
	}
	scheme := "http"
	if useTLS {
		cert, err := tls.LoadX509KeyPair(o.tlsCert, o.tlsKey)
		if err != nil {
			ln.Close()
			return fmt.Errorf("serve: --tls-cert %s --tls-key %s: %w", o.tlsCert, o.tlsKey, err)
		}
		ln = tls.NewListener(ln, &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12})
		scheme = "https"
	}
	defer ln.Close()
	opts := httpserver.Options{Repo: r, Addr: ln.Addr().String(), TLS: useTLS, Token: token, ReadOnly: o.readOnly,
		UIDir: os.Getenv("CKPT_SERVE_UI_DIR")}
	var srv server
	var ids []string
	if o.all {
		m, err := httpserver.NewMulti(httpserver.MultiOptions{Options: opts, Workspaces: ws, Open: e.openServed})
		if err != nil {
			return err
		}
		srv, ids = m, m.IDs()
	} else if srv, err = httpserver.New(opts); err != nil {
		return err
	}
	defer srv.Close()
	if o.tokenFile != "" {
		if err := writeSecret(o.tokenFile, srv.Token()+"\n"); err != nil {
			return fmt.Errorf("serve: --token-file: %w", err)
		}
	}
	base := scheme + "://" + ln.Addr().String()
	login := srv.LoginURL(base)
	mode := ""
	if o.readOnly {
		mode = " (read-only)"
	}
	what := "the workspace"
	if o.all {
		what = "every workspace served"
	}
	if !loopback {
		fmt.Fprintf(e.stderr, "ckpt: WARNING: serving on %s, reachable from other machines: whoever has the token can read%s %s\n",
			ln.Addr(), map[bool]string{false: " and rewrite", true: ""}[o.readOnly], what)
	}
	if o.all {
		fmt.Fprintf(e.stderr, "ckpt: serving %d workspace%s at %s%s, each under /w/ID/:\n", len(ws), map[bool]string{true: "s"}[len(ws) != 1], base, mode)
		for i, w := range ws {
			fmt.Fprintf(e.stderr, "ckpt:   %s/w/%s/  %s\n", base, ids[i], w.Workspace)
		}
		if len(ws) == 0 {
			fmt.Fprintf(e.stderr, "ckpt: no workspace has a store yet (ckpt workspaces lists them): run ckpt save in one, then restart ckpt serve --all\n")
		}
	} else {
		fmt.Fprintf(e.stderr, "ckpt: serving %s at %s%s\n", r.Root(), base, mode)
	}
	fmt.Fprintf(e.stderr, "ckpt: open the URL below once to log in; programs send Authorization: Bearer %s\n", srv.Token())
	if o.all {
		fmt.Fprintf(e.stderr, "ckpt: MCP over HTTP: %s/w/ID/mcp; Ctrl-C stops the server\n", base)
	} else {
		fmt.Fprintf(e.stderr, "ckpt: MCP over HTTP: %s/mcp; Ctrl-C stops the server\n", base)
	}
	fmt.Fprintln(e.stdout, login)
	if o.open {
		openBrowser(e, login)
	}
	return srv.Serve(e.ctx, ln, serveGrace)
}

// openServed opens the store of a workspace ckpt serve --all serves, on
// the first request for it, and says what opening it noted.
func (e *env) openServed(ctx context.Context, w *ckpt.WorkspaceInfo) (*ckpt.Repo, error) {
	opts := ckpt.Options{Store: w.Store, NoRecover: e.noRecover}
	if err := e.clockOptions(&opts); err != nil {
		return nil, err
	}
	r, err := ckpt.Open(ctx, w.Workspace, opts)
	if err != nil {
		return nil, err
	}
	for _, msg := range r.Warnings() {
		fmt.Fprintf(e.stderr, "ckpt: warning: %s: %s\n", w.Workspace, msg)
	}
	for _, n := range r.Notes() {
		fmt.Fprintf(e.stderr, "ckpt: note: %s: %s\n", w.Workspace, n)
	}
	return r, nil
}

// openBrowser opens url with xdg-open, or says to open it by hand.
func openBrowser(e *env, url string) {
	bin, err := exec.LookPath("xdg-open")
	if err != nil {
		fmt.Fprintf(e.stderr, "ckpt: no xdg-open on PATH: open the URL in a browser\n")
		return
	}
	cmd := exec.Command(bin, url)
	if err := cmd.Start(); err != nil {
		fmt.Fprintf(e.stderr, "ckpt: xdg-open: %v: open the URL in a browser\n", err)
		return
	}
	go cmd.Wait()
}

// writeSecret writes a file only its owner can read, whole or not at all.
func writeSecret(path, content string) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), ".ckpt-tmp-token-")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.WriteString(content); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path)
}
