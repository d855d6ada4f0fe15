package diff_test

import (
	"bytes"
	"fmt"
	"os"

	"github.com/seed1cedbf7c/ckpt/internal/diff"
)

func ExampleWriteChange() {
	err := diff.WriteChange(os.Stdout, diff.Change{
		Path: "greeting.txt",
		Old:  &diff.Side{Mode: 0o100644, Content: []byte("hello\nworld\n")},
		New:  &diff.Side{Mode: 0o100755, Content: []byte("hello\nthere")},
	})
	if err != nil {
		fmt.Println(err)
	}
	// Output:
	// diff --git a/greeting.txt b/greeting.txt
	// old mode 100644
	// new mode 100755
	// index 94954ab..4e69a76
	// --- a/greeting.txt
	// +++ b/greeting.txt
	// @@ -1,2 +1,2 @@
	//  hello
	// -world
	// +there
	// \ No newline at end of file
}

func ExampleWriteChange_binary() {
	err := diff.WriteChange(os.Stdout, diff.Change{
		Path: "logo.bin",
		New:  &diff.Side{Mode: 0o100644, Content: []byte("\x00\x01\x02")},
	})
	if err != nil {
		fmt.Println(err)
	}
	// Output:
	// diff --git a/logo.bin b/logo.bin
	// new file mode 100644
	// index 0000000000000000000000000000000000000000..8352675d67aed6625ece79af41c27fdb4ee2e867
	// GIT binary patch
	// literal 3
	// Oc${KjWC8>L0RR602LJ>B
	//
	// literal 0
	// Kc$@(M0RR6000031
}

func ExampleWriteFormat() {
	// Decree's run records carry binary content as base64 blocks.
	err := diff.WriteFormat(os.Stdout, []diff.Change{{
		Path: "logo.bin",
		New:  &diff.Side{Mode: 0o100644, Content: []byte("\x00\x01\x02")},
	}}, diff.Base64Blocks)
	if err != nil {
		fmt.Println(err)
	}
	// Output:
	// diff --git a/logo.bin b/logo.bin
	// new file mode 100644
	// index 0000000..8352675
	// Binary files /dev/null and b/logo.bin differ
	// base64 new 3 ae4b3280e56e2faf83f414a6e3dabe9d5fbe18976544c05fed121accb85b53fc
	// AAEC
}

// mapTree is a diff.Tree in memory.
type mapTree map[string]*diff.Side

func (m mapTree) Read(p string) (*diff.Side, error)  { return m[p], nil }
func (m mapTree) Write(p string, s *diff.Side) error { m[p] = s; return nil }
func (m mapTree) Remove(p string) error              { delete(m, p); return nil }

func ExampleApplyTree() {
	var d bytes.Buffer
	diff.Write(&d, []diff.Change{
		{Path: "a.txt", Old: &diff.Side{Mode: 0o100644, Content: []byte("one\n")}, New: &diff.Side{Mode: 0o100644, Content: []byte("two\n")}},
		{Path: "b.bin", New: &diff.Side{Mode: 0o100644, Content: []byte("\x00")}},
	})
	p, err := diff.Parse(d.Bytes())
	if err != nil {
		fmt.Println(err)
		return
	}

	// Undo the change on the tree it produced.
	t := mapTree{
		"a.txt": {Mode: 0o100644, Content: []byte("two\n")},
		"b.bin": {Mode: 0o100644, Content: []byte("\x00")},
	}
	changed, err := diff.ApplyTree(t, p, true)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(changed)
	fmt.Printf("%q %v\n", t["a.txt"].Content, t["b.bin"] == nil)
	// Output:
	// [a.txt b.bin]
	// "one\n" true
}

func ExampleWriteStat() {
	changes := []diff.Change{
		{Path: "main.go", Old: &diff.Side{Mode: 0o100644, Content: []byte("a\nb\n")}, New: &diff.Side{Mode: 0o100644, Content: []byte("a\nc\nd\n")}},
		{Path: "logo.png", New: &diff.Side{Mode: 0o100644, Content: []byte("\x89PNG\x00")}},
	}
	var stats []diff.FileStat
	for _, c := range changes {
		stats = append(stats, diff.Stat(c))
	}
	diff.WriteStat(os.Stdout, stats)
	// Output:
	//  main.go  |   3 ++-
	//  logo.png | Bin 0 -> 5 bytes
	//  2 files changed, 2 insertions(+), 1 deletion(-)
}
