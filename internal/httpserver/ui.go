package httpserver

import (
	"bytes"
	"embed"
	"html/template"
	"io/fs"
	"net/http"
	"os"
	"strings"
)

// The web UI: hand-written HTML, CSS and JavaScript modules in ui/,
// embedded in the binary, no build step. GET / is ui/index.html with the
// workspace's path filled in; GET /ui/FILE serves the rest.
//
//go:embed ui
var uiFiles embed.FS

// uiCSP allows the page only its own scripts, styles and connections.
const uiCSP = "default-src 'self'; img-src 'self' data:; object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'"

// uiFS is the UI's files: Options.UIDir's when set (to edit them
// without rebuilding), the embedded ones otherwise.
func (s *Server) uiFS() fs.FS {
	if s.opts.UIDir != "" {
		return os.DirFS(s.opts.UIDir)
	}
	sub, err := fs.Sub(uiFiles, "ui")
	if err != nil {
		panic(err) // the embedded directory is there
	}
	return sub
}

// index is the page the login URL leads to.
func (s *Server) index(w http.ResponseWriter, r *http.Request) {
	src, err := fs.ReadFile(s.uiFS(), "index.html")
	if err != nil {
		writeError(w, err)
		return
	}
	t, err := template.New("index").Parse(string(src))
	if err != nil {
		writeError(w, err)
		return
	}
	var b bytes.Buffer
	if err := t.Execute(&b, s.repo.Root()); err != nil {
		writeError(w, err)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Content-Security-Policy", uiCSP)
	w.Write(b.Bytes())
}

// assets serves the UI's files under /ui/ (no directory listings).
func (s *Server) assets() http.Handler {
	files := http.StripPrefix("/ui/", http.FileServerFS(s.uiFS()))
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasSuffix(r.URL.Path, "/") || r.URL.Path == "/ui/index.html" {
			writeError(w, &apiError{status: http.StatusNotFound, code: "not_found", msg: "no such file: " + r.URL.Path})
			return
		}
		w.Header().Set("Content-Security-Policy", uiCSP)
		files.ServeHTTP(w, r)
	})
}
