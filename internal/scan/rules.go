package scan

import (
	"path"
	"strings"

	"github.com/seed1cedbf7c/ckpt/internal/ignore"
)

// Rules answers whether a scan would leave a path out by the ignore rules
// of a tree that is not (yet) on disk: a restore's or a revert's result,
// whose .gitignore, .ckptignore and .decreeignore files read returns
// (false: absent, or not a regular file). .git/info/exclude is the
// workspace's. A path below an ignored directory is ignored, as a scan
// never enters one.
type Rules struct {
	read    func(p string) ([]byte, bool)
	exclude *ignore.List
	dirs    map[string]*ignore.Matcher // the matcher for each directory's entries
}

// NewRules returns the rules of the workspace at root, its ignore files
// read through read.
func NewRules(root string, read func(p string) ([]byte, bool)) *Rules {
	return &Rules{read: read, exclude: loadInfoExclude(root), dirs: map[string]*ignore.Matcher{}}
}

// matcher returns the matcher for the entries of directory dir ("" the
// root), as a scan builds it on entering dir.
func (r *Rules) matcher(dir string) *ignore.Matcher {
	if m, ok := r.dirs[dir]; ok {
		return m
	}
	parent := ignore.New(r.exclude)
	if dir != "" {
		parent = r.matcher(parentDir(dir))
	}
	var lists [3]*ignore.List
	for i, name := range []string{".gitignore", ".ckptignore", ".decreeignore"} {
		p := name
		if dir != "" {
			p = dir + "/" + name
		}
		if data, ok := r.read(p); ok {
			lists[i] = ignore.ParseList(dir, p, data)
		}
	}
	m := parent.Child(dir, lists[0], lists[1], lists[2])
	r.dirs[dir] = m
	return m
}

// Ignored reports whether a scan would leave out the file (or, isDir, the
// directory) at p: p, or a directory above it, is ignored.
func (r *Rules) Ignored(p string, isDir bool) bool {
	dir := ""
	for _, c := range strings.Split(path.Dir(p), "/") {
		if c == "." {
			break
		}
		if r.matcher(dir).IgnoredIn(dir, c, true) {
			return true
		}
		if dir == "" {
			dir = c
		} else {
			dir += "/" + c
		}
	}
	return r.matcher(dir).IgnoredIn(dir, path.Base(p), isDir)
}

func parentDir(dir string) string {
	if i := strings.LastIndexByte(dir, '/'); i >= 0 {
		return dir[:i]
	}
	return ""
}
