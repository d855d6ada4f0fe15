package ckpt

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"

	"github.com/seed1cedbf7c/ckpt/internal/diff"
	"github.com/seed1cedbf7c/ckpt/internal/fsroot"
	"github.com/seed1cedbf7c/ckpt/internal/object"
	"github.com/seed1cedbf7c/ckpt/internal/scan"
	"github.com/seed1cedbf7c/ckpt/internal/tree"
)

// DiffOptions select the two sides of [Repo.Diff].
type DiffOptions struct {
	// From is the old side's revision ("" = HEAD; before the first
	// checkpoint, the empty tree).
	From string
	// To is the new side's revision ("" = the working tree).
	To string
	// Paths restrict the comparison (workspace-relative).
	Paths []string
	// Renames detects renames, as git diff -M does: a deleted file and
	// an added one of the same type whose contents are at least
	// RenameThreshold percent alike (see [DiffResult.Renames]).
	Renames bool
	// RenameThreshold is the similarity in percent a rename needs
	// (0: 50, git's default; 100: identical contents only).
	RenameThreshold int
}

// Rename is a deleted path found again at an added one. The deleted and
// added paths stay in [DiffResult.Files]; a patch or stat shows the pair
// as one rename.
type Rename struct {
	From Path `json:"from"`
	To   Path `json:"to"`
	// Similarity is git's "similarity index", in percent.
	Similarity int `json:"similarity"`
}

// DiffResult is the difference between two states. Render it with
// [DiffResult.WritePatch] or [DiffResult.WriteStat].
type DiffResult struct {
	From *Checkpoint // nil: the empty tree
	To   *Checkpoint // nil: the working tree
	// Files are the changed paths, sorted.
	Files []FileChange
	// Skipped lists working-tree paths not captured.
	Skipped []Skipped
	// Renames are the renames found with [DiffOptions.Renames], in the
	// order of their new paths.
	Renames []Rename

	r     *Repo
	trees map[object.ID][]byte
	// renameFrom and renameTo index Renames by old and new path.
	renameFrom, renameTo map[Path]int
}

// Changes returns the changed files.
func (d *DiffResult) Changes() []FileChange {
	if d.Files == nil {
		return []FileChange{}
	}
	return d.Files
}

// Diff compares two checkpoints, or a checkpoint and the working tree.
func (r *Repo) Diff(ctx context.Context, opts DiffOptions) (*DiffResult, error) {
	paths, err := cleanOptionalPaths(opts.Paths)
	if err != nil {
		return nil, err
	}
	d := &DiffResult{r: r, Files: []FileChange{}}
	fromTree := object.EmptyTree
	if opts.From == "" {
		_, rec, err := r.head(ctx)
		if err != nil {
			return nil, err
		}
		if rec != nil {
			if d.From, err = r.describe(ctx, rec); err != nil {
				return nil, err
			}
			fromTree = rec.Tree
		}
	} else {
		if d.From, err = r.Get(ctx, opts.From); err != nil {
			return nil, err
		}
		fromTree = d.From.Tree
	}
	var toTree object.ID
	if opts.To != "" {
		if d.To, err = r.Get(ctx, opts.To); err != nil {
			return nil, err
		}
		toTree = d.To.Tree
	} else {
		// The ignored files HEAD or the checkpoint compared with hold
		// are the workspace's too (see MetaTracked).
		o := r.scanOptions(ctx, nil, nil)
		if _, rec, err := r.head(ctx); err == nil {
			o.Tracked = trackedOf(rec)
		}
		if d.From != nil {
			if rec, err := r.st.Checkpoint(ctx, d.From.ID); err == nil {
				o.Tracked = unionPaths(o.Tracked, trackedOf(rec))
			}
		}
		cache := r.loadCache(ctx)
		o.Cache = cache
		res, err := scan.Scan(ctx, o)
		cache.Close()
		if err != nil {
			return nil, scanError(err)
		}
		toTree, d.trees, d.Skipped = res.Root, res.Trees, res.Skipped
	}
	err = tree.Diff(ctx, d.load, fromTree, toTree, tree.NewFilter(paths), func(c tree.Change) error {
		d.Files = append(d.Files, newFileChange(c))
		return nil
	})
	sortChanges(d.Files)
	if err == nil && opts.Renames {
		err = d.findRenames(ctx, opts.RenameThreshold)
	}
	return d, err
}

func cleanOptionalPaths(ps []string) ([]string, error) {
	if len(ps) == 0 {
		return nil, nil
	}
	for _, p := range ps {
		if filepath.ToSlash(filepath.Clean(p)) == "." {
			return nil, nil
		}
	}
	return cleanPaths(ps)
}

func (d *DiffResult) load(ctx context.Context, id object.ID) (*object.Tree, error) {
	if data, ok := d.trees[id]; ok {
		return object.DecodeTree(data)
	}
	return d.r.st.ReadTree(ctx, id)
}

// side loads one side of a change: from the store, or from the working tree
// when the new side is the working tree.
func (d *DiffResult) side(ctx context.Context, path string, e *object.Entry, working bool) (*diff.Side, error) {
	if e == nil {
		return nil, nil
	}
	if !working {
		data, err := d.r.st.ReadBlob(ctx, e.ID)
		if err != nil {
			return nil, fmt.Errorf("read %s: %w", path, err)
		}
		return &diff.Side{Mode: e.Mode, Content: data}, nil
	}
	data, err := d.r.readWorking(path, e.Mode)
	if err != nil {
		return nil, err
	}
	return &diff.Side{Mode: e.Mode, Content: data}, nil
}

// readWorking reads a file's content (or a symlink's target) from the
// workspace, never following symlinks out of it.
func (r *Repo) readWorking(path string, mode uint32) ([]byte, error) {
	root, err := fsroot.Open(r.root)
	if err != nil {
		return nil, err
	}
	defer root.Close()
	if object.IsSymlink(mode) {
		t, err := root.Readlink(path)
		if err != nil {
			return nil, &PathError{Op: "read symlink", Path: path, Err: unwrapPath(err)}
		}
		return []byte(t), nil
	}
	// O_NONBLOCK: a FIFO put where the scan saw a file must not block.
	f, err := root.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, &PathError{Op: "read", Path: path, Err: unwrapPath(err)}
	}
	defer f.Close()
	if fi, err := f.Stat(); err != nil || !fi.Mode().IsRegular() {
		return nil, &PathError{Op: "read", Path: path, Err: errors.New("no longer a regular file (it changed while ckpt read the workspace; run the command again)")}
	}
	data, err := io.ReadAll(f)
	if err != nil {
		return nil, &PathError{Op: "read", Path: path, Err: unwrapPath(err)}
	}
	return data, nil
}

// WritePatch writes the difference as git diff --binary writes it (see
// docs/formats.md): git apply applies it forward and in reverse (-R),
// binary files, modes, symlinks and renames included, and patch -p1
// applies it when it has no binary file (and fails, saying so, when it
// has).
func (d *DiffResult) WritePatch(ctx context.Context, w io.Writer) error {
	return d.writePatch(ctx, w, diff.Options{Binary: diff.GitBinaryPatch})
}

// PatchOptions select how [DiffResult.WritePatchWith] writes a patch.
type PatchOptions struct {
	// BinaryNotice writes a binary file as git diff does without
	// --binary, as one line: "Binary files a/P and b/P differ". Such a
	// patch is for people to read: git apply cannot apply it.
	BinaryNotice bool
	// Color adds git's default colours (ANSI escapes).
	Color bool
}

// WritePatchWith writes the difference as [DiffResult.WritePatch] does,
// as o says.
func (d *DiffResult) WritePatchWith(ctx context.Context, w io.Writer, o PatchOptions) error {
	do := diff.Options{Binary: diff.GitBinaryPatch, Color: o.Color}
	if o.BinaryNotice {
		do.Binary = diff.BinaryNotice
	}
	return d.writePatch(ctx, w, do)
}

// writePatch writes the difference as o says (Decree's run records use
// base64 blocks).
func (d *DiffResult) writePatch(ctx context.Context, w io.Writer, o diff.Options) error {
	return d.eachChange(ctx, func(c diff.Change) error {
		return diff.WriteOptions(w, []diff.Change{c}, o)
	})
}

// eachChange calls fn with each change in order, a rename once, at its new
// path.
func (d *DiffResult) eachChange(ctx context.Context, fn func(diff.Change) error) error {
	for _, fc := range d.Files {
		if _, ok := d.renameFrom[fc.Path]; ok {
			continue
		}
		c, err := d.change(ctx, fc)
		if err != nil {
			return err
		}
		if i, ok := d.renameTo[fc.Path]; ok {
			rn := d.Renames[i]
			src := d.fileChange(rn.From)
			if c.Old, err = d.side(ctx, string(rn.From), src.old, false); err != nil {
				return err
			}
			c.OldPath, c.Similarity = string(rn.From), rn.Similarity
		}
		if err := fn(c); err != nil {
			return err
		}
	}
	return nil
}

// fileChange returns the change at path p (Files is sorted).
func (d *DiffResult) fileChange(p Path) *FileChange {
	i, _ := slices.BinarySearchFunc(d.Files, p, func(fc FileChange, p Path) int { return strings.Compare(string(fc.Path), string(p)) })
	return &d.Files[i]
}

func (d *DiffResult) change(ctx context.Context, fc FileChange) (diff.Change, error) {
	p := string(fc.Path)
	old, err := d.side(ctx, p, fc.old, false)
	if err != nil {
		return diff.Change{}, err
	}
	nw, err := d.side(ctx, p, fc.new, d.To == nil)
	if err != nil {
		return diff.Change{}, err
	}
	return diff.Change{Path: p, Old: old, New: nw}, nil
}

// WriteStat writes a git-style --stat summary at 80 columns.
func (d *DiffResult) WriteStat(ctx context.Context, w io.Writer) error {
	return d.WriteStatWith(ctx, w, StatOptions{})
}

// StatOptions select how [DiffResult.WriteStatWith] writes a summary.
type StatOptions struct {
	// Width is the line width to fit, as git's --stat fits the
	// terminal's (0: 80).
	Width int
	// Color writes the graph in git's colours (ANSI escapes).
	Color bool
}

// WriteStatWith writes a git-style --stat summary as o says.
func (d *DiffResult) WriteStatWith(ctx context.Context, w io.Writer, o StatOptions) error {
	var stats []diff.FileStat
	err := d.eachChange(ctx, func(c diff.Change) error {
		stats = append(stats, diff.Stat(c))
		return nil
	})
	if err != nil {
		return err
	}
	return diff.WriteStatOptions(w, stats, diff.StatOptions{Width: o.Width, Color: o.Color})
}

// NameOnly returns the changed paths as git diff --name-only lists them:
// a rename by its new path only.
func (d *DiffResult) NameOnly() []Path {
	out := []Path{}
	for _, fc := range d.Files {
		if _, ok := d.renameFrom[fc.Path]; !ok {
			out = append(out, fc.Path)
		}
	}
	return out
}

// Summary returns the +added ~modified -deleted counts.
func (d *DiffResult) Summary() (added, modified, deleted int) {
	for _, f := range d.Files {
		switch f.Status {
		case "added":
			added++
		case "deleted":
			deleted++
		default:
			modified++
		}
	}
	return
}

// DiffReport is a structured diff: the paths added, modified and
// deleted, and the hunks of each modified file.
type DiffReport struct {
	From     *Checkpoint    `json:"from"`
	To       *Checkpoint    `json:"to"`
	Added    []Path         `json:"added"`
	Modified []ModifiedFile `json:"modified"`
	Deleted  []Path         `json:"deleted"`
	// Renamed pairs deleted and added paths found to be renames (with
	// [DiffOptions.Renames]); they are also listed in Added and Deleted.
	Renamed []Rename `json:"renamed"`
}

// ModifiedFile is one modified path and its hunks.
type ModifiedFile struct {
	Path    Path   `json:"path"`
	OldMode string `json:"old_mode"`
	NewMode string `json:"new_mode"`
	// Binary files (and symlinks' targets) have no hunks.
	Binary bool       `json:"binary,omitempty"`
	Hunks  []DiffHunk `json:"hunks"`
}

// DiffHunk is one "@@ -old +new @@" section; each line starts with ' ',
// '-' or '+', without its newline. A line that is not valid UTF-8 (a
// Latin-1 text file) is written in JSON like a [Path]: C-quoted, with its
// double quotes, so that it begins with '"' and no byte is lost.
type DiffHunk struct {
	OldStart int      `json:"old_start"`
	OldLines int      `json:"old_lines"`
	NewStart int      `json:"new_start"`
	NewLines int      `json:"new_lines"`
	Lines    []string `json:"lines"`
}

// Report returns the difference as added, modified (with hunks) and
// deleted paths.
func (d *DiffResult) Report(ctx context.Context) (*DiffReport, error) {
	out := &DiffReport{From: d.From, To: d.To, Added: []Path{}, Modified: []ModifiedFile{}, Deleted: []Path{}, Renamed: []Rename{}}
	out.Renamed = append(out.Renamed, d.Renames...)
	for _, fc := range d.Files {
		switch fc.Status {
		case "added":
			out.Added = append(out.Added, fc.Path)
			continue
		case "deleted":
			out.Deleted = append(out.Deleted, fc.Path)
			continue
		}
		mf := ModifiedFile{Path: fc.Path, OldMode: fc.OldMode, NewMode: fc.NewMode, Hunks: []DiffHunk{}}
		c, err := d.change(ctx, fc)
		if err != nil {
			return nil, err
		}
		if (c.Old != nil && diff.IsBinary(c.Old.Content)) || (c.New != nil && diff.IsBinary(c.New.Content)) {
			mf.Binary = true // no hunks: nothing to render
			out.Modified = append(out.Modified, mf)
			continue
		}
		var buf bytes.Buffer
		if err := diff.WriteChange(&buf, c); err != nil {
			return nil, err
		}
		p, err := diff.Parse(buf.Bytes())
		if err != nil {
			return nil, fmt.Errorf("diff %s: %w", QuotePath(string(fc.Path)), err)
		}
		for _, fp := range p.Files {
			mf.Binary = mf.Binary || fp.Binary
			for _, h := range fp.Hunks {
				dh := DiffHunk{OldStart: h.OldStart, OldLines: h.OldLines, NewStart: h.NewStart, NewLines: h.NewLines, Lines: make([]string, 0, len(h.Lines))}
				for _, l := range h.Lines {
					dh.Lines = append(dh.Lines, EncodePath(string(l.Op)+strings.TrimSuffix(l.Text, "\n")))
				}
				mf.Hunks = append(mf.Hunks, dh)
			}
		}
		out.Modified = append(out.Modified, mf)
	}
	return out, nil
}

var _ = errors.New
