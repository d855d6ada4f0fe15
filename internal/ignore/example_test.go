package ignore_test

import (
	"fmt"

	"github.com/seed1cedbf7c/ckpt/internal/ignore"
)

func Example() {
	exclude := ignore.ParseList("", ".git/info/exclude", []byte("*.local\n"))
	gitignore := ignore.ParseList("", ".gitignore", []byte("node_modules/\n.env\n*.log\n"))
	ckptignore := ignore.ParseList("", ".ckptignore", []byte("# checkpoints keep secrets\n!.env\n"))

	root := ignore.New(exclude).Child("", gitignore, ckptignore, nil)
	srcIgnore := ignore.ParseList("src", "src/.gitignore", []byte("!keep.log\n/gen/\n"))
	src := root.Child("src", srcIgnore, nil, nil)

	fmt.Println(root.Ignored("node_modules", true))
	fmt.Println(root.Ignored(".env", false))
	fmt.Println(root.Ignored("notes.local", false))
	fmt.Println(src.Ignored("src/debug.log", false))
	fmt.Println(src.Ignored("src/keep.log", false))
	fmt.Println(src.Ignored("src/gen", true))
	// Output:
	// true
	// false
	// true
	// true
	// false
	// true
}

func ExampleMatcher_Explain() {
	gitignore := ignore.ParseList("", ".gitignore", []byte("*.log\n!keep.log\n"))
	m := ignore.New(nil).Child("", gitignore, nil, nil)
	for _, path := range []string{"a.log", "keep.log", "a.txt"} {
		if source, line, pattern, ok := m.Explain(path, false); ok {
			fmt.Printf("%s:%d:%s\t%s\n", source, line, pattern, path)
		} else {
			fmt.Printf("::\t%s\n", path)
		}
	}
	// Output:
	// .gitignore:1:*.log	a.log
	// .gitignore:2:!keep.log	keep.log
	// ::	a.txt
}
