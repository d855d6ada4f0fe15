package diff

import (
	"bytes"
	"testing"
)

func FuzzParse(f *testing.F) {
	for _, tc := range renderCases {
		var buf bytes.Buffer
		if err := WriteChange(&buf, tc.c); err == nil {
			f.Add(buf.Bytes())
		}
	}
	f.Add([]byte("diff --git a/x b/y\nrename from x\nrename to y\n"))
	f.Add([]byte("diff --git a/x b/x\n--- a/x\n+++ b/x\n@@ -1,2 +1 @@\n a\n-b\n\\ No newline at end of file\n"))
	f.Add([]byte("diff --git \"a/\\303\" b/x y\n"))
	f.Add([]byte("diff --git a/x b/x\nindex 20b5be91886d0b6f26dc98a225c0dac05fe2c86e..88f37001cec36655decf891d4244853aaa51a00a 100644\n" +
		"GIT binary patch\nliteral 3\nKcmYdfNCp4_i2%g_\n\nliteral 3\nKcmYdfNCE%>hycU@\n\n"))
	f.Add([]byte("diff --git a/x b/x\nindex 20b5be91886d0b6f26dc98a225c0dac05fe2c86e..88f37001cec36655decf891d4244853aaa51a00a 100644\n" +
		"GIT binary patch\ndelta 14\nWcmZ2ChjGCi#tj<Eo6VGeXaN8$&jqpo\n\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		p, err := Parse(data)
		if err != nil {
			return
		}
		for _, fp := range p.Files {
			for _, path := range []string{fp.OldPath, fp.NewPath} {
				if path != "" && CheckPath(path) != nil {
					t.Fatalf("Parse accepted unsafe path %q", path)
				}
			}
			// Applying must not panic, whatever the content.
			for _, cur := range []*Side{nil, reg(""), reg("a\nb\nc\n")} {
				fp.Apply(cur, false)
				fp.Apply(cur, true)
			}
		}
		ApplyTree(&memTree{files: tree{}}, p, false)
	})
}

func FuzzRoundTrip(f *testing.F) {
	f.Add([]byte("a\nb\nc\n"), []byte("a\nB\nc\n"), uint8(0), "f.txt")
	f.Add([]byte("no newline"), []byte("no newline\n"), uint8(1), "dir/with space")
	f.Add([]byte(""), []byte("\x00\x01"), uint8(2), "t\xc3\xa9st")
	f.Add([]byte("caf\xe9"), []byte(""), uint8(3), "\xff\tq\"")
	f.Add([]byte("x\n"), []byte("x\n"), uint8(4), "link")
	f.Fuzz(func(t *testing.T, a, b []byte, modes uint8, path string) {
		if CheckPath(path) != nil {
			return
		}
		pick := func(m uint8) uint32 {
			return []uint32{0o100644, 0o100755, 0o120000, 0o100600}[m&3]
		}
		var old, nw *Side
		if modes&0x10 == 0 {
			old = &Side{Mode: pick(modes), Content: a}
		}
		if modes&0x20 == 0 {
			nw = &Side{Mode: pick(modes >> 2), Content: b}
		}
		var buf bytes.Buffer
		if err := WriteChange(&buf, Change{Path: path, Old: old, New: nw}); err != nil {
			t.Fatalf("WriteChange: %v", err)
		}
		p, err := Parse(buf.Bytes())
		if err != nil {
			t.Fatalf("Parse: %v\n%s", err, buf.Bytes())
		}
		ta, tb := tree{}, tree{}
		if old != nil {
			ta[path] = old
		}
		if nw != nil {
			tb[path] = nw
		}
		for _, dir := range []struct {
			reverse  bool
			from, to tree
		}{{false, ta, tb}, {true, tb, ta}} {
			m := &memTree{files: dir.from.clone()}
			if _, err := ApplyTree(m, p, dir.reverse); err != nil {
				t.Fatalf("ApplyTree(reverse=%v): %v\n%s", dir.reverse, err, buf.Bytes())
			}
			if d := diffTrees(m.files, dir.to); d != "" {
				t.Fatalf("ApplyTree(reverse=%v):\n%s\ndiff:\n%s", dir.reverse, d, buf.Bytes())
			}
		}
	})
}
