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

// uiFS is the UI's files: dir's when set (Options.UIDir, to edit them
// without rebuilding), the embedded ones otherwise.
func uiFS(dir string) fs.FS {
	if dir != "" {
		return os.DirFS(dir)
	}
	sub, err := fs.Sub(uiFiles, "ui")
	if err != nil {
		panic(err) // the embedded directory is there
	}
	return sub
}

// indexPage is what ui/index.html is filled in with.
type indexPage struct {
	// Workspace is the workspace's path.
	Workspace string
	// Base is the path the workspace's API is under: "" when the server
	// serves one workspace, /w/ID when it serves several (the page
	// then links back to the list, /).
	Base string
}

// index is the page the login URL leads to.
func (s *Server) index(w http.ResponseWriter, r *http.Request) {
	page(w, s.opts.UIDir, "index.html", indexPage{Workspace: s.repo.Root(), Base: s.base})
}

// page answers with the UI's template name filled in with data.
func page(w http.ResponseWriter, dir, name string, data any) {
	src, err := fs.ReadFile(uiFS(dir), name)
	if err != nil {
		writeError(w, err)
		return
	}
	t, err := template.New(name).Parse(string(src))
	if err != nil {
		writeError(w, err)
		return
	}
	var b bytes.Buffer
	if err := t.Execute(&b, data); err != nil {
		writeError(w, err)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Content-Security-Policy", uiCSP)
	w.Write(b.Bytes())
}

// assets serves the UI's files under /ui/ (no directory listings, and
// not the pages' templates).
func assets(dir string) http.Handler {
	files := http.StripPrefix("/ui/", http.FileServerFS(uiFS(dir)))
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasSuffix(r.URL.Path, "/") || strings.HasSuffix(r.URL.Path, ".html") {
			writeError(w, &apiError{status: http.StatusNotFound, code: "not_found", msg: "no such file: " + r.URL.Path})
			return
		}
		w.Header().Set("Content-Security-Policy", uiCSP)
		files.ServeHTTP(w, r)
	})
}
