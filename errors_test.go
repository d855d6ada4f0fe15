package ckpt

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestErrorsInOnePlace: every exported error — a sentinel (var Err…) or a
// type named …Error — is declared in errors.go, and doc.go lists each one.
func TestErrorsInOnePlace(t *testing.T) {
	doc, err := os.ReadFile("doc.go")
	if err != nil {
		t.Fatal(err)
	}
	files, _ := filepath.Glob("*.go")
	fset := token.NewFileSet()
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		af, err := parser.ParseFile(fset, f, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range af.Decls {
			gd, ok := d.(*ast.GenDecl)
			if !ok {
				continue
			}
			for _, s := range gd.Specs {
				var name, ref string
				switch s := s.(type) {
				case *ast.TypeSpec:
					name, ref = s.Name.Name, "[*"+s.Name.Name+"]"
					if !strings.HasSuffix(name, "Error") {
						continue
					}
				case *ast.ValueSpec:
					name, ref = s.Names[0].Name, "["+s.Names[0].Name+"]"
					if !strings.HasPrefix(name, "Err") {
						continue
					}
				}
				if !ast.IsExported(name) {
					continue
				}
				if f != "errors.go" {
					t.Errorf("%s declares %s: errors belong in errors.go", f, name)
				}
				if !strings.Contains(string(doc), ref) {
					t.Errorf("doc.go does not list %s", ref)
				}
			}
		}
	}
}
