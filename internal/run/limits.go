package run

import (
	"errors"
	"fmt"
	"io"
	"os"
	"syscall"

	"github.com/seed1cedbf7c/ckpt/internal/fsroot"
	"gopkg.in/yaml.v3"
)

// Limits on Decree's inputs. Messages, specs, config.yml and run records
// are files in the workspace that a routine (an agent) can write, so each
// is bounded before it is read, and YAML is bounded after it is parsed
// and before it is decoded: yaml.v3 only refuses aliasing that makes up
// most of a large document, so a 1 MiB scalar behind an anchor, used a
// hundred times, would otherwise decode to 100 MiB (and be written out
// again, normalized, twice).
const (
	// MaxMessageSize bounds a message file, a spec file, config.yml and
	// specs/processed-spec.md.
	MaxMessageSize = 1 << 20
	// MaxFrontMatter bounds a message's front matter. Parsing YAML costs
	// yaml.v3 about 120 bytes of memory per byte of a dense document (a
	// node per item), so the front matter, which holds a few fields, is
	// kept far smaller than the message's body may be.
	MaxFrontMatter = 64 << 10
	// MaxDecodedSize bounds a YAML document's size once its aliases are
	// expanded: the bytes of every scalar (key or value) plus one per node.
	MaxDecodedSize = 1 << 20
	// MaxAliases bounds how many aliases a YAML document may expand,
	// counting those inside expanded aliases.
	MaxAliases = 100
	// MaxRecordSize bounds a run.json.
	MaxRecordSize = 16 << 20
)

func sizeName(n int64) string {
	if n >= 1<<20 && n%(1<<20) == 0 {
		return fmt.Sprintf("%d MiB", n>>20)
	}
	return fmt.Sprintf("%d bytes", n)
}

// ErrNotRegular: an input that must be a regular file is something else
// (a FIFO, a device, a directory, a symlink where none is followed).
var ErrNotRegular = fsroot.ErrNotRegular

// ReadPrefix reads at most the first max bytes of a regular file: it
// never follows a symlink in the last component and never blocks on a
// FIFO. (Whole inputs are read with [fsroot.ReadRegular].)
func ReadPrefix(path string, max int64) ([]byte, error) {
	f, err := fsroot.OpenNoFollow(path)
	if err != nil {
		if errors.Is(err, syscall.ELOOP) {
			return nil, &os.PathError{Op: "open", Path: path, Err: ErrNotRegular}
		}
		return nil, err
	}
	defer f.Close()
	if fi, err := f.Stat(); err != nil || !fi.Mode().IsRegular() {
		return nil, &os.PathError{Op: "open", Path: path, Err: ErrNotRegular}
	}
	return io.ReadAll(io.LimitReader(f, max))
}

// YAMLLimitError is a YAML document over [MaxDecodedSize] or [MaxAliases].
type YAMLLimitError struct{ Reason string }

func (e *YAMLLimitError) Error() string { return e.Reason }

// DecodeYAML decodes a YAML document into out, refusing one whose aliases
// expand it beyond [MaxDecodedSize] or use more than [MaxAliases] aliases.
// An empty document leaves out as it is.
func DecodeYAML(data []byte, out any) error {
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return err
	}
	if doc.Kind == 0 {
		return nil
	}
	if err := CheckYAML(&doc); err != nil {
		return err
	}
	return doc.Decode(out)
}

// CheckYAML measures a parsed YAML document as a decoder would see it,
// with every alias expanded, and stops as soon as it exceeds
// [MaxDecodedSize] or [MaxAliases]: the walk costs at most as much as
// the limits allow.
func CheckYAML(n *yaml.Node) error {
	w := &yamlWalk{active: map[*yaml.Node]bool{}}
	return w.visit(n)
}

type yamlWalk struct {
	size, aliases int
	active        map[*yaml.Node]bool // aliases being expanded (cycles)
}

func (w *yamlWalk) visit(n *yaml.Node) error {
	if n == nil {
		return nil
	}
	w.size += 1 + len(n.Value) + len(n.Anchor)
	if w.size > MaxDecodedSize {
		return &YAMLLimitError{fmt.Sprintf("it is larger than %s with its aliases expanded", sizeName(MaxDecodedSize))}
	}
	if n.Kind == yaml.AliasNode {
		w.aliases++
		if w.aliases > MaxAliases {
			return &YAMLLimitError{fmt.Sprintf("it expands more than %d aliases", MaxAliases)}
		}
		if w.active[n.Alias] {
			return &YAMLLimitError{"an alias refers to itself"}
		}
		w.active[n.Alias] = true
		err := w.visit(n.Alias)
		delete(w.active, n.Alias)
		return err
	}
	for _, c := range n.Content {
		if err := w.visit(c); err != nil {
			return err
		}
	}
	return nil
}
