package httpserver

import (
	"crypto/rand"
	"crypto/subtle"
	"encoding/hex"
	"fmt"
	"net"
	"net/http"
	"strings"
)

// cookiePrefix begins the name of the session cookie the login URL sets;
// the server's port ends it (see [Server.CookieName]).
const cookiePrefix = "ckpt_session_"

// CookieName returns the name of the session cookie the login URL sets:
// ckpt_session_PORT. Browsers send a host's cookies to all its ports, so
// servers on 127.0.0.1 need a cookie each, or logging in to one would log
// the browser out of the others.
func (s *Server) CookieName() string { return s.cookie }

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
func (s *Server) withPort(h string) string {
	h = strings.ToLower(h)
	if _, _, err := net.SplitHostPort(h); err == nil {
		return h
	}
	port := "80"
	if s.opts.TLS {
		port = "443"
	}
	return net.JoinHostPort(strings.TrimSuffix(strings.TrimPrefix(h, "["), "]"), port)
}

// hostOK checks the Host header against the bound address.
func (s *Server) hostOK(r *http.Request) bool {
	h := s.withPort(r.Host)
	if s.hosts != nil {
		return s.hosts[h]
	}
	host, port, err := net.SplitHostPort(h)
	if err != nil {
		return false
	}
	_, want, _ := net.SplitHostPort(s.opts.Addr)
	return port == want && (net.ParseIP(host) != nil || host == "localhost")
}

// originOK checks that a browser's request comes from the server's own
// pages: Sec-Fetch-Site, when sent, is same-origin or none (typed into the
// address bar), and Origin, when sent, is this server. Requests without
// either come from programs, not from pages.
func (s *Server) originOK(r *http.Request) bool {
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
	if s.opts.TLS {
		scheme = "https://"
	}
	if len(origin) <= len(scheme) || !strings.EqualFold(origin[:len(scheme)], scheme) {
		return false
	}
	return s.withPort(origin[len(scheme):]) == s.withPort(r.Host)
}

// authorized checks the bearer token or the session cookie.
func (s *Server) authorized(r *http.Request) bool {
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
	return tok != "" && subtle.ConstantTimeCompare([]byte(tok), []byte(s.opts.Token)) == 1
}

// guard runs every check before the handler: the Host header (403), the
// login URL's exchange, the token (401), the Origin of requests that
// change something and of the streams (403), and the body's size (413).
func (s *Server) guard(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("X-Content-Type-Options", "nosniff")
		w.Header().Set("Referrer-Policy", "no-referrer")
		w.Header().Set("Cache-Control", "no-store")
		if !s.hostOK(r) {
			writeError(w, forbidden("bad_host", fmt.Sprintf("Host %q does not name this server (%s)", r.Host, s.opts.Addr),
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
		if (!safe || r.URL.Path == "/api/events" || r.URL.Path == "/mcp") && !s.originOK(r) {
			writeError(w, forbidden("bad_origin", fmt.Sprintf("cross-origin request from %q refused", r.Header.Get("Origin")), ""))
			return
		}
		limit := s.opts.MaxBody
		if r.URL.Path == "/mcp" {
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

// login exchanges the one-time token for the session cookie and sends
// the browser to / without the token in its address bar or history.
func (s *Server) login(w http.ResponseWriter, r *http.Request) {
	if s.authorized(r) {
		// Already logged in (the page reloaded with the URL): go on.
		http.Redirect(w, r, "/", http.StatusSeeOther)
		return
	}
	tok := r.URL.Query().Get("token")
	s.loginMu.Lock()
	ok := !s.loginUsed && subtle.ConstantTimeCompare([]byte(tok), []byte(s.opts.LoginToken)) == 1
	if ok {
		s.loginUsed = true
	}
	s.loginMu.Unlock()
	if !ok {
		writeError(w, &apiError{status: http.StatusUnauthorized, code: "unauthorized", msg: "the login token is wrong or was used already",
			hint: "restart ckpt serve for a new login URL"})
		return
	}
	http.SetCookie(w, &http.Cookie{Name: s.cookie, Value: s.opts.Token, Path: "/", HttpOnly: true,
		SameSite: http.SameSiteStrictMode, Secure: s.opts.TLS})
	http.Redirect(w, r, "/", http.StatusSeeOther)
}
