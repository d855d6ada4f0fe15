package diff

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"testing"
)

// baseTrees are a before and after tree touching several files; the binary
// file and the text file sort last so that the files before them would
// apply.
func baseTrees() (a, b tree) {
	a = tree{
		"a.txt":        reg(numbered(20)),
		"gone.txt":     reg("bye\n"),
		"mode.sh":      reg("echo\n"),
		"z/data.bin":   reg("\x00\x01\x02old"),
		"z/zz/last.md": reg(numbered(10)),
	}
	b = tree{
		"a.txt":        reg(strings.Replace(numbered(20), "line 10\n", "ten\n", 1)),
		"added.txt":    reg("new\n"),
		"mode.sh":      execf("echo\n"),
		"z/data.bin":   reg("\x00\x01\x02new!"),
		"z/zz/last.md": reg(strings.Replace(numbered(10), "line 5\n", "five\n", 1)),
	}
	return a, b
}

func TestApplyTreeTampering(t *testing.T) {
	t.Run("git", func(t *testing.T) { testApplyTreeTampering(t, GitBinaryPatch) })
	t.Run("base64", func(t *testing.T) { testApplyTreeTampering(t, Base64Blocks) })
}

func testApplyTreeTampering(t *testing.T, format BinaryFormat) {
	a, b := baseTrees()
	var buf bytes.Buffer
	if err := WriteFormat(&buf, changes(a, b), format); err != nil {
		t.Fatal(err)
	}
	good := buf.String()
	file := func(p *Patch, name string) *FilePatch {
		for _, fp := range p.Files {
			if fp.Name() == name {
				return fp
			}
		}
		t.Fatalf("no file patch for %s", name)
		return nil
	}
	gitOnly, base64Only := ptr(GitBinaryPatch), ptr(Base64Blocks)
	for _, tc := range []struct {
		name     string
		only     *BinaryFormat // only for diffs in this format
		reverse  bool
		text     func(string) string // tampers with the diff text
		patch    func(*Patch)        // or with the parsed patch
		tree     func(tree)          // or with the tree
		parseErr bool                // Parse itself must fail
	}{
		{name: "corrupted base64 text", only: base64Only, text: func(s string) string { return strings.Replace(s, "AAECbmV3IQ==", "AAECbmV3IA==", 1) }, parseErr: true},
		{name: "wrong size text", only: base64Only, text: func(s string) string { return strings.Replace(s, "base64 new 7 ", "base64 new 8 ", 1) }, parseErr: true},
		{name: "wrong sha256 text", only: base64Only, text: func(s string) string {
			return regexp.MustCompile(`(base64 old 6 )[0-9a-f]`).ReplaceAllString(s, "${1}f")
		}, parseErr: true},
		{name: "corrupted base85 text", only: gitOnly, text: func(s string) string {
			return regexp.MustCompile(`(?m)^(literal 7\n.)(.)`).ReplaceAllStringFunc(s, func(m string) string {
				last := m[len(m)-1]
				return m[:len(m)-1] + string("01"[(last&1)])
			})
		}, parseErr: true},
		{name: "wrong literal size text", only: gitOnly, text: func(s string) string { return strings.Replace(s, "\nliteral 7\n", "\nliteral 8\n", 1) }, parseErr: true},
		{name: "truncated binary hunk text", only: gitOnly, text: func(s string) string {
			return regexp.MustCompile(`(?m)^(literal 7\n)[^\n]*\n`).ReplaceAllString(s, "${1}")
		}, parseErr: true},
		{name: "dotdot path text", text: func(s string) string { return strings.ReplaceAll(s, "z/zz/last.md", "z/../../last.md") }, parseErr: true},
		{name: "context text", text: func(s string) string { return strings.Replace(s, " line 7\n", " line seven\n", 1) }},
		{name: "corrupted base64 data", only: base64Only, patch: func(p *Patch) { file(p, "z/data.bin").New.Data[0] ^= 1 }},
		{name: "corrupted base64 data reverse", only: base64Only, reverse: true, patch: func(p *Patch) { file(p, "z/data.bin").Old.Data[0] ^= 1 }},
		{name: "wrong size", only: base64Only, patch: func(p *Patch) { file(p, "z/data.bin").New.Size++ }},
		{name: "wrong sha256", only: base64Only, patch: func(p *Patch) { file(p, "z/data.bin").Old.SHA256[3] ^= 1 }},
		{name: "corrupted literal", only: gitOnly, patch: func(p *Patch) { file(p, "z/data.bin").Forward.Data[0] ^= 1 }},
		{name: "corrupted literal reverse", only: gitOnly, reverse: true, patch: func(p *Patch) { file(p, "z/data.bin").Reverse.Data[0] ^= 1 }},
		{name: "no reverse hunk", only: gitOnly, reverse: true, patch: func(p *Patch) { file(p, "z/data.bin").Reverse = nil }},
		{name: "abbreviated index", only: gitOnly, patch: func(p *Patch) { fp := file(p, "z/data.bin"); fp.OldIndex = fp.OldIndex[:7] }},
		{name: "wrong new index", only: gitOnly, patch: func(p *Patch) {
			file(p, "z/data.bin").NewIndex = GitBlobID([]byte("\x00\x01\x02new?"))
		}},
		{name: "dotdot path", patch: func(p *Patch) { file(p, "z/zz/last.md").NewPath = "../last.md" }},
		{name: "absolute path", patch: func(p *Patch) { file(p, "z/zz/last.md").NewPath = "/etc/last.md" }},
		{name: "context changed in tree", tree: func(tr tree) {
			tr["z/zz/last.md"] = reg(strings.Replace(numbered(10), "line 6\n", "line six\n", 1))
		}, patch: func(p *Patch) { file(p, "z/zz/last.md").OldIndex = "" }},
		{name: "index mismatch", tree: func(tr tree) { tr["z/zz/last.md"] = reg(numbered(10) + "extra\n") }},
		{name: "binary content changed in tree", tree: func(tr tree) { tr["z/data.bin"] = reg("\x00\x01\x02OLD") }},
		{name: "added file exists", tree: func(tr tree) { tr["added.txt"] = reg("new\n") }},
		{name: "deleted file missing", tree: func(tr tree) { delete(tr, "gone.txt") }},
		{name: "mode differs", tree: func(tr tree) { tr["mode.sh"] = execf("echo\n") }},
	} {
		if tc.only != nil && *tc.only != format {
			continue
		}
		t.Run(tc.name, func(t *testing.T) {
			text := good
			if tc.text != nil {
				text = tc.text(good)
				if text == good {
					t.Fatal("tampering changed nothing")
				}
			}
			p, err := Parse([]byte(text))
			if tc.parseErr {
				if err == nil {
					t.Fatal("Parse: got no error, want one")
				}
				return
			}
			if err != nil {
				t.Fatalf("Parse: %v", err)
			}
			if tc.patch != nil {
				tc.patch(p)
			}
			from := a.clone()
			if tc.reverse {
				from = b.clone()
			}
			if tc.tree != nil {
				tc.tree(from)
			}
			m := &memTree{files: from.clone()}
			changed, err := ApplyTree(m, p, tc.reverse)
			if err == nil {
				t.Fatalf("ApplyTree: got no error (changed %q), want one", changed)
			}
			t.Logf("error: %v", err)
			if m.writes != 0 {
				t.Errorf("ApplyTree wrote or removed %q, want nothing", m.written)
			}
			if d := diffTrees(m.files, from); d != "" {
				t.Errorf("tree changed:\n%s", d)
			}
		})
	}
	// The untampered diff applies.
	p, err := Parse([]byte(good))
	if err != nil {
		t.Fatal(err)
	}
	checkApply(t, p, a, b)
}

func ptr[T any](v T) *T { return &v }

func TestApplyTreeRollback(t *testing.T) {
	a, b := baseTrees()
	var buf bytes.Buffer
	if err := Write(&buf, changes(a, b)); err != nil {
		t.Fatal(err)
	}
	p, err := Parse(buf.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	m := &memTree{files: a.clone(), failOn: "z/zz/last.md"} // written last
	if _, err := ApplyTree(m, p, false); err == nil {
		t.Fatal("got no error, want the injected one")
	}
	if d := diffTrees(m.files, a); d != "" {
		t.Errorf("tree not restored:\n%s", d)
	}
}

func TestApplyTreeChanged(t *testing.T) {
	a, b := baseTrees()
	var buf bytes.Buffer
	if err := Write(&buf, changes(a, b)); err != nil {
		t.Fatal(err)
	}
	p, err := Parse(buf.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	m := &memTree{files: a.clone()}
	changed, err := ApplyTree(m, p, false)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"a.txt", "added.txt", "gone.txt", "mode.sh", "z/data.bin", "z/zz/last.md"}
	if !equalStrings(changed, want) {
		t.Errorf("got changed %q, want %q", changed, want)
	}
	// Removals come before writes.
	if m.written[0] != "gone.txt" {
		t.Errorf("got operations %q, want the removal first", m.written)
	}
}

func mustParse(t *testing.T, s string) *Patch {
	t.Helper()
	p, err := Parse([]byte(s))
	if err != nil {
		t.Fatalf("Parse: %v", err)
	}
	return p
}

func TestApplyOffsetNoFuzz(t *testing.T) {
	// A hunk is found where its context moved to, but only exactly.
	p := mustParse(t, `diff --git a/f b/f
--- a/f
+++ b/f
@@ -5,7 +5,7 @@
 line 5
 line 6
 line 7
-line 8
+eight
 line 9
 line 10
 line 11
`)
	fp := p.Files[0]
	shifted := "extra 1\nextra 2\n" + numbered(20)
	got, err := fp.Apply(reg(shifted), false)
	if err != nil {
		t.Fatalf("Apply with offset: %v", err)
	}
	if want := strings.Replace(shifted, "line 8\n", "eight\n", 1); string(got.Content) != want {
		t.Errorf("got %q, want %q", got.Content, want)
	}
	back, err := fp.Apply(got, true)
	if err != nil || string(back.Content) != shifted {
		t.Errorf("reverse: got %q, %v, want %q", back.Content, err, shifted)
	}
	fuzzy := strings.Replace(numbered(20), "line 11\n", "line eleven\n", 1)
	if _, err := fp.Apply(reg(fuzzy), false); err == nil {
		t.Error("Apply with a changed context line: got no error, want one")
	}
	var ae *ApplyError
	if _, err := fp.Apply(nil, false); !errors.As(err, &ae) || ae.Path != "f" {
		t.Errorf("Apply to a missing file: got %v, want an *ApplyError for f", err)
	}
}

func TestApplyModes(t *testing.T) {
	// git writes normalized modes; a file with other permission bits
	// matches and keeps them when the patch does not change the mode.
	p := mustParse(t, `diff --git a/f b/f
index 7898192..6178079 100644
--- a/f
+++ b/f
@@ -1 +1 @@
-a
+b
`)
	got, err := p.Files[0].Apply(&Side{Mode: 0o100664, Content: []byte("a\n")}, false)
	if err != nil {
		t.Fatal(err)
	}
	if got.Mode != 0o100664 || string(got.Content) != "b\n" {
		t.Errorf("got mode %06o content %q, want 100664 \"b\\n\"", got.Mode, got.Content)
	}
	if _, err := p.Files[0].Apply(&Side{Mode: 0o100755, Content: []byte("a\n")}, false); err == nil {
		t.Error("Apply to an executable file: got no error, want a mode mismatch")
	}
	if _, err := p.Files[0].Apply(link("a\n"), false); err == nil {
		t.Error("Apply to a symlink: got no error, want a mode mismatch")
	}
}

func TestApplyPlainGitBinary(t *testing.T) {
	// git's own binary marker carries no content: it parses, but cannot
	// be applied.
	p := mustParse(t, `diff --git a/b b/b
index 87ae6b6..22f6b3b 100644
Binary files a/b and b/b differ
`)
	fp := p.Files[0]
	if !fp.Binary || fp.Old != nil || fp.New != nil {
		t.Fatalf("got %+v, want a binary patch without blocks", fp)
	}
	if _, err := fp.Apply(reg("bin\x00ary"), false); err == nil {
		t.Error("got no error, want one")
	}
}

func TestApplyTypeChangeOrder(t *testing.T) {
	// A file replaced by a symlink is a deletion and an addition of the
	// same path; in reverse they must be undone in the opposite order.
	a := tree{"p": reg("text\n"), "q": link("t")}
	b := tree{"p": link("elsewhere"), "q": reg("")}
	var buf bytes.Buffer
	if err := Write(&buf, changes(a, b)); err != nil {
		t.Fatal(err)
	}
	checkApply(t, mustParse(t, buf.String()), a, b)
}

func TestApplyCopyAndRename(t *testing.T) {
	p := mustParse(t, `diff --git a/src b/copy
similarity index 90%
copy from src
copy to copy
index 0000001..0000002 100644
--- a/src
+++ b/copy
@@ -1,2 +1,2 @@
 one
-two
+2
diff --git a/old b/new
similarity index 100%
rename from old
rename to new
`)
	for _, fp := range p.Files {
		fp.OldIndex, fp.NewIndex = "", "" // made-up ids
	}
	a := tree{"src": reg("one\ntwo\n"), "old": execf("x\n")}
	b := tree{"src": reg("one\ntwo\n"), "copy": reg("one\n2\n"), "new": execf("x\n")}
	checkApply(t, p, a, b)
	// Undoing a copy checks that the copy still derives from its source.
	m := &memTree{files: b.clone()}
	m.files["src"] = reg("one\nTWO\n")
	if _, err := ApplyTree(m, p, true); err == nil || m.writes != 0 {
		t.Errorf("reverse copy with a changed source: got %v and %d writes, want an error and none", err, m.writes)
	}
}

// Index lines from a SHA-256 repository carry SHA-256 blob ids, full or
// abbreviated: they are checked too, not skipped.
func TestApplySHA256Index(t *testing.T) {
	old, nw := []byte("a\n"), []byte("b\n")
	id256 := func(b []byte) string {
		h := sha256.New()
		fmt.Fprintf(h, "blob %d\x00", len(b))
		h.Write(b)
		return hex.EncodeToString(h.Sum(nil))
	}
	for _, n := range []int{7, 12, 64} {
		good := fmt.Sprintf("diff --git a/f b/f\nindex %s..%s 100644\n--- a/f\n+++ b/f\n@@ -1 +1 @@\n-a\n+b\n", id256(old)[:n], id256(nw)[:n])
		got, err := mustParse(t, good).Files[0].Apply(reg(string(old)), false)
		if err != nil || string(got.Content) != "b\n" {
			t.Errorf("%d-hex SHA-256 ids: got %v, %v", n, got, err)
		}
		bad := strings.Replace(good, id256(old)[:n], strings.Repeat("1", n), 1)
		if _, err := mustParse(t, bad).Files[0].Apply(reg(string(old)), false); err == nil {
			t.Errorf("%d-hex wrong id: got no error", n)
		}
	}
}
