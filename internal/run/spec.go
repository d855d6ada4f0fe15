package run

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"

	"github.com/seed1cedbf7c/ckpt/internal/fsroot"
)

// Specs returns the spec files (specs/*.spec.md, sorted) not yet listed in
// specs/processed-spec.md.
func Specs(root string) ([]string, error) {
	des, err := os.ReadDir(filepath.Join(root, SpecsDir))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	done, err := processed(root)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, de := range des {
		if de.Type().IsRegular() && strings.HasSuffix(de.Name(), ".spec.md") && !done[de.Name()] {
			out = append(out, de.Name())
		}
	}
	sort.Strings(out)
	return out, nil
}

func processed(root string) (map[string]bool, error) {
	m, _, err := readProcessed(root)
	return m, err
}

// readProcessed reads specs/processed-spec.md: the names it lists and its
// content.
func readProcessed(root string) (map[string]bool, []byte, error) {
	data, err := fsroot.ReadRegular(filepath.Join(root, filepath.FromSlash(ProcessedFile)), MaxMessageSize)
	if errors.Is(err, fs.ErrNotExist) {
		return map[string]bool{}, nil, nil
	}
	if err != nil {
		return nil, nil, err
	}
	m := map[string]bool{}
	for _, l := range strings.Split(string(data), "\n") {
		if l = strings.TrimSpace(l); l != "" {
			m[l] = true
		}
	}
	return m, data, nil
}

// MarkProcessed appends the base name of a spec's input file to
// specs/processed-spec.md (once).
func MarkProcessed(root, inputFile string) error {
	name := path.Base(filepath.ToSlash(inputFile))
	done, data, err := readProcessed(root)
	if err != nil || done[name] {
		return err
	}
	p := filepath.Join(root, filepath.FromSlash(ProcessedFile))
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return err
	}
	if len(data) > 0 && data[len(data)-1] != '\n' {
		data = append(data, '\n')
	}
	data = append(data, name+"\n"...)
	if err := CheckDirs(filepath.Dir(p), 1); err != nil {
		return err
	}
	return WriteFileAtomic(p, data)
}

// SpecRoutine returns the routine named in a spec's front matter ("" if
// none). Only the spec's first [MaxMessageSize] bytes are read.
func SpecRoutine(root, spec string) string {
	data, err := ReadPrefix(filepath.Join(root, SpecsDir, spec), MaxMessageSize)
	if err != nil {
		return ""
	}
	m, err := ParseMessage(spec, data)
	if err != nil {
		return ""
	}
	return m.Routine
}

// CheckInputFile validates a message's input_file: a relative path inside
// the workspace (no "..", not absolute).
func CheckInputFile(p string) error {
	if p == "" {
		return nil
	}
	clean := path.Clean(filepath.ToSlash(p))
	if path.IsAbs(clean) || clean == ".." || strings.HasPrefix(clean, "../") || strings.Contains(p, "\x00") {
		return errors.New("input_file " + p + " is outside the workspace")
	}
	return nil
}

// maxLinks bounds the symlinks followed in resolving an input_file.
const maxLinks = 40

// CheckInputFileIn checks a message's input_file in the workspace at root:
// [CheckInputFile], and every symlink on its way — dangling or not, since
// what a dangling link names may be created later — must stay inside the
// workspace. Links are read, never followed: their targets are resolved
// lexically, component by component, so nothing outside is ever looked at.
func CheckInputFileIn(root, p string) error {
	if err := CheckInputFile(p); err != nil || p == "" {
		return err
	}
	outside := errors.New("input_file " + p + " is outside the workspace (through a symlink)")
	rest := strings.Split(path.Clean(filepath.ToSlash(p)), "/")
	cur := "" // resolved so far, relative to root ("" the root)
	links := 0
	for len(rest) > 0 {
		c := rest[0]
		rest = rest[1:]
		switch c {
		case "", ".":
			continue
		case "..":
			if cur == "" {
				return outside
			}
			if cur = path.Dir(cur); cur == "." {
				cur = ""
			}
			continue
		}
		next := path.Join(cur, c)
		fi, err := os.Lstat(filepath.Join(root, filepath.FromSlash(next)))
		if err != nil || fi.Mode()&fs.ModeSymlink == 0 {
			cur = next // a directory, a file, or nothing (then no link below)
			continue
		}
		if links++; links > maxLinks {
			return errors.New("input_file " + p + ": too many symlinks")
		}
		target, err := os.Readlink(filepath.Join(root, filepath.FromSlash(next)))
		if err != nil {
			return fmt.Errorf("input_file %s: %w", p, err)
		}
		if filepath.IsAbs(target) {
			rel, ok := within(root, target)
			if !ok {
				return outside
			}
			cur = ""
			target = rel
		}
		rest = append(strings.Split(filepath.ToSlash(target), "/"), rest...)
	}
	return nil
}

// within returns the absolute path target relative to root, lexically,
// and false if it is not inside root (root itself, through its symlinks
// resolved or not, included).
func within(root, target string) (string, bool) {
	target = filepath.Clean(target)
	roots := []string{root}
	if real, err := filepath.EvalSymlinks(root); err == nil && real != root {
		roots = append(roots, real)
	}
	for _, r := range roots {
		rel, err := filepath.Rel(r, target)
		if err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) && !filepath.IsAbs(rel) {
			if rel == "." {
				rel = ""
			}
			return rel, true
		}
	}
	return "", false
}
