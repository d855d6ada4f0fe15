package ckpt

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"

	"github.com/seed1cedbf7c/ckpt/internal/diff"
	"github.com/seed1cedbf7c/ckpt/internal/failpoint"
	"github.com/seed1cedbf7c/ckpt/internal/fsroot"
	"github.com/seed1cedbf7c/ckpt/internal/object"
	"github.com/seed1cedbf7c/ckpt/internal/restore"
	"github.com/seed1cedbf7c/ckpt/internal/run"
	"github.com/seed1cedbf7c/ckpt/internal/scan"
	"github.com/seed1cedbf7c/ckpt/internal/store"
	"github.com/seed1cedbf7c/ckpt/internal/tree"
)

// revertRun undoes a run Decree's way: the run directory's changes.diff
// applied in reverse, every affected path checked against manifest.json.
// Nothing is written until the whole result is known: the workspace is
// stored as it is now, the patch is reversed over that tree in memory, and
// every affected path of the result must match the manifest — present with
// the same SHA-256, size and mode, or absent if the manifest does not list
// it. Only then is the workspace made equal to the result, by the engine's
// restore (op "revert"): journaled, so a crash leaves it as it was or has
// the next command finish it; verified; undoable.
//
// A diff that does not apply, a result that does not match the manifest, or
// an affected path the restore would have to leave alone (an ignored file
// in the way) is an [*IntegrityError] listing the paths, and nothing is
// written.
//
// mark, if not nil, is what the run's record says once the revert is done.
// It travels in the journal and is written before the journal is cleared,
// by the revert or by the recovery that finishes it, so the record never
// lags the workspace. revertRun reports false (and writes nothing, mark
// included) when every affected path already holds its state from before
// the run: there is nothing to revert.
func (r *Repo) revertRun(ctx context.Context, runDir string, rec *RunRecord, why string, mark *runMark) (bool, error) {
	ctx = context.WithoutCancel(ctx) // a revert, once started, finishes
	unlock, err := r.begin(ctx)
	if err != nil {
		return false, err
	}
	defer unlock()
	rv, err := loadRevert(runDir, len(rec.Attempts))
	if err != nil {
		return false, err
	}
	var nothing bool
	compute := func() (target, base ID, err error) {
		// The state being reverted: the workspace now, its files stored —
		// with the paths the run touched that ignore rules it added now
		// hide, so that the restore writes them as tracked files and the
		// checkpoint before it keeps what they hold. The patch, made from
		// checkpoints that left them out, sees them absent.
		c, err := r.captureStored(ctx, &captureRules{include: rv.touched})
		if err != nil {
			return ID{}, ID{}, err
		}
		t := &revertTree{ctx: ctx, st: r.st, root: c.res.Root, edits: map[string]*diff.Side{}, leave: map[string]bool{}}
		for _, p := range c.res.Forced {
			t.edits[p] = nil
		}
		if bad, err := t.mismatches(rv); err != nil {
			return ID{}, ID{}, err
		} else if len(bad) == 0 {
			nothing = true
			return ID{}, ID{}, errNothingToRevert
		}
		if _, err := diff.ApplyTree(t, rv.patch, true); err != nil {
			var ce *store.CorruptError
			if errors.As(err, &ce) {
				return ID{}, ID{}, err
			}
			var ae *diff.ApplyError
			paths := []string{"changes.diff"}
			if errors.As(err, &ae) {
				paths = []string{ae.Path}
			}
			pre := rec.Checkpoint // from run.json, which the workspace holds: any length
			if len(pre) > 12 {
				pre = pre[:12]
			}
			return ID{}, ID{}, withHint(&IntegrityError{Op: "revert " + rec.ID + " (" + err.Error() + ")", Paths: paths},
				"the workspace no longer matches what the run left; nothing was changed. The state before the run is checkpoint "+pre+" (ckpt restore "+pre+")")
		}
		t.leaveIgnored(r.root, rv)
		bad, err := t.mismatches(rv)
		if err != nil {
			return ID{}, ID{}, err
		}
		if len(bad) > 0 {
			return ID{}, ID{}, &IntegrityError{Op: "revert " + rec.ID + " (files do not match manifest.json; nothing was changed)", Paths: bad}
		}
		if out := r.uncapturable(t); len(out) > 0 {
			return ID{}, ID{}, withHint(&IntegrityError{Op: "revert " + rec.ID + " (it would write paths no checkpoint records; nothing was changed)", Paths: out},
				"changes.diff and manifest.json of a run name only files a checkpoint captured; these are ignored (.gitignore, .ckptignore, .decreeignore, .git/info/exclude), over the size limit, or ckpt's own, so the run's record was not written by ckpt")
		}
		target, kept, err := r.storeReverted(ctx, t, c, rec.ID, why)
		if err != nil {
			return ID{}, ID{}, err
		}
		if len(kept) > 0 {
			return ID{}, ID{}, &IntegrityError{Op: "revert " + rec.ID + " (ignored or untracked files are in the way; nothing was changed)", Paths: kept}
		}
		if err := failpoint.Hit("revert/before-change", rec.ID); err != nil {
			return ID{}, ID{}, err
		}
		return target, c.res.Root, nil
	}
	j := journalData{Op: OpRevert, Include: rv.touched}
	if mark != nil {
		m := *mark
		j.Run = &m
	}
	res, err := r.computeAndRestore(ctx, j, func() (ID, ID, error) {
		target, base, err := compute()
		if err == nil && mark != nil && mark.Result == "" {
			j.Run.Result = target.String()
		}
		return target, base, err
	})
	if nothing && errors.Is(err, errNothingToRevert) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	if err := r.sweepLeftovers(ctx, res.Head, mark); err != nil {
		return true, err
	}
	return true, nil
}

// uncapturable returns the paths the reverted tree t writes that a scan
// of the result would leave out: ignored by the ignore files as they will
// be after the revert (and .git/info/exclude), below a path never
// captured (the store inside the workspace), or over the size limit. A
// genuine run's diff and manifest name only captured files, so such a
// path comes from a forged record; written, it would be a file no
// checkpoint holds, which the revert's own checks and any later restore
// cannot see, and so neither verify nor put back.
func (r *Repo) uncapturable(t *revertTree) []string {
	rules := scan.NewRules(r.root, func(p string) ([]byte, bool) {
		s, err := t.Read(p)
		if err != nil || s == nil || !object.IsFile(s.Mode) {
			return nil, false
		}
		return s.Content, true
	})
	var out []string
	for p, s := range t.edits {
		if s == nil {
			continue
		}
		excluded := false
		for _, x := range r.exclude {
			excluded = excluded || p == x || strings.HasPrefix(p, x+"/")
		}
		if excluded || rules.Ignored(p, false) || object.IsFile(s.Mode) && int64(len(s.Content)) > r.opts.MaxFileSize {
			out = append(out, p)
		}
	}
	sort.Strings(out)
	return out
}

// leaveIgnored keeps the files the revert would delete that the manifest
// does not list and the ignore rules of the result leave out: files the
// run's own ignore rule changes showed, which may have been there, ignored,
// before it (a run that removed "*.env" from .gitignore shows the user's
// .env as added). Their state before the run was never recorded; they stay
// as they are.
func (t *revertTree) leaveIgnored(root string, rv *revert) {
	rules := scan.NewRules(root, func(p string) ([]byte, bool) {
		s, err := t.Read(p)
		if err != nil || s == nil || !object.IsFile(s.Mode) {
			return nil, false
		}
		return s.Content, true
	})
	for p, s := range t.edits {
		if _, listed := rv.manifest.Files[p]; s != nil || listed || !rules.Ignored(p, false) {
			continue
		}
		// Not where the result has a file: the run made it there.
		blocked := false
		for d := path.Dir(p); d != "." && !blocked; d = path.Dir(d) {
			blocked = t.edits[d] != nil
		}
		if !blocked {
			delete(t.edits, p)
			t.leave[p] = true
		}
	}
}

// revert is a run's record of what to undo, read as untrusted input.
type revert struct {
	patch    *diff.Patch
	manifest Manifest
	affected []string // every path the patch names, sorted
	// touched adds the paths earlier attempts' diffs name, sorted.
	touched []string
}

// loadRevert reads and checks a run directory's changes.diff and
// manifest.json, and the paths the diffs of its attempts (attempt-1.diff
// to attempt-N.diff, N the attempts run.json records) name. A path of
// changes.diff out of the workspace, or into what ckpt never captures
// (.git, .ckpt, .decree), is refused.
func loadRevert(runDir string, attempts int) (*revert, error) {
	patchData, err := os.ReadFile(filepath.Join(runDir, "changes.diff"))
	if err != nil {
		return nil, err
	}
	manData, err := os.ReadFile(filepath.Join(runDir, "manifest.json"))
	if err != nil {
		return nil, err
	}
	rv := &revert{patch: &diff.Patch{}}
	if err := rv.manifest.UnmarshalJSON(manData); err != nil {
		return nil, fmt.Errorf("%s: %w", filepath.Join(runDir, "manifest.json"), err)
	}
	if len(bytes.TrimSpace(patchData)) > 0 {
		if rv.patch, err = diff.Parse(patchData); err != nil {
			return nil, fmt.Errorf("%s: %w", filepath.Join(runDir, "changes.diff"), err)
		}
	}
	if rv.affected, err = patchPaths(filepath.Join(runDir, "changes.diff"), rv.patch); err != nil {
		return nil, err
	}
	// Paths earlier attempts changed: one the last attempt's new ignore
	// rules hide is in no checkpoint of it, and only these name it.
	touched := map[string]bool{}
	for _, p := range rv.affected {
		touched[p] = true
	}
	for _, p := range attemptPaths(runDir, attempts) {
		if !touched[p] {
			touched[p] = true
			rv.touched = append(rv.touched, p)
		}
	}
	rv.touched = append(rv.touched, rv.affected...)
	sort.Strings(rv.touched)
	return rv, nil
}

// attemptPaths returns the paths the diffs of a run's first n attempts
// name, skipping what cannot be read or is not a valid workspace path (a
// routine can write its run directory: these name more paths for a revert
// to look at, never what it writes).
func attemptPaths(runDir string, n int) []string {
	var out []string
	for k := 1; k <= n && k <= run.MaxAttempts; k++ {
		data, err := fsroot.ReadRegular(filepath.Join(runDir, fmt.Sprintf("attempt-%d.diff", k)), 1<<30)
		if err != nil {
			continue
		}
		p, err := diff.Parse(data)
		if err != nil {
			continue
		}
		for _, fp := range p.Files {
			for _, q := range []string{fp.OldPath, fp.NewPath} {
				if q != "" && diff.CheckPath(q) == nil && !reservedPath(q) {
					out = append(out, q)
				}
			}
		}
	}
	return out
}

// reservedPath reports whether p lies in .git, .ckpt or .decree.
func reservedPath(p string) bool {
	for c := range strings.SplitSeq(p, "/") {
		if object.Reserved(c) {
			return true
		}
	}
	return false
}

// patchPaths returns the paths p names, sorted, refusing any out of the
// workspace or into what ckpt never captures.
func patchPaths(file string, p *diff.Patch) ([]string, error) {
	var out []string
	seen := map[string]bool{}
	for _, fp := range p.Files {
		for _, p := range []string{fp.OldPath, fp.NewPath} {
			if p == "" || seen[p] {
				continue
			}
			if err := diff.CheckPath(p); err != nil {
				return nil, fmt.Errorf("%s: %w; nothing was changed", file, err)
			}
			for c := range strings.SplitSeq(p, "/") {
				if object.Reserved(c) {
					return nil, fmt.Errorf("%s: path %s is inside %s, which is never checkpointed; nothing was changed", file, diff.QuotePath(p), c)
				}
			}
			seen[p] = true
			out = append(out, p)
		}
	}
	sort.Strings(out)
	return out, nil
}

// revertTree is a stored tree seen as a [diff.Tree]: it reads files from
// the store and collects writes and removals in memory, so a patch is
// applied without touching the workspace. Like the workspace, it refuses
// to read or replace a directory, and to write below a file.
type revertTree struct {
	ctx   context.Context
	st    store.Store
	root  object.ID
	edits map[string]*diff.Side // nil: removed
	// leave: paths left as they are (see leaveIgnored).
	leave map[string]bool
}

var _ diff.Tree = (*revertTree)(nil)

func (t *revertTree) lookup(p string) (*object.Entry, error) {
	e, ok, err := tree.Lookup(t.ctx, t.st.ReadTree, t.root, p)
	if err != nil || !ok {
		return nil, err
	}
	return &e, nil
}

// Read returns the file at p (after the edits so far), or nil.
func (t *revertTree) Read(p string) (*diff.Side, error) {
	if s, ok := t.edits[p]; ok {
		return s, nil
	}
	e, err := t.lookup(p)
	if err != nil || e == nil {
		return nil, err
	}
	if object.IsDir(e.Mode) {
		if gone, err := t.emptied(p, e); err != nil || gone {
			return nil, err // a directory the edits emptied is absent
		}
		return nil, fmt.Errorf("%s: %w", diff.QuotePath(p), diff.ErrIsDir)
	}
	data, err := t.st.ReadBlob(t.ctx, e.ID)
	if err != nil {
		return nil, err
	}
	return &diff.Side{Mode: e.Mode, Content: data}, nil
}

// Write records p's new content.
func (t *revertTree) Write(p string, s *diff.Side) error {
	if !object.ValidPath(p) || s == nil || !object.ValidMode(s.Mode) || object.IsDir(s.Mode) {
		return fmt.Errorf("invalid write of %s", diff.QuotePath(p))
	}
	for d := path.Dir(p); d != "."; d = path.Dir(d) {
		if s, ok := t.edits[d]; ok {
			if s != nil {
				return fmt.Errorf("%s is not a directory", diff.QuotePath(d))
			}
			continue
		}
		e, err := t.lookup(d)
		if err != nil {
			return err
		}
		if e != nil && !object.IsDir(e.Mode) {
			return fmt.Errorf("%s is not a directory", diff.QuotePath(d))
		}
	}
	if _, ok := t.edits[p]; !ok {
		e, err := t.lookup(p)
		if err != nil {
			return err
		}
		if e != nil && object.IsDir(e.Mode) {
			if gone, err := t.emptied(p, e); err != nil {
				return err
			} else if !gone {
				return fmt.Errorf("%s is a directory", diff.QuotePath(p))
			}
		}
	}
	t.edits[p] = &diff.Side{Mode: s.Mode, Content: bytes.Clone(s.Content)}
	return nil
}

// Below lists the stored files below the directory dir.
func (t *revertTree) Below(dir string) ([]string, error) {
	e, err := t.lookup(dir)
	if err != nil || e == nil || !object.IsDir(e.Mode) {
		return nil, err
	}
	var out []string
	err = tree.Walk(t.ctx, t.st.ReadTree, e.ID, nil, func(q string, _ object.Entry) error {
		out = append(out, dir+"/"+q)
		return nil
	})
	return out, err
}

var _ diff.DirTree = (*revertTree)(nil)

// emptied reports whether the edits removed every file below the stored
// directory e at p (a run that turned a file into a directory, reversed:
// the directory's files go first, then the file comes back).
func (t *revertTree) emptied(p string, e *object.Entry) (bool, error) {
	all := true
	err := tree.Walk(t.ctx, t.st.ReadTree, e.ID, nil, func(q string, _ object.Entry) error {
		if s, ok := t.edits[p+"/"+q]; !ok || s != nil {
			all = false
		}
		return nil
	})
	if err != nil {
		return false, err
	}
	for q, s := range t.edits {
		if s != nil && strings.HasPrefix(q, p+"/") {
			return false, nil // something written below it since
		}
	}
	return all, nil
}

// Remove records p's removal (directories it empties go with it).
func (t *revertTree) Remove(p string) error {
	if !object.ValidPath(p) {
		return fmt.Errorf("invalid path %q", p)
	}
	t.edits[p] = nil
	return nil
}

// mismatches returns the affected paths whose state (after the edits so
// far) is not the manifest's.
func (t *revertTree) mismatches(rv *revert) ([]string, error) {
	var bad []string
	for _, p := range rv.affected {
		if t.leave[p] {
			continue
		}
		want, listed := rv.manifest.Files[p]
		var (
			present bool
			mode    uint32
			sum     string
			size    int64
		)
		if s, ok := t.edits[p]; ok {
			if s != nil {
				present, mode, sum, size = true, s.Mode, object.Sum(s.Content).String(), int64(len(s.Content))
			}
		} else {
			e, err := t.lookup(p)
			if err != nil {
				return nil, err
			}
			if e != nil {
				present, mode, sum, size = true, e.Mode, e.ID.String(), e.Size
			}
		}
		switch {
		case !listed && present:
			bad = append(bad, p)
		case listed && (!present || object.IsDir(mode) || sum != want.SHA256 || size != want.Size || ManifestMode(mode) != want.Mode):
			bad = append(bad, p)
		}
	}
	return bad, nil
}

// storeReverted stores the reverted state — the captured tree with t's
// edits laid over it — as a checkpoint (kind restore, HEAD unmoved) and
// returns its id. If restoring it would have to leave an affected path
// alone (an ignored or untracked file in the way), it stores nothing and
// returns those paths.
func (r *Repo) storeReverted(ctx context.Context, t *revertTree, c *capture, runID, why string) (ID, []string, error) {
	var (
		target ID
		kept   []string
	)
	err := r.st.Update(ctx, func(tx store.Tx) error {
		edits := map[string]*object.Entry{}
		for p, s := range t.edits {
			if s == nil {
				edits[p] = nil
				continue
			}
			id, err := putBlob(tx, s.Content)
			if err != nil {
				return err
			}
			edits[p] = &object.Entry{Name: path.Base(p), Mode: s.Mode, ID: id, Size: int64(len(s.Content))}
		}
		load := func(ctx context.Context, id object.ID) (*object.Tree, error) { return tx.ReadTree(id) }
		root, err := tree.Overlay(ctx, load, tx.PutTree, c.res.Root, edits)
		if err != nil {
			return err
		}
		// What the restore would do, checked as a dry run checks it.
		plan, err := restore.MakePlan(ctx, load, c.res.Root, root, nil, c.res.Untracked)
		if err != nil {
			return err
		}
		keepNested(plan, c.res)
		osroot, err := fsroot.Open(r.root)
		if err != nil {
			return err
		}
		checked, err := (&restore.Applier{Root: osroot}).Check(plan)
		osroot.Close()
		if err != nil {
			return err
		}
		for _, a := range checked {
			if a.Op == restore.Keep {
				kept = append(kept, a.Path)
			}
		}
		if len(kept) > 0 {
			return errDryRun // store nothing
		}
		headRef, headRec, err := r.head(ctx)
		if err != nil {
			return err
		}
		var size int64
		if t, err := load(ctx, root); err == nil {
			size = t.Size()
		}
		cp := &object.Checkpoint{Tree: root, Kind: KindRestore, Message: "revert: " + why, Meta: map[string]string{"run": runID}}
		rec, err := r.newCheckpoint(ctx, tx, cp, headRec, -1, size, false, headRef)
		if err != nil {
			return err
		}
		target = rec.ID
		return nil
	})
	if errors.Is(err, errDryRun) {
		return ID{}, kept, nil
	}
	return target, nil, err
}

// putBlob stores content unless the store has it (a file's content from
// before the run usually is), in chunks if it is large.
func putBlob(tx store.Tx, data []byte) (object.ID, error) {
	id := object.Sum(data)
	if ok, err := tx.HasBlob(id); err != nil || ok {
		return id, err
	}
	if len(data) < store.ChunkThreshold {
		return id, tx.PutBlob(id, data)
	}
	w := tx.NewBlobWriter()
	if _, err := w.Write(data); err != nil {
		w.Abort()
		return id, err
	}
	return id, w.Commit(id)
}

// restoreRunCheckpoint puts the workspace back to the state before a
// run's first attempt by restoring its checkpoint with the engine's
// verified restore: the fallback when changes.diff does not reverse. Every
// path that checkpoint holds, and every path the run's attempt diffs name,
// is written or removed whatever the ignore rules say now; anything else
// in the way (a file no checkpoint holds) makes it an [*IntegrityError]
// (the restore leaves such paths alone). mark is as for revertRun.
func (r *Repo) restoreRunCheckpoint(ctx context.Context, runDir string, rec *RunRecord, mark *runMark) error {
	ctx = context.WithoutCancel(ctx) // a restore, once started, finishes
	id, err := object.ParseID(rec.Checkpoint)
	if err != nil {
		return fmt.Errorf("run %s names no checkpoint to restore (%q)", rec.ID, rec.Checkpoint)
	}
	unlock, err := r.begin(ctx)
	if err != nil {
		return err
	}
	defer unlock()
	cp, err := r.st.Checkpoint(ctx, id)
	if err != nil {
		return fmt.Errorf("run %s: checkpoint %s: %w", rec.ID, id.Short(), err)
	}
	if cp.Meta["run"] != rec.ID {
		// run.json is a file in the workspace: restore only a checkpoint
		// this run took.
		return fmt.Errorf("run %s: checkpoint %s is not the checkpoint of this run", rec.ID, id.Short())
	}
	// The workspace is captured as the checkpoint's own ignore rules see
	// it: what a run's new rule hid is the run's and goes, a user's
	// ignored file that a run's removed rule showed is not, and stays.
	j := journalData{Op: OpRevert, Target: id, RulesFrom: cp.Tree}
	if mark != nil {
		m := *mark
		if m.Result == "" {
			m.Result = id.String()
		}
		j.Run = &m
	}
	res, err := r.restoreLocked(ctx, j, false)
	if err != nil {
		return err
	}
	var kept []string
	for _, a := range res.Actions {
		if a.Op == "keep" {
			kept = append(kept, string(a.Path))
		}
	}
	if len(kept) > 0 {
		return &IntegrityError{Op: "restore of checkpoint " + id.Short() + " (files no checkpoint holds are in the way)", Paths: kept}
	}
	return r.sweepLeftovers(ctx, id, mark)
}

// sweepLeftovers removes what a run left that its revert could not see:
// files the ignore rules of the workspace hid from every checkpoint of the
// run (a file a routine made and ignored in one attempt, an ignore file
// that ignores itself) but that the rules of the state put back, target,
// show. Such a file was made during the run — before it, those rules
// showed it, so the run's checkpoint would hold it. It is removed by a
// restore to target (op revert) whose capture uses target's rules, so the
// checkpoint before that restore keeps it. The lock must be held.
func (r *Repo) sweepLeftovers(ctx context.Context, target ID, mark *runMark) error {
	cp, err := r.st.Checkpoint(ctx, target)
	if err != nil {
		return err
	}
	for try := 0; ; try++ {
		extra, err := r.extraFiles(ctx, cp.Tree)
		if err != nil || len(extra) == 0 {
			return err
		}
		if try == 2 {
			return &IntegrityError{Op: "revert (files the run left are still there)", Paths: extra}
		}
		j := journalData{Op: OpRevert, Target: target, RulesFrom: cp.Tree}
		if mark != nil {
			m := *mark
			m.Result = target.String()
			j.Run = &m
		}
		if _, err := r.restoreLocked(ctx, j, false); err != nil {
			return err
		}
	}
}

// extraFiles returns the files and symlinks in the workspace that the
// ignore rules of the stored tree root show and root does not hold.
func (r *Repo) extraFiles(ctx context.Context, root object.ID) ([]string, error) {
	o := r.scanOptions(ctx, nil, nil) // hashed only
	o.IgnoreFiles = r.treeFile(ctx, root)
	res, err := scan.Scan(ctx, o)
	if err != nil {
		return nil, scanError(err)
	}
	if res.Root == root {
		return nil, nil
	}
	load := func(ctx context.Context, id object.ID) (*object.Tree, error) {
		if data, ok := res.Trees[id]; ok {
			return object.DecodeTree(data)
		}
		return r.st.ReadTree(ctx, id)
	}
	var extra []string
	err = tree.Diff(ctx, load, root, res.Root, nil, func(c tree.Change) error {
		if c.Old == nil && c.New != nil {
			extra = append(extra, c.Path)
		}
		return nil
	})
	return extra, err
}

// treeFile reads a file of a stored tree, for ignore rules.
func (r *Repo) treeFile(ctx context.Context, root object.ID) func(p string) ([]byte, bool) {
	return func(p string) ([]byte, bool) {
		e, ok, err := tree.Lookup(ctx, r.st.ReadTree, root, p)
		if err != nil || !ok || !object.IsFile(e.Mode) {
			return nil, false
		}
		data, err := r.st.ReadBlob(ctx, e.ID)
		return data, err == nil
	}
}
