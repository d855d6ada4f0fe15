package diff

import (
	"bytes"
	"fmt"
	"strings"
	"testing"
)

// TestRenamesMatchGit renders renames (exact and similar, names of
// several shapes) and their stats, and compares them byte for byte with
// git diff -M, in colour and without.
func TestRenamesMatchGit(t *testing.T) {
	requireTool(t, "git")
	var ten strings.Builder
	for i := 1; i <= 10; i++ {
		fmt.Fprintf(&ten, "line %d\n", i)
	}
	similar := strings.Replace(strings.Replace(ten.String(), "line 3", "LINE 3", 1), "line 7", "LINE 7", 1)
	cases := []struct {
		from, to string
		old, new string
	}{
		{"a.txt", "b.txt", ten.String(), ten.String()},
		{"lib/deep.txt", "src/deep.txt", ten.String(), ten.String()},
		{"x/y/z/file.go", "x/q/z/file.go", ten.String(), similar},
		{"dir/old.c", "dir/new.c", ten.String(), similar},
		{"top.txt", "sub/top.txt", ten.String(), ten.String() + "line 11\n"},
		{"a b/c.txt", "a b/d.txt", ten.String(), ten.String()},
		{"t\u00e9st.txt", "t\u00e9st2.txt", ten.String(), similar},
	}
	for _, c := range cases {
		t.Run(c.from+"=>"+c.to, func(t *testing.T) {
			before := tree{c.from: {Mode: 0o100644, Content: []byte(c.old)}}
			after := tree{c.to: {Mode: 0o100644, Content: []byte(c.new)}}
			score := Similarity(NewChunks([]byte(c.old)), NewChunks([]byte(c.new)), 0)
			ch := Change{Path: c.to, OldPath: c.from, Similarity: score * 100 / MaxScore,
				Old: before[c.from], New: after[c.to]}
			for _, color := range []bool{false, true} {
				var got bytes.Buffer
				if err := WriteOptions(&got, []Change{ch}, Options{Binary: BinaryNotice, Color: color}); err != nil {
					t.Fatal(err)
				}
				colorArg := "--color=never"
				if color {
					colorArg = "--color=always"
				}
				want := gitDiff(t, before, after, "-M", colorArg)
				if !bytes.Equal(got.Bytes(), want) {
					t.Errorf("color %v: got\n%q\nwant (git diff -M)\n%q", color, got.Bytes(), want)
				}
			}
			var got bytes.Buffer
			if err := WriteStatOptions(&got, []FileStat{Stat(ch)}, StatOptions{Width: 80}); err != nil {
				t.Fatal(err)
			}
			if want := gitDiff(t, before, after, "-M", "--stat=80"); !bytes.Equal(got.Bytes(), want) {
				t.Errorf("stat: got\n%s\nwant (git diff -M --stat)\n%s", got.Bytes(), want)
			}
		})
	}
}

// TestRenameName covers git's pprint_rename shapes without git.
func TestRenameName(t *testing.T) {
	for _, c := range []struct{ from, to, want string }{
		{"a", "b", "a => b"},
		{"lib/x.go", "src/x.go", "{lib => src}/x.go"},
		{"a/b/c", "a/d/c", "a/{b => d}/c"},
		{"a/x", "a/y", "a/{x => y}"},
		{"x", "d/x", "x => d/x"},
		{"d/x", "x", "d/x => x"},
		{"a/b", "a/c/b", "a/{ => c}/b"},
	} {
		if got := RenameName(c.from, c.to); got != c.want {
			t.Errorf("RenameName(%q, %q) = %q, want %q", c.from, c.to, got, c.want)
		}
	}
}

// TestSimilarity: identical contents score MaxScore, sizes too far apart
// are ruled out, and a CRLF text equals its LF self.
func TestSimilarity(t *testing.T) {
	a := NewChunks([]byte("one\ntwo\nthree\n"))
	if s := Similarity(a, a, MaxScore/2); s != MaxScore {
		t.Errorf("identical: got %d, want %d", s, MaxScore)
	}
	big := NewChunks(bytes.Repeat([]byte("x\n"), 100))
	if s := Similarity(a, big, MaxScore/2); s != 0 {
		t.Errorf("sizes far apart: got %d, want 0", s)
	}
	crlf := NewChunks([]byte("one\r\ntwo\r\nthree\r\n"))
	if s := Similarity(a, crlf, 0); s < MaxScore*80/100 {
		t.Errorf("CRLF: got %d, want at least 80%%", s)
	}
}
