//go:build linux

package chaos

import (
	"fmt"
	"math/rand/v2"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/seed1cedbf7c/ckpt/internal/treegen"
)

// Names the mutator gives entries (none is ignored).
var names = []string{"a", "b", "c", "src", "lib", "docs", "pkg", "x.txt", "y.go", "z.md", "m", "n", "sp ace", "日本"}

// Targets of the symlinks the mutator makes inside (they may dangle);
// symlinks to the sentinel directory are made by symlink swaps.
var linkTargets = []string{"a", "x.txt", "../b", "nonexistent", "src/y.go", "."}

// mutator is the user (or a second agent) changing the workspace: edits,
// renames, file/directory/symlink changes, hard links (inside, and to a
// file outside), directories swapped for symlinks to the sentinel
// directory, exec bits, and ignored files. During an operation it only
// makes changes that keep content somewhere (a deletion or an overwrite
// records what it destroyed), so that afterwards every content the
// workspace held before or the mutator wrote must be on disk or in a
// checkpoint. Between operations it may also remove whole trees.
type mutator struct {
	e     *env
	fs    *wsfs
	r     *rand.Rand
	round int
	n     int
	last  string // hash of the content the change being made wrote

	ignored map[string]string // the model of every ignored file

	// What the current phase did.
	written   map[string]bool   // hashes of content written
	what      map[string]string // hash written -> the change that wrote it
	destroyed map[string]bool   // hashes of content the mutator overwrote or removed
	applied   int
	log       []string

	files []string // files and symlinks as last seen (and made since)
	dirs  []string // directories as last seen (and made since); "." the top
}

func newMutator(e *env, fs *wsfs, seed uint64) *mutator {
	return &mutator{e: e, fs: fs, r: rand.New(rand.NewPCG(seed, 0x5eed)), ignored: map[string]string{}}
}

// begin starts a phase from the workspace's tracked state st.
func (m *mutator) begin(st treegen.State) {
	m.written, m.what, m.destroyed, m.applied, m.log = map[string]bool{}, map[string]string{}, map[string]bool{}, 0, nil
	m.files = m.files[:0]
	dirs := map[string]bool{".": true}
	for p := range st {
		if p == ".gitignore" {
			continue // the rules stay as they are
		}
		m.files = append(m.files, p)
		for d := path.Dir(p); d != "."; d = path.Dir(d) {
			dirs[d] = true
		}
	}
	sort.Strings(m.files)
	m.dirs = m.dirs[:0]
	for d := range dirs {
		m.dirs = append(m.dirs, d)
	}
	sort.Strings(m.dirs)
}

func (m *mutator) note(format string, args ...any) {
	m.applied++
	m.log = append(m.log, fmt.Sprintf(format, args...))
	if m.last != "" {
		m.what[m.last] = m.log[len(m.log)-1]
		m.last = ""
	}
}

// token is new, unique content.
func (m *mutator) token() string {
	m.n++
	var sb strings.Builder
	fmt.Fprintf(&sb, "chaos r%d.%d %016x\n", m.round, m.n, m.r.Uint64())
	for i := m.r.IntN(4) * m.r.IntN(40); i > 0; i-- {
		fmt.Fprintf(&sb, "line %d %x\n", i, m.r.Uint32())
	}
	return sb.String()
}

func (m *mutator) uniq(prefix string) string {
	m.n++
	return fmt.Sprintf("%s%d", prefix, m.n)
}

func (m *mutator) pickFile() string {
	if len(m.files) == 0 {
		return ""
	}
	return m.files[m.r.IntN(len(m.files))]
}

// pickDir picks a directory other than the top that holds no ignored
// file (so moving or removing it never moves or removes one).
func (m *mutator) pickDir() string {
	for range 4 {
		if len(m.dirs) <= 1 {
			return ""
		}
		d := m.dirs[m.r.IntN(len(m.dirs))]
		if d != "." && !m.holdsIgnored(d) {
			return d
		}
	}
	return ""
}

func (m *mutator) holdsIgnored(d string) bool {
	for p := range m.ignored {
		if strings.HasPrefix(p, d+"/") {
			return true
		}
	}
	return false
}

// newPath is a path in a known directory (not too deep), or at the top.
func (m *mutator) newPath() string {
	d := "."
	if len(m.dirs) > 0 && m.r.IntN(3) > 0 {
		d = m.dirs[m.r.IntN(len(m.dirs))]
	}
	if strings.Count(d, "/") >= 3 {
		d = "."
	}
	n := names[m.r.IntN(len(names))]
	if m.r.IntN(3) == 0 {
		n = fmt.Sprintf("%s%d", n, m.r.IntN(20))
	}
	return path.Join(d, n)
}

func (m *mutator) wrote(s string) {
	m.last = sum(s)
	m.written[m.last] = true
}

func (m *mutator) lost(old string, had bool) {
	if had {
		m.destroyed[sum(old)] = true
	}
}

func (m *mutator) addFile(p string) { m.files = append(m.files, p) }
func (m *mutator) addDir(p string) {
	for d := p; d != "."; d = path.Dir(d) {
		m.dirs = append(m.dirs, d)
	}
}

// mutate makes one random change. quiet: no operation runs, so it may
// also remove whole trees and add or remove ignored files anywhere.
func (m *mutator) mutate(quiet bool) {
	k := m.r.IntN(22)
	if quiet && k >= 19 {
		k = 19 + m.r.IntN(6)
	}
	switch k {
	case 0, 1, 2, 3: // edit in place
		p := m.pickFile()
		if p == "" {
			return
		}
		t := m.token()
		if old, had, err := m.fs.writeInPlace(p, t, 0o644); err == nil {
			m.wrote(t)
			m.lost(old, had)
			m.note("edit in place %q", p)
		}
	case 4, 5: // edit by writing a new file and renaming it over
		p := m.pickFile()
		if p == "" {
			return
		}
		t := m.token()
		mode := uint32(0o644)
		if m.r.IntN(4) == 0 {
			mode = 0o755
		}
		if old, had, err := m.fs.writeReplace(p, t, mode, m.uniq(".mut-")); err == nil {
			m.wrote(t)
			m.lost(old, had)
			m.note("replace %q", p)
		}
	case 6, 7: // new file
		p := m.newPath()
		t := m.token()
		if m.fs.mkdirAll(path.Dir(p)) != nil {
			return
		}
		if old, had, err := m.fs.writeReplace(p, t, 0o644, m.uniq(".mut-")); err == nil {
			m.wrote(t)
			m.lost(old, had)
			m.addFile(p)
			m.addDir(path.Dir(p))
			m.note("create %q", p)
		}
	case 8, 9: // rename a file or a directory
		from := m.pickFile()
		if m.r.IntN(3) == 0 {
			from = m.pickDir()
		}
		to := m.newPath()
		if from == "" || to == from || strings.HasPrefix(to, from+"/") || m.holdsIgnored(from) {
			return
		}
		if old, had, err := m.fs.rename(from, to); err == nil {
			m.lost(old, had)
			m.addFile(to)
			m.note("rename %q -> %q", from, to)
		}
	case 10: // file -> directory (the file moved aside)
		p := m.pickFile()
		if p == "" || m.holdsIgnored(p) {
			return
		}
		aside := path.Join(path.Dir(p), m.uniq("aside"))
		if _, _, err := m.fs.rename(p, aside); err != nil {
			return
		}
		if m.fs.mkdirAll(p) == nil {
			c := path.Join(p, names[m.r.IntN(len(names))])
			t := m.token()
			if _, _, err := m.fs.writeInPlace(c, t, 0o644); err == nil {
				m.wrote(t)
				m.addFile(c)
				m.addDir(p)
			}
		}
		m.note("file %q -> directory (aside %q)", p, aside)
	case 11: // directory -> file (the directory moved aside)
		d := m.pickDir()
		if d == "" {
			return
		}
		aside := path.Join(path.Dir(d), m.uniq("aside"))
		if _, _, err := m.fs.rename(d, aside); err != nil {
			return
		}
		t := m.token()
		if _, _, err := m.fs.writeInPlace(d, t, 0o644); err == nil {
			m.wrote(t)
			m.addFile(d)
		}
		m.note("directory %q -> file (aside %q)", d, aside)
	case 12: // file <-> symlink
		p := m.pickFile()
		if p == "" || m.holdsIgnored(p) {
			return
		}
		if _, link, ok := m.fs.read(p); ok && link {
			old, had, err := m.fs.remove(p)
			if err != nil {
				return
			}
			m.lost(old, had)
			t := m.token()
			if _, _, err := m.fs.writeInPlace(p, t, 0o644); err == nil {
				m.wrote(t)
			}
			m.note("symlink %q -> file", p)
			return
		}
		aside := path.Join(path.Dir(p), m.uniq("aside"))
		if _, _, err := m.fs.rename(p, aside); err != nil {
			return
		}
		m.fs.symlink(linkTargets[m.r.IntN(len(linkTargets))], p)
		m.note("file %q -> symlink (aside %q)", p, aside)
	case 13: // hard link inside
		from, to := m.pickFile(), m.newPath()
		if from == "" || m.fs.mkdirAll(path.Dir(to)) != nil {
			return
		}
		if m.fs.link(from, to) == nil {
			m.addFile(to)
			m.note("hard link %q -> %q", to, from)
		}
	case 14: // hard link to a file outside (never written through)
		to := m.newPath()
		if m.fs.mkdirAll(path.Dir(to)) != nil {
			return
		}
		if m.fs.linkOut(sentinelFiles[m.r.IntN(len(sentinelFiles))], to) == nil {
			m.addFile(to)
			m.note("hard link %q -> outside", to)
		}
	case 15, 16: // a directory swapped for a symlink to the sentinel directory, or back
		for _, p := range m.files {
			if t, link, ok := m.fs.read(p); ok && link && strings.HasPrefix(t, m.e.outside) && m.r.IntN(2) == 0 {
				old, had, err := m.fs.remove(p)
				if err != nil {
					return
				}
				m.lost(old, had)
				if m.fs.mkdirAll(p) == nil {
					c := path.Join(p, "x.txt")
					t := m.token()
					if _, _, err := m.fs.writeInPlace(c, t, 0o644); err == nil {
						m.wrote(t)
						m.addFile(c)
					}
				}
				m.note("symlink %q to outside -> directory", p)
				return
			}
		}
		d := m.pickDir()
		if d == "" {
			return
		}
		aside := path.Join(path.Dir(d), m.uniq("aside"))
		if _, _, err := m.fs.rename(d, aside); err != nil {
			return
		}
		target := m.e.outside
		if m.r.IntN(2) == 0 {
			target = filepath.Join(m.e.outside, "sub")
		}
		m.fs.symlink(target, d)
		m.addFile(d)
		m.note("directory %q -> symlink to outside (aside %q)", d, aside)
	case 17: // exec bit
		if p := m.pickFile(); p != "" && m.fs.chmodX(p) == nil {
			m.note("chmod %q", p)
		}
	case 18: // delete a file
		if p := m.pickFile(); p != "" {
			if old, had, err := m.fs.remove(p); err == nil {
				m.lost(old, had)
				m.note("delete %q", p)
			}
		}
	case 19, 20, 21: // an ignored file at the top or in build/
		var p string
		switch m.r.IntN(4) {
		case 0:
			p = "app.log"
		case 1:
			p = ".env"
		case 2:
			p = fmt.Sprintf("r%d.log", m.r.IntN(5))
		default:
			p = fmt.Sprintf("build/%s/out%d.bin", names[m.r.IntN(3)], m.r.IntN(3))
		}
		if m.fs.mkdirAll(path.Dir(p)) != nil {
			return
		}
		t := m.token()
		if _, _, err := m.fs.writeInPlace(p, t, 0o644); err == nil {
			m.ignored[p] = t
			m.note("ignored %q", p)
		}
	case 22: // (quiet) an ignored file in a tracked directory
		if len(m.dirs) == 0 {
			return
		}
		d := m.dirs[m.r.IntN(len(m.dirs))]
		p := path.Join(d, fmt.Sprintf("debug%d.log", m.r.IntN(3)))
		t := m.token()
		if _, _, err := m.fs.writeInPlace(p, t, 0o644); err == nil {
			m.ignored[p] = t
			m.note("ignored %q", p)
		}
	case 23: // (quiet) remove an ignored file
		var ps []string
		for p := range m.ignored {
			ps = append(ps, p)
		}
		sort.Strings(ps)
		if len(ps) == 0 {
			return
		}
		p := ps[m.r.IntN(len(ps))]
		if _, _, err := m.fs.remove(p); err == nil {
			delete(m.ignored, p)
			m.note("remove ignored %q", p)
		}
	case 24: // (quiet) remove a whole tree
		if d := m.pickDir(); d != "" {
			if err := os.RemoveAll(filepath.Join(m.e.ws, filepath.FromSlash(d))); err == nil {
				m.note("remove tree %q", d)
			}
		}
	}
}

// prune removes trees and files (between operations) while the workspace
// holds more than max tracked entries.
func (m *mutator) prune(st treegen.State, max int) {
	m.begin(st)
	for len(m.files) > max {
		if d := m.pickDir(); d != "" && m.r.IntN(2) == 0 {
			os.RemoveAll(filepath.Join(m.e.ws, filepath.FromSlash(d)))
			var keep []string
			for _, p := range m.files {
				if !strings.HasPrefix(p, d+"/") {
					keep = append(keep, p)
				}
			}
			m.files = keep
			var kd []string
			for _, q := range m.dirs {
				if q != d && !strings.HasPrefix(q, d+"/") {
					kd = append(kd, q)
				}
			}
			m.dirs = kd
			continue
		}
		i := m.r.IntN(len(m.files))
		m.fs.remove(m.files[i])
		m.files = append(m.files[:i], m.files[i+1:]...)
	}
}

// race makes changes until stop is closed (at most max), sleeping a
// little between them, after waiting up to delay for the operation to get
// going.
func (m *mutator) race(stop <-chan struct{}, delay time.Duration, max int) {
	select {
	case <-stop:
		return
	case <-time.After(time.Duration(m.r.Int64N(int64(delay) + 1))):
	}
	for i := 0; i < max; i++ {
		m.mutate(false)
		select {
		case <-stop:
			return
		case <-time.After(time.Duration(m.r.IntN(3000)) * time.Microsecond):
		}
	}
}

// sentinelFiles are the files of the sentinel directory (relative to it).
var sentinelFiles = []string{"secret.txt", "x.txt", "sub/y.go", "src/a"}
