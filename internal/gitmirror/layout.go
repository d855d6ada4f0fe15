package gitmirror

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/go-git/go-billy/v5/osfs"
	"github.com/go-git/go-git/v5/config"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/cache"
	"github.com/go-git/go-git/v5/storage/filesystem"
)

// ErrNoRepository means the workspace is not the top of a git work tree.
var ErrNoRepository = errors.New("not a git repository")

// Layout locates a work tree's git directories.
type Layout struct {
	// WorkTree is the top of the work tree (the workspace).
	WorkTree string
	// GitDir is the work tree's own git directory: WorkTree/.git, or for a
	// linked worktree the directory its .git file names
	// (<common>/worktrees/<name>). Per-worktree state lives here: HEAD, the
	// index, and ckpt's store.
	GitDir string
	// CommonDir holds what all worktrees share: objects, refs, config. It
	// equals GitDir except in a linked worktree.
	CommonDir string
}

// Linked reports whether the work tree is a linked worktree (git worktree
// add), whose .git is a file.
func (l Layout) Linked() bool { return l.GitDir != l.CommonDir }

// Find returns the layout of the work tree whose top is dir: dir/.git is a
// directory, or a file "gitdir: PATH" (a linked worktree or a submodule).
// It returns an error wrapping [ErrNoRepository] when dir/.git does not
// exist, and an error naming the enclosing repository when dir lies below
// the top of another work tree (the git backend keeps one store per work
// tree, at its top).
func Find(dir string) (Layout, error) {
	l := Layout{WorkTree: dir}
	dotgit := filepath.Join(dir, ".git")
	fi, err := os.Lstat(dotgit)
	switch {
	case errors.Is(err, os.ErrNotExist):
		for d := filepath.Dir(dir); ; d = filepath.Dir(d) {
			if _, err := os.Lstat(filepath.Join(d, ".git")); err == nil {
				return l, fmt.Errorf("%s lies inside the git work tree %s: the git backend needs the top of a work tree (run ckpt -C %s)", dir, d, d)
			}
			if d == filepath.Dir(d) {
				break
			}
		}
		return l, fmt.Errorf("%s: %w", dir, ErrNoRepository)
	case err != nil:
		return l, fmt.Errorf("find git directory of %s: %w", dir, err)
	case fi.IsDir():
		l.GitDir = dotgit
	case fi.Mode().IsRegular():
		gd, err := readGitFile(dotgit)
		if err != nil {
			return l, err
		}
		l.GitDir = gd
	default:
		return l, fmt.Errorf("%s is neither a directory nor a gitdir file", dotgit)
	}
	l.CommonDir = l.GitDir
	if data, err := os.ReadFile(filepath.Join(l.GitDir, "commondir")); err == nil {
		cd := strings.TrimSpace(string(data))
		if !filepath.IsAbs(cd) {
			cd = filepath.Join(l.GitDir, cd)
		}
		l.CommonDir = filepath.Clean(cd)
	}
	if _, err := os.Stat(filepath.Join(l.CommonDir, "objects")); err != nil {
		return l, fmt.Errorf("%s is not a usable git directory (no objects/): %w", l.CommonDir, err)
	}
	if err := checkFormat(l.CommonDir); err != nil {
		return l, err
	}
	return l, nil
}

// readGitFile reads a .git file ("gitdir: PATH", relative to its directory).
func readGitFile(path string) (string, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return "", fmt.Errorf("read %s: %w", path, err)
	}
	line, _, _ := strings.Cut(string(data), "\n")
	gd, ok := strings.CutPrefix(strings.TrimSpace(line), "gitdir:")
	if !ok {
		return "", fmt.Errorf("%s does not start with \"gitdir:\"", path)
	}
	gd = strings.TrimSpace(gd)
	if !filepath.IsAbs(gd) {
		gd = filepath.Join(filepath.Dir(path), gd)
	}
	return filepath.Clean(gd), nil
}

// checkFormat refuses repositories whose object or ref storage this
// package cannot write: SHA-256 object names, or the reftable ref backend.
func checkFormat(common string) error {
	data, err := os.ReadFile(filepath.Join(common, "config"))
	if err != nil {
		return nil // git works without a config; so do we
	}
	section := ""
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if strings.HasPrefix(line, "[") {
			section = strings.ToLower(strings.Trim(line, "[] \t"))
			continue
		}
		if section != "extensions" {
			continue
		}
		k, v, _ := strings.Cut(line, "=")
		k, v = strings.ToLower(strings.TrimSpace(k)), strings.ToLower(strings.TrimSpace(v))
		switch {
		case k == "objectformat" && v != "sha1":
			return fmt.Errorf("git repository %s uses %s object names; the git backend writes SHA-1 repositories only (use the sqlite backend)", common, v)
		case k == "refstorage" && v != "files":
			return fmt.Errorf("git repository %s keeps refs in %s; the git backend writes the files ref format only (use the sqlite backend)", common, v)
		}
	}
	return nil
}

// Init creates an empty repository at dir with its first branch named
// branch, as git init -b BRANCH does: dir/.git with objects/, refs/, a
// config for a non-bare repository and HEAD pointing at the unborn branch.
// It is what go-git's PlainInit does, with go-git's storage directly (the
// go-git package itself would link in every network transport).
func Init(dir, branch string) (Layout, error) {
	fail := func(err error) (Layout, error) {
		return Layout{}, fmt.Errorf("initialise a git repository in %s: %w", dir, err)
	}
	dotgit := filepath.Join(dir, ".git")
	if _, err := os.Lstat(dotgit); err == nil {
		return fail(errors.New(".git already exists"))
	}
	st := filesystem.NewStorage(osfs.New(dotgit, osfs.WithBoundOS()), cache.NewObjectLRUDefault())
	defer st.Close()
	if err := st.Init(); err != nil {
		return fail(err)
	}
	head := plumbing.NewSymbolicReference(plumbing.HEAD, plumbing.NewBranchReferenceName(branch))
	if err := st.SetReference(head); err != nil {
		return fail(err)
	}
	cfg := config.NewConfig()
	cfg.Core.IsBare = false
	// As git init writes them (each is also git's default when absent).
	core := cfg.Raw.Section("core")
	core.SetOption("repositoryformatversion", "0")
	core.SetOption("filemode", "true")
	core.SetOption("logallrefupdates", "true")
	if err := st.SetConfig(cfg); err != nil {
		return fail(err)
	}
	return Find(dir)
}
