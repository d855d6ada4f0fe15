package cli

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
)

// guardError is a refusal with a way on.
type guardError struct{ msg, hint string }

func (e *guardError) Error() string { return e.msg }
func (e *guardError) Hint() string  { return e.hint }

// maxFirstSaveEntries bounds the entries a first save of a workspace
// takes without --force ($CKPT_FIRST_SAVE_MAX_ENTRIES overrides it, for
// tests).
const maxFirstSaveEntries = 1_000_000

// checkSavePlace refuses a whole-workspace save of a home directory or
// "/", and the first save of a tree of more than maxFirstSaveEntries
// entries: most likely ckpt started in the wrong directory, and the
// save would copy everything below.
func checkSavePlace(ws string, first bool) error {
	what := ""
	switch {
	case ws == string(filepath.Separator):
		what = "the root directory"
	case ws == homeDir():
		what = "your home directory"
	}
	if what != "" {
		return &guardError{
			msg:  fmt.Sprintf("save: the workspace %s is %s: a checkpoint of it would copy everything below (caches, other projects)", ws, what),
			hint: "run ckpt in a project's directory (or -C DIR), or ckpt save --force to checkpoint it anyway",
		}
	}
	if !first {
		return nil
	}
	limit := maxFirstSaveEntries
	if v, err := strconv.Atoi(os.Getenv("CKPT_FIRST_SAVE_MAX_ENTRIES")); err == nil && v > 0 {
		limit = v
	}
	if n := countEntries(ws, limit); n >= limit {
		return &guardError{
			msg:  fmt.Sprintf("save: the workspace %s holds %d entries or more: too many for a first checkpoint by mistake", ws, limit),
			hint: "run ckpt in a project's directory (or -C DIR), or ckpt save --force to checkpoint it anyway",
		}
	}
	return nil
}

// homeDir is the user's home directory, symlinks resolved ("" if none).
func homeDir() string {
	h, err := os.UserHomeDir()
	if err != nil || h == "" {
		return ""
	}
	if real, err := filepath.EvalSymlinks(h); err == nil {
		return real
	}
	return h
}

// errEnough stops countEntries' walk.
var errEnough = errors.New("enough")

// countEntries counts the files and directories below dir, stopping at
// limit; unreadable directories are skipped.
func countEntries(dir string, limit int) int {
	n := 0
	filepath.WalkDir(dir, func(_ string, _ fs.DirEntry, err error) error {
		if err != nil {
			return nil
		}
		if n++; n >= limit {
			return errEnough
		}
		return nil
	})
	return n
}
