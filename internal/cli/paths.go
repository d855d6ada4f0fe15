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
		p = filepath.Clean(p)
		// Resolve symlinks in the directory part only: the path itself may
		// be a symlink (recorded as such) or not exist.
		if dir, err := filepath.EvalSymlinks(filepath.Dir(p)); err == nil {
			p = filepath.Join(dir, filepath.Base(p))
		}
		rel, err := filepath.Rel(r.Root(), p)
		if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(os.PathSeparator)) {
			return nil, usagef("path %s is outside the workspace %s", a, r.Root())
		}
		out = append(out, filepath.ToSlash(rel))
	}
	return out, nil
}

// quotePath shows a path the way git does when it holds unusual bytes.
func quotePath(p string) string { return ckpt.QuotePath(p) }
