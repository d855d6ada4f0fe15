package gitmirror

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/seed1cedbf7c/ckpt/internal/object"
)

// MetaGitlinks is the checkpoint metadata key under which the git backend
// records the nested repositories (submodules) of the workspace and the
// commit each had checked out when the checkpoint was taken. Their content
// is never captured; the exported commit records each as a gitlink (mode
// 160000), as git does.
const MetaGitlinks = "gitlinks"

// Gitlink is a nested repository at Path (slash-separated, relative) with
// Commit checked out.
type Gitlink struct {
	Path   string
	Commit plumbing.Hash
}

// FormatGitlinks encodes gitlinks for [MetaGitlinks]: one line per link,
// "<40-hex commit> <Go-quoted path>", sorted by path.
func FormatGitlinks(links []Gitlink) string {
	ls := append([]Gitlink(nil), links...)
	sort.Slice(ls, func(i, j int) bool { return ls[i].Path < ls[j].Path })
	var b strings.Builder
	for _, l := range ls {
		b.WriteString(l.Commit.String())
		b.WriteByte(' ')
		b.WriteString(strconv.Quote(l.Path))
		b.WriteByte('\n')
	}
	return b.String()
}

// ParseGitlinks decodes [FormatGitlinks] ("" is none).
func ParseGitlinks(s string) ([]Gitlink, error) {
	var out []Gitlink
	for _, line := range strings.Split(s, "\n") {
		if line == "" {
			continue
		}
		hex, q, ok := strings.Cut(line, " ")
		if !ok || !plumbing.IsHash(hex) {
			return nil, fmt.Errorf("malformed gitlink %q", line)
		}
		p, err := strconv.Unquote(q)
		if err != nil || !object.ValidPath(p) {
			return nil, fmt.Errorf("malformed gitlink path %s", q)
		}
		out = append(out, Gitlink{Path: p, Commit: plumbing.NewHash(hex)})
	}
	return out, nil
}

// HeadCommit returns the commit checked out in the nested repository whose
// work tree is dir (dir/.git a directory or a gitdir file, as for a
// submodule). It fails for a repository without commits.
func HeadCommit(dir string) (plumbing.Hash, error) {
	gitDir := filepath.Join(dir, ".git")
	if fi, err := os.Lstat(gitDir); err != nil {
		return plumbing.ZeroHash, err
	} else if fi.Mode().IsRegular() {
		if gitDir, err = readGitFile(gitDir); err != nil {
			return plumbing.ZeroHash, err
		}
	}
	common := gitDir
	if data, err := readRegular(filepath.Join(gitDir, "commondir"), maxRefSize); err == nil {
		cd := strings.TrimSpace(string(data))
		if !filepath.IsAbs(cd) {
			cd = filepath.Join(gitDir, cd)
		}
		common = cd
	}
	name := "HEAD"
	for i := 0; i < 5; i++ {
		// HEAD is per worktree; other refs are in the common directory.
		base := common
		if name == "HEAD" {
			base = gitDir
		}
		data, err := readRegular(filepath.Join(base, filepath.FromSlash(name)), maxRefSize)
		if err != nil && name != "HEAD" {
			rr := &refReader{common: common}
			h, found, err := rr.read(name)
			if err != nil {
				return h, err
			}
			if !found {
				return h, fmt.Errorf("nested repository %s has no commit checked out (%s does not exist yet)", dir, name)
			}
			return h, nil
		}
		if err != nil {
			return plumbing.ZeroHash, err
		}
		s := strings.TrimSpace(string(data))
		if target, ok := strings.CutPrefix(s, "ref:"); ok {
			name = strings.TrimSpace(target)
			if !validRefName(name) {
				return plumbing.ZeroHash, fmt.Errorf("nested repository %s: HEAD names %q, not a valid ref", dir, name)
			}
			continue
		}
		if !plumbing.IsHash(s) {
			return plumbing.ZeroHash, fmt.Errorf("nested repository %s: %s holds %q", dir, name, s)
		}
		return plumbing.NewHash(s), nil
	}
	return plumbing.ZeroHash, fmt.Errorf("nested repository %s: symbolic refs nest too deep", dir)
}
