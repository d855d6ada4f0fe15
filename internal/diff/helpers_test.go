package diff

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// tree is a file tree in memory: path -> file.
type tree map[string]*Side

func (t tree) clone() tree {
	c := tree{}
	for p, s := range t {
		c[p] = &Side{Mode: s.Mode, Content: bytes.Clone(s.Content)}
	}
	return c
}

func (t tree) paths() []string {
	ps := make([]string, 0, len(t))
	for p := range t {
		ps = append(ps, p)
	}
	slices.Sort(ps)
	return ps
}

// changes returns the changes from a to b in path order.
func changes(a, b tree) []Change {
	set := map[string]bool{}
	for p := range a {
		set[p] = true
	}
	for p := range b {
		set[p] = true
	}
	var cs []Change
	for _, p := range slices.Sorted(func(yield func(string) bool) {
		for p := range set {
			if !yield(p) {
				return
			}
		}
	}) {
		cs = append(cs, Change{Path: p, Old: a[p], New: b[p]})
	}
	return cs
}

// render returns the diff from a to b.
func render(t testing.TB, a, b tree) []byte {
	t.Helper()
	var buf bytes.Buffer
	if err := Write(&buf, changes(a, b)); err != nil {
		t.Fatalf("Write: %v", err)
	}
	return buf.Bytes()
}

// diffTrees describes how two trees differ, or returns "".
func diffTrees(got, want tree) string {
	var out []string
	for _, p := range want.paths() {
		g, w := got[p], want[p]
		switch {
		case g == nil:
			out = append(out, fmt.Sprintf("%q missing", p))
		case g.Mode != w.Mode:
			out = append(out, fmt.Sprintf("%q: got mode %06o, want %06o", p, g.Mode, w.Mode))
		case !bytes.Equal(g.Content, w.Content):
			out = append(out, fmt.Sprintf("%q: got content %q, want %q", p, g.Content, w.Content))
		}
	}
	for _, p := range got.paths() {
		if want[p] == nil {
			out = append(out, fmt.Sprintf("%q: unexpected", p))
		}
	}
	return strings.Join(out, "\n")
}

// memTree is a Tree over a tree, counting writes and removals.
type memTree struct {
	files   tree
	writes  int
	failOn  string // Write or Remove of this path fails
	written []string
}

func (m *memTree) Read(p string) (*Side, error) {
	s := m.files[p]
	if s == nil {
		return nil, nil
	}
	return &Side{Mode: s.Mode, Content: bytes.Clone(s.Content)}, nil
}

func (m *memTree) Write(p string, s *Side) error {
	if p == m.failOn {
		return errors.New("injected failure")
	}
	m.writes++
	m.written = append(m.written, p)
	m.files[p] = &Side{Mode: s.Mode, Content: bytes.Clone(s.Content)}
	return nil
}

func (m *memTree) Remove(p string) error {
	if p == m.failOn {
		return errors.New("injected failure")
	}
	m.writes++
	m.written = append(m.written, p)
	delete(m.files, p)
	return nil
}

var _ Tree = (*memTree)(nil)

// genOpts selects what random trees contain.
type genOpts struct {
	binary   bool // NUL bytes, invalid UTF-8, empty files
	symlinks bool
	oddModes bool // permission bits other than 644/755
	oddNames bool // names with control characters and invalid UTF-8
}

var (
	dirNames     = []string{"d", "sub dir", "caf\xc3\xa9", "x/y"}
	fileNames    = []string{"a.txt", "b", "with space.txt", "\xc3\xa9t\xc3\xa9", "lat\xe9n", "q\"uote", "back\\slash"}
	oddFileNames = []string{"tab\there", "nl\nline", "\x01ctl", "\xff\xfe", "del\x7f"}
	vocabulary   = []string{"alpha", "beta", "gamma", "func main() {", "}", "", "\treturn nil", "x := 1", "caf\xc3\xa9", "// comment", "end"}
)

func randName(r *rand.Rand, o genOpts) string {
	var parts []string
	for range r.IntN(3) {
		parts = append(parts, dirNames[r.IntN(len(dirNames))])
	}
	names := fileNames
	if o.oddNames {
		names = append(slices.Clip(names), oddFileNames...)
	}
	parts = append(parts, names[r.IntN(len(names))]+fmt.Sprint(r.IntN(4)))
	return strings.Join(parts, "/")
}

func randText(r *rand.Rand) []byte {
	var b bytes.Buffer
	n := r.IntN(40)
	if r.IntN(8) == 0 {
		n = 0
	}
	for i := range n {
		b.WriteString(vocabulary[r.IntN(len(vocabulary))])
		if i < n-1 || r.IntN(4) != 0 {
			b.WriteByte('\n')
		}
	}
	return b.Bytes()
}

func randBinary(r *rand.Rand) []byte {
	switch r.IntN(4) {
	case 0:
		return []byte{}
	case 1: // invalid UTF-8 text
		t := randText(r)
		return append(t, 0xff, '\n')
	}
	b := make([]byte, r.IntN(300))
	for i := range b {
		b[i] = byte(r.IntN(256))
	}
	if len(b) > 0 {
		b[r.IntN(len(b))] = 0
	}
	return b
}

func randSide(r *rand.Rand, o genOpts) *Side {
	mode := uint32(0o100644)
	if r.IntN(4) == 0 {
		mode = 0o100755
	}
	if o.oddModes && r.IntN(5) == 0 {
		mode = []uint32{0o100600, 0o100664, 0o100700, 0o100444}[r.IntN(4)]
	}
	if o.symlinks && r.IntN(6) == 0 {
		return &Side{Mode: modeSymlink, Content: []byte(fmt.Sprintf("target-%d", r.IntN(5)))}
	}
	if o.binary && r.IntN(5) == 0 {
		return &Side{Mode: mode, Content: randBinary(r)}
	}
	return &Side{Mode: mode, Content: randText(r)}
}

func randTree(r *rand.Rand, o genOpts) tree {
	t := tree{}
	for range r.IntN(8) + 1 {
		t[randName(r, o)] = randSide(r, o)
	}
	return t
}

// editText applies random line edits.
func editText(r *rand.Rand, content []byte) []byte {
	lines := splitLines(string(content))
	for range r.IntN(6) + 1 {
		switch k := r.IntN(5); {
		case k == 0 && len(lines) > 0: // delete
			i := r.IntN(len(lines))
			lines = slices.Delete(lines, i, i+1)
		case k == 1 && len(lines) > 0: // replace
			lines[r.IntN(len(lines))] = vocabulary[r.IntN(len(vocabulary))] + "\n"
		case k == 2 && len(lines) > 0: // toggle the final newline
			last := lines[len(lines)-1]
			if strings.HasSuffix(last, "\n") {
				lines[len(lines)-1] = strings.TrimSuffix(last, "\n")
			} else {
				lines[len(lines)-1] = last + "\n"
			}
		default: // insert
			i := r.IntN(len(lines) + 1)
			lines = slices.Insert(lines, i, vocabulary[r.IntN(len(vocabulary))]+"\n")
		}
		// Only the last line may lack its newline.
		for i := 0; i < len(lines)-1; i++ {
			if !strings.HasSuffix(lines[i], "\n") {
				lines[i] += "\n"
			}
		}
	}
	return []byte(strings.Join(lines, ""))
}

// mutate returns a random successor of t.
func mutate(r *rand.Rand, t tree, o genOpts) tree {
	b := t.clone()
	for _, p := range t.paths() {
		s := b[p]
		switch r.IntN(6) {
		case 0:
			delete(b, p)
		case 1: // mode change
			if s.Mode&modeTypeMask == modeRegular {
				s.Mode ^= 0o111 & (0o100755 ^ 0o100644)
			}
		case 2:
			b[p] = randSide(r, o)
		case 3, 4:
			if IsBinary(s.Content) {
				b[p] = randSide(r, o)
			} else if s.Mode&modeTypeMask == modeRegular {
				s.Content = editText(r, s.Content)
			}
		}
	}
	for range r.IntN(3) {
		p := randName(r, o)
		if b[p] == nil {
			b[p] = randSide(r, o)
		}
	}
	return b
}

// writeDir writes a tree of regular files to dir.
func writeDir(t testing.TB, dir string, tr tree) {
	t.Helper()
	for p, s := range tr {
		full := filepath.Join(dir, filepath.FromSlash(p))
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, s.Content, fs.FileMode(s.Mode&0o777)); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(full, fs.FileMode(s.Mode&0o777)); err != nil {
			t.Fatal(err)
		}
	}
}

// readDir reads the regular files under dir, ignoring skip (a top-level
// name) and empty directories.
func readDir(t testing.TB, dir string, skip ...string) tree {
	t.Helper()
	tr := tree{}
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, path)
		if d.IsDir() {
			if slices.Contains(skip, rel) {
				return filepath.SkipDir
			}
			return nil
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		if !info.Mode().IsRegular() {
			return fmt.Errorf("%s: not a regular file", rel)
		}
		content, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		mode := uint32(0o100644)
		if info.Mode()&0o100 != 0 {
			mode = 0o100755
		}
		tr[filepath.ToSlash(rel)] = &Side{Mode: mode, Content: content}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return tr
}
