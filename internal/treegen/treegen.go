// Package treegen generates file trees for tests and benchmarks: random
// trees with every kind of entry ckpt must handle (symlinks, exec bits,
// binary and empty files, non-UTF-8 names, file/directory/symlink changes),
// random mutations of them, and exact snapshots of a tree's state to
// compare against.
package treegen

import (
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// Entry is the state of one path: a file (with mode and content) or a
// symlink (with target). Directories are implied.
type Entry struct {
	Symlink bool
	Mode    fs.FileMode // permission bits, files only
	Data    string      // content, or the symlink's target
}

// String implements fmt.Stringer.
func (e Entry) String() string {
	if e.Symlink {
		return "symlink -> " + e.Data
	}
	d := e.Data
	if len(d) > 40 {
		d = d[:40] + "..."
	}
	return fmt.Sprintf("file %o %q", e.Mode, d)
}

// State maps slash-separated relative paths to entries.
type State map[string]Entry

// Snapshot reads the state of dir: every file and symlink, skipping any path
// for which skip returns true (it is given relative paths, directories
// included, and a directory it skips is not entered).
func Snapshot(dir string, skip func(rel string) bool) (State, error) {
	st := State{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		rel = filepath.ToSlash(rel)
		if rel == "." {
			return nil
		}
		if skip != nil && skip(rel) {
			if d.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		switch {
		case d.Type()&fs.ModeSymlink != 0:
			t, err := os.Readlink(p)
			if err != nil {
				return err
			}
			st[rel] = Entry{Symlink: true, Data: t}
		case d.Type().IsRegular():
			fi, err := d.Info()
			if err != nil {
				return err
			}
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			st[rel] = Entry{Mode: fi.Mode().Perm(), Data: string(b)}
		}
		return nil
	})
	return st, err
}

// Diff describes how two states differ ("" when equal).
func Diff(want, got State) string {
	var lines []string
	for p, w := range want {
		g, ok := got[p]
		switch {
		case !ok:
			lines = append(lines, fmt.Sprintf("missing %q (want %v)", p, w))
		case g != w:
			lines = append(lines, fmt.Sprintf("differs %q: got %v, want %v", p, g, w))
		}
	}
	for p, g := range got {
		if _, ok := want[p]; !ok {
			lines = append(lines, fmt.Sprintf("extra %q (%v)", p, g))
		}
	}
	sort.Strings(lines)
	if len(lines) > 20 {
		lines = append(lines[:20], fmt.Sprintf("... and %d more", len(lines)-20))
	}
	return strings.Join(lines, "\n")
}

// Write creates st under dir (which should be empty or absent).
func Write(dir string, st State) error {
	for p, e := range st {
		full := filepath.Join(dir, filepath.FromSlash(p))
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			return err
		}
		if err := writeEntry(full, e); err != nil {
			return err
		}
	}
	return nil
}

func writeEntry(full string, e Entry) error {
	// Callers have checked that nothing tracked lies below full, so
	// anything there is an empty directory left by earlier deletions.
	if fi, err := os.Lstat(full); err == nil && fi.IsDir() {
		if err := os.RemoveAll(full); err != nil {
			return err
		}
	}
	if e.Symlink {
		return os.Symlink(e.Data, full)
	}
	if err := os.WriteFile(full, []byte(e.Data), 0o600); err != nil {
		return err
	}
	return os.Chmod(full, e.Mode)
}

// Options shape random trees.
type Options struct {
	Files    int // roughly how many entries
	MaxDepth int
	// Weird enables non-UTF-8 and unusual names.
	Weird bool
}

var plainNames = []string{"a", "b", "src", "lib", "main.go", "README.md", "x.txt", "data.bin",
	"dir", "util", "test", "cfg.json", "z", "Makefile", "docs", "e", "notes.txt", "tmp1"}

var weirdNames = []string{"caf\xe9", "sp ace", "tab\tname", "quote\"d", "back\\slash", "\xff\xfe",
	"new\nline", "日本語", "-dash", "#hash", "!bang", "[brackets]", "*star*", "?q", "x..y", "..dots"}

func randName(r *rand.Rand, weird bool) string {
	if weird && r.IntN(4) == 0 {
		return weirdNames[r.IntN(len(weirdNames))]
	}
	n := plainNames[r.IntN(len(plainNames))]
	if r.IntN(3) == 0 {
		n += fmt.Sprint(r.IntN(100))
	}
	return n
}

// RandEntry returns a random file or symlink entry.
func RandEntry(r *rand.Rand) Entry {
	switch r.IntN(10) {
	case 0:
		targets := []string{"a", "../x", "/etc/passwd", "dir/sub", "nonexistent", "."}
		return Entry{Symlink: true, Data: targets[r.IntN(len(targets))]}
	case 1:
		return Entry{Mode: 0o644} // empty
	case 2:
		b := make([]byte, r.IntN(3000))
		for i := range b {
			b[i] = byte(r.UintN(256))
		}
		return Entry{Mode: 0o644, Data: string(b)} // binary
	}
	mode := fs.FileMode(0o644)
	switch r.IntN(6) {
	case 0:
		mode = 0o755
	case 1:
		mode = 0o600
	}
	var sb strings.Builder
	lines := r.IntN(40)
	for i := 0; i < lines; i++ {
		fmt.Fprintf(&sb, "line %d of %d %x\n", i, lines, r.Uint32())
	}
	if r.IntN(5) == 0 {
		sb.WriteString("no newline at end")
	}
	return Entry{Mode: mode, Data: sb.String()}
}

// Random returns a random state.
func Random(r *rand.Rand, o Options) State {
	if o.Files == 0 {
		o.Files = 30
	}
	if o.MaxDepth == 0 {
		o.MaxDepth = 4
	}
	st := State{}
	for i := 0; i < o.Files; i++ {
		depth := r.IntN(o.MaxDepth) + 1
		parts := make([]string, depth)
		for j := range parts {
			parts[j] = randName(r, o.Weird)
		}
		p := strings.Join(parts, "/")
		if Conflicts(st, p) {
			continue
		}
		st[p] = RandEntry(r)
	}
	return st
}

// Conflicts reports whether adding p would need a path that is a file in
// st (or p is a directory prefix of an existing path).
func Conflicts(st State, p string) bool {
	if _, ok := st[p]; ok {
		return true
	}
	for d := p; strings.Contains(d, "/"); {
		d = d[:strings.LastIndexByte(d, '/')]
		if _, ok := st[d]; ok {
			return true
		}
	}
	for q := range st {
		if strings.HasPrefix(q, p+"/") {
			return true
		}
	}
	return false
}

// Mutate changes a random part of the tree on disk under dir (whose current
// state is st): modifications, deletions, additions, mode changes, and
// file <-> directory <-> symlink changes. It returns the new state.
func Mutate(r *rand.Rand, dir string, st State, n int, weird bool) (State, error) {
	out := State{}
	for p, e := range st {
		out[p] = e
	}
	paths := func() []string {
		ps := make([]string, 0, len(out))
		for p := range out {
			ps = append(ps, p)
		}
		sort.Strings(ps)
		return ps
	}
	for i := 0; i < n; i++ {
		ps := paths()
		full := func(p string) string { return filepath.Join(dir, filepath.FromSlash(p)) }
		op := r.IntN(7)
		if len(ps) == 0 {
			op = 2
		}
		switch op {
		case 0: // modify content
			p := ps[r.IntN(len(ps))]
			e := RandEntry(r)
			os.Remove(full(p))
			if err := writeEntry(full(p), e); err != nil {
				return nil, err
			}
			out[p] = e
		case 1: // delete
			p := ps[r.IntN(len(ps))]
			if err := os.Remove(full(p)); err != nil {
				return nil, err
			}
			delete(out, p)
		case 2: // add
			p := randName(r, weird)
			if len(ps) > 0 && r.IntN(2) == 0 {
				base := ps[r.IntN(len(ps))]
				if i := strings.LastIndexByte(base, '/'); i >= 0 {
					p = base[:i] + "/" + p
				}
			}
			if Conflicts(out, p) {
				continue
			}
			e := RandEntry(r)
			if err := os.MkdirAll(filepath.Dir(full(p)), 0o755); err != nil {
				return nil, err
			}
			if err := writeEntry(full(p), e); err != nil {
				return nil, err
			}
			out[p] = e
		case 3: // chmod
			p := ps[r.IntN(len(ps))]
			e := out[p]
			if e.Symlink {
				continue
			}
			e.Mode ^= 0o111
			if err := os.Chmod(full(p), e.Mode); err != nil {
				return nil, err
			}
			out[p] = e
		case 4: // file or symlink -> directory
			p := ps[r.IntN(len(ps))]
			if err := os.Remove(full(p)); err != nil {
				return nil, err
			}
			delete(out, p)
			child := p + "/" + randName(r, weird)
			e := RandEntry(r)
			if err := os.MkdirAll(full(p), 0o755); err != nil {
				return nil, err
			}
			if err := writeEntry(full(child), e); err != nil {
				return nil, err
			}
			out[child] = e
		case 5: // directory -> file or symlink
			p := ps[r.IntN(len(ps))]
			i := strings.LastIndexByte(p, '/')
			if i < 0 {
				continue
			}
			d := p[:i]
			if err := os.RemoveAll(full(d)); err != nil {
				return nil, err
			}
			for q := range out {
				if strings.HasPrefix(q, d+"/") {
					delete(out, q)
				}
			}
			e := RandEntry(r)
			if err := writeEntry(full(d), e); err != nil {
				return nil, err
			}
			out[d] = e
		case 6: // file <-> symlink
			p := ps[r.IntN(len(ps))]
			e := out[p]
			var ne Entry
			if e.Symlink {
				ne = Entry{Mode: 0o644, Data: "was a symlink\n"}
			} else {
				ne = Entry{Symlink: true, Data: "target-" + fmt.Sprint(r.IntN(9))}
			}
			os.Remove(full(p))
			if err := writeEntry(full(p), ne); err != nil {
				return nil, err
			}
			out[p] = ne
		}
	}
	return out, nil
}
