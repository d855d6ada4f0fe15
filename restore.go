package ckpt

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/seed1cedbf7c/ckpt/internal/failpoint"
	"github.com/seed1cedbf7c/ckpt/internal/fsroot"
	"github.com/seed1cedbf7c/ckpt/internal/object"
	"github.com/seed1cedbf7c/ckpt/internal/restore"
	"github.com/seed1cedbf7c/ckpt/internal/run"
	"github.com/seed1cedbf7c/ckpt/internal/scan"
	"github.com/seed1cedbf7c/ckpt/internal/store"
	"github.com/seed1cedbf7c/ckpt/internal/tree"
)

// RestoreOptions configure [Repo.Restore].
type RestoreOptions struct {
	// Paths restrict the restore to these workspace-relative paths.
	Paths []string
	// DryRun plans the restore and reports it without changing anything.
	DryRun bool
}

// Action is one change a restore makes (or, in a dry run, would make).
type Action struct {
	Path Path `json:"path"`
	// Op is "create", "update", "delete", or "keep" for a path left alone
	// because it holds data no checkpoint has (see Reason).
	Op     string `json:"action"`
	Reason string `json:"reason,omitempty"`
}

// RestoreResult reports a restore.
type RestoreResult struct {
	Target *Checkpoint `json:"target"`
	// PreRestore is the checkpoint of the state before the restore, when
	// it differed from HEAD (nil otherwise).
	PreRestore *Checkpoint `json:"pre_restore,omitempty"`
	// Head is where HEAD points afterwards.
	Head    ID       `json:"head"`
	Actions []Action `json:"actions"`
	DryRun  bool     `json:"dry_run,omitempty"`
}

// Changed returns the paths written or deleted.
func (r *RestoreResult) Changed() []Path {
	var out []Path
	for _, a := range r.Actions {
		if a.Op != "keep" {
			out = append(out, a.Path)
		}
	}
	return out
}

// journalData is what a restore records before it touches the workspace.
type journalData struct {
	Op     OpKind   `json:"op"` // restore, undo, redo, switch, rewind, revert
	Target ID       `json:"target"`
	Before ID       `json:"before"`
	Head   ID       `json:"head"` // HEAD before the operation (zero: none)
	Paths  pathList `json:"paths,omitempty"`
	// Base, if set, is the workspace's tree the target was computed from
	// (a revert, a rewind keeping the user's edits): a workspace that
	// differs from it now makes the restore stop before it stores or
	// writes anything (errBaseChanged), so the caller computes again.
	Base     ID     `json:"base,omitempty"`
	Stage    string `json:"stage"`
	OpTarget int64  `json:"op_target,omitempty"`
	Pre      bool   `json:"pre,omitempty"` // Before is a new pre-restore checkpoint
	// Branch, if set, is the branch HEAD moves to (a switch, or undoing
	// one); FromBranch is the branch it leaves.
	Branch     string `json:"branch,omitempty"`
	FromBranch string `json:"from_branch,omitempty"`
	// Run, for a run's revert, is what the run's record says afterwards;
	// it is written before the journal is cleared.
	Run *runMark `json:"run,omitempty"`
	// Include lists paths the restore's captures take whatever the ignore
	// rules say (a run's revert: the files its routine's new ignore rules
	// cover), so that it writes them as tracked files, their current
	// content kept in the checkpoint before it.
	Include pathList `json:"include,omitempty"`
	// RulesFrom, if set, is a tree whose ignore files the restore's
	// captures use instead of the disk's: a run's state put back as its
	// own rules see the workspace (what a run's rule hid is the run's; a
	// user's file its removed rule showed is not).
	RulesFrom ID `json:"rules_from,omitempty"`
}

// computeAndRestore runs a restore of a target computed from the
// workspace: compute returns the target and the workspace tree it was
// computed from. If the workspace changes before the restore starts (an
// edit made meanwhile, which the target would undo), it computes again,
// at most three times.
func (r *Repo) computeAndRestore(ctx context.Context, j journalData, compute func() (target, base ID, err error)) (*RestoreResult, error) {
	for attempt := 1; ; attempt++ {
		target, base, err := compute()
		if err != nil {
			return nil, err
		}
		j.Target, j.Base = target, base
		res, err := r.restoreLocked(ctx, j, false)
		if errors.Is(err, errBaseChanged) {
			if attempt < 3 {
				continue
			}
			return nil, withHint(fmt.Errorf("%s: %w; nothing was changed", j.Op, err), "the workspace kept changing; run the "+string(j.Op)+" again once it is still")
		}
		return res, err
	}
}

// pathList is a list of paths whose JSON form keeps every name, non-UTF-8
// ones included (each encoded as a [Path]): encoding/json would replace
// invalid bytes with U+FFFD, and a journal must name exactly what it
// restores.
type pathList []string

// MarshalJSON implements json.Marshaler.
func (l pathList) MarshalJSON() ([]byte, error) {
	ps := make([]Path, len(l))
	for i, p := range l {
		ps[i] = Path(p)
	}
	return json.Marshal(ps)
}

// UnmarshalJSON implements json.Unmarshaler.
func (l *pathList) UnmarshalJSON(b []byte) error {
	var ps []Path
	if err := json.Unmarshal(b, &ps); err != nil {
		return err
	}
	*l = make(pathList, len(ps))
	for i, p := range ps {
		(*l)[i] = string(p)
	}
	return nil
}

// Restore makes the workspace (or opts.Paths) equal to the checkpoint rev
// names. It first checkpoints the current state if it differs from HEAD
// (kind pre-restore), writes only what differs, and then hash-verifies every
// path it wrote; a mismatch is an [*IntegrityError]. A restore of a partial
// checkpoint touches only that checkpoint's paths. Restore is recorded in
// the operation log, so [Repo.Undo] takes it back.
func (r *Repo) Restore(ctx context.Context, rev string, opts RestoreOptions) (*RestoreResult, error) {
	paths, err := cleanOptionalPaths(opts.Paths)
	if err != nil {
		return nil, err
	}
	if opts.DryRun {
		id, err := r.Resolve(ctx, rev)
		if err != nil {
			return nil, err
		}
		if err := r.checkRestorePaths(ctx, id, paths); err != nil {
			return nil, err
		}
		return r.dryRun(ctx, id, paths)
	}
	unlock, err := r.begin(ctx)
	if err != nil {
		return nil, err
	}
	defer unlock()
	id, err := r.Resolve(ctx, rev)
	if err != nil {
		return nil, err
	}
	if err := r.checkRestorePaths(ctx, id, paths); err != nil {
		return nil, err
	}
	return r.restoreLocked(ctx, journalData{Op: OpRestore, Target: id, Paths: paths}, false)
}

// checkRestorePaths refuses a path that is neither in the checkpoint nor in
// the workspace (a typo would otherwise restore nothing, silently).
func (r *Repo) checkRestorePaths(ctx context.Context, id ID, paths []string) error {
	if len(paths) == 0 {
		return nil
	}
	rec, err := r.st.Checkpoint(ctx, id)
	if err != nil {
		return err
	}
	load := func(ctx context.Context, id object.ID) (*object.Tree, error) { return r.st.ReadTree(ctx, id) }
	for _, p := range paths {
		if _, ok, err := tree.Lookup(ctx, load, rec.Tree, p); err != nil {
			return err
		} else if ok {
			continue
		}
		if _, err := os.Lstat(filepath.Join(r.root, filepath.FromSlash(p))); err == nil {
			continue
		}
		return withHint(fmt.Errorf("restore: %s is neither in checkpoint %s nor in the workspace", QuotePath(p), id.Short()),
			"check the path (paths are relative to the workspace, or to the current directory on the command line); `ckpt show "+id.Short()+"` lists what the checkpoint changed")
	}
	return nil
}

// effectiveFilter combines the user's paths with a partial target's paths.
func effectiveFilter(user []string, target *store.Record) []string {
	if !target.Partial() {
		return user
	}
	if len(user) == 0 {
		return target.Paths
	}
	var out []string
	for _, u := range user {
		for _, t := range target.Paths {
			switch {
			case u == t || strings.HasPrefix(u, t+"/"):
				out = append(out, u)
			case strings.HasPrefix(t, u+"/"):
				out = append(out, t)
			}
		}
	}
	if out == nil {
		out = []string{"\x00none"} // matches nothing
	}
	return out
}

func (r *Repo) dryRun(ctx context.Context, id ID, paths []string) (*RestoreResult, error) {
	target, err := r.st.Checkpoint(ctx, id)
	if err != nil {
		return nil, err
	}
	cache := r.loadCache(ctx)
	o := r.scanOptions(ctx, nil, cache)
	o.Tracked = trackedOf(target)
	res, err := scan.Scan(ctx, o)
	cache.Close()
	if err != nil {
		return nil, scanError(err)
	}
	load := func(ctx context.Context, id object.ID) (*object.Tree, error) {
		if data, ok := res.Trees[id]; ok {
			return object.DecodeTree(data)
		}
		return r.st.ReadTree(ctx, id)
	}
	filter := tree.NewFilter(effectiveFilter(paths, target))
	plan, err := restore.MakePlan(ctx, load, res.Root, target.Tree, filter, res.Untracked)
	if err != nil {
		return nil, err
	}
	keepNested(plan, res)
	root, err := fsroot.Open(r.root)
	if err != nil {
		return nil, err
	}
	defer root.Close()
	out := &RestoreResult{DryRun: true, Actions: []Action{}}
	if out.Target, err = r.describe(ctx, target); err != nil {
		return nil, err
	}
	if _, h, err := r.head(ctx); err == nil && h != nil {
		out.Head = h.ID
	}
	checked, err := (&restore.Applier{Root: root}).Check(plan)
	if err != nil {
		return nil, err
	}
	for _, a := range checked {
		out.Actions = append(out.Actions, Action{Path: Path(a.Path), Op: string(a.Op), Reason: a.Reason})
	}
	return out, nil
}

// metaRecentStages is the store setting listing the staging directories
// of the last restores (space-separated, newest last): a watcher saw them
// made in the workspace, and a save may count them as ckpt's own once
// they are gone (scan.Options.GoneTemp).
const metaRecentStages = "recent_stages"

// maxRecentStages bounds that list.
const maxRecentStages = 8

// rememberStage adds stage to the recent staging directories (in tx, with
// the journal that names it).
func rememberStage(ctx context.Context, st store.Store, tx store.Tx, stage string) error {
	v, err := st.Meta(ctx, metaRecentStages)
	if err != nil {
		return err
	}
	list := recentStages(v)
	if slices.Contains(list, stage) {
		return nil
	}
	list = append(list, stage)
	list = list[max(0, len(list)-maxRecentStages):]
	return tx.SetMeta(metaRecentStages, strings.Join(list, " "))
}

// recentStages parses the recent_stages setting, keeping only names a
// restore makes (a store value is validated like any other input).
func recentStages(v string) []string {
	var out []string
	for _, f := range strings.Fields(v) {
		if strings.HasPrefix(f, scan.TempPrefix) && len(f) > len(scan.TempPrefix) && !strings.ContainsAny(f, "/\\") {
			out = append(out, f)
		}
	}
	return out
}

func newStageName() string {
	var b [6]byte
	rand.Read(b[:])
	return scan.TempPrefix + hex.EncodeToString(b[:])
}

// restoreLocked runs a restore (or undo/redo) with the lock held. j names
// the target, paths and op; when recovering, j is the interrupted journal.
// A path edited after the restore's scan and before its first change makes
// it start again (the edit is then checkpointed first), at most twice.
func (r *Repo) restoreLocked(ctx context.Context, j journalData, recovering bool) (*RestoreResult, error) {
	for attempt := 1; ; attempt++ {
		res, err := r.restoreAttempt(ctx, j, recovering)
		if attempt < 3 && errors.Is(err, restore.ErrStage) && errors.Is(err, restore.ErrChanged) {
			continue
		}
		return res, err
	}
}

// restoreAttempt is one try at a restore, in three steps: journal (scan,
// plan, keep the current state, write the journal — one transaction),
// apply (write the workspace and verify it), finalize (move HEAD, log the
// operation, clear the journal — one transaction).
func (r *Repo) restoreAttempt(ctx context.Context, j journalData, recovering bool) (*RestoreResult, error) {
	rs, err := r.journalRestore(ctx, &j, recovering)
	if err != nil {
		return nil, err
	}
	out := &RestoreResult{Actions: []Action{}}
	if out.Target, err = r.describe(ctx, rs.target); err != nil {
		return nil, err
	}
	if rs.preRec != nil {
		if out.PreRestore, err = r.describe(ctx, rs.preRec); err != nil {
			return nil, err
		}
	}
	oc, err := r.applyRestore(ctx, rs, j, recovering)
	if err != nil {
		return nil, err
	}
	if out.Head, err = r.finalizeRestore(ctx, rs, j, oc); err != nil {
		return nil, err
	}
	out.Actions = restoreActions(rs.plan, oc)
	r.emit(Event{Kind: restoreEvent(j.Op, recovering), Checkpoint: out.Head, Paths: out.Changed(),
		Message: string(j.Op) + " to " + rs.target.ID.Short()})
	return out, nil
}

// restoreState is what a restore's journal step found and decided.
type restoreState struct {
	headRef *store.Ref
	headRec *store.Record
	target  *store.Record
	filter  *tree.Filter
	c       *capture
	plan    *restore.Plan
	current object.ID     // the workspace's tree when the restore began
	preRec  *store.Record // the checkpoint of that state, if one was made
}

// journalRestore scans the workspace, plans the restore, stores a
// checkpoint of the current state unless one already holds it, and
// records the journal, all in one store transaction. It fills in j's
// stage, head and before when starting (not when recovering).
func (r *Repo) journalRestore(ctx context.Context, j *journalData, recovering bool) (*restoreState, error) {
	rs := &restoreState{}
	var err error
	rs.headRef, rs.headRec, err = r.head(ctx)
	if err != nil {
		return nil, err
	}
	if rs.target, err = r.st.Checkpoint(ctx, j.Target); err != nil {
		return nil, err
	}
	if failpoint.Enabled() {
		if err := failpoint.Hit("restore/before-tx", string(j.Op)); err != nil {
			return nil, err
		}
	}
	rs.filter = tree.NewFilter(effectiveFilter(j.Paths, rs.target))
	if !recovering {
		j.Stage = newStageName()
		j.Head = object.ZeroID
		if rs.headRec != nil {
			j.Head = rs.headRec.ID
		}
	}
	err = r.st.Update(ctx, func(tx store.Tx) error {
		// HEAD again, now that no other writer can commit until this
		// transaction ends: a watcher finishing a save for a client that
		// died may have moved it since (see saveLocked). That is the
		// state before the restore, what undo goes back to.
		ref, now, err := r.head(ctx)
		if err != nil {
			return err
		}
		rs.headRef, rs.headRec = ref, now
		if !recovering {
			j.Head = recID(now)
		}
		rs.c, err = r.captureTx(ctx, tx, false, &captureRules{include: j.Include, from: j.RulesFrom, tracked: trackedOf(rs.target)})
		if err != nil {
			return err
		}
		rs.current = rs.c.res.Root
		if !recovering && !j.Base.IsZero() && rs.current != j.Base {
			return errBaseChanged
		}
		load := func(ctx context.Context, id object.ID) (*object.Tree, error) { return tx.ReadTree(id) }
		rs.plan, err = restore.MakePlan(ctx, load, rs.current, rs.target.Tree, rs.filter, rs.c.res.Untracked)
		if err != nil {
			return err
		}
		keepNested(rs.plan, rs.c.res)
		// Keep the current state unless a checkpoint already holds it.
		// A capture that took ignored files HEAD does not list (they are
		// absent, so the trees match) still needs its own checkpoint:
		// HEAD does not say they were absent, and undo would leave what
		// the restore writes there.
		needPre := (rs.headRec == nil || rs.current != rs.headRec.Tree || !listsAll(rs.headRec, rs.c.tracked)) && rs.current != rs.target.Tree
		if recovering {
			// The state before the interrupted restore is j.Before; the
			// half-restored state needs no checkpoint unless something else
			// changed files meanwhile.
			needPre, err = r.strayChanges(ctx, load, rs.plan, j.Before)
			if err != nil {
				return err
			}
			// Its deletions may be done and the directories they emptied
			// not yet removed: the plan prunes them too.
			before, err := r.st.Checkpoint(ctx, j.Before)
			switch {
			case err == nil:
				orig, err := restore.MakePlan(ctx, load, before.Tree, rs.target.Tree, rs.filter, nil)
				if err != nil {
					return err
				}
				rs.plan.PruneAlso(orig)
			case !errors.Is(err, store.ErrNotFound):
				return err
			}
		}
		if needPre {
			msg := "before " + string(j.Op) + " to " + rs.target.ID.Short()
			if recovering {
				msg = "found while recovering an interrupted " + string(j.Op)
			}
			cp := &object.Checkpoint{Tree: rs.current, Kind: KindPreRestore, Message: msg, Meta: withTracked(nil, rs.c.tracked)}
			rs.preRec, err = r.newCheckpoint(ctx, tx, cp, rs.headRec, rs.c.res.Files, rs.c.res.Bytes, false, rs.headRef)
			if err != nil {
				return err
			}
		}
		if !recovering {
			j.Before = j.Head
			switch {
			case rs.preRec != nil:
				j.Before, j.Pre = rs.preRec.ID, true
			case !needPre && rs.current == rs.target.Tree && listsAll(rs.target, rs.c.tracked):
				// The workspace is the target already (edits no
				// checkpoint held, which a rewind's target took in):
				// that is the state before, and what undo goes back to.
				j.Before = rs.target.ID
			}
		}
		if rs.plan.Empty() {
			return nil
		}
		data, _ := json.Marshal(j)
		if err := rememberStage(ctx, r.st, tx, j.Stage); err != nil {
			return err
		}
		return tx.SetJournal(&store.Journal{Kind: string(j.Op), Data: data})
	})
	if err != nil {
		rs.c.abort()
		return nil, err
	}
	r.commitCache(rs.c)
	return rs, nil
}

// applyRestore writes the plan into the workspace and verifies what it
// wrote. Recovering, it first removes the interrupted attempt's
// leftovers. A failure leaves the journal for recovery (or rolls back,
// when the restore had not begun changing the workspace).
func (r *Repo) applyRestore(ctx context.Context, rs *restoreState, j journalData, recovering bool) (*restore.Outcome, error) {
	if recovering {
		// Leftovers of the interrupted attempt (e.g. cross-device copies),
		// named after its staging directory.
		if root, err := fsroot.Open(r.root); err == nil {
			for _, t := range rs.c.res.Temp {
				if scan.OwnTemp(j.Stage, path.Base(t)) {
					root.RemoveAll(t)
				}
			}
			root.Close()
		}
	}
	if rs.plan.Empty() {
		oc := &restore.Outcome{}
		oc.Kept = append(oc.Kept, rs.plan.Actions...)
		return oc, nil
	}
	expect, done := r.expectations(ctx, rs.c)
	oc, err := r.apply(ctx, rs.plan, j.Stage, expect)
	done()
	if err != nil {
		if recovering {
			return nil, r.unfinished(ctx, err, j)
		}
		return nil, r.failedRestore(ctx, err, rs.plan, j, rs.current, oc)
	}
	if bad := r.verify(oc, rs.plan); len(bad) > 0 {
		r.clearJournal(ctx)
		return nil, &IntegrityError{Op: string(j.Op), Paths: bad}
	}
	return oc, nil
}

// finalizeRestore records a restore the workspace has taken: a run's
// record first, then, in one transaction, the journal cleared, HEAD moved
// (to a new checkpoint of the disk for a partial restore) and the
// operation logged. It returns the new HEAD.
func (r *Repo) finalizeRestore(ctx context.Context, rs *restoreState, j journalData, oc *restore.Outcome) (ID, error) {
	if j.Run != nil {
		// The run's record follows the workspace before the journal goes.
		if err := r.finishRun(j.Run); err != nil {
			return ID{}, withHint(fmt.Errorf("%s: record run %s: %w", j.Op, j.Run.ID, err),
				"the workspace is reverted; `ckpt recover` records it in the run once "+run.RunDir(r.root, j.Run.ID)+" can be written")
		}
	}
	newHead := rs.target.ID
	err := r.st.Update(ctx, func(tx store.Tx) error {
		if err := tx.SetJournal(nil); err != nil {
			return err
		}
		if rs.filter != nil {
			id, err := r.partialHead(ctx, tx, rs, j, oc)
			if err != nil {
				return err
			}
			newHead = id
		}
		hr := rs.headRef
		if j.Branch != "" {
			hr = &store.Ref{Name: headName, Symbolic: j.Branch}
		}
		if err := r.setHead(tx, newHead, hr); err != nil {
			return err
		}
		detail := ""
		if j.Op == OpSwitch {
			detail = j.FromBranch + " -> " + j.Branch
		}
		if j.Op != OpRestore || oc.Changed || j.Before != newHead || j.Head != newHead {
			_, err := tx.AppendOp(store.Op{Kind: string(j.Op), Before: j.Before, After: newHead, Target: j.OpTarget, Checkpoint: rs.target.ID, Detail: detail})
			return err
		}
		return nil
	})
	if err != nil {
		if oc.Changed {
			// The workspace is the target; only the record is missing, and
			// the journal (still there) makes the next command write it.
			return ID{}, withHint(fmt.Errorf("%s: the workspace is now %s, but recording that in the store failed: %w", j.Op, rs.target.ID.Short(), err),
				"nothing was lost; the next ckpt command records it once the store can be written again (for example, once space is freed"+r.storeWhere()+"); reading commands keep working meanwhile")
		}
		return ID{}, err
	}
	return newHead, nil
}

// partialHead returns where HEAD goes after a partial restore: the
// current tree with what the restore wrote and deleted laid over it —
// exactly the disk, paths it kept (and type changes above the paths)
// included — as the checkpoint it started from if that is the same tree,
// else as a new restore checkpoint.
func (r *Repo) partialHead(ctx context.Context, tx store.Tx, rs *restoreState, j journalData, oc *restore.Outcome) (ID, error) {
	load := func(ctx context.Context, id object.ID) (*object.Tree, error) { return tx.ReadTree(id) }
	root, err := tree.Overlay(ctx, load, tx.PutTree, rs.current, outcomeEdits(rs.plan, oc))
	if err != nil {
		return ID{}, err
	}
	base := rs.headRec
	if rs.preRec != nil {
		base = rs.preRec
	}
	if base != nil && root == base.Tree {
		return base.ID, nil
	}
	var bytes int64
	if t, err := load(ctx, root); err == nil {
		bytes = t.Size()
	}
	cp := &object.Checkpoint{Tree: root, Kind: KindRestore, Meta: withTracked(nil, rs.c.tracked),
		Message: fmt.Sprintf("%s %s -- %s", j.Op, rs.target.ID.Short(), strings.Join(j.Paths, " "))}
	if len(j.Paths) == 0 {
		cp.Message = fmt.Sprintf("%s %s (partial checkpoint)", j.Op, rs.target.ID.Short())
	}
	rec, err := r.newCheckpoint(ctx, tx, cp, base, -1, bytes, false, rs.headRef)
	if err != nil {
		return ID{}, err
	}
	return rec.ID, nil
}

// restoreActions lists what a restore did, by path.
func restoreActions(plan *restore.Plan, oc *restore.Outcome) []Action {
	created := map[string]bool{}
	for _, a := range plan.Actions {
		if a.Op == restore.Create {
			created[a.Path] = true
		}
	}
	out := []Action{}
	for _, p := range oc.Written {
		op := "update"
		if created[p] {
			op = "create"
		}
		out = append(out, Action{Path: Path(p), Op: op})
	}
	for _, p := range oc.Deleted {
		out = append(out, Action{Path: Path(p), Op: "delete"})
	}
	for _, a := range oc.Kept {
		out = append(out, Action{Path: Path(a.Path), Op: "keep", Reason: a.Reason})
	}
	sortActions(out)
	return out
}

// restoreEvent is the event a restore by op announces.
func restoreEvent(op OpKind, recovering bool) EventKind {
	switch {
	case recovering:
		return EventRecovered
	case op == OpUndo:
		return EventUndone
	case op == OpRedo:
		return EventRedone
	case op == OpSwitch:
		return EventSwitched
	case op == OpRewind:
		return EventRewound
	}
	return EventRestored
}

func sortActions(as []Action) {
	for i := 1; i < len(as); i++ {
		for k := i; k > 0 && as[k].Path < as[k-1].Path; k-- {
			as[k], as[k-1] = as[k-1], as[k]
		}
	}
}

// outcomeEdits returns what an apply did as tree edits: each written path's
// target entry, each deleted path removed.
func outcomeEdits(plan *restore.Plan, oc *restore.Outcome) map[string]*object.Entry {
	edits := map[string]*object.Entry{}
	for _, p := range oc.Deleted {
		edits[p] = nil
	}
	written := map[string]bool{}
	for _, p := range oc.Written {
		written[p] = true
	}
	for _, a := range plan.Actions {
		if written[a.Path] {
			e := *a.New
			edits[a.Path] = &e
		}
	}
	return edits
}

// strayChanges reports whether the workspace holds, at a path the plan
// touches, content that is neither the target's nor the state before an
// interrupted restore (i.e. someone edited files after the crash).
func (r *Repo) strayChanges(ctx context.Context, load tree.Loader, plan *restore.Plan, before ID) (bool, error) {
	rec, err := r.st.Checkpoint(ctx, before)
	if errors.Is(err, store.ErrNotFound) {
		return true, nil
	}
	if err != nil {
		return false, err
	}
	for _, a := range plan.Actions {
		e, ok, err := tree.Lookup(ctx, load, rec.Tree, a.Path)
		if err != nil {
			return false, err
		}
		switch {
		case a.Old == nil && !ok:
		case a.Old != nil && ok && a.Old.ID == e.ID && a.Old.Mode == e.Mode:
		default:
			return true, nil
		}
	}
	return false, nil
}

func (r *Repo) applier(root *fsroot.Root, stage string) *restore.Applier {
	a := &restore.Applier{Root: root, RootPath: r.root, Stage: stage,
		Blobs: func(ctx context.Context, id object.ID) (io.ReadCloser, error) {
			rc, _, err := r.st.OpenBlob(ctx, id)
			return rc, err
		}}
	if r.opts.Progress != nil {
		a.Progress = func(f, tf, b, tb int64) {
			r.progress(Progress{Op: "restore", Files: f, TotalFiles: tf, Bytes: b, TotalBytes: tb})
		}
	}
	a.BeforeChange = func() error { return failpoint.Hit("restore/before-change", "") }
	a.Hook = func(n int) error { return failpoint.Hit("restore/change", strconv.Itoa(n)) }
	return a
}

func (r *Repo) apply(ctx context.Context, plan *restore.Plan, stage string, expect func(string) (restore.Stat, bool)) (*restore.Outcome, error) {
	root, err := fsroot.Open(r.root)
	if err != nil {
		return nil, err
	}
	defer root.Close()
	a := r.applier(root, stage)
	a.Expect = expect
	return a.Apply(ctx, plan)
}

// expectations returns what the capture c saw of each path, from the stat
// cache it installed (nil when it installed none: the restore then
// compares content).
func (r *Repo) expectations(ctx context.Context, c *capture) (func(string) (restore.Stat, bool), func()) {
	if c == nil || !c.cached {
		return nil, func() {}
	}
	cache := r.loadCache(ctx)
	if cache == nil {
		return nil, func() {}
	}
	look := cache.Lookup()
	return func(p string) (restore.Stat, bool) {
		fs, ok := look(p)
		return restore.Stat{Mode: fs.Mode, Size: fs.Size, Mtime: fs.Mtime, Ctime: fs.Ctime, Ino: fs.Ino, Dev: fs.Dev, Racy: fs.Racy}, ok
	}, cache.Close
}

func (r *Repo) verify(oc *restore.Outcome, plan *restore.Plan) []string {
	root, err := fsroot.Open(r.root)
	if err != nil {
		return oc.Written
	}
	defer root.Close()
	return restore.Verify(root, oc, plan)
}

func (r *Repo) clearJournal(ctx context.Context) error {
	return r.st.Update(ctx, func(tx store.Tx) error { return tx.SetJournal(nil) })
}

// unfinished reports a recovery that could not finish: the journal is
// kept (recovery goes forward, to the target, never back to a half-way
// state), so a later `ckpt recover` finishes once the problem is fixed.
func (r *Repo) unfinished(ctx context.Context, err error, j journalData) error {
	if root, rerr := fsroot.Open(r.root); rerr == nil {
		root.RemoveAll(j.Stage)
		root.RemoveAll(j.Stage + "-back")
		root.Close()
	}
	before := ""
	if !j.Before.IsZero() {
		before = "; nothing is lost: the state before it is checkpoint " + j.Before.Short()
	}
	return withHint(&unfinishedError{op: string(j.Op), err: err},
		"the workspace is still part-way through the "+string(j.Op)+" and its journal is kept: fix what blocks it (above), then run `ckpt recover`"+before)
}

// storeWhere names the store's directory for a message (" in DIR").
func (r *Repo) storeWhere() string {
	if r.storeDir == "" {
		return ""
	}
	return " in " + r.storeDir
}

// failedRestore handles an error from apply: if the workspace was not
// touched, it clears the journal; otherwise it puts back what the apply
// changed (see rollback), and says so.
func (r *Repo) failedRestore(ctx context.Context, err error, plan *restore.Plan, j journalData, current object.ID, oc *restore.Outcome) error {
	if errors.Is(err, restore.ErrStage) {
		r.clearJournal(context.WithoutCancel(ctx))
		if errors.Is(err, restore.ErrChanged) {
			return withHint(fmt.Errorf("%s: %w", j.Op, err), "a file was changed while the "+string(j.Op)+" was being prepared; nothing was changed — run it again")
		}
		return fmt.Errorf("%s: %w", j.Op, err)
	}
	bctx := context.WithoutCancel(ctx)
	if root, rerr := fsroot.Open(r.root); rerr == nil {
		root.RemoveAll(j.Stage)
		root.Close()
	}
	kept, berr := r.rollback(bctx, current, plan, oc, j.Stage+"-back")
	if berr != nil {
		return withHint(fmt.Errorf("%s failed: %w; rolling back also failed: %v", j.Op, err, berr),
			"the workspace is half-restored; run `ckpt recover` to finish the "+string(j.Op)+" once the problem is fixed")
	}
	r.clearJournal(bctx)
	what := "the workspace was rolled back to its state before the " + string(j.Op) + "; nothing was lost"
	if len(kept) > 0 {
		what = fmt.Sprintf("the workspace was rolled back to its state before the %s, except %s, changed meanwhile and kept as found; nothing was lost", j.Op, strings.Join(quoteAll(kept), ", "))
	}
	if errors.Is(err, restore.ErrChanged) {
		return withHint(fmt.Errorf("%s stopped: %w", j.Op, err), what+"; run the "+string(j.Op)+" again")
	}
	return withHint(fmt.Errorf("%s failed: %w", j.Op, err), what)
}

func quoteAll(ps []string) []string {
	out := make([]string, len(ps))
	for i, p := range ps {
		out[i] = QuotePath(p)
	}
	return out
}

// rollback puts back, as they were in current, the paths a failed apply
// changed (oc). A path someone changed after the apply wrote or deleted it
// is left as found and returned in kept; paths the apply never touched
// are never written.
func (r *Repo) rollback(ctx context.Context, current object.ID, plan *restore.Plan, oc *restore.Outcome, stage string) (kept []string, err error) {
	if oc == nil || !oc.Changed {
		return nil, nil
	}
	res, err := scan.Scan(ctx, r.scanOptions(ctx, nil, nil))
	if err != nil {
		return nil, err
	}
	load := func(ctx context.Context, id object.ID) (*object.Tree, error) {
		if data, ok := res.Trees[id]; ok {
			return object.DecodeTree(data)
		}
		return r.st.ReadTree(ctx, id)
	}
	// What the apply left at each path it changed.
	left := map[string]*object.Entry{}
	for _, a := range plan.Actions {
		left[a.Path] = a.New
	}
	asLeft := func(p string, want *object.Entry) (bool, error) {
		now, ok, err := tree.Lookup(ctx, load, res.Root, p)
		switch {
		case err != nil:
			return false, err
		case !ok:
			if want != nil {
				return false, nil
			}
			// Absent, as the apply left it — unless someone put a file or
			// symlink where one of its directories was: that is theirs, and
			// putting p back would remove it.
			for d := path.Dir(p); d != "."; d = path.Dir(d) {
				e, ok, err := tree.Lookup(ctx, load, res.Root, d)
				if err != nil {
					return false, err
				}
				if ok && !object.IsDir(e.Mode) {
					return false, nil
				}
			}
			return true, nil
		case want != nil:
			return now.Mode == want.Mode && now.ID == want.ID, nil
		case object.IsDir(now.Mode):
			// Where a file was deleted, a directory: the apply's own if it
			// holds only what the apply wrote.
			mine := true
			err := tree.Walk(ctx, load, now.ID, nil, func(q string, e object.Entry) error {
				w, ok := left[p+"/"+q]
				if !ok || w == nil || w.Mode != e.Mode || w.ID != e.ID || !slices.Contains(oc.Written, p+"/"+q) {
					mine = false
				}
				return nil
			})
			return mine, err
		}
		return false, nil
	}
	var paths []string
	for _, list := range [][]string{oc.Written, oc.Deleted} {
		for _, p := range list {
			want := left[p]
			if slices.Contains(oc.Deleted, p) && !slices.Contains(oc.Written, p) {
				want = nil
			}
			ok, err := asLeft(p, want)
			if err != nil {
				return nil, err
			}
			if ok {
				paths = append(paths, p)
			} else {
				kept = append(kept, p)
			}
		}
	}
	if len(paths) > 0 {
		back, err := restore.MakePlan(ctx, load, res.Root, current, tree.NewFilter(paths), res.Untracked)
		if err != nil {
			return nil, err
		}
		keepNested(back, res)
		boc, err := r.apply(ctx, back, stage, nil)
		if err != nil {
			return nil, err
		}
		if bad := r.verify(boc, back); len(bad) > 0 {
			return nil, &IntegrityError{Op: "rollback", Paths: bad}
		}
	}
	// Directories the apply created, if left empty.
	if root, err := fsroot.Open(r.root); err == nil {
		for i := len(oc.Made) - 1; i >= 0; i-- {
			root.RemoveDir(oc.Made[i]) // only if empty
		}
		root.Close()
	}
	sort.Strings(kept)
	return kept, nil
}
