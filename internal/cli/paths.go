package cli

import (
	"os"
	"path/filepath"
	"strings"

	"github.com/seed1cedbf7c/ckpt"
)

// workspacePaths turns command-line paths (relative to the current
// directory, or absolute) into workspace-relative ones.
func workspacePaths(e *env, r *ckpt.Repo, args []string) ([]string, error) {
	if len(args) == 0 {
		return nil, nil
	}
	base := e.dir
	if base == "" {
		base = "."
	}
	base, err := filepath.Abs(base)
	if err != nil {
		return nil, err
	}
	if real, err := filepath.EvalSymlinks(base); err == nil {
		base = real
	}
	var out []string
	for _, a := range args {
		p := a
		if !filepath.IsAbs(p) {
			p = filepath.Join(base, p)
		}
		rel, ok := belowRoot(r.Root(), filepath.Clean(p))
		if !ok {
			return nil, usagef("path %s is outside the workspace %s", a, r.Root())
		}
		out = append(out, filepath.ToSlash(rel))
	}
	return out, nil
}

// belowRoot returns p relative to root (both absolute and clean; root has
// its symlinks resolved). Symlinks are resolved only on the way to the
// root — a path given through a link to the workspace — never below it:
// a symlink inside the workspace is an entry of its own, and `a/e` where
// a links to b names a/e, not b/e.
func belowRoot(root, p string) (string, bool) {
	if rel, ok := lexicallyBelow(root, p); ok {
		return rel, true
	}
	parts := strings.Split(strings.TrimPrefix(p, string(os.PathSeparator)), string(os.PathSeparator))
	cur := string(os.PathSeparator)
	for i, c := range parts {
		real, err := filepath.EvalSymlinks(filepath.Join(cur, c))
		if err != nil {
			return "", false // not on a way into the workspace
		}
		cur = real
		if rel, ok := lexicallyBelow(root, cur); ok {
			return filepath.Join(append([]string{rel}, parts[i+1:]...)...), true
		}
	}
	return "", false
}

// lexicallyBelow returns p relative to root if p is root or lies below it
// by its path alone.
func lexicallyBelow(root, p string) (string, bool) {
	rel, err := filepath.Rel(root, p)
	if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(os.PathSeparator)) {
		return "", false
	}
	return rel, true
}

// quotePath shows a path the way git does when it holds unusual bytes.
func quotePath(p string) string { return ckpt.QuotePath(p) }
