package ckpt

import (
	"os/exec"
	"sort"
	"strings"
	"testing"
)

// The layers of ckpt, bottom up (docs/architecture.md):
//
//   - the engine: internal packages that know nothing of ckpt's API or
//     its faces (object, store, scan, tree, diff, restore, ...);
//   - the root package: the checkpoint API (Repo);
//   - the faces: the CLI, the MCP server, the picker, the agents' hooks,
//     the sandbox snapshot tools' words (snaptext), and the commands built
//     on them. They reach the engine only through
//     the root package.
const module = "github.com/seed1cedbf7c/ckpt"

// faces are the packages that present ckpt to users and agents.
var faces = map[string]bool{
	module + "/internal/cli":        true,
	module + "/internal/mcpserver":  true,
	module + "/internal/httpserver": true,
	module + "/internal/tui":        true,
	module + "/internal/hooks":      true,
	module + "/internal/snaptext":   true,
	module + "/cmd/ckpt":            true,
}

// layer names a package's layer: "engine", "root", "face", or "" for
// what the rules leave alone (benchmarks, scripts, tests).
func layer(pkg string) string {
	switch {
	case pkg == module:
		return "root"
	case pkg == module+"/internal/testutil" || strings.HasPrefix(pkg, module+"/internal/testutil/"):
		return "" // helpers for tests, in no layer
	case faces[pkg]:
		return "face"
	case strings.HasPrefix(pkg, module+"/internal/"):
		return "engine"
	}
	return ""
}

// layerViolations checks an import graph (package -> the packages it
// depends on, directly or not, as go list -deps gives them): an engine
// package must not depend on the root or a face, the root not on a face,
// and a face must not import an engine package directly (only the root
// package, and other faces).
func layerViolations(deps, imports map[string][]string) []string {
	var out []string
	for pkg, ds := range deps {
		for _, d := range ds {
			switch l, dl := layer(pkg), layer(d); {
			case l == "engine" && (dl == "root" || dl == "face"):
				out = append(out, pkg+" (engine) depends on "+d+" ("+dl+")")
			case l == "root" && dl == "face":
				out = append(out, pkg+" (root) depends on "+d+" (face)")
			}
		}
	}
	for pkg, is := range imports {
		for _, d := range is {
			if layer(pkg) == "face" && layer(d) == "engine" {
				out = append(out, pkg+" (face) imports "+d+" (engine): go through the root package")
			}
		}
	}
	sort.Strings(out)
	return out
}

// TestLayers checks ckpt's own import graph against the layering rules.
func TestLayers(t *testing.T) {
	if _, err := exec.LookPath("go"); err != nil {
		t.Fatal("the go command is needed to read the import graph: ", err)
	}
	out, err := exec.Command("go", "list", "-deps=false", "-f", "{{.ImportPath}}|{{join .Deps \" \"}}|{{join .Imports \" \"}}", "./...").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	deps, imports := map[string][]string{}, map[string][]string{}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		f := strings.Split(line, "|")
		if len(f) != 3 {
			t.Fatalf("go list: unexpected line %q", line)
		}
		deps[f[0]], imports[f[0]] = strings.Fields(f[1]), strings.Fields(f[2])
	}
	if len(deps) < 20 || deps[module] == nil {
		t.Fatalf("go list listed %d packages, the root among them: %v", len(deps), deps[module] != nil)
	}
	for _, v := range layerViolations(deps, imports) {
		t.Error(v)
	}
}

// TestLayerViolations: the rules catch each forbidden import (a test of
// the test).
func TestLayerViolations(t *testing.T) {
	store, scan, cli, mcp := module+"/internal/store", module+"/internal/scan", module+"/internal/cli", module+"/internal/mcpserver"
	for _, tc := range []struct {
		name          string
		deps, imports map[string][]string
		want          int
	}{
		{"allowed", map[string][]string{module: {store}, cli: {module, mcp, store}, scan: {store}}, map[string][]string{cli: {module, mcp}}, 0},
		{"engine imports the root", map[string][]string{store: {module}}, nil, 1},
		{"engine depends on a face", map[string][]string{scan: {store, mcp}}, nil, 1},
		{"root imports a face", map[string][]string{module: {store, cli}}, nil, 1},
		{"face imports the engine", nil, map[string][]string{mcp: {module, store}}, 1},
	} {
		if got := layerViolations(tc.deps, tc.imports); len(got) != tc.want {
			t.Errorf("%s: %d violation(s) %v, want %d", tc.name, len(got), got, tc.want)
		}
	}
}
