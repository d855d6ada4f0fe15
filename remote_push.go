package ckpt

import (
	"bufio"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"

	"github.com/seed1cedbf7c/ckpt/internal/object"
	"github.com/seed1cedbf7c/ckpt/internal/remote"
	"github.com/seed1cedbf7c/ckpt/internal/store"
	"golang.org/x/sync/errgroup"
)

// pushView is the history as a remote receives it: each checkpoint with
// the ignored files it holds taken out of its tree, its tracked-ignored
// list dropped, its message redacted (and a turn's prompt text cut off),
// and its parents so mapped. The mapping is
// deterministic; the store keeps it in the remote's cache directory so
// that a push only maps what is new, and a pull recognises its own
// checkpoints.
type pushView struct {
	r          *Repo
	remoteName string
	toRemote   map[ID]ID
	fromRemote map[ID]ID
	// What this push made that the store does not hold.
	cps   map[ID]*store.Record
	trees map[ID][]byte
	// Pairs to append to the map file.
	fresh   [][2]ID
	mapPath string
}

func (r *Repo) newPushView(rc RemoteConfig) *pushView {
	v := &pushView{r: r, remoteName: rc.Name, toRemote: map[ID]ID{}, fromRemote: map[ID]ID{},
		cps: map[ID]*store.Record{}, trees: map[ID][]byte{}}
	if d := r.remoteCacheDir(rc.Name); d != "" {
		v.mapPath = filepath.Join(d, "map")
		v.load()
	}
	return v
}

func (v *pushView) load() {
	f, err := os.Open(v.mapPath)
	if err != nil {
		return
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		a, b, ok := strings.Cut(sc.Text(), " ")
		if !ok {
			continue
		}
		l, err1 := ParseID(a)
		rm, err2 := ParseID(b)
		if err1 != nil || err2 != nil {
			continue // a torn last line: recomputed
		}
		v.toRemote[l], v.fromRemote[rm] = rm, l
	}
}

// save appends the new pairs. The file is a cache: a lost or torn one is
// recomputed.
func (v *pushView) save() error {
	if v.mapPath == "" || len(v.fresh) == 0 {
		return nil
	}
	if err := os.MkdirAll(filepath.Dir(v.mapPath), 0o700); err != nil {
		return err
	}
	f, err := os.OpenFile(v.mapPath, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o600)
	if err != nil {
		return err
	}
	w := bufio.NewWriter(f)
	for _, p := range v.fresh {
		fmt.Fprintf(w, "%s %s\n", p[0], p[1])
	}
	err = w.Flush()
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	v.fresh = nil
	return err
}

// remember records a pair learnt from the remote (a pull of this store's
// own pushes keeps them).
func (v *pushView) remember(local, rm ID) {
	if _, ok := v.toRemote[local]; ok {
		return
	}
	v.toRemote[local], v.fromRemote[rm] = rm, local
	v.fresh = append(v.fresh, [2]ID{local, rm})
}

// id returns the remote id of a local checkpoint, mapping its unmapped
// ancestors first (iteratively: histories are long).
func (v *pushView) id(ctx context.Context, local ID) (ID, error) {
	stack := []ID{local}
	for len(stack) > 0 {
		id := stack[len(stack)-1]
		if _, ok := v.toRemote[id]; ok {
			stack = stack[:len(stack)-1]
			continue
		}
		rec, err := v.r.st.Checkpoint(ctx, id)
		if err != nil {
			if errors.Is(err, store.ErrNotFound) && id != local {
				// A parent gc removed: the history ends there, here and
				// on the remote alike.
				v.toRemote[id] = id
				stack = stack[:len(stack)-1]
				continue
			}
			return ID{}, err
		}
		pending := false
		for _, p := range rec.Parents {
			if _, ok := v.toRemote[p]; !ok {
				stack = append(stack, p)
				pending = true
			}
		}
		if pending {
			continue
		}
		stack = stack[:len(stack)-1]
		rid, err := v.rewrite(ctx, rec)
		if err != nil {
			return ID{}, err
		}
		v.remember(id, rid)
	}
	return v.toRemote[local], nil
}

// rewrite makes the remote's version of a checkpoint whose parents are
// mapped, and returns its id (the checkpoint's own when nothing changes).
func (v *pushView) rewrite(ctx context.Context, rec *store.Record) (ID, error) {
	cp := *rec.Checkpoint
	cp.Parents = make([]ID, len(rec.Parents))
	for i, p := range rec.Parents {
		cp.Parents[i] = v.toRemote[p]
	}
	if tracked := trackedOf(rec); len(tracked) > 0 {
		root, err := v.filterTree(ctx, rec.Tree, "", tracked)
		if err != nil {
			return ID{}, err
		}
		cp.Tree = root
	}
	if _, ok := cp.Meta[MetaTracked]; ok {
		cp.Meta = maps.Clone(cp.Meta)
		delete(cp.Meta, MetaTracked)
		if len(cp.Meta) == 0 {
			cp.Meta = nil
		}
	}
	cp.Message = v.message(&cp)
	rid := cp.ID()
	if rid == rec.ID {
		return rid, nil
	}
	v.cps[rid] = &store.Record{Checkpoint: &cp, ID: rid, Stats: rec.Stats}
	return rid, nil
}

// message is what the remote keeps of a checkpoint's message: redacted,
// and for a session's checkpoints the words before the prompt ("turn 3",
// "turn 3 ended"): the prompt goes, if at all, in its session. So a
// checkpoint has one id on a remote, with sessions or without.
func (v *pushView) message(cp *object.Checkpoint) string {
	msg := cp.Message
	if cp.Meta["session"] != "" {
		if i := strings.Index(msg, ":"); i >= 0 {
			msg = msg[:i]
		}
	}
	return redactMessage(msg)
}

// filterTree returns the id of tree id (at dir) without the paths listed,
// storing new trees in v.trees.
func (v *pushView) filterTree(ctx context.Context, id ID, dir string, drop []string) (ID, error) {
	t, err := v.tree(ctx, id)
	if err != nil {
		return ID{}, err
	}
	out := &object.Tree{}
	changed := false
	for _, e := range t.Entries {
		p := e.Name
		if dir != "" {
			p = dir + "/" + e.Name
		}
		if slices.Contains(drop, p) {
			changed = true
			continue
		}
		if object.IsDir(e.Mode) && slices.ContainsFunc(drop, func(d string) bool { return strings.HasPrefix(d, p+"/") }) {
			sub, err := v.filterTree(ctx, e.ID, p, drop)
			if err != nil {
				return ID{}, err
			}
			if sub != e.ID {
				changed = true
				st, err := v.tree(ctx, sub)
				if err != nil {
					return ID{}, err
				}
				if len(st.Entries) == 0 {
					continue
				}
				e.ID, e.Size = sub, st.Size()
			}
		}
		out.Entries = append(out.Entries, e)
	}
	if !changed {
		return id, nil
	}
	data := out.Encode()
	nid := object.Sum(data)
	v.trees[nid] = data
	return nid, nil
}

func (v *pushView) tree(ctx context.Context, id ID) (*object.Tree, error) {
	if data, ok := v.trees[id]; ok {
		return object.DecodeTree(data)
	}
	return v.r.st.ReadTree(ctx, id)
}

func (v *pushView) treeData(ctx context.Context, id ID) ([]byte, *object.Tree, error) {
	if data, ok := v.trees[id]; ok {
		t, err := object.DecodeTree(data)
		return data, t, err
	}
	t, err := v.r.st.ReadTree(ctx, id)
	if err != nil {
		return nil, nil, err
	}
	return t.Encode(), t, nil
}

func (v *pushView) checkpoint(ctx context.Context, rid ID) (*store.Record, error) {
	if rec, ok := v.cps[rid]; ok {
		return rec, nil
	}
	return v.r.st.Checkpoint(ctx, rid)
}

// PushOptions configure [Repo.Push].
type PushOptions struct {
	// Revs names the refs to push: branches, tags, snapshots ("HEAD":
	// the current branch). Empty: every branch, tag and snapshot, and HEAD.
	Revs []string
	// Force moves remote refs that are not behind (a branch the remote
	// moved elsewhere, a tag it holds at another checkpoint).
	Force bool
	// DryRun computes what would be uploaded and changed, and changes
	// nothing.
	DryRun bool
	// WithSessions pushes the store's sessions (redacted) as a remote
	// added --with-sessions always gets them.
	WithSessions bool
	// Full checks every object of the pushed history against the
	// remote's indexes, instead of stopping where the remote has a
	// checkpoint or tree: it re-uploads what `ckpt fsck --remote --repair`
	// took out of a damaged remote.
	Full bool
}

// PushedRef is what a push did to one ref.
type PushedRef struct {
	Name string `json:"name"`
	Old  ID     `json:"old,omitzero"`
	New  ID     `json:"new"`
	// Status: "new", "updated", "forced", "up-to-date" or "rejected".
	Status string `json:"status"`
	Reason string `json:"reason,omitempty"`
}

// PushResult reports a push.
type PushResult struct {
	Remote      string      `json:"remote"`
	URL         string      `json:"url"`
	Refs        []PushedRef `json:"refs"`
	Checkpoints int         `json:"checkpoints"`
	Objects     int         `json:"objects"`
	Bytes       int64       `json:"bytes"`
	// Sessions counts the session documents uploaded (with sessions).
	Sessions int   `json:"sessions,omitempty"`
	Retries  int64 `json:"retries,omitempty"`
	DryRun   bool  `json:"dry_run,omitempty"`
}

// Rejected returns the refs the push did not move.
func (p *PushResult) Rejected() []PushedRef {
	var out []PushedRef
	for _, r := range p.Refs {
		if r.Status == "rejected" {
			out = append(out, r)
		}
	}
	return out
}

type pushTarget struct {
	name     string // remote ref name
	local    ID
	symbolic string // HEAD only
}

// pushTargets resolves what to push.
func (r *Repo) pushTargets(ctx context.Context, revs []string) ([]pushTarget, error) {
	var out []pushTarget
	if len(revs) == 0 {
		refs, err := r.st.Refs(ctx, "")
		if err != nil {
			return nil, err
		}
		for _, ref := range refs {
			switch {
			case ref.Name == headName:
				out = append(out, pushTarget{name: headName, local: ref.ID, symbolic: ref.Symbolic})
			case strings.HasPrefix(ref.Name, snapshotPrefix) && r.expired(ref):
			case strings.HasPrefix(ref.Name, branchPrefix), strings.HasPrefix(ref.Name, tagPrefix), strings.HasPrefix(ref.Name, snapshotPrefix):
				out = append(out, pushTarget{name: ref.Name, local: ref.ID})
			}
		}
		return out, nil
	}
	for i, rev := range revs {
		name := rev
		if rev == headName || rev == "@" {
			ref, err := r.st.Ref(ctx, headName)
			if err != nil {
				return nil, withHint(fmt.Errorf("push HEAD: %w", err), "save a checkpoint first")
			}
			if ref.Symbolic == "" {
				return nil, withHint(errors.New("push HEAD: HEAD is on no branch"), "name it first: ckpt branch NAME, or ckpt tag NAME")
			}
			name = ref.Symbolic
		}
		var found []store.Ref
		if strings.HasPrefix(name, branchPrefix) || strings.HasPrefix(name, tagPrefix) || strings.HasPrefix(name, snapshotPrefix) {
			if ref, err := r.st.Ref(ctx, name); err == nil {
				found = append(found, ref)
			}
		} else {
			for _, ns := range refNamespaces {
				if ref, err := r.st.Ref(ctx, ns+name); err == nil {
					found = append(found, ref)
				}
			}
		}
		switch len(found) {
		case 0:
			hint := "push names refs (ckpt branches, ckpt tags, ckpt snapshot list); to push a checkpoint by id, tag it first: ckpt tag NAME ID"
			if i == 0 {
				if all, err := r.Remotes(ctx); err == nil && len(all) > 0 {
					var names []string
					for _, rc := range all {
						names = append(names, rc.Name)
					}
					hint += "; the remotes are " + strings.Join(names, ", ")
				}
			}
			return nil, withHint(&RevisionError{Rev: rev, Reason: "no branch, tag or snapshot has that name"}, hint)
		case 1:
			out = append(out, pushTarget{name: found[0].Name, local: found[0].ID})
		default:
			var names []string
			for _, f := range found {
				names = append(names, f.Name)
			}
			return nil, &RevisionError{Rev: rev, Reason: "several refs have that name", Candidates: names, Ambiguous: true}
		}
	}
	return out, nil
}

// Push uploads to remote name ("": the only one, or origin) what it lacks
// of the checkpoints the refs name, then moves its refs. Objects go up
// before any ref moves, checkpoints after the trees and blobs they need,
// so a push cut short leaves the remote as it was plus unreferenced
// packs, and the next push goes on from there.
func (r *Repo) Push(ctx context.Context, name string, opts PushOptions) (*PushResult, error) {
	rc, err := r.remoteConfig(ctx, name)
	if err != nil {
		return nil, err
	}
	targets, err := r.pushTargets(ctx, opts.Revs)
	if err != nil {
		return nil, err
	}
	rm, be, err := r.openRemote(ctx, rc, !opts.DryRun)
	if err != nil {
		var ni *remote.NotInitializedError
		if !(opts.DryRun && errors.As(err, &ni)) {
			return nil, err
		}
		rm = nil
	}
	res := &PushResult{Remote: rc.Name, URL: rc.URL, DryRun: opts.DryRun}
	if rm != nil {
		defer rm.SaveCache()
	}
	view := r.newPushView(rc)
	if rm != nil {
		if err := rm.LoadIndex(ctx); err != nil {
			return nil, err
		}
	}
	// Map the targets.
	remoteIDs := make([]ID, len(targets))
	for i, t := range targets {
		if remoteIDs[i], err = view.id(ctx, t.local); err != nil {
			return nil, err
		}
	}
	// With sessions, the checkpoints they anchor go too (a rewound
	// turn's may be on no branch).
	var sessionIDs []ID
	withSessions := rc.WithSessions || opts.WithSessions
	if withSessions {
		roots, err := r.sessionRoots(ctx)
		if err != nil {
			return nil, err
		}
		for _, l := range roots {
			if _, err := r.st.Checkpoint(ctx, l); err != nil {
				continue // gc removed it
			}
			rid, err := view.id(ctx, l)
			if err != nil {
				return nil, err
			}
			sessionIDs = append(sessionIDs, rid)
		}
	}
	if err := view.save(); err != nil {
		return nil, err
	}
	has := func(k remote.ObjKey) bool { return rm != nil && rm.Has(k) }
	// What the remote lacks: checkpoints newest first, then their trees.
	// An object the remote lists comes with everything it names (push
	// uploads in that order), so a walk stops there, unless Full.
	var cps []*store.Record
	var trees []remote.ObjKey // post-order: children first
	var treeData = map[ID][]byte{}
	var blobs []ID
	seen := map[ID]bool{}
	seenTree, seenBlob := map[ID]bool{}, map[ID]bool{}
	queue := append(slices.Clone(remoteIDs), sessionIDs...)
	for len(queue) > 0 {
		id := queue[0]
		queue = queue[1:]
		listed := has(remote.ObjKey{Kind: remote.KindCheckpoint, ID: id})
		if seen[id] || listed && !opts.Full {
			continue
		}
		seen[id] = true
		rec, err := view.checkpoint(ctx, id)
		if errors.Is(err, store.ErrNotFound) && id != remoteIDs[0] {
			continue // gc removed it: the history ends here
		}
		if err != nil {
			return nil, err
		}
		if !listed {
			cps = append(cps, rec)
		}
		queue = append(queue, rec.Parents...)
	}
	res.Checkpoints = len(cps)
	var walk func(id ID) error
	walk = func(id ID) error {
		listed := has(remote.ObjKey{Kind: remote.KindTree, ID: id})
		if seenTree[id] || listed && !opts.Full {
			return nil
		}
		seenTree[id] = true
		data, t, err := view.treeData(ctx, id)
		if err != nil {
			return err
		}
		for _, e := range t.Entries {
			if object.IsDir(e.Mode) {
				if err := walk(e.ID); err != nil {
					return err
				}
			} else if !seenBlob[e.ID] && !has(remote.ObjKey{Kind: remote.KindBlob, ID: e.ID}) {
				seenBlob[e.ID] = true
				blobs = append(blobs, e.ID)
			}
		}
		if !listed {
			trees = append(trees, remote.ObjKey{Kind: remote.KindTree, ID: id})
			treeData[id] = data
		}
		return nil
	}
	roots := cps
	if opts.Full {
		roots = nil
		for id := range seen {
			if rec, err := view.checkpoint(ctx, id); err == nil {
				roots = append(roots, rec)
			}
		}
	}
	for _, rec := range roots {
		if err := walk(rec.Tree); err != nil {
			return nil, err
		}
	}
	res.Objects = len(cps) + len(trees) + len(blobs)
	if !opts.DryRun {
		if err := r.upload(ctx, rm, cps, trees, treeData, blobs, res); err != nil {
			return nil, err
		}
	}
	if withSessions && !opts.DryRun {
		if res.Sessions, err = r.pushSessions(ctx, rm, view); err != nil {
			return nil, err
		}
	}
	// Move the refs, HEAD last: it moves only with its branch.
	refused := map[string]bool{}
	for i, t := range targets {
		if t.name == headName {
			continue
		}
		pr, err := r.pushRef(ctx, rm, view, t, remoteIDs[i], opts)
		if err != nil {
			return nil, err
		}
		refused[t.name] = pr.Status == "rejected"
		res.Refs = append(res.Refs, pr)
	}
	for i, t := range targets {
		if t.name != headName {
			continue
		}
		if t.symbolic != "" && refused[branchRef(t.symbolic)] {
			res.Refs = append(res.Refs, PushedRef{Name: headName, New: remoteIDs[i], Status: "rejected",
				Reason: "its branch " + t.symbolic + " was refused"})
			continue
		}
		pr, err := r.pushRef(ctx, rm, view, t, remoteIDs[i], opts)
		if err != nil {
			return nil, err
		}
		res.Refs = append(res.Refs, pr)
	}
	if err := view.save(); err != nil {
		return nil, err
	}
	if rm != nil {
		res.Bytes = rm.Uploaded()
	}
	res.Retries = be.Retries.Load()
	if rej := res.Rejected(); len(rej) > 0 {
		// HEAD refused because its branch was says nothing more.
		rej = slices.DeleteFunc(rej, func(p PushedRef) bool {
			return p.Name == headName && strings.HasPrefix(p.Reason, "its branch")
		})
		return res, &PushRejectedError{Refs: rej}
	}
	return res, nil
}

func (r *Repo) upload(ctx context.Context, rm *remote.Remote, cps []*store.Record, trees []remote.ObjKey, treeData map[ID][]byte, blobs []ID, res *PushResult) error {
	total := int64(res.Objects)
	var done int64
	report := func() {
		if r.opts.Progress != nil {
			r.opts.Progress(Progress{Op: "push", Files: done, TotalFiles: total, Bytes: rm.Uploaded()})
		}
	}
	p := rm.NewPacker(ctx)
	p.Uploaded = func(int64) { report() }
	// Blobs, then trees, then checkpoints, with a barrier between: an
	// index never lists an object whose children a crash left unlisted,
	// so "the remote has this tree" means it has all of it.
	// Blobs are read and compressed on every core, packed by this one.
	type encoded struct {
		k    remote.ObjKey
		enc  []byte
		size int64
	}
	out := make(chan encoded, 64)
	g, gctx := errgroup.WithContext(ctx)
	next := make(chan ID)
	g.Go(func() error {
		defer close(next)
		for _, id := range blobs {
			select {
			case next <- id:
			case <-gctx.Done():
				return gctx.Err()
			}
		}
		return nil
	})
	workers := max(1, runtime.GOMAXPROCS(0))
	var wg sync.WaitGroup
	for range workers {
		wg.Add(1)
		g.Go(func() error {
			defer wg.Done()
			for id := range next {
				data, err := r.st.ReadBlob(gctx, id)
				if err != nil {
					return err
				}
				k := remote.ObjKey{Kind: remote.KindBlob, ID: id}
				select {
				case out <- encoded{k, rm.EncodeObject(k, data), int64(len(data))}:
				case <-gctx.Done():
					return gctx.Err()
				}
			}
			return nil
		})
	}
	go func() { wg.Wait(); close(out) }()
	var addErr error
	for e := range out {
		if addErr != nil {
			continue // drain
		}
		if err := p.AddEncoded(e.k, e.enc, e.size, nil); err != nil {
			addErr = err
			continue
		}
		done++
	}
	if err := cmp.Or(g.Wait(), addErr); err != nil {
		return cmp.Or(p.Wait(), err)
	}
	if err := p.Barrier(); err != nil {
		return err
	}
	for _, k := range trees {
		if err := p.Add(k, treeData[k.ID], nil); err != nil {
			return cmp.Or(p.Wait(), err)
		}
		done++
	}
	if err := p.Barrier(); err != nil {
		return err
	}
	for i := len(cps) - 1; i >= 0; i-- { // parents first
		stats, _ := json.Marshal(cps[i].Stats)
		if err := p.Add(remote.ObjKey{Kind: remote.KindCheckpoint, ID: cps[i].ID}, cps[i].Encode(), stats); err != nil {
			return cmp.Or(p.Wait(), err)
		}
		done++
	}
	if err := p.Wait(); err != nil {
		return err
	}
	report()
	return nil
}

// pushRef moves one remote ref, with a conditional write: a branch only
// forward (unless forced), a tag or snapshot only where it is absent or
// already right, HEAD always.
func (r *Repo) pushRef(ctx context.Context, rm *remote.Remote, view *pushView, t pushTarget, rid ID, opts PushOptions) (PushedRef, error) {
	pr := PushedRef{Name: t.name, New: rid}
	want := remote.Ref{Name: t.name, ID: rid, Symbolic: t.symbolic, Time: r.now().UTC()}
	if strings.HasPrefix(t.name, snapshotPrefix) {
		if ref, err := r.st.Ref(ctx, t.name); err == nil {
			want.Expires = ref.Expires
		}
	}
	for attempt := 0; ; attempt++ {
		var cur remote.Ref
		var err error
		if rm != nil {
			cur, err = rm.GetRef(ctx, t.name)
		} else {
			err = remote.ErrNotExist
		}
		exists := err == nil
		if err != nil && !errors.Is(err, remote.ErrNotExist) {
			return pr, err
		}
		pr.Old = cur.ID
		if exists && cur.ID == rid && cur.Symbolic == t.symbolic {
			pr.Status = "up-to-date"
			return pr, nil
		}
		status := "new"
		if exists {
			status = "updated"
			if t.name != headName {
				ok, reason, err := r.remoteBehind(ctx, view, t, cur.ID, rid)
				if err != nil {
					return pr, err
				}
				if !ok {
					if !opts.Force {
						pr.Status, pr.Reason = "rejected", reason
						return pr, nil
					}
					status = "forced"
				}
			}
		}
		if opts.DryRun {
			pr.Status = status
			return pr, nil
		}
		want.ETag = cur.ETag
		if _, err := rm.PutRef(ctx, want); err != nil {
			if errors.Is(err, remote.ErrPrecondition) && attempt < 5 {
				continue // another store moved it: look again
			}
			return pr, err
		}
		pr.Status = status
		if t.name != headName {
			r.setTracking(ctx, view, t.name, rid)
		}
		return pr, nil
	}
}

// remoteBehind reports whether the remote's ref at cur may move to rid.
func (r *Repo) remoteBehind(ctx context.Context, view *pushView, t pushTarget, cur, rid ID) (bool, string, error) {
	if !strings.HasPrefix(t.name, branchPrefix) {
		return false, "the remote has it at another checkpoint", nil
	}
	local, ok := view.fromRemote[cur]
	if !ok {
		if _, err := r.st.Checkpoint(ctx, cur); err != nil {
			return false, "the remote's branch has checkpoints this store does not have", nil
		}
		local = cur
	}
	found := false
	err := r.walkAncestors(ctx, t.local, func(id ID, _ int) bool {
		if id == local {
			found = true
		}
		return !found
	})
	if err != nil {
		return false, "", err
	}
	if !found {
		return false, "the remote's branch is not an ancestor of this one", nil
	}
	return true, "", nil
}

// setTracking records where a remote's ref is, in the store's own ids.
func (r *Repo) setTracking(ctx context.Context, view *pushView, name string, rid ID) {
	local, ok := view.fromRemote[rid]
	if !ok {
		local = rid
	}
	r.st.Update(ctx, func(tx store.Tx) error {
		return tx.SetRef(store.Ref{Name: remoteRefPrefix + view.remoteName + "/" + name, ID: local, Time: r.now()})
	})
}
