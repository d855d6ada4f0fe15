// Package restore makes a workspace equal to a target tree.
//
// A restore is planned from two trees, the workspace's current one (from a
// scan) and the target, so it touches only what differs. It is applied in
// phases, all through [fsroot.Root] so nothing outside the workspace is ever
// written and no symlink is ever followed, not even one inside it (a
// directory swapped for a symlink while the restore runs makes the restore
// stop, never write through the link):
//
//  1. check: a path the plan would write that holds something the scan did
//     not capture (an ignored or skipped file) is kept, and reported;
//  2. stage: every new file and symlink is written into a staging directory
//     inside the workspace, streamed from the store with its hash verified;
//     a corrupt object fails here, before the workspace has changed;
//  3. sync the staged data to disk;
//  4. delete what the target does not have, prune directories that became
//     empty, create missing directories;
//  5. rename each staged entry into place (atomic per path) and sync;
//  6. verify: every written path is read back and hashed, every deleted path
//     checked absent; a mismatch is an [*IntegrityError].
//
// The caller records a journal before phase 4 so a crash can be finished on
// the next run (see the root package's Recover).
package restore

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"

	"github.com/seed1cedbf7c/ckpt/internal/failpoint"
	"github.com/seed1cedbf7c/ckpt/internal/fsroot"
	"github.com/seed1cedbf7c/ckpt/internal/object"
	"github.com/seed1cedbf7c/ckpt/internal/tree"
)

// Op is what an action does to a path.
type Op string

// Action kinds.
const (
	Create Op = "create" // the path is absent now
	Update Op = "update" // replace content, mode or type
	Delete Op = "delete"
	Keep   Op = "keep" // would be written or deleted, but holds uncaptured data
)

// Action is one planned change.
type Action struct {
	Path   string
	Op     Op
	Old    *object.Entry // current (nil: absent)
	New    *object.Entry // target (nil: absent)
	Reason string        // for Keep

	clearEmpty bool // an untracked tree of empty directories occupies Path
}

// Plan is the set of changes that make the current tree equal the target.
type Plan struct {
	Actions []Action // sorted by path
	// prune lists directories that contain deletions, deepest first:
	// candidates to remove once empty. One the target still has (only
	// directories of changed paths are known to targetDirs) is never
	// empty after the restore, so removing it fails and it stays.
	prune []string
	// targetDirs is the set of directories the target has (below changes).
	targetDirs map[string]bool
}

// Empty reports whether the plan changes nothing.
func (p *Plan) Empty() bool {
	for _, a := range p.Actions {
		if a.Op != Keep {
			return false
		}
	}
	return len(p.prune) == 0
}

// PruneAlso adds the directories q prunes to those p prunes, except where
// q's target has a file or symlink. Recovery uses it: an interrupted
// restore's deletions are done, but the directories they emptied may still
// be there (a directory that is not empty stays).
func (p *Plan) PruneAlso(q *Plan) {
	seen := map[string]bool{} // p's candidates
	for _, d := range p.prune {
		seen[d] = true
	}
	files := map[string]bool{} // what q's target has at a changed path
	for _, a := range q.Actions {
		if a.New != nil {
			files[a.Path] = true
		}
	}
	below := func(d string) bool { // d lies below a path q's target has as a file
		for x := path.Dir(d); x != "."; x = path.Dir(x) {
			if files[x] {
				return true
			}
		}
		return false
	}
	for _, d := range q.prune {
		if !seen[d] && !files[d] && !p.targetDirs[d] && !below(d) {
			seen[d] = true
			p.prune = append(p.prune, d)
		}
	}
	sortPrune(p.prune)
}

// sortPrune orders directories deepest first.
func sortPrune(dirs []string) {
	sort.Slice(dirs, func(i, j int) bool {
		di, dj := strings.Count(dirs[i], "/"), strings.Count(dirs[j], "/")
		if di != dj {
			return di > dj
		}
		return dirs[i] > dirs[j]
	})
}

// Count returns the number of writes and deletes.
func (p *Plan) Count() (writes, deletes, kept int) {
	for _, a := range p.Actions {
		switch a.Op {
		case Create, Update:
			writes++
		case Delete:
			deletes++
		case Keep:
			kept++
		}
	}
	return
}

// MakePlan compares the current tree with the target. untracked holds the
// directories that directly contain entries the scan did not capture; a
// target file or symlink cannot replace such a directory, so the plan keeps
// it (and everything below it) and reports it.
func MakePlan(ctx context.Context, load tree.Loader, current, target object.ID, f *tree.Filter, untracked map[string]bool) (*Plan, error) {
	p := &Plan{targetDirs: map[string]bool{}}
	var changes []tree.Change
	err := tree.Diff(ctx, load, current, target, f, func(c tree.Change) error {
		changes = append(changes, c)
		return nil
	})
	if err != nil {
		return nil, err
	}
	if f != nil {
		// A partial restore creates paths below a directory that the
		// current tree has as a file or symlink (restore REV -- d/f where
		// d is now a file): that file goes, as git checkout does it.
		more, err := blockingAncestors(ctx, load, current, changes)
		if err != nil {
			return nil, err
		}
		changes = append(changes, more...)
	}
	// Directories of the target that hold changed paths.
	for _, c := range changes {
		if c.New != nil {
			for d := path.Dir(c.Path); d != "."; d = path.Dir(d) {
				if p.targetDirs[d] {
					break
				}
				p.targetDirs[d] = true
			}
		}
	}
	// Directories that must become files but hold uncaptured entries.
	blocked := map[string]string{}
	for _, c := range changes {
		if c.New == nil || c.Old != nil {
			continue
		}
		// c.Path is created; if the current tree has a directory there, all
		// of its files appear as deletions below c.Path.
		if hasUntrackedBelow(untracked, c.Path) {
			blocked[c.Path] = "a directory here holds ignored or skipped files"
		}
	}
	prune := map[string]bool{}
	for _, c := range changes {
		a := Action{Path: c.Path, Old: c.Old, New: c.New}
		switch {
		case c.New == nil:
			a.Op = Delete
		case c.Old == nil:
			a.Op = Create
		default:
			a.Op = Update
		}
		if reason, ok := blockedBy(blocked, c.Path); ok {
			a.Op, a.Reason = Keep, reason
		}
		if a.Op == Delete {
			for d := path.Dir(c.Path); d != "."; d = path.Dir(d) {
				if p.targetDirs[d] || prune[d] {
					break
				}
				prune[d] = true
			}
		}
		p.Actions = append(p.Actions, a)
	}
	sort.Slice(p.Actions, func(i, j int) bool { return p.Actions[i].Path < p.Actions[j].Path })
	for d := range prune {
		if _, ok := blockedBy(blocked, d); !ok {
			p.prune = append(p.prune, d)
		}
	}
	sortPrune(p.prune)
	return p, nil
}

// blockingAncestors returns deletions of the files and symlinks of the
// current tree that lie where created paths need directories.
func blockingAncestors(ctx context.Context, load tree.Loader, current object.ID, changes []tree.Change) ([]tree.Change, error) {
	var out []tree.Change
	checked := map[string]bool{}
	for _, c := range changes {
		checked[c.Path] = true // already changed (a deletion of it included)
	}
	for _, c := range changes {
		if c.New == nil {
			continue
		}
		for _, d := range parents(c.Path) {
			if checked[d] {
				continue
			}
			checked[d] = true
			e, ok, err := tree.Lookup(ctx, load, current, d)
			if err != nil {
				return nil, err
			}
			if !ok {
				break // nothing below exists
			}
			if !object.IsDir(e.Mode) {
				out = append(out, tree.Change{Path: d, Old: &e})
				break
			}
		}
	}
	return out, nil
}

func hasUntrackedBelow(untracked map[string]bool, dir string) bool {
	if untracked[dir] {
		return true
	}
	for d := range untracked {
		if strings.HasPrefix(d, dir+"/") {
			return true
		}
	}
	return false
}

// blockedBy reports whether p is, or lies below, a blocked path.
func blockedBy(blocked map[string]string, p string) (string, bool) {
	if len(blocked) == 0 {
		return "", false
	}
	for q := p; ; q = path.Dir(q) {
		if r, ok := blocked[q]; ok {
			return r, true
		}
		if !strings.Contains(q, "/") {
			return "", false
		}
	}
}

// Blobs opens a blob for reading; the reader must verify the content and
// fail on a mismatch (store.Store.OpenBlob does).
type Blobs func(ctx context.Context, id object.ID) (io.ReadCloser, error)

// Applier applies plans to one workspace.
type Applier struct {
	Root     *fsroot.Root
	RootPath string // absolute path of Root, for syncfs
	Blobs    Blobs
	// Stage is the staging directory's name (must start with ".ckpt-tmp-").
	Stage string
	// Progress, if set, receives (files done, total, bytes done, total).
	Progress func(files, totalFiles, bytes, totalBytes int64)
	// Workers staging files in parallel (0: 4).
	Workers int
	// BeforeChange runs after staging and before the first change to the
	// workspace (for crash tests and journal checks).
	BeforeChange func() error
	each         bool // fsync file by file (small restores)

	// Hook, if set, is called after every change of the workspace with the
	// number of changes so far; an error stops Apply (failure tests), and
	// crash tests kill the process from it.
	Hook func(n int) error

	// Expect, if set, returns what the restore's scan saw at a path the
	// plan deletes or replaces (from the stat cache that scan wrote). A
	// path without an expectation, or a racy one, has its content compared
	// with the plan instead.
	Expect func(path string) (Stat, bool)
	// seen is the stat data of every path the plan deletes or replaces,
	// confirmed to hold the plan's old content before the first change;
	// linked marks those with other hard links (whose ctime the restore's
	// own unlinks change).
	seen   map[string]Stat
	linked map[string]bool
}

// Stat is the part of a path's stat data that changes whenever it is
// written: type and permission bits (as an object mode), size, mtime,
// ctime, inode and device.
type Stat struct {
	Mode         uint32
	Size         int64
	Mtime, Ctime int64
	Ino, Dev     uint64
	// Racy: changed in the same clock tick as the scan; equal stat data
	// does not prove equal content. (Ignored in comparisons.)
	Racy bool
}

// StatOf converts raw stat data.
func StatOf(st *fsroot.Stat_t) Stat {
	var mode uint32
	switch st.Mode & syscall.S_IFMT {
	case syscall.S_IFREG:
		mode = object.ModeFile | uint32(st.Mode)&0o777
	case syscall.S_IFLNK:
		mode = object.ModeSymlink
	case syscall.S_IFDIR:
		mode = object.ModeDir
	default:
		mode = uint32(st.Mode) & syscall.S_IFMT // something ckpt never captures
	}
	return Stat{Mode: mode, Size: st.Size, Mtime: st.Mtim.Nano(), Ctime: st.Ctim.Nano(), Ino: uint64(st.Ino), Dev: uint64(st.Dev)}
}

// same compares two stat data (Racy aside).
func (s Stat) same(o Stat) bool {
	s.Racy, o.Racy = false, false
	return s == o
}

// ErrChanged is wrapped by [*ChangedError].
var ErrChanged = errors.New("changed while the restore ran")

// ChangedError reports a path that no longer holds what the restore's scan
// saw: someone edited, replaced or created it meanwhile. The restore stops
// rather than destroy data no checkpoint has.
type ChangedError struct {
	Path string
	Why  string
}

// Error implements error.
func (e *ChangedError) Error() string {
	return fmt.Sprintf("%s changed while the restore ran (%s)", e.Path, e.Why)
}

// Unwrap returns [ErrChanged].
func (e *ChangedError) Unwrap() error { return ErrChanged }

// Outcome is what Apply did.
type Outcome struct {
	Written []string
	Deleted []string
	Kept    []Action
	Pruned  []string
	// Made lists the directories Apply created, outermost first.
	Made []string

	// wrote holds each written path's stat data right after it was put in
	// place, gone each deleted path's before: a path that differs from
	// them at verification was changed by someone else since (an edit made
	// after the restore wrote the path is the user's, not a corruption).
	wrote, gone map[string]Stat
	// Changed reports whether the workspace was modified at all.
	Changed bool
}

// ErrStage is wrapped by failures that happened before the workspace changed.
var ErrStage = errors.New("nothing was changed")

// Apply executes plan. On an error wrapping ErrStage the workspace is
// untouched; on any other error it may be partly changed and the caller
// must roll back (or leave the journal for recovery).
func (a *Applier) Apply(ctx context.Context, plan *Plan) (*Outcome, error) {
	out := &Outcome{}
	var writes, deletes []Action
	for _, act := range plan.Actions {
		switch act.Op {
		case Create, Update:
			writes = append(writes, act)
		case Delete:
			deletes = append(deletes, act)
		case Keep:
			out.Kept = append(out.Kept, act)
		}
	}
	// 1. check what lies in the way of writes.
	writes, kept, err := a.check(writes, plan)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrStage, err)
	}
	out.Kept = append(out.Kept, kept...)
	// Small restores fsync each file and directory; large ones flush the
	// whole file system once (syncfs), which is cheaper than thousands of
	// fsyncs but costs whatever else is dirty on that file system.
	a.each = len(writes)+len(deletes) <= syncEachLimit || !canSyncFS
	// 2. stage.
	staged, err := a.stage(ctx, writes)
	if err != nil {
		a.Root.RemoveAll(a.Stage)
		return nil, fmt.Errorf("%w: %w", ErrStage, err)
	}
	// 3. sync (small restores synced each staged file already).
	if !a.each {
		a.sync()
	}
	// Every path about to be deleted or replaced must still be what the
	// scan saw: an edit made since is not in any checkpoint.
	if err := a.confirm(deletes, writes); err != nil {
		a.Root.RemoveAll(a.Stage)
		return nil, fmt.Errorf("%w: %w", ErrStage, err)
	}
	if a.BeforeChange != nil {
		if err := a.BeforeChange(); err != nil {
			a.Root.RemoveAll(a.Stage)
			return nil, fmt.Errorf("%w: %w", ErrStage, err)
		}
	}
	n := 0
	changed := func() error {
		n++
		out.Changed = true
		if a.Hook != nil {
			return a.Hook(n)
		}
		return nil
	}
	// 4. delete, deepest first.
	sort.Slice(deletes, func(i, j int) bool { return deletes[i].Path > deletes[j].Path })
	// A path found changed before anything was: as if in staging.
	stop := func(err error) (*Outcome, error) {
		if !out.Changed && errors.Is(err, ErrChanged) {
			a.Root.RemoveAll(a.Stage)
			for i := len(out.Made) - 1; i >= 0; i-- {
				a.Root.RemoveDir(out.Made[i]) // only if still empty
			}
			return nil, fmt.Errorf("%w: %w", ErrStage, err)
		}
		return out, err
	}
	for _, d := range deletes {
		if err := a.unchanged(d.Path); err != nil {
			return stop(err)
		}
		if err := a.Root.Remove(d.Path); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return out, fmt.Errorf("delete %s: %w", d.Path, fsroot.Underlying(err))
		}
		if st, ok := a.seen[d.Path]; ok {
			if out.gone == nil {
				out.gone = map[string]Stat{}
			}
			out.gone[d.Path] = st
		}
		out.Deleted = append(out.Deleted, d.Path)
		if err := changed(); err != nil {
			return out, err
		}
	}
	// A file or symlink that a target directory replaces: deleted above
	// (it appears as a deletion). Prune emptied directories.
	for _, d := range plan.prune {
		err := a.Root.RemoveDir(d) // rmdir only: never a file someone put there
		switch {
		case err == nil:
			out.Pruned = append(out.Pruned, d)
			if err := changed(); err != nil {
				return out, err
			}
		case errors.Is(err, fs.ErrNotExist), errors.Is(err, syscall.ENOTDIR), errors.Is(err, syscall.ELOOP):
			// Gone, or no longer a directory (a file or symlink there, or
			// above it, is not the restore's to remove).
		case isNotEmpty(err):
			// Empty directories (untracked, so not in the plan) may remain
			// inside: they hold nothing and go too. Anything else was not
			// captured: leave it.
			if onlyEmptyDirs(a.Root, d, 0) {
				if err := removeEmptyDirs(a.Root, d); err == nil {
					out.Pruned = append(out.Pruned, d)
					if err := changed(); err != nil {
						return out, err
					}
				}
			}
		default:
			return out, fmt.Errorf("remove directory %s: %w", d, fsroot.Underlying(err))
		}
	}
	// 5. create directories and move staged entries into place.
	made := map[string]bool{}
	for i, w := range writes {
		if dir := path.Dir(w.Path); dir != "." && !made[dir] {
			if err := a.mkdirs(dir, out); err != nil {
				return stop(err)
			}
			for d := dir; d != "."; d = path.Dir(d) {
				made[d] = true
			}
		}
		if w.clearEmpty {
			if err := removeEmptyDirs(a.Root, w.Path); err != nil {
				return out, fmt.Errorf("remove empty directory %s: %w", w.Path, fsroot.Underlying(err))
			}
		}
		if w.Old != nil {
			if err := a.unchanged(w.Path); err != nil {
				return stop(err)
			}
		}
		if err := a.place(staged[i], w.Path, w.Old != nil); err != nil {
			return stop(err)
		}
		failpoint.Hit("restore/placed", w.Path)
		if out.wrote == nil {
			out.wrote = map[string]Stat{}
		}
		if st, err := a.Root.Stat(w.Path); err == nil {
			out.wrote[w.Path] = StatOf(st)
		} else {
			// Gone as soon as it was put in place: someone moved it, or
			// a directory above it, away. What is there now is theirs;
			// stat data no entry has keeps Verify from judging it.
			out.wrote[w.Path] = Stat{}
		}
		out.Written = append(out.Written, w.Path)
		if err := changed(); err != nil {
			return out, err
		}
	}
	a.Root.RemoveAll(a.Stage)
	if a.each {
		a.syncDirs(out)
	} else {
		a.sync()
	}
	return out, nil
}

// mkdirs creates dir and its missing parents, recording those it made.
func (a *Applier) mkdirs(dir string, out *Outcome) error {
	if fi, err := a.Root.Lstat(dir); err == nil && fi.IsDir() {
		return nil
	}
	for _, d := range append(parents(dir), dir) {
		fi, err := a.Root.Lstat(d)
		if err == nil && fi.IsDir() {
			continue
		}
		if err == nil || !errors.Is(err, fs.ErrNotExist) {
			// A file or symlink (never followed) where a directory must be.
			return fmt.Errorf("create directory %s: %w", d, &ChangedError{Path: d, Why: "a file or symlink is in the way of a directory"})
		}
		if err := a.Root.Mkdir(d, 0o755); err != nil && !errors.Is(err, fs.ErrExist) {
			return fmt.Errorf("create directory %s: %w", d, fsroot.Underlying(err))
		}
		out.Made = append(out.Made, d)
	}
	return nil
}

// confirm checks, before the first change, that every path the plan
// deletes or replaces still holds the plan's old content, and records its
// stat data for [Applier.unchanged]. With an expectation from the scan the
// stat data must match it; otherwise (or if racy) the content is read and
// compared.
func (a *Applier) confirm(deletes, writes []Action) error {
	if err := failpoint.Hit("restore/staged", ""); err != nil {
		return err
	}
	a.seen, a.linked = map[string]Stat{}, map[string]bool{}
	for _, list := range [][]Action{deletes, writes} {
		for _, act := range list {
			if act.Old == nil || object.IsDir(act.Old.Mode) {
				continue
			}
			st, err := a.Root.Stat(act.Path)
			if err != nil {
				return &ChangedError{Path: act.Path, Why: "it is gone, or its directory was replaced"}
			}
			cur := StatOf(st)
			a.linked[act.Path] = st.Nlink > 1
			if a.Expect != nil {
				if exp, ok := a.Expect(act.Path); ok && !exp.Racy {
					if !cur.same(exp) {
						return &ChangedError{Path: act.Path, Why: "it was modified"}
					}
					a.seen[act.Path] = cur
					continue
				}
			}
			if cur.Mode != act.Old.Mode || !matches(a.Root, act.Path, act.Old) {
				return &ChangedError{Path: act.Path, Why: "it was modified"}
			}
			// The content matched; it must not have changed while read.
			if st2, err := a.Root.Stat(act.Path); err != nil || !StatOf(st2).same(cur) {
				return &ChangedError{Path: act.Path, Why: "it was modified"}
			}
			a.seen[act.Path] = cur
		}
	}
	return nil
}

// unchanged checks, right before a path is deleted or replaced, that it is
// what confirm saw.
func (a *Applier) unchanged(p string) error {
	if err := failpoint.Hit("restore/before-replace", p); err != nil {
		return err
	}
	exp, ok := a.seen[p]
	if !ok {
		return nil
	}
	st, err := a.Root.Stat(p)
	if err != nil {
		return &ChangedError{Path: p, Why: "it is gone, or its directory was replaced"}
	}
	cur := StatOf(st)
	if a.linked[p] {
		// Unlinking or replacing another link of the same file (this
		// restore may do that) changes its ctime, not its content.
		cur.Ctime = exp.Ctime
	}
	if !cur.same(exp) {
		return &ChangedError{Path: p, Why: "it was modified"}
	}
	return nil
}

// syncEachLimit is the largest restore synced file by file.
const syncEachLimit = 256

// syncDirs fsyncs the directories whose entries changed.
func (a *Applier) syncDirs(out *Outcome) {
	dirs := map[string]bool{".": true}
	for _, ps := range [][]string{out.Written, out.Deleted, out.Pruned} {
		for _, p := range ps {
			dirs[path.Dir(p)] = true
		}
	}
	for d := range dirs {
		syncDir(a.Root, d)
	}
}

// check drops writes whose path (or a parent) holds something the current
// tree does not have: an ignored or skipped file, which must not be lost.
func (a *Applier) check(writes []Action, plan *Plan) (ok, kept []Action, err error) {
	deleted := map[string]bool{}
	currentDirs := map[string]bool{}
	for _, act := range plan.Actions {
		if act.Old != nil {
			if act.Op == Delete || act.Op == Update {
				deleted[act.Path] = true
			}
			for d := path.Dir(act.Path); d != "."; d = path.Dir(d) {
				currentDirs[d] = true
			}
		}
	}
	// What lies at each parent directory: "" ok, "gone" (absent, or a
	// tracked file the plan deletes: nothing below it exists), or a problem.
	checked := map[string]string{}
	for _, w := range writes {
		problem, gone := "", false
		for _, d := range parents(w.Path) {
			state, ok := checked[d]
			if !ok {
				fi, err := a.Root.Lstat(d)
				switch {
				case errors.Is(err, fs.ErrNotExist), errors.Is(err, syscall.ENOTDIR):
					state = "gone"
				case err != nil:
					return nil, nil, fmt.Errorf("stat %s: %w", d, fsroot.Underlying(err))
				case fi.IsDir():
					state = ""
				case deleted[d]:
					state = "gone"
				default:
					state = fmt.Sprintf("%s is a file that was not checkpointed (ignored or skipped)", d)
				}
				checked[d] = state
			}
			if state == "gone" {
				gone = true
				break
			}
			if state != "" {
				problem = state
				break
			}
		}
		if problem == "" && !gone && w.Old == nil {
			// Created: the path itself must be free.
			fi, err := a.Root.Lstat(w.Path)
			switch {
			case errors.Is(err, fs.ErrNotExist), errors.Is(err, syscall.ENOTDIR):
			case err != nil:
				return nil, nil, fmt.Errorf("stat %s: %w", w.Path, fsroot.Underlying(err))
			case fi.IsDir() && currentDirs[w.Path]:
				// A tracked directory that the plan empties.
			case fi.IsDir() && onlyEmptyDirs(a.Root, w.Path, 0):
				// Directories left empty: nothing to lose.
				w.clearEmpty = true
			default:
				problem = "it holds a file that was not checkpointed (ignored or skipped)"
				if fi.IsDir() {
					problem = "it is a directory holding files that were not checkpointed"
				}
			}
		}
		if problem != "" {
			w.Op, w.Reason = Keep, problem
			kept = append(kept, w)
			continue
		}
		ok = append(ok, w)
	}
	return ok, kept, nil
}

// onlyEmptyDirs reports whether the directory p holds nothing but
// (recursively) empty directories.
func onlyEmptyDirs(root *fsroot.Root, p string, depth int) bool {
	if depth > 64 {
		return false
	}
	des, err := root.ReadDir(p) // O_DIRECTORY: never opens a FIFO put there
	if err != nil {
		return false
	}
	for _, de := range des {
		if !de.IsDir() || !onlyEmptyDirs(root, p+"/"+de.Name(), depth+1) {
			return false
		}
	}
	return true
}

// removeEmptyDirs removes a tree of empty directories (rmdir only, so it
// never deletes a file that appeared meanwhile).
func removeEmptyDirs(root *fsroot.Root, p string) error {
	des, err := root.ReadDir(p) // O_DIRECTORY: never opens a FIFO put there
	if err != nil {
		return err
	}
	for _, de := range des {
		if de.IsDir() {
			if err := removeEmptyDirs(root, p+"/"+de.Name()); err != nil {
				return err
			}
		}
	}
	return root.RemoveDir(p)
}

// realParents reports whether every parent directory of p is a real
// directory: fsroot resolves p's parent only through real directories,
// never a symlink.
func realParents(root *fsroot.Root, p string) bool {
	d := path.Dir(p)
	if d == "." {
		return true
	}
	fi, err := root.Lstat(d)
	return err == nil && fi.IsDir()
}

func parents(p string) []string {
	var out []string
	for d := path.Dir(p); d != "."; d = path.Dir(d) {
		out = append(out, d)
	}
	// Outermost first.
	for i, j := 0, len(out)-1; i < j; i, j = i+1, j-1 {
		out[i], out[j] = out[j], out[i]
	}
	return out
}

// stage writes every new entry into the staging directory.
func (a *Applier) stage(ctx context.Context, writes []Action) ([]string, error) {
	names := make([]string, len(writes))
	if len(writes) == 0 {
		return names, nil
	}
	if !strings.HasPrefix(a.Stage, ".ckpt-tmp-") || strings.Contains(a.Stage, "/") {
		return nil, fmt.Errorf("invalid staging directory %q", a.Stage)
	}
	if err := a.Root.Mkdir(a.Stage, 0o700); err != nil {
		return nil, fmt.Errorf("create staging directory %s: %w", a.Stage, fsroot.Underlying(err))
	}
	var totalBytes int64
	for _, w := range writes {
		totalBytes += w.New.Size
	}
	var doneFiles, doneBytes atomic.Int64
	workers := a.Workers
	if workers <= 0 {
		workers = 4
	}
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	var wg sync.WaitGroup
	next := atomic.Int64{}
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			dir := a.Stage + "/"
			for {
				i := int(next.Add(1) - 1)
				if i >= len(writes) || ctx.Err() != nil {
					return
				}
				name := dir + strconv.Itoa(i)
				names[i] = name
				if err := a.stageOne(ctx, name, writes[i]); err != nil {
					cancel(err)
					return
				}
				doneBytes.Add(writes[i].New.Size)
				if d := doneFiles.Add(1); a.Progress != nil && (d%64 == 0 || d == int64(len(writes))) {
					a.Progress(d, int64(len(writes)), doneBytes.Load(), totalBytes)
				}
			}
		}()
	}
	wg.Wait()
	if err := context.Cause(ctx); err != nil {
		return nil, err
	}
	return names, nil
}

func (a *Applier) stageOne(ctx context.Context, name string, w Action) error {
	e := w.New
	rc, err := a.Blobs(ctx, e.ID)
	if err != nil {
		return fmt.Errorf("read %s: %w", w.Path, err)
	}
	defer rc.Close()
	if object.IsSymlink(e.Mode) {
		target, err := io.ReadAll(rc)
		if err != nil {
			return fmt.Errorf("read %s: %w", w.Path, err)
		}
		if err := a.Root.Symlink(string(target), name); err != nil {
			return fmt.Errorf("stage symlink %s: %w", w.Path, fsroot.Underlying(err))
		}
		return nil
	}
	f, err := a.Root.OpenFile(name, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o600)
	if err != nil {
		return fmt.Errorf("stage %s: %w", w.Path, fsroot.Underlying(err))
	}
	n, err := io.Copy(f, rc)
	if err == nil && n != e.Size {
		err = fmt.Errorf("size %d, want %d", n, e.Size)
	}
	if err == nil {
		err = f.Chmod(fs.FileMode(e.Mode & 0o777))
	}
	if err == nil && a.each {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("stage %s: %w", w.Path, err)
	}
	return nil
}

// place renames a staged entry to its final path: replacing what is there
// (an update, whose old content was confirmed just before), or only if
// nothing is (a creation: a file someone created meanwhile is kept).
func (a *Applier) place(staged, p string, replace bool) error {
	rename := a.Root.RenameNoReplace
	if replace {
		rename = a.Root.Rename
	}
	err := rename(staged, p)
	if err == nil {
		return nil
	}
	if !replace && errors.Is(err, fs.ErrExist) {
		return &ChangedError{Path: p, Why: "something was created there"}
	}
	if isCrossDevice(err) {
		// Another file system is mounted below the workspace: copy next to
		// the destination first.
		tmp := path.Join(path.Dir(p), path.Base(a.Stage)+"-"+path.Base(staged))
		if cerr := a.copyWithin(staged, tmp); cerr != nil {
			return fmt.Errorf("write %s: %w", p, cerr)
		}
		if err = rename(tmp, p); err == nil {
			return nil
		}
		a.Root.Remove(tmp)
		if !replace && errors.Is(err, fs.ErrExist) {
			return &ChangedError{Path: p, Why: "something was created there"}
		}
	}
	return fmt.Errorf("write %s: %w", p, fsroot.Underlying(err))
}

func (a *Applier) copyWithin(src, dst string) error {
	fi, err := a.Root.Lstat(src)
	if err != nil {
		return err
	}
	if fi.Mode()&fs.ModeSymlink != 0 {
		t, err := a.Root.Readlink(src)
		if err != nil {
			return err
		}
		return a.Root.Symlink(t, dst)
	}
	in, err := a.Root.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := a.Root.OpenFile(dst, os.O_CREATE|os.O_EXCL|os.O_WRONLY, fi.Mode().Perm())
	if err != nil {
		return err
	}
	_, err = io.Copy(out, in)
	if err == nil {
		err = out.Chmod(fi.Mode().Perm())
	}
	if err == nil {
		err = out.Sync()
	}
	if cerr := out.Close(); err == nil {
		err = cerr
	}
	return err
}

// sync flushes the file system holding the workspace.
func (a *Applier) sync() {
	if a.RootPath == "" {
		return
	}
	syncFS(a.RootPath)
}

// Verify checks that every written path holds its target entry and every
// deleted path is gone. It returns the paths that do not match. A path
// someone changed after Apply wrote or deleted it (its stat data is not
// what Apply left) is not checked: that change is theirs.
func Verify(root *fsroot.Root, out *Outcome, plan *Plan) []string {
	want := map[string]*object.Entry{}
	for _, act := range plan.Actions {
		if act.Op == Create || act.Op == Update {
			want[act.Path] = act.New
		}
	}
	var bad []string
	for _, p := range out.Written {
		if exp, ok := out.wrote[p]; ok {
			if st, err := root.Stat(p); err != nil || !StatOf(st).same(exp) {
				continue // changed since it was written: not ours to judge
			}
		}
		if !matches(root, p, want[p]) {
			bad = append(bad, p)
		}
	}
	for _, p := range out.Deleted {
		if _, replaced := want[p]; replaced {
			continue
		}
		if !realParents(root, p) {
			continue // a parent is now a file or symlink: p cannot exist
		}
		st, err := root.Stat(p)
		if err != nil {
			continue
		}
		if old, ok := out.gone[p]; ok && !StatOf(st).same(old) {
			continue // created again by someone else since
		}
		if !(st.Mode&syscall.S_IFMT == syscall.S_IFDIR && plan.targetDirs[p]) {
			bad = append(bad, p)
		}
	}
	sort.Strings(bad)
	return bad
}

func matches(root *fsroot.Root, p string, e *object.Entry) bool {
	if e == nil || !realParents(root, p) {
		return false
	}
	fi, err := root.Lstat(p)
	if err != nil {
		return false
	}
	if object.IsSymlink(e.Mode) {
		if fi.Mode()&fs.ModeSymlink == 0 {
			return false
		}
		t, err := root.Readlink(p)
		return err == nil && object.Sum([]byte(t)) == e.ID
	}
	if !fi.Mode().IsRegular() || uint32(fi.Mode().Perm()) != e.Mode&0o777 || fi.Size() != e.Size {
		return false
	}
	// O_NONBLOCK: a FIFO swapped in since the lstat must not block.
	f, err := root.OpenFile(p, os.O_RDONLY|fsroot.ONonblock, 0)
	if err != nil {
		return false
	}
	defer f.Close()
	if fi, err := f.Stat(); err != nil || !fi.Mode().IsRegular() {
		return false
	}
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return false
	}
	var id object.ID
	h.Sum(id[:0])
	return id == e.ID
}

// Check returns the plan's actions as Apply would carry them out: writes
// blocked by uncaptured data become Keep. It changes nothing.
func (a *Applier) Check(plan *Plan) ([]Action, error) {
	var writes, out []Action
	for _, act := range plan.Actions {
		if act.Op == Create || act.Op == Update {
			writes = append(writes, act)
		} else {
			out = append(out, act)
		}
	}
	ok, kept, err := a.check(writes, plan)
	if err != nil {
		return nil, err
	}
	out = append(append(out, ok...), kept...)
	sort.Slice(out, func(i, j int) bool { return out[i].Path < out[j].Path })
	return out, nil
}
