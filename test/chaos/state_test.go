//go:build linux

package chaos

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"
	"syscall"

	"github.com/seed1cedbf7c/ckpt/internal/treegen"
)

// The workspace's ignore rules. Ignored files are never captured, and ckpt
// must never change them: the mutator keeps a model of them.
const gitignore = "*.log\n/build/\n.env\n"

// ignored reports whether the workspace path rel is ignored by gitignore.
// (The mutator never makes a file named build at the top, where only a
// directory would be ignored.)
func ignored(rel string) bool {
	base := path.Base(rel)
	return strings.HasSuffix(base, ".log") || base == ".env" || rel == "build"
}

// ckptTemp reports whether a name is one of ckpt's temporary entries.
func ckptTemp(rel string) bool { return strings.HasPrefix(path.Base(rel), ".ckpt-tmp-") }

// notCaptured is what no checkpoint holds: run records, ignored paths and
// ckpt's temporary entries.
func notCaptured(rel string) bool {
	return rel == ".decree" || rel == ".git" || ignored(rel) || ckptTemp(rel)
}

// tracked reads the workspace as a checkpoint would hold it.
func (e *env) tracked() treegen.State {
	e.t.Helper()
	st, err := treegen.Snapshot(e.ws, notCaptured)
	if err != nil {
		e.t.Fatal(err)
	}
	return st
}

// ignoredState reads every ignored file in the workspace (rel -> content),
// and whether an ignored entry is something other than a file or a
// directory of files.
func (e *env) ignoredState() map[string]string {
	e.t.Helper()
	got := map[string]string{}
	err := filepath.WalkDir(e.ws, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(e.ws, p)
		rel = filepath.ToSlash(rel)
		if rel == "." {
			return nil
		}
		if rel == ".decree" || rel == ".git" {
			return filepath.SkipDir
		}
		in := ignored(rel)
		for q := path.Dir(rel); !in && q != "."; q = path.Dir(q) {
			in = ignored(q)
		}
		if !in || d.IsDir() {
			return nil
		}
		if !d.Type().IsRegular() {
			got[rel] = "<not a file>"
			return nil
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		got[rel] = string(b)
		return nil
	})
	if err != nil {
		e.t.Fatal(err)
	}
	return got
}

// leftovers lists ckpt's temporary entries anywhere in the workspace.
func (e *env) leftovers() []string {
	var found []string
	filepath.WalkDir(e.ws, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil
		}
		if d.IsDir() && filepath.Base(p) == ".decree" {
			return filepath.SkipDir // (litter there: see decreeLitter)
		}
		if ckptTemp(p) {
			rel, _ := filepath.Rel(e.ws, p)
			found = append(found, rel)
			if d.IsDir() {
				return filepath.SkipDir
			}
		}
		return nil
	})
	return found
}

// digestOutside describes everything outside the workspace the harness
// watches: the sentinel directory (every entry's type, mode, size, mtime,
// content or target) and the workspace's parent directory (only the
// workspace in it).
func (e *env) digestOutside() string {
	e.t.Helper()
	var sb strings.Builder
	err := filepath.WalkDir(e.outside, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		fi, err := os.Lstat(p)
		if err != nil {
			return err
		}
		st := fi.Sys().(*syscall.Stat_t)
		fmt.Fprintf(&sb, "%s %v %d %d.%d", p, fi.Mode(), fi.Size(), st.Mtim.Sec, st.Mtim.Nsec)
		switch {
		case fi.Mode()&fs.ModeSymlink != 0:
			t, _ := os.Readlink(p)
			fmt.Fprintf(&sb, " -> %s", t)
		case fi.Mode().IsRegular():
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			fmt.Fprintf(&sb, " %x", sha256.Sum256(b))
		}
		sb.WriteByte('\n')
		return nil
	})
	if err != nil {
		e.t.Fatal(err)
	}
	des, err := os.ReadDir(filepath.Dir(e.ws))
	if err != nil {
		e.t.Fatal(err)
	}
	for _, de := range des {
		fmt.Fprintf(&sb, "parent: %s\n", de.Name())
	}
	return sb.String()
}

// mentry is one manifest entry, as `ckpt show --manifest` prints it.
type mentry struct {
	SHA256 string `json:"sha256"`
	Size   int64  `json:"size"`
	Mode   string `json:"mode"`
}

// manifest is a checkpoint's files (or a workspace state put the same way).
type manifest map[string]mentry

func sum(s string) string {
	h := sha256.Sum256([]byte(s))
	return hex.EncodeToString(h[:])
}

// toManifest puts a workspace state as a manifest: a symlink has mode
// 120000 and the hash and size of its target.
func toManifest(st treegen.State) manifest {
	m := manifest{}
	for p, en := range st {
		if en.Symlink {
			m[p] = mentry{SHA256: sum(en.Data), Size: int64(len(en.Data)), Mode: "120000"}
		} else {
			m[p] = mentry{SHA256: sum(en.Data), Size: int64(len(en.Data)), Mode: fmt.Sprintf("%o", en.Mode.Perm())}
		}
	}
	return m
}

// key names a manifest's whole content.
func (m manifest) key() string {
	ps := make([]string, 0, len(m))
	for p := range m {
		ps = append(ps, p)
	}
	sort.Strings(ps)
	h := sha256.New()
	for _, p := range ps {
		en := m[p]
		fmt.Fprintf(h, "%q %s %s %d\n", p, en.Mode, en.SHA256, en.Size)
	}
	return hex.EncodeToString(h.Sum(nil))
}

// diffManifests lists how got differs from want, leaving out paths excused
// by skip ("" when equal).
func diffManifests(want, got manifest, skip func(p string) bool) string {
	var lines []string
	for p, w := range want {
		if skip != nil && skip(p) {
			continue
		}
		g, ok := got[p]
		switch {
		case !ok:
			lines = append(lines, fmt.Sprintf("missing %q (want %s %.12s)", p, w.Mode, w.SHA256))
		case g != w:
			lines = append(lines, fmt.Sprintf("differs %q: got %s %.12s, want %s %.12s", p, g.Mode, g.SHA256, w.Mode, w.SHA256))
		}
	}
	for p, g := range got {
		if skip != nil && skip(p) {
			continue
		}
		if _, ok := want[p]; !ok {
			lines = append(lines, fmt.Sprintf("extra %q (%s %.12s)", p, g.Mode, g.SHA256))
		}
	}
	sort.Strings(lines)
	if len(lines) > 20 {
		lines = append(lines[:20], fmt.Sprintf("... and %d more", len(lines)-20))
	}
	return strings.Join(lines, "\n")
}

// checkpoint is one entry of `ckpt list --json`.
type checkpoint struct {
	ID      string   `json:"id"`
	Kind    string   `json:"kind"`
	Message string   `json:"message"`
	Branch  string   `json:"branch"`
	Names   []string `json:"names"`
}

func parseManifest(out string) (manifest, error) {
	var v struct {
		Files manifest `json:"files"`
	}
	if err := json.Unmarshal([]byte(out), &v); err != nil {
		return nil, err
	}
	if v.Files == nil {
		v.Files = manifest{}
	}
	return v.Files, nil
}

// decreeLitter lists ckpt's temporary files left in .decree (a run record
// written atomically by a process killed before its rename). They are no
// part of the workspace's state; the harness counts them.
func (e *env) decreeLitter() []string {
	var found []string
	filepath.WalkDir(filepath.Join(e.ws, ".decree"), func(p string, d fs.DirEntry, err error) error {
		if err == nil && ckptTemp(p) {
			rel, _ := filepath.Rel(e.ws, p)
			found = append(found, rel)
		}
		return nil
	})
	return found
}
