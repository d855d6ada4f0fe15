package httpserver

import (
	"crypto/rand"
	"crypto/subtle"
	"encoding/hex"
	"fmt"
	"net"
	"net/http"
	"strings"
	"sync"
)

// cookiePrefix begins the name of the session cookie the login URL sets;
// the server's port ends it (see [Server.CookieName]).
const cookiePrefix = "ckpt_session_"

// gate holds what the checks of every request need: the address, the
// tokens and the login's state. A server serving several workspaces has
// one gate for all of them: one token, one login.
type gate struct {
	addr       string
	tls        bool
	token      string
	loginToken string
	maxBody    int64
	hosts      map[string]bool // Host headers accepted; nil: any IP literal (a wildcard bind)
	cookie     string          // the session cookie's name

	loginMu   sync.Mutex
	loginUsed bool
}

// newGate returns the gate of a server with opts, choosing random tokens
// for those opts leaves empty.
func newGate(opts Options) (*gate, error) {
	var err error
	if opts.Token == "" {
		if opts.Token, err = randomToken(); err != nil {
			return nil, err
		}
	}
	if opts.LoginToken == "" {
		if opts.LoginToken, err = randomToken(); err != nil {
			return nil, err
		}
	}
	if opts.MaxBody <= 0 {
		opts.MaxBody = 1 << 20
	}
	hosts, err := allowedHosts(opts.Addr)
	if err != nil {
		return nil, err
	}
	_, port, _ := net.SplitHostPort(opts.Addr)
	return &gate{addr: opts.Addr, tls: opts.TLS, token: opts.Token, loginToken: opts.LoginToken, maxBody: opts.MaxBody,
		hosts: hosts, cookie: cookiePrefix + port}, nil
}

// Token returns the secret requests carry (Authorization: Bearer TOKEN).
func (s *gate) Token() string { return s.token }

// LoginURL returns the URL that logs a browser in once: base (such as
// http://127.0.0.1:8080) with the one-time token.
func (s *gate) LoginURL(base string) string { return base + "/?token=" + s.loginToken }

// CookieName returns the name of the session cookie the login URL sets:
// ckpt_session_PORT. Browsers send a host's cookies to all its ports, so
// servers on 127.0.0.1 need a cookie each, or logging in to one would log
// the browser out of the others.
func (s *gate) CookieName() string { return s.cookie }

func randomToken() (string, error) {
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		return "", fmt.Errorf("httpserver: a random token: %w", err)
	}
	return hex.EncodeToString(b), nil
}

// IsLoopback reports whether host (a name or an address, without port)
// is the loopback interface: localhost, 127.0.0.0/8 or ::1.
func IsLoopback(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// allowedHosts returns the Host headers a server bound to addr accepts:
// the address itself and, on loopback, localhost, 127.0.0.1 and [::1]
// with the same port. A wildcard bind (0.0.0.0, [::]) accepts any IP
// literal with the port (nil map): a DNS rebinding attack needs a name.
func allowedHosts(addr string) (map[string]bool, error) {
	if addr == "" {
		return nil, fmt.Errorf("httpserver: no address: the Host header cannot be checked")
	}
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, fmt.Errorf("httpserver: address %s: %w", addr, err)
	}
	if ip := net.ParseIP(host); ip != nil && ip.IsUnspecified() {
		return nil, nil
	}
	hosts := map[string]bool{net.JoinHostPort(host, port): true}
	if IsLoopback(host) {
		for _, h := range []string{"localhost", "127.0.0.1", "::1"} {
			hosts[net.JoinHostPort(h, port)] = true
		}
	}
	return hosts, nil
}

// withPort returns h, a Host header or an Origin's host, in lower case
// and with the scheme's default port when it names none: browsers leave
// out :80 (:443 over TLS).
func (s *gate) withPort(h string) string {
	h = strings.ToLower(h)
	if _, _, err := net.SplitHostPort(h); err == nil {
		return h
	}
	port := "80"
	if s.tls {
		port = "443"
	}
	return net.JoinHostPort(strings.TrimSuffix(strings.TrimPrefix(h, "["), "]"), port)
}

// hostOK checks the Host header against the bound address.
func (s *gate) hostOK(r *http.Request) bool {
	h := s.withPort(r.Host)
	if s.hosts != nil {
		return s.hosts[h]
	}
	host, port, err := net.SplitHostPort(h)
	if err != nil {
		return false
	}
	_, want, _ := net.SplitHostPort(s.addr)
	return port == want && (net.ParseIP(host) != nil || host == "localhost")
}

// originOK checks that a browser's request comes from the server's own
// pages: Sec-Fetch-Site, when sent, is same-origin or none (typed into the
// address bar), and Origin, when sent, is this server. Requests without
// either come from programs, not from pages.
func (s *gate) originOK(r *http.Request) bool {
	switch r.Header.Get("Sec-Fetch-Site") {
	case "", "same-origin", "none":
	default:
		return false
	}
	origin := r.Header.Get("Origin")
	if origin == "" {
		return true
	}
	scheme := "http://"
	if s.tls {
		scheme = "https://"
	}
	if len(origin) <= len(scheme) || !strings.EqualFold(origin[:len(scheme)], scheme) {
		return false
	}
	return s.withPort(origin[len(scheme):]) == s.withPort(r.Host)
}

// authorized checks the bearer token or the session cookie.
func (s *gate) authorized(r *http.Request) bool {
	tok := ""
	if a := r.Header.Get("Authorization"); a != "" {
		scheme, rest, _ := strings.Cut(a, " ")
		if !strings.EqualFold(scheme, "Bearer") {
			return false
		}
		tok = strings.TrimSpace(rest)
	} else if c, err := r.Cookie(s.cookie); err == nil {
		tok = c.Value
	}
	return tok != "" && subtle.ConstantTimeCompare([]byte(tok), []byte(s.token)) == 1
}

// guard runs every check before the handler: the Host header (403), the
// login URL's exchange, the token (401), the Origin of requests that
// change something and of the streams (403), and the body's size (413).
func (s *gate) guard(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("X-Content-Type-Options", "nosniff")
		w.Header().Set("Referrer-Policy", "no-referrer")
		w.Header().Set("Cache-Control", "no-store")
		if !s.hostOK(r) {
			writeError(w, forbidden("bad_host", fmt.Sprintf("Host %q does not name this server (%s)", r.Host, s.addr),
				"use the address ckpt serve printed"))
			return
		}
		if r.Method == http.MethodGet && r.URL.Path == "/" && r.URL.Query().Has("token") {
			s.login(w, r)
			return
		}
		if !s.authorized(r) {
			w.Header().Set("WWW-Authenticate", `Bearer realm="ckpt"`)
			writeError(w, &apiError{status: http.StatusUnauthorized, code: "unauthorized", msg: "missing or wrong token",
				hint: "send Authorization: Bearer TOKEN, or open the URL ckpt serve printed"})
			return
		}
		safe := r.Method == http.MethodGet || r.Method == http.MethodHead || r.Method == http.MethodOptions
		p := localPath(r.URL.Path)
		if (!safe || p == "/api/events" || p == "/mcp") && !s.originOK(r) {
			writeError(w, forbidden("bad_origin", fmt.Sprintf("cross-origin request from %q refused", r.Header.Get("Origin")), ""))
			return
		}
		limit := s.maxBody
		if p == "/mcp" {
			limit = 4 << 20
		}
		if r.ContentLength > limit {
			writeError(w, &http.MaxBytesError{Limit: limit})
			return
		}
		r.Body = http.MaxBytesReader(w, r.Body, limit)
		next.ServeHTTP(w, r)
	})
}

// localPath returns the path p names within a workspace: p without the
// /w/ID prefix of a server serving several (see [Multi]), p itself
// otherwise. The checks that depend on the path use it, so that they
// apply alike to /api/events and /w/ID/api/events.
func localPath(p string) string {
	rest, ok := strings.CutPrefix(p, "/w/")
	if !ok {
		return p
	}
	if _, tail, ok := strings.Cut(rest, "/"); ok {
		return "/" + tail
	}
	return "/"
}

// login exchanges the one-time token for the session cookie and sends
// the browser to / without the token in its address bar or history.
func (s *gate) login(w http.ResponseWriter, r *http.Request) {
	if s.authorized(r) {
		// Already logged in (the page reloaded with the URL): go on.
		http.Redirect(w, r, "/", http.StatusSeeOther)
		return
	}
	tok := r.URL.Query().Get("token")
	s.loginMu.Lock()
	ok := !s.loginUsed && subtle.ConstantTimeCompare([]byte(tok), []byte(s.loginToken)) == 1
	if ok {
		s.loginUsed = true
	}
	s.loginMu.Unlock()
	if !ok {
		writeError(w, &apiError{status: http.StatusUnauthorized, code: "unauthorized", msg: "the login token is wrong or was used already",
			hint: "restart ckpt serve for a new login URL"})
		return
	}
	http.SetCookie(w, &http.Cookie{Name: s.cookie, Value: s.token, Path: "/", HttpOnly: true,
		SameSite: http.SameSiteStrictMode, Secure: s.tls})
	http.Redirect(w, r, "/", http.StatusSeeOther)
}
