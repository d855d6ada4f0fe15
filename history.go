package ckpt

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/seed1cedbf7c/ckpt/internal/gitmirror"
	"github.com/seed1cedbf7c/ckpt/internal/object"
	"github.com/seed1cedbf7c/ckpt/internal/store"
)

// # Versioning
//
// Every checkpoint records its parent(s) and the branch HEAD was on when it
// was taken. A branch is a ref "branches/<name>" that saves on it advance;
// HEAD names the current branch. A tag is a fixed name for a checkpoint.

// ValidRefName checks a new branch or tag name: letters, digits, '_', '.',
// '-' and '/' (for groups like feature/x), at most 200 bytes, not starting
// with '-'; git check-ref-format must accept it as a ref (so no empty,
// '.'-led or ".lock"-ending components, no "..", no trailing '/' or '.');
// and it must not read as a revision: not HEAD or "@", not 4 or more hex
// digits (a checkpoint id prefix), not a qualified name (snapshots/x,
// tags/x, branches/x), which would reach another ref.
func ValidRefName(kind, name string) error {
	bad := func(reason string) error { return &NameError{Kind: kind, Name: name, Reason: reason} }
	switch {
	case name == "":
		return bad("it is empty")
	case name == "HEAD" || name == "@":
		return bad("it is reserved (it would read as the revision HEAD)")
	case strings.HasPrefix(name, "-"):
		return bad("it starts with '-'")
	case strings.HasSuffix(name, "/"):
		return bad("it ends with '/'")
	case len(name) > 200:
		return bad("it is longer than 200 bytes")
	case len(name) >= 4 && len(name) <= 64 && isHex(name):
		return bad("it would read as a checkpoint id (4 or more hex digits)")
	}
	for i, c := range name {
		ok := c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-' || c == '.' || c == '/'
		if !ok {
			what := fmt.Sprintf("%q", c)
			if c == utf8.RuneError {
				what = fmt.Sprintf("the byte %#x (not UTF-8)", name[i])
			}
			return bad(what + " is not allowed (use ASCII letters, digits, '_', '-', '.', '/')")
		}
	}
	for _, comp := range strings.Split(name, "/") {
		switch {
		case comp == "":
			return bad("it has an empty component ('//' or a leading '/')")
		case strings.HasPrefix(comp, "."):
			return bad("a component starts with '.'")
		}
	}
	if strings.Contains(name, "..") {
		return bad("it contains '..'")
	}
	if ns, _, ok := strings.Cut(name, "/"); ok && slices.Contains(refNamespaces, ns+"/") {
		return bad(fmt.Sprintf("it would read as a qualified name (%s/NAME names a %s)", ns, map[string]string{"snapshots": "snapshot", "tags": "tag", "branches": "branch"}[ns]))
	}
	if err := gitmirror.CheckRefFormat(refCheckPrefix + kind + "/" + name); err != nil {
		return bad(errors.Unwrap(err).Error() + " (not allowed in a git ref)")
	}
	return nil
}

// Branch is a line of checkpoints.
type Branch struct {
	Name       string    `json:"name"`
	Checkpoint ID        `json:"checkpoint"`
	Current    bool      `json:"current"`
	Time       time.Time `json:"time"`
	// Message is the tip checkpoint's message.
	Message string `json:"message"`
}

// Branches lists the branches, sorted by name.
func (r *Repo) Branches(ctx context.Context) ([]*Branch, error) {
	refs, err := r.st.Refs(ctx, branchPrefix)
	if err != nil {
		return nil, err
	}
	cur := ""
	if h, _, err := r.head(ctx); err != nil {
		return nil, err
	} else if h != nil {
		cur = h.Symbolic
	}
	out := []*Branch{}
	for _, ref := range refs {
		b := &Branch{Name: strings.TrimPrefix(ref.Name, branchPrefix), Checkpoint: ref.ID, Time: ref.Time}
		b.Current = b.Name == cur
		if rec, err := r.st.Checkpoint(ctx, ref.ID); err == nil {
			b.Message = rec.Message
			b.Time = rec.Time
		}
		out = append(out, b)
	}
	return out, nil
}

// CreateBranch creates a branch at rev (HEAD when empty). HEAD stays where
// it is; [Repo.Switch] moves to the branch.
func (r *Repo) CreateBranch(ctx context.Context, name, rev string) (*Branch, error) {
	if err := ValidRefName("branch", name); err != nil {
		return nil, err
	}
	unlock, err := r.begin(ctx)
	if err != nil {
		return nil, err
	}
	defer unlock()
	return r.createBranchLocked(ctx, name, rev)
}

func (r *Repo) createBranchLocked(ctx context.Context, name, rev string) (*Branch, error) {
	if _, err := r.st.Ref(ctx, branchRef(name)); err == nil {
		return nil, withHint(fmt.Errorf("branch %s: %w", name, ErrExists), "`ckpt switch "+name+"` moves to it; `ckpt branch -d "+name+"` deletes it")
	}
	if rev == "" {
		rev = "HEAD"
	}
	id, err := r.Resolve(ctx, rev)
	if err != nil {
		return nil, err
	}
	rec, err := r.st.Checkpoint(ctx, id)
	if err != nil {
		return nil, err
	}
	err = r.refOp(ctx, &store.Ref{Name: branchRef(name), ID: id, Time: r.now()}, "", store.Op{Kind: string(OpBranch), After: id, Detail: name})
	if err != nil {
		return nil, err
	}
	r.emit(Event{Kind: EventBranch, Checkpoint: id, Message: "created branch " + name})
	return &Branch{Name: name, Checkpoint: id, Time: rec.Time, Message: rec.Message}, nil
}

// DeleteBranch deletes a branch (not the current one). Its checkpoints stay
// until gc's retention drops them.
func (r *Repo) DeleteBranch(ctx context.Context, name string) error {
	unlock, err := r.begin(ctx)
	if err != nil {
		return err
	}
	defer unlock()
	ref, err := r.st.Ref(ctx, branchRef(name))
	if err != nil {
		return withHint(fmt.Errorf("delete branch %s: %w", name, ErrNotFound), "`ckpt branch` lists the branches")
	}
	if h, _, err := r.head(ctx); err == nil && h != nil && h.Symbolic == name {
		return withHint(fmt.Errorf("delete branch %s: it is the current branch", name), "switch to another branch first (ckpt switch OTHER)")
	}
	err = r.refOp(ctx, nil, branchRef(name), store.Op{Kind: string(OpBranchDelete), Before: ref.ID, Detail: name})
	if err == nil {
		r.emit(Event{Kind: EventBranch, Checkpoint: ref.ID, Message: "deleted branch " + name})
	}
	return err
}

// SwitchOptions configure [Repo.Switch].
type SwitchOptions struct {
	// Create creates the branch at HEAD first.
	Create bool
}

// SwitchResult reports a switch.
type SwitchResult struct {
	From, To string
	// Saved is the checkpoint of the state left behind (on From), when it
	// had unsaved changes.
	Saved *Checkpoint `json:"saved,omitempty"`
	*RestoreResult
}

// Switch moves to another branch: it checkpoints the current state on the
// current branch (so switching back returns to it), restores the branch's
// tip with the engine's verified restore, and moves HEAD to the branch, so
// later saves advance it. If any step fails the workspace is rolled back to
// exactly its prior state. Undo takes a switch back.
func (r *Repo) Switch(ctx context.Context, name string, opts SwitchOptions) (*SwitchResult, error) {
	if opts.Create {
		// Only a new name is checked, so that a branch named before a
		// rule was added can still be reached.
		if err := ValidRefName("branch", name); err != nil {
			return nil, err
		}
	}
	unlock, err := r.begin(ctx)
	if err != nil {
		return nil, err
	}
	defer unlock()
	return r.switchLocked(ctx, name, opts)
}

func (r *Repo) switchLocked(ctx context.Context, name string, opts SwitchOptions) (*SwitchResult, error) {
	headRef, headRec, err := r.head(ctx)
	if err != nil {
		return nil, err
	}
	if headRec == nil {
		return nil, withHint(errors.New("switch: no checkpoints yet"), "run `ckpt save` first")
	}
	from := headRef.Symbolic
	if opts.Create {
		if _, err := r.createBranchLocked(ctx, name, "HEAD"); err != nil {
			return nil, err
		}
	}
	ref, err := r.st.Ref(ctx, branchRef(name))
	if errors.Is(err, store.ErrNotFound) {
		return nil, withHint(fmt.Errorf("switch: no branch named %s", name), "`ckpt branch` lists the branches; `ckpt switch -c "+name+"` creates it here")
	}
	if err != nil {
		return nil, err
	}
	out := &SwitchResult{From: from, To: name}
	if from == name {
		return nil, fmt.Errorf("switch: already on branch %s", name)
	}
	saved, err := r.saveLocked(ctx, SaveOptions{Kind: KindPreRestore, Message: "before switching to " + name}, nil)
	if err != nil {
		return nil, err
	}
	if saved.Created {
		out.Saved = saved.Checkpoint
	}
	res, err := r.restoreLocked(ctx, journalData{Op: OpSwitch, Target: ref.ID, Branch: name, FromBranch: from}, false)
	if err != nil {
		return nil, err
	}
	out.RestoreResult = res
	return out, nil
}

// Tag is a fixed name for a checkpoint.
type Tag struct {
	Name       string    `json:"name"`
	Checkpoint ID        `json:"checkpoint"`
	Time       time.Time `json:"time"`
	Message    string    `json:"message"`
}

// Tags lists the tags, sorted by name.
func (r *Repo) Tags(ctx context.Context) ([]*Tag, error) {
	refs, err := r.st.Refs(ctx, tagPrefix)
	if err != nil {
		return nil, err
	}
	out := []*Tag{}
	for _, ref := range refs {
		t := &Tag{Name: strings.TrimPrefix(ref.Name, tagPrefix), Checkpoint: ref.ID, Time: ref.Time}
		if rec, err := r.st.Checkpoint(ctx, ref.ID); err == nil {
			t.Message = rec.Message
		}
		out = append(out, t)
	}
	return out, nil
}

// CreateTag names the checkpoint rev (HEAD when empty). An existing tag is
// moved only with force.
func (r *Repo) CreateTag(ctx context.Context, name, rev string, force bool) (*Tag, error) {
	if err := ValidRefName("tag", name); err != nil {
		return nil, err
	}
	unlock, err := r.begin(ctx)
	if err != nil {
		return nil, err
	}
	defer unlock()
	old, err := r.st.Ref(ctx, tagRef(name))
	exists := err == nil
	if exists && !force {
		return nil, withHint(fmt.Errorf("tag %s: %w (at %s)", name, ErrExists, old.ID.Short()), "use --force to move it, or pick another name")
	}
	if rev == "" {
		rev = "HEAD"
	}
	id, err := r.Resolve(ctx, rev)
	if err != nil {
		return nil, err
	}
	rec, err := r.st.Checkpoint(ctx, id)
	if err != nil {
		return nil, err
	}
	err = r.refOp(ctx, &store.Ref{Name: tagRef(name), ID: id, Time: r.now()}, "", store.Op{Kind: string(OpTag), Before: old.ID, After: id, Detail: name})
	if err != nil {
		return nil, err
	}
	r.emit(Event{Kind: EventTag, Checkpoint: id, Message: "tagged " + name})
	return &Tag{Name: name, Checkpoint: id, Time: r.now(), Message: rec.Message}, nil
}

// DeleteTag removes a tag.
func (r *Repo) DeleteTag(ctx context.Context, name string) error {
	unlock, err := r.begin(ctx)
	if err != nil {
		return err
	}
	defer unlock()
	ref, err := r.st.Ref(ctx, tagRef(name))
	if err != nil {
		return withHint(fmt.Errorf("delete tag %s: %w", name, ErrNotFound), "`ckpt tags` lists the tags")
	}
	err = r.refOp(ctx, nil, tagRef(name), store.Op{Kind: string(OpTagDelete), Before: ref.ID, Detail: name})
	if err == nil {
		r.emit(Event{Kind: EventTag, Checkpoint: ref.ID, Message: "deleted tag " + name})
	}
	return err
}

// Ancestor returns the nearest common ancestor of two checkpoints (a
// checkpoint is its own ancestor), or ErrNotFound when their histories do
// not meet (or gc removed where they meet).
func (r *Repo) Ancestor(ctx context.Context, a, b string) (*Checkpoint, error) {
	ida, err := r.Resolve(ctx, a)
	if err != nil {
		return nil, err
	}
	idb, err := r.Resolve(ctx, b)
	if err != nil {
		return nil, err
	}
	ancA := map[ID]int{}
	if err := r.walkAncestors(ctx, ida, func(id ID, d int) bool { ancA[id] = d; return true }); err != nil {
		return nil, err
	}
	var found ID
	best := -1
	err = r.walkAncestors(ctx, idb, func(id ID, d int) bool {
		if da, ok := ancA[id]; ok && (best < 0 || da+d < best) {
			found, best = id, da+d
		}
		return best < 0 || d < best
	})
	if err != nil {
		return nil, err
	}
	if best < 0 {
		return nil, fmt.Errorf("%s and %s have no common ancestor: %w", a, b, ErrNotFound)
	}
	rec, err := r.st.Checkpoint(ctx, found)
	if err != nil {
		return nil, err
	}
	return r.describe(ctx, rec)
}

// walkAncestors visits id and its ancestors breadth first with their
// distance; fn returns false to stop. Pruned history ends the walk.
func (r *Repo) walkAncestors(ctx context.Context, id ID, fn func(ID, int) bool) error {
	type item struct {
		id ID
		d  int
	}
	seen := map[ID]bool{id: true}
	queue := []item{{id, 0}}
	for len(queue) > 0 {
		it := queue[0]
		queue = queue[1:]
		if !fn(it.id, it.d) {
			return nil
		}
		rec, err := r.st.Checkpoint(ctx, it.id)
		if errors.Is(err, store.ErrNotFound) {
			continue
		}
		if err != nil {
			return err
		}
		for _, p := range rec.Parents {
			if !seen[p] {
				seen[p] = true
				queue = append(queue, item{p, it.d + 1})
			}
		}
	}
	return nil
}

// GraphOptions select the history [Repo.Graph] returns.
type GraphOptions struct {
	// From are the revisions to start at (default HEAD); All starts at
	// every branch tip, tag and snapshot, and HEAD.
	From  []string
	All   bool
	Limit int
}

// GraphNode is a checkpoint in a history graph.
type GraphNode struct {
	*Checkpoint
	// Pruned lists parents gc removed (the history ends there).
	Pruned []ID `json:"pruned,omitempty"`
}

// Graph returns the checkpoints reachable from the starting points, newest
// first, every checkpoint before its parents.
func (r *Repo) Graph(ctx context.Context, opts GraphOptions) ([]*GraphNode, error) {
	var starts []ID
	if opts.All {
		refs, err := r.st.Refs(ctx, "")
		if err != nil {
			return nil, err
		}
		for _, ref := range refs {
			starts = append(starts, ref.ID)
		}
	}
	from := opts.From
	if len(from) == 0 && !opts.All {
		from = []string{"HEAD"}
	}
	for _, f := range from {
		if f == "HEAD" {
			if h, _, err := r.head(ctx); err != nil {
				return nil, err
			} else if h == nil {
				continue
			}
		}
		id, err := r.Resolve(ctx, f)
		if err != nil {
			return nil, err
		}
		starts = append(starts, id)
	}
	names, err := r.refNames(ctx)
	if err != nil {
		return nil, err
	}
	recs := map[ID]*store.Record{}
	pruned := map[ID][]ID{}
	var order []ID
	var visit func(id ID) error
	stack := append([]ID(nil), starts...)
	_ = visit
	for len(stack) > 0 {
		id := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if _, ok := recs[id]; ok {
			continue
		}
		rec, err := r.st.Checkpoint(ctx, id)
		if err != nil {
			return nil, err
		}
		recs[id] = rec
		order = append(order, id)
		for _, p := range rec.Parents {
			if _, ok := recs[p]; ok {
				continue
			}
			if _, err := r.st.Checkpoint(ctx, p); errors.Is(err, store.ErrNotFound) {
				pruned[id] = append(pruned[id], p)
				continue
			}
			stack = append(stack, p)
		}
	}
	// Newest first, children before parents: sort by time, then fix the
	// order topologically (clock skew must not put a parent first).
	sort.SliceStable(order, func(i, j int) bool {
		a, b := recs[order[i]], recs[order[j]]
		if !a.Time.Equal(b.Time) {
			return a.Time.After(b.Time)
		}
		return a.Seq > b.Seq
	})
	order = topoOrder(order, recs)
	var out []*GraphNode
	for _, id := range order {
		if opts.Limit > 0 && len(out) >= opts.Limit {
			break
		}
		out = append(out, &GraphNode{Checkpoint: toCheckpoint(recs[id], names), Pruned: pruned[id]})
	}
	return out, nil
}

// topoOrder keeps order's preference but emits every checkpoint before its
// parents.
func topoOrder(order []ID, recs map[ID]*store.Record) []ID {
	children := map[ID]int{}
	for _, id := range order {
		for _, p := range recs[id].Parents {
			if _, ok := recs[p]; ok {
				children[p]++
			}
		}
	}
	pos := map[ID]int{}
	for i, id := range order {
		pos[id] = i
	}
	var out []ID
	done := map[ID]bool{}
	// Repeatedly take the first (by preference) checkpoint with no
	// remaining children.
	ready := []ID{}
	for _, id := range order {
		if children[id] == 0 {
			ready = append(ready, id)
		}
	}
	for len(ready) > 0 {
		sort.Slice(ready, func(i, j int) bool { return pos[ready[i]] < pos[ready[j]] })
		id := ready[0]
		ready = ready[1:]
		if done[id] {
			continue
		}
		done[id] = true
		out = append(out, id)
		for _, p := range recs[id].Parents {
			if _, ok := recs[p]; !ok {
				continue
			}
			children[p]--
			if children[p] == 0 {
				ready = append(ready, p)
			}
		}
	}
	return out
}

var _ = object.ZeroID

// refOp sets a ref (set != nil) or deletes one (del) and records the
// operation, in one transaction.
func (r *Repo) refOp(ctx context.Context, set *store.Ref, del string, op store.Op) error {
	return r.st.Update(ctx, func(tx store.Tx) error {
		if set != nil {
			if err := tx.SetRef(*set); err != nil {
				return err
			}
		} else if err := tx.DeleteRef(del); err != nil {
			return err
		}
		_, err := tx.AppendOp(op)
		return err
	})
}
