package diff

// Differential tests against the real git and GNU patch.

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/seed1cedbf7c/ckpt/internal/testutil"
)

func requireTool(t *testing.T, name string) {
	t.Helper()
	if _, err := exec.LookPath(name); err != nil {
		t.Skipf("%s not installed", name)
	}
}

// toolEnv isolates git from the user's configuration (testutil.GitEnv)
// and from any repository around the test's directories.
func toolEnv(t testing.TB, dir string) []string {
	return append(testutil.GitEnv(t), "GIT_CEILING_DIRECTORIES="+filepath.Dir(dir))
}

// run runs a command in dir and returns its standard output.
func run(t *testing.T, dir string, name string, args ...string) []byte {
	t.Helper()
	out, err := tryRun(t, dir, name, args...)
	if err != nil {
		t.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, out)
	}
	return out
}

func tryRun(t testing.TB, dir string, name string, args ...string) ([]byte, error) {
	cmd := exec.Command(name, args...)
	cmd.Dir = dir
	cmd.Env = toolEnv(t, dir)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return append(stdout.Bytes(), stderr.Bytes()...), err
	}
	return stdout.Bytes(), nil
}

// TestGitApplyAndPatch renders diffs between random text trees and checks
// that git apply and patch -p1 apply them forward and in reverse, modes
// included.
func TestGitApplyAndPatch(t *testing.T) {
	requireTool(t, "git")
	requireTool(t, "patch")
	r := rand.New(rand.NewPCG(20240601, 7))
	trials := 120
	if testing.Short() {
		trials = 20
	}
	for trial := range trials {
		a := randTree(r, genOpts{})
		b := mutate(r, a, genOpts{})
		d := render(t, a, b)
		root := t.TempDir()
		diffPath := filepath.Join(root, "change.diff")
		if err := os.WriteFile(diffPath, d, 0o644); err != nil {
			t.Fatal(err)
		}
		tools := []struct {
			name string
			args []string
		}{
			{"git", []string{"apply", "-p1", diffPath}},
			{"patch", []string{"-p1", "-f", "-s", "--no-backup-if-mismatch", "-i", diffPath}},
		}
		for _, tool := range tools {
			for _, reverse := range []bool{false, true} {
				from, want := a, b
				args := tool.args
				if reverse {
					from, want = b, a
					args = append([]string{"-R"}, args...)
					if tool.name == "git" {
						args = []string{"apply", "-R", "-p1", diffPath}
					}
				}
				dir := filepath.Join(root, tool.name+map[bool]string{false: "-fwd", true: "-rev"}[reverse])
				if err := os.Mkdir(dir, 0o755); err != nil {
					t.Fatal(err)
				}
				writeDir(t, dir, from)
				var blind []string
				if tool.name == "patch" {
					blind = patchBlindSpots(a, b)
					want = want.clone()
					for _, p := range blind {
						if from[p] == nil {
							delete(want, p)
						} else {
							want[p] = from[p]
						}
					}
				}
				out, err := tryRun(t, dir, tool.name, args...)
				if (err != nil) != (len(blind) > 0) {
					t.Fatalf("trial %d: %s %s: %v (sections patch cannot read: %q)\n%s\ndiff:\n%s",
						trial, tool.name, strings.Join(args, " "), err, blind, out, d)
				}
				if got := diffTrees(readDir(t, dir), want); got != "" {
					t.Fatalf("trial %d: %s (reverse=%v) gave a different tree:\n%s\ndiff:\n%s", trial, tool.name, reverse, got, d)
				}
			}
		}
	}
}

// patchBlindSpots returns the paths whose changes GNU patch (2.7) skips:
// sections without ---/+++ lines (only a mode change, or an empty file
// added or deleted) whose unquoted name contains a space, because patch
// cannot split such a "diff --git" line. git writes the same text.
func patchBlindSpots(a, b tree) []string {
	var out []string
	for _, c := range changes(a, b) {
		if !strings.Contains(c.Path, " ") || QuotePath(c.Path) != c.Path {
			continue
		}
		o, n := c.Old, c.New
		switch {
		case o != nil && n != nil && bytes.Equal(o.Content, n.Content) && o.Mode != n.Mode,
			o == nil && len(n.Content) == 0,
			n == nil && len(o.Content) == 0:
			out = append(out, c.Path)
		}
	}
	return out
}

// binaryHunks matches the hunks of git binary patches: a "literal N" or
// "delta N" line, base85 data lines and an empty line.
var binaryHunks = regexp.MustCompile(`(?m)^(literal|delta) [0-9]+\n([A-Za-z][0-9A-Za-z!#$%&()*+;<=>?@^_\x60{|}~-]+\n)*\n`)

// hideBinaryHunks replaces each binary hunk with a marker: zlib data (and
// git's choice between delta and literal) may differ from git's and still
// be right.
func hideBinaryHunks(d []byte) []byte {
	return binaryHunks.ReplaceAll(d, []byte("<binary hunk>\n"))
}

// writeSide puts one file (or symlink) into a work tree.
func writeSide(t *testing.T, dir, path string, s *Side) {
	t.Helper()
	full := filepath.Join(dir, path)
	if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.RemoveAll(full); err != nil {
		t.Fatal(err)
	}
	if s == nil {
		return
	}
	if s.Mode == modeSymlink {
		if err := os.Symlink(string(s.Content), full); err != nil {
			t.Fatal(err)
		}
		return
	}
	if err := os.WriteFile(full, s.Content, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(full, os.FileMode(s.Mode&0o777)); err != nil {
		t.Fatal(err)
	}
}

// gitDiff commits before, stages after, and returns git's diff between them.
func gitDiff(t *testing.T, before, after tree, args ...string) []byte {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "repo")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	run(t, dir, "git", "init", "-q")
	for p, s := range before {
		writeSide(t, dir, p, s)
	}
	run(t, dir, "git", "add", "-A")
	run(t, dir, "git", "commit", "-q", "--allow-empty", "-m", "before")
	for p := range before {
		writeSide(t, dir, p, nil)
	}
	for p, s := range after {
		writeSide(t, dir, p, s)
	}
	run(t, dir, "git", "add", "-A")
	return run(t, dir, "git", append([]string{"diff", "--cached", "--no-renames", "--no-color", "--abbrev=7"}, args...)...)
}

// TestMatchesGitDiff compares the rendering of single changes byte for byte
// with git diff --binary (but for the data of binary hunks).
func TestMatchesGitDiff(t *testing.T) {
	requireTool(t, "git")
	differs := map[string]string{
		"odd_modes": "git records only 100644 and 100755",
	}
	for _, tc := range renderCases {
		t.Run(tc.name, func(t *testing.T) {
			if why := differs[tc.name]; why != "" {
				t.Skip(why)
			}
			before, after := tree{}, tree{}
			if tc.c.Old != nil {
				before[tc.c.Path] = tc.c.Old
			}
			if tc.c.New != nil {
				after[tc.c.Path] = tc.c.New
			}
			want := hideBinaryHunks(gitDiff(t, before, after, "--binary"))
			var buf bytes.Buffer
			if err := WriteChange(&buf, tc.c); err != nil {
				t.Fatal(err)
			}
			if got := hideBinaryHunks(buf.Bytes()); !bytes.Equal(got, want) {
				t.Errorf("got\n%s\nwant (git diff --binary)\n%s", got, want)
			}
		})
	}
}

// TestParseGitOutput parses what git diff writes, renames and copies
// included, and applies it both ways.
func TestParseGitOutput(t *testing.T) {
	requireTool(t, "git")
	before := tree{
		"keep.txt":      reg(numbered(20)),
		"moved.txt":     reg(numbered(15)),
		"sp ace/old nm": reg(numbered(12)),
		"gone.txt":      reg("bye\n"),
		"x.sh":          reg("echo\n"),
	}
	after := tree{
		"keep.txt":      reg(strings.Replace(numbered(20), "line 3\n", "three\n", 1)),
		"renamed.txt":   reg(strings.Replace(numbered(15), "line 15\n", "fifteen\n", 1)),
		"sp ace/new nm": reg(numbered(12)),
		"new.txt":       reg("hello"),
		"x.sh":          execf("echo\n"),
		"t\xc3\xa9st":   reg("q\n"),
	}
	for _, args := range [][]string{{"-M"}, {"-M", "-C", "--find-copies-harder"}, {"-U0"}, {"-U1"}} {
		// -U0 hunks need git apply's --unidiff-zero; only parse them.
		d := gitDiff(t, before, after, args...)
		p, err := Parse(d)
		if err != nil {
			t.Fatalf("git diff %v: Parse: %v\n%s", args, err, d)
		}
		if slices.Contains(args, "-U0") {
			continue
		}
		checkApply(t, p, before, after)
	}
	// Copies.
	before = tree{"src.txt": reg(numbered(10))}
	after = tree{"src.txt": reg(numbered(10)), "copy.txt": reg(strings.Replace(numbered(10), "line 9\n", "nine\n", 1))}
	d := gitDiff(t, before, after, "-C", "--find-copies-harder")
	if !bytes.Contains(d, []byte("copy from src.txt")) {
		t.Fatalf("git diff did not detect the copy:\n%s", d)
	}
	p, err := Parse(d)
	if err != nil {
		t.Fatalf("Parse: %v\n%s", err, d)
	}
	checkApply(t, p, before, after)
}

// TestStatMatchesGit compares WriteStat with git diff --stat.
func TestStatMatchesGit(t *testing.T) {
	requireTool(t, "git")
	long := "a/very/long/path/name/that/does/not/fit/into/the/name/column/at/all/file.txt"
	scenarios := []struct {
		name          string
		before, after tree
	}{
		{"mixed", tree{
			"mod.txt": reg(numbered(10)), "del.txt": reg("x\ny\n"), "mode.sh": reg("echo\n"),
			"bin": reg("bin\x00ary"), "lnk": link("target"),
		}, tree{
			"mod.txt": reg(strings.Replace(numbered(10), "line 2\n", "two\n", 1)), "mode.sh": execf("echo\n"),
			"bin": reg("bin\x00ary2"), "newbin": reg("\x00\x01"), "empty": reg(""), "lnk": reg("now a file\n"),
			"t\xc3\xa9st": reg("1\n2\n"),
		}},
		{"scaled", tree{
			"small.txt": reg("a\n"), long: reg(numbered(5)),
		}, tree{
			"small.txt": reg("b\n"), long: reg(numbered(300)), "big.txt": reg(numbered(120)),
		}},
		{"one_insertion", tree{}, tree{"a": reg("x\n")}},
		{"deletions_only", tree{"a": reg("x\ny\n"), "b": reg("z\n")}, tree{"a": reg("x\n")}},
		{"binary_only", tree{"b1": reg("\x00")}, tree{"b1": reg("\x00\x00"), "b2": execf("\x00")}},
	}
	for _, sc := range scenarios {
		t.Run(sc.name, func(t *testing.T) {
			want := gitDiff(t, sc.before, sc.after, "--stat")
			var stats []FileStat
			for _, c := range changes(sc.before, sc.after) {
				if c.Old != nil && c.New != nil && sameSide(c.Old, c.New) {
					continue
				}
				stats = append(stats, Stat(c))
			}
			var buf bytes.Buffer
			if err := WriteStat(&buf, stats); err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(buf.Bytes(), want) {
				t.Errorf("got\n%s\nwant (git diff --stat)\n%s", buf.Bytes(), want)
			}
		})
	}
}

// bigBinary returns n pseudo-random bytes with a NUL, so that git writes a
// delta for a small change to it.
func bigBinary(seed uint64, n int) string {
	r := rand.New(rand.NewPCG(seed, 1))
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(r.IntN(256))
	}
	b[0] = 0
	return string(b)
}

// TestParseGitBinaryPatch parses what git diff --binary writes (literal and
// delta hunks, both directions) and applies it forward and in reverse.
func TestParseGitBinaryPatch(t *testing.T) {
	requireTool(t, "git")
	big := bigBinary(1, 20000)
	before := tree{
		"mod.bin":     reg("\x00\x01\x02 old"),
		"big.bin":     reg(big),
		"gone.bin":    execf("\x00bye"),
		"to-text":     reg("\x00was binary"),
		"to-bin":      reg("was text\n"),
		"emptied.bin": reg("\x00\x00"),
		"filled.bin":  reg(""),
		"mode.bin":    reg("\x00mode"),
		"both.bin":    reg("\x00both"),
		"lnk":         link("target"),
	}
	after := tree{
		"mod.bin":     reg("\x00\x01\x02 new!"),
		"big.bin":     reg(big[:9000] + "a small change" + big[9000:]),
		"new.bin":     execf("\x89PNG\r\n\x1a\n\x00\x00"),
		"to-text":     reg("now text\n"),
		"to-bin":      reg("now\x00binary"),
		"emptied.bin": reg(""),
		"filled.bin":  reg("\x00full"),
		"mode.bin":    execf("\x00mode"),
		"both.bin":    execf("\x00both changed"),
		"lnk":         reg("\x00binary file"),
	}
	d := gitDiff(t, before, after, "--binary")
	if !bytes.Contains(d, []byte("\ndelta ")) || !bytes.Contains(d, []byte("\nliteral ")) {
		t.Fatalf("git diff --binary wrote no delta or no literal hunk:\n%s", d)
	}
	p, err := Parse(d)
	if err != nil {
		t.Fatalf("Parse: %v\n%s", err, d)
	}
	checkApply(t, p, before, after)
}

// A git binary patch without its reverse hunk applies forward only, and
// one without full index lines not at all (as with git apply).
func TestGitBinaryPatchLimits(t *testing.T) {
	requireTool(t, "git")
	before := tree{"x.bin": reg("\x00old")}
	after := tree{"x.bin": reg("\x00new")}
	d := string(gitDiff(t, before, after, "--binary"))
	i := strings.Index(d, "\n\nliteral ")
	if i < 0 {
		t.Fatalf("no reverse hunk in\n%s", d)
	}
	p, err := Parse([]byte(d[:i+2]))
	if err != nil {
		t.Fatal(err)
	}
	m := &memTree{files: before.clone()}
	if _, err := ApplyTree(m, p, false); err != nil {
		t.Fatalf("forward: %v", err)
	}
	m = &memTree{files: after.clone()}
	if _, err := ApplyTree(m, p, true); err == nil || !strings.Contains(err.Error(), "no reverse hunk") {
		t.Errorf("reverse without the reverse hunk: got %v", err)
	}
	short := strings.Replace(d, GitBlobID([]byte("\x00old")), GitBlobID([]byte("\x00old"))[:7], 1)
	if p, err = Parse([]byte(short)); err != nil {
		t.Fatal(err)
	}
	m = &memTree{files: before.clone()}
	if _, err := ApplyTree(m, p, false); err == nil || !strings.Contains(err.Error(), "full index") {
		t.Errorf("abbreviated index: got %v", err)
	}
}

// readWorkTree reads the files and symlinks under dir as git sees them:
// regular files as 100644 or 100755 (the owner's execute bit).
func readWorkTree(t *testing.T, dir string) tree {
	t.Helper()
	tr := tree{}
	err := filepath.WalkDir(dir, func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(dir, path)
		info, err := d.Info()
		if err != nil {
			return err
		}
		switch {
		case info.Mode()&os.ModeSymlink != 0:
			target, err := os.Readlink(path)
			if err != nil {
				return err
			}
			tr[filepath.ToSlash(rel)] = link(target)
		case info.Mode().IsRegular():
			content, err := os.ReadFile(path)
			if err != nil {
				return err
			}
			tr[filepath.ToSlash(rel)] = &Side{Mode: gitMode(uint32(info.Mode().Perm()) | modeRegular), Content: content}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return tr
}

// gitMode is the mode git records: 100755 if the owner may execute,
// 100644 for other regular files.
func gitMode(m uint32) uint32 {
	switch {
	case m&modeTypeMask != modeRegular:
		return m
	case m&0o100 != 0:
		return 0o100755
	}
	return 0o100644
}

// gitView returns t with modes as git records them.
func gitView(t tree) tree {
	out := t.clone()
	for _, s := range out {
		s.Mode = gitMode(s.Mode)
	}
	return out
}

// TestGitApplyBinary renders diffs between random trees with binary and
// empty files, symlinks, odd permissions and names with control
// characters and invalid UTF-8, and checks that git apply --check and git
// apply take them forward and in reverse (-R), and that patch -p1 fails,
// rather than skips, when a diff has a binary file.
func TestGitApplyBinary(t *testing.T) {
	requireTool(t, "git")
	_, patchErr := exec.LookPath("patch")
	r := rand.New(rand.NewPCG(20250611, 3))
	o := genOpts{binary: true, symlinks: true, oddModes: true, oddNames: true}
	trials := 150
	if testing.Short() {
		trials = 30
	}
	binaries := 0
	for trial := range trials {
		a := randTree(r, o)
		b := mutate(r, a, o)
		if trial%5 == 0 {
			// A large binary file with a small change.
			big := bigBinary(uint64(trial), 50000+r.IntN(50000))
			a["big.bin"] = reg(big)
			i := r.IntN(len(big))
			b["big.bin"] = reg(big[:i] + "inserted" + big[i:])
		}
		d := render(t, a, b)
		hasBinary := bytes.Contains(d, []byte("\nGIT binary patch\n"))
		if hasBinary {
			binaries++
		}
		root := t.TempDir()
		diffPath := filepath.Join(root, "change.diff")
		if err := os.WriteFile(diffPath, d, 0o644); err != nil {
			t.Fatal(err)
		}
		for _, reverse := range []bool{false, true} {
			from, want := a, b
			var rev []string
			if reverse {
				from, want, rev = b, a, []string{"-R"}
			}
			dir := filepath.Join(root, map[bool]string{false: "fwd", true: "rev"}[reverse])
			for p, s := range from {
				writeSide(t, dir, p, s)
			}
			for _, args := range [][]string{{"apply", "--check"}, {"apply"}} {
				args = append(append(args, rev...), diffPath)
				if out, err := tryRun(t, dir, "git", args...); err != nil {
					t.Fatalf("trial %d: git %s: %v\n%s\ndiff:\n%s", trial, strings.Join(args, " "), err, out, d)
				}
			}
			if got := diffTrees(readWorkTree(t, dir), gitView(want)); got != "" {
				t.Fatalf("trial %d: git apply (reverse=%v) gave a different tree:\n%s\ndiff:\n%s", trial, reverse, got, d)
			}
		}
		if patchErr == nil && hasBinary {
			dir := filepath.Join(root, "patch")
			for p, s := range a {
				writeSide(t, dir, p, s)
			}
			out, err := tryRun(t, dir, "patch", "-p1", "-f", "--no-backup-if-mismatch", "-i", diffPath)
			if err == nil {
				t.Fatalf("trial %d: patch -p1 succeeded on a diff with a binary file:\n%s\ndiff:\n%s", trial, out, d)
			}
		}
	}
	if binaries == 0 {
		t.Error("no diff had a binary file")
	}
}

// TestGitApplyRenderCases applies each rendering case with git apply,
// forward and in reverse.
func TestGitApplyRenderCases(t *testing.T) {
	requireTool(t, "git")
	for _, tc := range renderCases {
		t.Run(tc.name, func(t *testing.T) {
			a, b := tree{}, tree{}
			if tc.c.Old != nil {
				a[tc.c.Path] = tc.c.Old
			}
			if tc.c.New != nil {
				b[tc.c.Path] = tc.c.New
			}
			root := t.TempDir()
			diffPath := filepath.Join(root, "change.diff")
			if err := os.WriteFile(diffPath, render(t, a, b), 0o644); err != nil {
				t.Fatal(err)
			}
			for _, reverse := range []bool{false, true} {
				from, want, args := a, b, []string{"apply", diffPath}
				if reverse {
					from, want, args = b, a, []string{"apply", "-R", diffPath}
				}
				dir := filepath.Join(root, fmt.Sprint(reverse))
				if err := os.Mkdir(dir, 0o755); err != nil {
					t.Fatal(err)
				}
				for p, s := range from {
					writeSide(t, dir, p, s)
				}
				if out, err := tryRun(t, dir, "git", args...); err != nil {
					t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
				}
				if got := diffTrees(readWorkTree(t, dir), gitView(want)); got != "" {
					t.Fatalf("git %s gave a different tree:\n%s", strings.Join(args, " "), got)
				}
			}
		})
	}
}
