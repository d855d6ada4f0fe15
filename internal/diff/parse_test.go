package diff

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"strings"
	"testing"
)

func TestQuotePath(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"a/plain.txt", "a/plain.txt"},
		{"a/with space", "a/with space"},
		{"a/t\xc3\xa9st", `"a/t\303\251st"`},
		{"a/tab\there", `"a/tab\there"`},
		{"a/nl\n", `"a/nl\n"`},
		{`a/q"uote`, `"a/q\"uote"`},
		{`a/back\slash`, `"a/back\\slash"`},
		{"a/\a\b\v\f\r", `"a/\a\b\v\f\r"`},
		{"a/\x01\x1f\x7f\xff", `"a/\001\037\177\377"`},
	} {
		if got := QuotePath(tc.in); got != tc.want {
			t.Errorf("QuotePath(%q): got %s, want %s", tc.in, got, tc.want)
		}
		if got, err := UnquotePath(tc.want); err != nil || got != tc.in {
			t.Errorf("UnquotePath(%s): got %q, %v, want %q", tc.want, got, err, tc.in)
		}
	}
	// Every byte but NUL round-trips.
	var all []byte
	for c := 1; c < 256; c++ {
		all = append(all, byte(c))
	}
	if got, err := UnquotePath(QuotePath(string(all))); err != nil || got != string(all) {
		t.Errorf("round trip of all bytes: got %q, %v", got, err)
	}
	for _, bad := range []string{`"open`, `"bad\q"`, `"oct\4"`, `"oct\400"`, `"x"y`, `"\`} {
		if got, err := UnquotePath(bad); err == nil {
			t.Errorf("UnquotePath(%s): got %q, want an error", bad, got)
		}
	}
}

func TestCheckPath(t *testing.T) {
	for _, ok := range []string{"a", "a/b", "a b/c", ".hidden", "..x", "x..", "a/.gitignore", "t\xff"} {
		if err := CheckPath(ok); err != nil {
			t.Errorf("CheckPath(%q): got %v, want nil", ok, err)
		}
	}
	for _, bad := range []string{"", "/abs", "a/", "a//b", "./a", "a/./b", "../a", "a/..", "a\x00b", ".git/config", "x/.GIT/hooks/pre-commit"} {
		if err := CheckPath(bad); err == nil {
			t.Errorf("CheckPath(%q): got nil, want an error", bad)
		}
	}
}

// parseError returns the line number of a *ParseError.
func parseErrorLine(t *testing.T, err error) int {
	t.Helper()
	var pe *ParseError
	if !errors.As(err, &pe) {
		t.Fatalf("got error %v (%T), want a *ParseError", err, err)
	}
	return pe.Line
}

func TestParseRejects(t *testing.T) {
	ok := "diff --git a/ok b/ok\nold mode 100644\nnew mode 100755\n"
	for _, tc := range []struct {
		name string
		in   string
		line int
	}{
		{"dotdot", "diff --git a/../x b/../x\nnew file mode 100644\n", 1},
		{"dotdot in ---", ok + "diff --git a/x b/x\n--- a/x/../../etc/passwd\n+++ b/x\n@@ -1 +1 @@\n-a\n+b\n", 5},
		{"absolute", "diff --git a/x b/x\n--- /etc/passwd\n+++ b/x\n@@ -1 +1 @@\n-a\n+b\n", 2},
		{"dot", "diff --git a/./x b/./x\nold mode 100644\nnew mode 100755\n", 1},
		{"empty component", "diff --git a/x//y b/x//y\nold mode 100644\nnew mode 100755\n", 1},
		{"nul", "diff --git \"a/x\\000\" \"b/x\\000\"\nold mode 100644\nnew mode 100755\n", 1},
		{"git dir", "diff --git a/.git/hooks/post-checkout b/.git/hooks/post-checkout\nnew file mode 100755\n", 1},
		{"rename to dotdot", "diff --git a/x b/y\nsimilarity index 100%\nrename from x\nrename to ../y\n", 4},
		{"no prefix", "diff --git x x\nold mode 100644\nnew mode 100755\n", 1},
		{"bad mode", "diff --git a/x b/x\nold mode 100644\nnew mode 160000\n", 3},
		{"bad hunk header", "diff --git a/x b/x\n--- a/x\n+++ b/x\n@@ -1 +1 @\n-a\n+b\n", 4},
		{"short hunk", "diff --git a/x b/x\n--- a/x\n+++ b/x\n@@ -1,2 +1,2 @@\n-a\n+b\n", 4},
		{"long hunk", "diff --git a/x b/x\n--- a/x\n+++ b/x\n@@ -1 +1 @@\n-a\n-b\n+b\n", 6},
		{"garbage in hunk", "diff --git a/x b/x\n--- a/x\n+++ b/x\n@@ -1,2 +1,2 @@\n-a\n*b\n+b\n", 6},
		{"no newline mid-file", "diff --git a/x b/x\n--- a/x\n+++ b/x\n@@ -1,2 +1,2 @@\n a\n\\ No newline at end of file\n-b\n+c\n", 7},
		{"names differ", "diff --git a/x b/x\n--- a/x\n+++ b/y\n@@ -1 +1 @@\n-a\n+b\n", 2},
		{"missing +++", "diff --git a/x b/x\n--- a/x\n@@ -1 +1 @@\n-a\n+b\n", 2},
		{"git binary: no hunk", "diff --git a/x b/x\nindex 1234567..89abcde 100644\nGIT binary patch\n", 3},
		{"git binary: bad hunk kind", "diff --git a/x b/x\nindex 1234567..89abcde 100644\nGIT binary patch\ncopy 1\nHcmV?d00001\n\n", 4},
		{"git binary: bad size", "diff --git a/x b/x\nindex 1234567..89abcde 100644\nGIT binary patch\nliteral -1\nHcmV?d00001\n\n", 4},
		{"git binary: bad length char", "diff --git a/x b/x\nindex 1234567..89abcde 100644\nGIT binary patch\nliteral 0\n!cmV?d00001\n\n", 5},
		{"git binary: bad line length", "diff --git a/x b/x\nindex 1234567..89abcde 100644\nGIT binary patch\nliteral 0\nHcmV?d0000\n\n", 5},
		{"git binary: length disagrees", "diff --git a/x b/x\nindex 1234567..89abcde 100644\nGIT binary patch\nliteral 0\nCcmV?d00001\n\n", 5},
		{"git binary: bad base85", "diff --git a/x b/x\nindex 1234567..89abcde 100644\nGIT binary patch\nliteral 0\nHcmV?d0000\"\n\n", 5},
		{"git binary: base85 overflow", "diff --git a/x b/x\nindex 1234567..89abcde 100644\nGIT binary patch\nliteral 0\nH~~~~~00001\n\n", 5},
		{"git binary: wrong size", "diff --git a/x b/x\nindex 1234567..89abcde 100644\nGIT binary patch\nliteral 1\nHcmV?d00001\n\n", 4},
		{"git binary: not zlib", "diff --git a/x b/x\nindex 1234567..89abcde 100644\nGIT binary patch\nliteral 0\nH0000000000\n\n", 4},
		{"git binary: bad reverse hunk", "diff --git a/x b/x\nindex 1234567..89abcde 100644\nGIT binary patch\nliteral 0\nHcmV?d00001\n\nliteral 0\nHcmV?d0000\n\n", 8},
		{"bad base64", "diff --git a/x b/x\nnew file mode 100644\nindex 0000000..1234567\nBinary files /dev/null and b/x differ\nbase64 new 3 " + strings.Repeat("0", 64) + "\nA*B=\n", 5},
		{"base64 wrong size", binaryDiff(strings.Replace, "base64 new 6 ", "base64 new 5 "), 6},
		{"base64 wrong line count", binaryDiff(strings.Replace, "base64 new 6 ", "base64 new 7 "), 7},
		{"base64 wrong sha256", binaryDiff(strings.Replace, "base64 new 6 6d", "base64 new 6 6e"), 6},
		{"base64 corrupted", binaryDiff(strings.Replace, "AGJpbmFy", "AGJpbmFz"), 6},
		{"base64 truncated", binaryDiff(strings.Replace, "AGJpbmFy\n", ""), 6},
		{"base64 old for added file", "diff --git a/x b/x\nnew file mode 100644\nindex 0000000..e69de29\nBinary files /dev/null and b/x differ\nbase64 old 0 " + hexSHA("") + "\n", 1},
		{"bare unified diff", "--- a/x\n+++ b/x\n@@ -1 +1 @@\n-a\n+b\n", 1},
		{"not a diff", "hello\n", 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, err := Parse([]byte(tc.in))
			if err == nil {
				t.Fatalf("got %d files and no error, want an error", len(p.Files))
			}
			if got := parseErrorLine(t, err); got != tc.line {
				t.Errorf("got error on line %d (%v), want line %d", got, err, tc.line)
			}
		})
	}
}

func hexSHA(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:])
}

// binaryDiff returns a diff modifying a binary file, in Decree's base64
// format, edited by replace.
func binaryDiff(replace func(s, old, new string, n int) string, old, new string) string {
	var buf bytes.Buffer
	if err := WriteFormat(&buf, []Change{{Path: "x", Old: reg("\x00bin"), New: reg("\x00binar")}}, Base64Blocks); err != nil {
		panic(err)
	}
	s := buf.String()
	if !strings.Contains(s, old) {
		panic("binaryDiff: " + old + " not in\n" + s)
	}
	return replace(s, old, new, 1)
}

func TestParseFields(t *testing.T) {
	in := `From 1234 Mon Sep 17 00:00:00 2001
Subject: [PATCH] example

diff --git a/a.txt b/a.txt
index 5c1e9fd..8b5ac3a 100644
--- a/a.txt
+++ b/a.txt
@@ -1,2 +1,2 @@ section
-old
+new
 same
diff --git "a/t\303\251st" "b/t\303\251st"
old mode 100644
new mode 100755
diff --git a/x y b/x y
deleted file mode 100644
index e69de29..0000000
diff --git a/old name b/new name
similarity index 90%
rename from old name
rename to new name
index 1234567..89abcde 100644
--- a/old name	
+++ b/new name	
@@ -1 +1 @@
-a
+b
-- 
2.39.5
`
	p, err := Parse([]byte(in))
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Files) != 4 {
		t.Fatalf("got %d files, want 4", len(p.Files))
	}
	f := p.Files[0]
	if f.OldPath != "a.txt" || f.NewPath != "a.txt" || f.OldMode != 0o100644 || f.NewMode != 0o100644 ||
		f.OldIndex != "5c1e9fd" || f.NewIndex != "8b5ac3a" || len(f.Hunks) != 1 || f.Hunks[0].Section != "section" {
		t.Errorf("file 0: got %+v", f)
	}
	h := f.Hunks[0]
	if h.OldStart != 1 || h.OldLines != 2 || h.NewStart != 1 || h.NewLines != 2 || len(h.Lines) != 3 ||
		h.Lines[0] != (Line{'-', "old\n"}) || h.Lines[2] != (Line{' ', "same\n"}) {
		t.Errorf("hunk: got %+v", h)
	}
	if f := p.Files[1]; f.OldPath != "t\xc3\xa9st" || f.NewPath != "t\xc3\xa9st" || f.OldMode != 0o100644 || f.NewMode != 0o100755 {
		t.Errorf("file 1: got %+v", f)
	}
	if f := p.Files[2]; f.OldPath != "x y" || f.NewPath != "" || f.OldMode != 0o100644 {
		t.Errorf("file 2: got %+v", f)
	}
	if f := p.Files[3]; f.OldPath != "old name" || f.NewPath != "new name" || f.Copy || len(f.Hunks) != 1 {
		t.Errorf("file 3: got %+v", f)
	}
}

func TestParseEmpty(t *testing.T) {
	for _, in := range []string{"", "\n", "  \n"} {
		p, err := Parse([]byte(in))
		if err != nil || len(p.Files) != 0 {
			t.Errorf("Parse(%q): got %v, %v, want no files", in, p, err)
		}
	}
}
