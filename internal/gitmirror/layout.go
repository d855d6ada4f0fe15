package gitmirror

import (
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
	"github.com/seed1cedbf7c/ckpt/internal/fsroot"
)

// ErrNoRepository means the workspace is not the top of a git work tree.
var ErrNoRepository = errors.New("not a git repository")

// ErrUnsupported is wrapped by the error for a repository this package
// must not write: SHA-256 object names, reftable refs, a newer format, or
// a config git itself cannot read.
var ErrUnsupported = errors.New("unsupported git repository")

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
	if data, err := readRegular(filepath.Join(l.GitDir, "commondir"), maxRefSize); err == nil {
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

// Bounds on what ckpt reads from a git directory. Metadata is read only
// if it is a regular file (never a FIFO or a device someone planted),
// and never past these sizes.
const (
	maxRefSize        = 64 << 10  // HEAD, a loose ref, commondir, a .git file
	maxConfigSize     = 16 << 20  // config
	maxPackedRefsSize = 512 << 20 // packed-refs
)

// readRegular reads git metadata: a regular file, at most limit bytes.
func readRegular(path string, limit int64) ([]byte, error) { return fsroot.ReadRegular(path, limit) }

// readGitFile reads a .git file ("gitdir: PATH", relative to its directory).
func readGitFile(path string) (string, error) {
	data, err := readRegular(path, maxRefSize)
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
// package cannot write: SHA-256 object names (or a SHA-256 compatibility
// map), the reftable ref backend, or a format version git itself would not
// read. It reads the config by git's own syntax rules, and refuses a
// config git would refuse rather than guess what it says.
func checkFormat(common string) error {
	path := filepath.Join(common, "config")
	data, err := readRegular(path, maxConfigSize)
	if errors.Is(err, os.ErrNotExist) {
		return nil // git works without a config; so do we
	}
	if err != nil {
		return fmt.Errorf("%w: git repository %s: %w", ErrUnsupported, common, err)
	}
	vars, err := parseConfig(string(data))
	if err != nil {
		return fmt.Errorf("%w: git repository %s: %s: %w (git cannot read it either; fix the file or use the sqlite backend)", ErrUnsupported, common, path, err)
	}
	// The last setting wins, as in git.
	got := map[string]configVar{}
	for _, v := range vars {
		switch {
		case v.section == "core" && v.name == "repositoryformatversion",
			v.section == "extensions":
			got[v.section+"."+v.name] = v
		}
	}
	if v, ok := got["core.repositoryformatversion"]; ok && (v.bare || v.value != "0" && v.value != "1") {
		return fmt.Errorf("%w: git repository %s has repository format version %q; the git backend writes versions 0 and 1 only (use the sqlite backend)", ErrUnsupported, common, v.value)
	}
	if v, ok := got["extensions.objectformat"]; ok && (v.bare || v.value != "sha1") {
		return fmt.Errorf("%w: git repository %s uses %q object names (extensions.objectformat, %s line %d); the git backend writes SHA-1 repositories only (use the sqlite backend)", ErrUnsupported, common, v.value, path, v.line)
	}
	if v, ok := got["extensions.compatobjectformat"]; ok {
		return fmt.Errorf("%w: git repository %s keeps a %q compatibility map (extensions.compatobjectformat, %s line %d); the git backend cannot maintain it (use the sqlite backend)", ErrUnsupported, common, v.value, path, v.line)
	}
	if v, ok := got["extensions.refstorage"]; ok && (v.bare || v.value != "files") {
		return fmt.Errorf("%w: git repository %s keeps refs in %q (extensions.refstorage, %s line %d); the git backend writes the files ref format only (use the sqlite backend)", ErrUnsupported, common, v.value, path, v.line)
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
