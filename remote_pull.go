package ckpt

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/seed1cedbf7c/ckpt/internal/object"
	"github.com/seed1cedbf7c/ckpt/internal/remote"
	"github.com/seed1cedbf7c/ckpt/internal/store"
)

// OpPull is the op-log kind of a pull that moved refs.
const OpPull OpKind = "pull"

// PulledRef is what a pull did with one of the remote's refs.
type PulledRef struct {
	Name   string `json:"name"`
	Remote ID     `json:"remote"`
	Local  ID     `json:"local,omitzero"`
	// Status: "new" (created here), "updated" (moved forward),
	// "up-to-date", "kept" (a tag or snapshot this store has elsewhere:
	// left alone), "behind" (HEAD's branch: left for a restore),
	// "diverged" (both have checkpoints the other lacks).
	Status string `json:"status"`
}

// PullResult reports a pull.
type PullResult struct {
	Remote      string      `json:"remote"`
	URL         string      `json:"url"`
	Refs        []PulledRef `json:"refs"`
	Checkpoints int         `json:"checkpoints"`
	Objects     int         `json:"objects"`
	Bytes       int64       `json:"bytes"`
	// Sessions counts the sessions pulled (those the store lacked).
	Sessions int `json:"sessions,omitempty"`
	// Skipped lists the remote's refs no store could hold (names ckpt
	// never writes), left out.
	Skipped []string `json:"skipped,omitempty"`
	// Head is the remote's HEAD branch ("" if detached or none).
	Head    string `json:"head,omitempty"`
	Retries int64  `json:"retries,omitempty"`
}

// Pull downloads from remote name what the store lacks of the
// checkpoints the remote's refs name, records those refs as
// remote-tracking refs (remotes/NAME/...; revisions name them NAME/x),
// creates the branches, tags and snapshots the store does not have, and
// moves its branches forward where the remote's are ahead, except HEAD's:
// the workspace is never changed (restore NAME/BRANCH for that).
func (r *Repo) Pull(ctx context.Context, name string) (*PullResult, error) {
	rc, err := r.remoteConfig(ctx, name)
	if err != nil {
		return nil, err
	}
	rm, be, err := r.openRemote(ctx, rc, false)
	if err != nil {
		return nil, err
	}
	if err := rm.LoadIndex(ctx); err != nil {
		return nil, err
	}
	refs, err := rm.Refs(ctx)
	if err != nil {
		return nil, err
	}
	res := &PullResult{Remote: rc.Name, URL: rc.URL}
	unlock, err := r.begin(ctx)
	if err != nil {
		return nil, err
	}
	defer unlock()
	view := r.newPushView(rc)
	// A remote may hold what no ckpt wrote: only refs a store could hold
	// come in.
	refs = slices.DeleteFunc(refs, func(ref remote.Ref) bool {
		if reason := remoteRefProblem(ref); reason != "" {
			res.Skipped = append(res.Skipped, fmt.Sprintf("ref %q: %s", ref.Name, reason))
			return true
		}
		return false
	})
	var starts []ID
	for _, ref := range refs {
		if ref.Name == headName && ref.Symbolic != "" {
			res.Head = strings.TrimPrefix(ref.Symbolic, branchPrefix)
		}
		if !ref.ID.IsZero() {
			starts = append(starts, ref.ID)
		}
	}
	sessions, sroots, err := remoteSessions(ctx, rm)
	if err != nil {
		return nil, err
	}
	for _, id := range sroots {
		if rm.Listed(remote.ObjKey{Kind: remote.KindCheckpoint, ID: id}) {
			starts = append(starts, id)
		}
	}
	if err := r.fetchCheckpoints(ctx, rm, view, starts, &res.Checkpoints, &res.Objects); err != nil {
		return nil, err
	}
	if res.Sessions, err = r.pullSessions(ctx, sessions, view); err != nil {
		return nil, err
	}
	res.Bytes = rm.Downloaded()
	if err := view.save(); err != nil {
		return nil, err
	}
	local := func(rid ID) ID {
		if l, ok := view.fromRemote[rid]; ok {
			return l
		}
		return rid
	}
	headRef, _, err := r.head(ctx)
	if err != nil {
		return nil, err
	}
	tracking, err := r.st.Refs(ctx, remoteRefPrefix+rc.Name+"/")
	if err != nil {
		return nil, err
	}
	var sets []store.Ref
	var dels []string
	onRemote := map[string]bool{}
	for _, ref := range refs {
		if ref.ID.IsZero() {
			continue
		}
		lid := local(ref.ID)
		tname := remoteRefPrefix + rc.Name + "/" + ref.Name
		onRemote[tname] = true
		sets = append(sets, store.Ref{Name: tname, ID: lid, Time: ref.Time})
		if ref.Name == headName {
			continue
		}
		pr := PulledRef{Name: ref.Name, Remote: ref.ID}
		cur, err := r.st.Ref(ctx, ref.Name)
		switch {
		case errors.Is(err, store.ErrNotFound):
			pr.Status = "new"
			if strings.HasPrefix(ref.Name, snapshotPrefix) && !ref.Expires.IsZero() && !ref.Expires.After(r.now()) {
				continue // expired: not worth keeping
			}
			sets = append(sets, store.Ref{Name: ref.Name, ID: lid, Time: r.now(), Expires: ref.Expires})
		case err != nil:
			return nil, err
		case cur.ID == lid:
			pr.Local, pr.Status = cur.ID, "up-to-date"
		case !strings.HasPrefix(ref.Name, branchPrefix):
			pr.Local, pr.Status = cur.ID, "kept"
		default:
			pr.Local = cur.ID
			behind, err := r.isAncestor(ctx, cur.ID, lid)
			if err != nil {
				return nil, err
			}
			switch {
			case !behind:
				pr.Status = "diverged"
			case headRef != nil && headRef.Symbolic == strings.TrimPrefix(ref.Name, branchPrefix):
				pr.Status = "behind"
			default:
				pr.Status = "updated"
				sets = append(sets, store.Ref{Name: ref.Name, ID: lid, Time: r.now()})
			}
		}
		res.Refs = append(res.Refs, pr)
	}
	for _, t := range tracking {
		if !onRemote[t.Name] {
			dels = append(dels, t.Name)
		}
	}
	err = r.st.Update(ctx, func(tx store.Tx) error {
		for _, s := range sets {
			if err := tx.SetRef(s); err != nil {
				return err
			}
		}
		for _, d := range dels {
			if err := tx.DeleteRef(d); err != nil {
				return err
			}
		}
		if res.Checkpoints > 0 || slices.ContainsFunc(res.Refs, func(p PulledRef) bool { return p.Status == "new" || p.Status == "updated" }) {
			_, err := tx.AppendOp(store.Op{Kind: string(OpPull), Detail: rc.Name})
			return err
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	res.Retries = be.Retries.Load()
	return res, nil
}

// isAncestor reports whether a is b or an ancestor of b.
func (r *Repo) isAncestor(ctx context.Context, a, b ID) (bool, error) {
	found := false
	err := r.walkAncestors(ctx, b, func(id ID, _ int) bool {
		found = found || id == a
		return !found
	})
	return found, err
}

// fetchCheckpoints downloads the checkpoints reachable from starts (remote
// ids) that the store lacks, with their trees and blobs, and stores them:
// blobs, then trees, then checkpoints parents first, each batch in its own
// transaction, so a pull cut short leaves no checkpoint without its tree.
func (r *Repo) fetchCheckpoints(ctx context.Context, rm *remote.Remote, view *pushView, starts []ID, nCps, nObjs *int) error {
	haveCp := func(rid ID) (bool, error) {
		if _, ok := view.fromRemote[rid]; ok {
			return true, nil
		}
		_, err := r.st.Checkpoint(ctx, rid)
		if errors.Is(err, store.ErrNotFound) {
			return false, nil
		}
		return err == nil, err
	}
	// Checkpoints, a generation at a time.
	var cps []*object.Checkpoint
	var ended []ID // parents the remote does not hold: history ends there
	stats := map[ID]store.Stats{}
	seen := map[ID]bool{}
	frontier := starts
	for len(frontier) > 0 {
		var want []remote.ObjKey
		for _, id := range frontier {
			if seen[id] {
				continue
			}
			seen[id] = true
			ok, err := haveCp(id)
			if err != nil {
				return err
			}
			if ok {
				continue
			}
			k := remote.ObjKey{Kind: remote.KindCheckpoint, ID: id}
			if !rm.Listed(k) && !slices.Contains(starts, id) {
				ended = append(ended, id) // the pushing store's gc had removed it
				continue
			}
			want = append(want, k)
		}
		frontier = nil
		err := rm.Fetch(ctx, want, func(k remote.ObjKey, data []byte, st json.RawMessage) error {
			cp, err := object.DecodeCheckpoint(data)
			if err != nil {
				return &remote.CorruptError{Remote: rm.Backend().String(), Obj: k, Detail: "checkpoint does not decode: " + err.Error()}
			}
			var s store.Stats
			if len(st) > 0 {
				json.Unmarshal(st, &s)
			}
			cps = append(cps, cp)
			stats[k.ID] = s
			frontier = append(frontier, cp.Parents...)
			return nil
		})
		if err != nil {
			return err
		}
	}
	*nCps = len(cps)
	// Trees, a level at a time, and the blobs they name.
	var trees [][]byte
	var blobs []remote.ObjKey
	seenT, seenB := map[ID]bool{}, map[ID]bool{}
	var level []remote.ObjKey
	addTree := func(id ID) error {
		if seenT[id] {
			return nil
		}
		seenT[id] = true
		ok, err := r.st.HasTree(ctx, id)
		if err != nil || ok {
			return err
		}
		level = append(level, remote.ObjKey{Kind: remote.KindTree, ID: id})
		return nil
	}
	for _, cp := range cps {
		if err := addTree(cp.Tree); err != nil {
			return err
		}
	}
	for len(level) > 0 {
		want := level
		level = nil
		var fetchErr error
		err := rm.Fetch(ctx, want, func(k remote.ObjKey, data []byte, _ json.RawMessage) error {
			t, err := object.DecodeTree(data)
			if err != nil {
				return &remote.CorruptError{Remote: rm.Backend().String(), Obj: k, Detail: "tree does not decode: " + err.Error()}
			}
			trees = append(trees, data)
			for _, e := range t.Entries {
				if object.IsDir(e.Mode) {
					if err := addTree(e.ID); err != nil {
						fetchErr = err
						return err
					}
				} else if !seenB[e.ID] {
					seenB[e.ID] = true
					ok, err := r.st.HasBlob(ctx, e.ID)
					if err != nil {
						return err
					}
					if !ok {
						blobs = append(blobs, remote.ObjKey{Kind: remote.KindBlob, ID: e.ID})
					}
				}
			}
			return nil
		})
		if err != nil {
			return errors.Join(err, fetchErr)
		}
	}
	*nObjs = len(cps) + len(trees) + len(blobs)
	total := int64(*nObjs)
	var done int64
	report := func() {
		if r.opts.Progress != nil {
			r.opts.Progress(Progress{Op: "pull", Files: done, TotalFiles: total, Bytes: rm.Downloaded()})
		}
	}
	// Blobs in batches of about 64 MiB, each batch one transaction.
	for i := 0; i < len(blobs); {
		j, size := i, int64(0)
		for j < len(blobs) && (j == i || size < 64<<20) {
			size += rm.Size(blobs[j])
			j++
		}
		batch := map[ID][]byte{}
		err := rm.Fetch(ctx, blobs[i:j], func(k remote.ObjKey, data []byte, _ json.RawMessage) error {
			batch[k.ID] = data
			return nil
		})
		if err != nil {
			return err
		}
		err = r.st.Update(ctx, func(tx store.Tx) error {
			for _, data := range batch {
				if _, err := putBlob(tx, data); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			return err
		}
		done += int64(j - i)
		report()
		i = j
	}
	err := r.st.Update(ctx, func(tx store.Tx) error {
		// Deepest trees first is not needed: a tree names its children by
		// id, and the store checks nothing across objects on write.
		for _, data := range trees {
			if err := tx.PutTree(object.Sum(data), data); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	done += int64(len(trees))
	report()
	err = r.st.Update(ctx, func(tx store.Tx) error {
		// As in the store they were pushed from, where gc recorded them:
		// fsck then knows these parents are gone on purpose.
		for _, id := range ended {
			if err := tx.MarkPruned(id); err != nil {
				return err
			}
		}
		for i := len(cps) - 1; i >= 0; i-- {
			if _, err := tx.PutCheckpoint(cps[i], stats[cps[i].ID()]); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	done += int64(len(cps))
	report()
	return nil
}

// CloneOptions configure [Clone].
type CloneOptions struct {
	// Name of the remote (default origin).
	Name string
	// Identities open an encrypted remote.
	Identities []string
	// Rev is the branch, tag or snapshot to restore (default: the
	// remote's HEAD branch, else main, else the only branch).
	Rev string
	// Open are the options of the new workspace's store.
	Open Options
}

// CloneResult reports a clone.
type CloneResult struct {
	Pull    *PullResult    `json:"pull"`
	Restore *RestoreResult `json:"restore"`
	Rev     string         `json:"rev"`
}

// Clone makes dir (absent or empty) a workspace holding what the remote
// at url holds, and restores its HEAD branch there. A clone that fails
// leaves nothing behind: not the directory, not a store.
func Clone(ctx context.Context, url, dir string, opts CloneOptions) (*Repo, *CloneResult, error) {
	undo, err := PrepareCloneDir(url, dir, opts.Open.Store)
	if err != nil {
		return nil, nil, err
	}
	r, err := Open(ctx, dir, opts.Open)
	if err != nil {
		undo(nil)
		return nil, nil, err
	}
	res, err := r.CloneFrom(ctx, url, opts)
	if err != nil {
		undo(r)
		return nil, nil, err
	}
	return r, res, nil
}

// PrepareCloneDir checks url and makes dir, which must be absent or empty.
// The function it returns undoes a failed clone: it closes r (if not nil)
// and removes the store (if the clone made it: store is the store
// directory asked for, "" for the default) and what the clone wrote in dir.
func PrepareCloneDir(url, dir, store string) (undo func(r *Repo), err error) {
	if _, err := remote.ParseURL(url); err != nil {
		return nil, err
	}
	existed := false
	if ents, err := os.ReadDir(dir); err == nil {
		if len(ents) > 0 {
			return nil, withHint(fmt.Errorf("clone into %s: the directory is not empty", dir), "clone into a new or empty directory")
		}
		existed = true
	} else if !errors.Is(err, os.ErrNotExist) {
		return nil, err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	sd := store
	if sd == "" {
		root, err := canonicalDir(dir)
		if err != nil {
			return nil, err
		}
		if sd, err = DefaultStoreDir(root); err != nil {
			return nil, err
		}
	}
	storeExisted := false
	if _, err := os.Stat(sd); err == nil {
		storeExisted = true
	}
	return func(r *Repo) {
		if r != nil {
			r.Close()
		}
		if !storeExisted {
			os.RemoveAll(sd)
		}
		if !existed {
			os.RemoveAll(dir)
			return
		}
		if ents, err := os.ReadDir(dir); err == nil {
			for _, e := range ents {
				os.RemoveAll(filepath.Join(dir, e.Name()))
			}
		}
	}, nil
}

// CloneFrom fills a new workspace (an empty store) from the remote at
// url: it adds the remote, pulls, and restores the remote's HEAD branch.
func (r *Repo) CloneFrom(ctx context.Context, url string, opts CloneOptions) (*CloneResult, error) {
	if opts.Name == "" {
		opts.Name = "origin"
	}
	if recs, err := r.st.Checkpoints(ctx, store.ListFilter{Limit: 1}); err != nil {
		return nil, err
	} else if len(recs) > 0 {
		return nil, withHint(fmt.Errorf("clone into %s: its store already holds checkpoints", r.root), "clone into a new directory, or add the remote and pull: ckpt remote add; ckpt pull")
	}
	if _, err := r.AddRemote(ctx, RemoteConfig{Name: opts.Name, URL: url, Identities: opts.Identities}); err != nil {
		return nil, err
	}
	pr, err := r.Pull(ctx, opts.Name)
	if err != nil {
		return nil, err
	}
	res := &CloneResult{Pull: pr}
	rev := opts.Rev
	if rev == "" {
		branches, err := r.st.Refs(ctx, branchPrefix)
		if err != nil {
			return nil, err
		}
		has := func(b string) bool {
			return slices.ContainsFunc(branches, func(ref store.Ref) bool { return ref.Name == branchRef(b) })
		}
		switch {
		case pr.Head != "" && has(pr.Head):
			rev = pr.Head
		case has("main"):
			rev = "main"
		case len(branches) == 1:
			rev = strings.TrimPrefix(branches[0].Name, branchPrefix)
		case len(branches) == 0:
			return res, nil // an empty remote: an empty workspace
		default:
			return nil, withHint(fmt.Errorf("clone: the remote has several branches and no HEAD"), "name one: ckpt clone --rev BRANCH URL DIR")
		}
	}
	id, err := r.Resolve(ctx, rev)
	if err != nil {
		return nil, err
	}
	rr, err := r.Restore(ctx, id.String(), RestoreOptions{})
	if err != nil {
		return nil, err
	}
	res.Restore, res.Rev = rr, rev
	if b, err := r.st.Ref(ctx, branchRef(rev)); err == nil && b.ID == id {
		err := r.st.Update(ctx, func(tx store.Tx) error {
			return r.setHead(tx, id, &store.Ref{Name: headName, Symbolic: rev})
		})
		if err != nil {
			return nil, err
		}
	}
	return res, nil
}

// remoteRefProblem says why a ref from a remote cannot come into a store
// ("" if it can): HEAD, or a branch, tag or snapshot with a valid name.
func remoteRefProblem(ref remote.Ref) string {
	if ref.Name == headName {
		if ref.Symbolic != "" {
			if err := ValidRefName("branch", ref.Symbolic); err != nil {
				return "its branch: " + err.Error()
			}
		}
		return ""
	}
	if ref.Symbolic != "" {
		return "only HEAD may name a branch"
	}
	for _, ns := range refNamespaces {
		if name, ok := strings.CutPrefix(ref.Name, ns); ok {
			kind := map[string]string{snapshotPrefix: "snapshot", tagPrefix: "tag", branchPrefix: "branch"}[ns]
			if err := ValidRefName(kind, name); err != nil {
				return err.Error()
			}
			return ""
		}
	}
	return "not a branch, tag or snapshot"
}
