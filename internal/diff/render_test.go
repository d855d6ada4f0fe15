package diff

import (
	"bytes"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/seed1cedbf7c/ckpt/internal/testutil"
)

// checkGolden compares got with testdata/name (see testutil.Golden).
func checkGolden(t *testing.T, name string, got []byte) {
	t.Helper()
	testutil.Golden(t, filepath.Join("testdata", name), got)
}

func reg(content string) *Side   { return &Side{Mode: 0o100644, Content: []byte(content)} }
func execf(content string) *Side { return &Side{Mode: 0o100755, Content: []byte(content)} }
func link(target string) *Side   { return &Side{Mode: modeSymlink, Content: []byte(target)} }

func numbered(n int) string {
	var b strings.Builder
	for i := 1; i <= n; i++ {
		fmt.Fprintf(&b, "line %d\n", i)
	}
	return b.String()
}

var renderCases = []struct {
	name string
	c    Change
}{
	{"modified", Change{Path: "src/main.go", Old: reg(numbered(30)),
		New: reg(strings.Replace(strings.Replace(numbered(30), "line 5\n", "line five\n", 1), "line 25\n", "", 1))}},
	{"modified_merged_hunks", Change{Path: "m.txt", Old: reg(numbered(20)),
		New: reg(strings.Replace(strings.Replace(numbered(20), "line 4\n", "four\n", 1), "line 10\n", "ten\n", 1))}},
	{"added", Change{Path: "new.txt", New: reg("one\ntwo\n")}},
	{"deleted", Change{Path: "old.txt", Old: execf("#!/bin/sh\necho hi\n")}},
	{"empty_added", Change{Path: "empty", New: reg("")}},
	{"empty_deleted", Change{Path: "empty", Old: execf("")}},
	{"emptied", Change{Path: "f", Old: reg("x\ny\n"), New: reg("")}},
	{"filled", Change{Path: "f", Old: reg(""), New: reg("x\ny\n")}},
	{"mode_only", Change{Path: "run.sh", Old: reg("echo\n"), New: execf("echo\n")}},
	{"mode_and_content", Change{Path: "run.sh", Old: execf("echo 1\n"), New: reg("echo 2\n")}},
	{"odd_modes", Change{Path: "secret", Old: &Side{Mode: 0o100600, Content: []byte("a\n")}, New: &Side{Mode: 0o100664, Content: []byte("b\n")}}},
	{"no_newline_old", Change{Path: "f", Old: reg("a\nb"), New: reg("a\nb\n")}},
	{"no_newline_new", Change{Path: "f", Old: reg("a\nb\n"), New: reg("a\nb")}},
	{"no_newline_both", Change{Path: "f", Old: reg("a\nb\nc"), New: reg("A\nb\nc")}},
	{"symlink_added", Change{Path: "link", New: link("../target")}},
	{"symlink_retargeted", Change{Path: "link", Old: link("a"), New: link("b")}},
	{"file_to_symlink", Change{Path: "p", Old: reg("text\n"), New: link("elsewhere")}},
	{"symlink_to_file", Change{Path: "p", Old: link("elsewhere"), New: execf("text\n")}},
	{"binary_added", Change{Path: "img.bin", New: reg("\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR")}},
	{"binary_modified", Change{Path: "data.bin", Old: reg(strings.Repeat("\x00\x01\x02", 40)), New: reg(strings.Repeat("\x00\x01\x03", 41))}},
	{"binary_deleted", Change{Path: "data.bin", Old: execf("\x00")}},
	{"binary_from_empty", Change{Path: "data.bin", Old: reg(""), New: reg("\x00\xff")}},
	{"binary_from_text", Change{Path: "f", Old: reg("text\n"), New: reg("te\x00xt\n")}},
	{"invalid_utf8", Change{Path: "latin1.txt", Old: reg("caf\xe9\n"), New: reg("cafe\n")}},
	{"latin1_added", Change{Path: "latin1.txt", New: reg("d\xe9j\xe0 vu\n\xff")}},
	// A NUL after the first 8000 bytes does not make a file binary (as
	// in git): its lines are diffed, NUL and all.
	{"nul_after_8000", Change{Path: "late.nul", Old: reg(strings.Repeat("x\n", 4000) + "nul\x00here\n"),
		New: reg(strings.Repeat("x\n", 4000) + "nul\x00here\n\x00second\r\n")}},
	{"quoted_path", Change{Path: "dir/t\xc3\xa9st \"q\"\t\\\xff", Old: reg("a\n"), New: reg("b\n")}},
	{"space_path", Change{Path: "my file.txt", New: reg("a\n")}},
	{"function_name", Change{Path: "f.go", Old: reg("package p\n\nfunc f() {\n\ta()\n\tb()\n\tc()\n\td()\n}\n"),
		New: reg("package p\n\nfunc f() {\n\ta()\n\tb()\n\tc()\n\tD()\n}\n")}},
}

func TestRenderGolden(t *testing.T) {
	for _, tc := range renderCases {
		t.Run(tc.name, func(t *testing.T) {
			var buf bytes.Buffer
			if err := WriteChange(&buf, tc.c); err != nil {
				t.Fatal(err)
			}
			checkGolden(t, "render/"+tc.name+".diff", buf.Bytes())

			// Every golden diff applies both ways.
			p, err := Parse(buf.Bytes())
			if err != nil {
				t.Fatalf("Parse: %v", err)
			}
			a, b := tree{}, tree{}
			if tc.c.Old != nil {
				a[tc.c.Path] = tc.c.Old
			}
			if tc.c.New != nil {
				b[tc.c.Path] = tc.c.New
			}
			checkApply(t, p, a, b)
		})
	}
}

// Binary changes in Decree's format (base64 blocks), as a run's
// changes.diff carries them.
func TestRenderGoldenBase64(t *testing.T) {
	for _, tc := range renderCases {
		if !strings.HasPrefix(tc.name, "binary_") {
			continue
		}
		t.Run(tc.name, func(t *testing.T) {
			var buf bytes.Buffer
			if err := WriteFormat(&buf, []Change{tc.c}, Base64Blocks); err != nil {
				t.Fatal(err)
			}
			checkGolden(t, "render/base64/"+tc.name+".diff", buf.Bytes())
			p, err := Parse(buf.Bytes())
			if err != nil {
				t.Fatalf("Parse: %v", err)
			}
			a, b := tree{}, tree{}
			if tc.c.Old != nil {
				a[tc.c.Path] = tc.c.Old
			}
			if tc.c.New != nil {
				b[tc.c.Path] = tc.c.New
			}
			checkApply(t, p, a, b)
		})
	}
}

// checkApply applies p to a, expecting b, and in reverse to b, expecting a.
func checkApply(t *testing.T, p *Patch, a, b tree) {
	t.Helper()
	for _, dir := range []struct {
		reverse  bool
		from, to tree
	}{{false, a, b}, {true, b, a}} {
		m := &memTree{files: dir.from.clone()}
		if _, err := ApplyTree(m, p, dir.reverse); err != nil {
			t.Fatalf("ApplyTree(reverse=%v): %v", dir.reverse, err)
		}
		if d := diffTrees(m.files, dir.to); d != "" {
			t.Fatalf("ApplyTree(reverse=%v): got a different tree:\n%s", dir.reverse, d)
		}
	}
}

func TestRenderIdentical(t *testing.T) {
	var buf bytes.Buffer
	for _, c := range []Change{
		{Path: "a"},
		{Path: "a", Old: reg("x\n"), New: reg("x\n")},
		{Path: "a", Old: link("t"), New: link("t")},
	} {
		if err := WriteChange(&buf, c); err != nil {
			t.Fatal(err)
		}
	}
	if buf.Len() != 0 {
		t.Errorf("got %q, want nothing", buf.String())
	}
}

func TestRenderRejects(t *testing.T) {
	for _, c := range []Change{
		{Path: "", New: reg("x")},
		{Path: "/abs", New: reg("x")},
		{Path: "a/../b", New: reg("x")},
		{Path: "a//b", New: reg("x")},
		{Path: "nul\x00", New: reg("x")},
		{Path: "dir", New: &Side{Mode: 0o040000}},
		{Path: "sub", New: &Side{Mode: 0o160000}},
	} {
		if err := WriteChange(&bytes.Buffer{}, c); err == nil {
			t.Errorf("WriteChange(%q, mode %o): got nil error, want one", c.Path, c.New.Mode)
		}
	}
}

func TestIsBinary(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want bool
	}{
		{"", false},
		{"plain\n", false},
		{"caf\xc3\xa9", false},
		{"nul\x00", true},
		{"caf\xe9", false}, // Latin-1 text is text, as in git
		{"\xff\xfe\x80", false},
		{strings.Repeat("a", 8000) + "\x00", false}, // NUL after the first 8000 bytes
		{strings.Repeat("a", 7999) + "\x00", true},
		{strings.Repeat("a", 9000) + "\xff", false},
	} {
		if got := IsBinary([]byte(tc.in)); got != tc.want {
			t.Errorf("IsBinary(%.20q… len %d): got %v, want %v", tc.in, len(tc.in), got, tc.want)
		}
	}
}

func TestGitBlobID(t *testing.T) {
	for in, want := range map[string]string{
		"":          "e69de29bb2d1d6434b8b29ae775ad8c2e48c5391",
		"a\nb\nc\n": "de980441c3ab03a8c07dda1ad27b8a11f39deb1e",
	} {
		if got := GitBlobID([]byte(in)); got != want {
			t.Errorf("GitBlobID(%q): got %s, want %s", in, got, want)
		}
	}
}

// TestLargeFile renders and applies a 50,000-line file with scattered edits
// and checks that the diff stays close to the edits made.
func TestLargeFile(t *testing.T) {
	const n = 50000
	old := make([]string, n)
	for i := range old {
		old[i] = fmt.Sprintf("line %d of a large file\n", i)
	}
	nw := append([]string(nil), old...)
	edits := 0
	for i := 7; i < n; i += 37 {
		nw[i] = fmt.Sprintf("changed %d\n", i)
		edits++
	}
	a := reg(strings.Join(old, ""))
	b := reg(strings.Join(nw, ""))
	start := time.Now()
	var buf bytes.Buffer
	if err := WriteChange(&buf, Change{Path: "big.txt", Old: a, New: b}); err != nil {
		t.Fatal(err)
	}
	t.Logf("rendered %d lines, %d edits, %d bytes in %v", n, edits, buf.Len(), time.Since(start))
	st := Stat(Change{Path: "big.txt", Old: a, New: b})
	if st.Insertions != edits || st.Deletions != edits {
		t.Errorf("got %d insertions and %d deletions, want %d each", st.Insertions, st.Deletions, edits)
	}
	p, err := Parse(buf.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	checkApply(t, p, tree{"big.txt": a}, tree{"big.txt": b})
}

func BenchmarkRenderLarge(b *testing.B) {
	const n = 50000
	var ob, nb strings.Builder
	for i := range n {
		fmt.Fprintf(&ob, "line %d\n", i)
		if i%100 == 0 {
			fmt.Fprintf(&nb, "edited %d\n", i)
		} else {
			fmt.Fprintf(&nb, "line %d\n", i)
		}
	}
	c := Change{Path: "big", Old: reg(ob.String()), New: reg(nb.String())}
	for b.Loop() {
		if err := WriteChange(&bytes.Buffer{}, c); err != nil {
			b.Fatal(err)
		}
	}
}
