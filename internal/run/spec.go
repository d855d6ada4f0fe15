package run

import (
	"errors"
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
