package ckpt

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"time"

	"github.com/seed1cedbf7c/ckpt/internal/object"
	"github.com/seed1cedbf7c/ckpt/internal/remote"
)

// DefaultRemoteGrace is how long a remote gc waits between finding a
// pack unreachable and deleting it.
const DefaultRemoteGrace = time.Hour

// RemoteGCOptions configure [Repo.GCRemote].
type RemoteGCOptions struct {
	// Grace is the wait between marking a pack and deleting it, and the
	// age below which a pack no index lists is left alone (a push may be
	// writing its index). 0: DefaultRemoteGrace.
	Grace  time.Duration
	DryRun bool
}

// RemoteGCResult reports a remote gc.
type RemoteGCResult struct {
	Remote string `json:"remote"`
	// Marked: packs found unreachable now, deleted by a gc after the
	// grace period if still unreachable then.
	Marked []string `json:"marked"`
	// Deleted: packs marked longer than the grace period ago.
	Deleted []string `json:"deleted"`
	// Unmarked: marked packs a ref reaches again.
	Unmarked []string `json:"unmarked"`
	// Orphans: packs no index lists (a push cut short), marked a grace
	// period ago or more, deleted.
	Orphans []string `json:"orphans"`
	// ExpiredSnapshots: snapshot refs past their expiry, deleted.
	ExpiredSnapshots []string `json:"expired_snapshots"`
	Freed            int64    `json:"freed"`
	DryRun           bool     `json:"dry_run,omitempty"`
}

// GCRemote deletes what no ref and no session of a remote reaches. It
// never deletes what a concurrent push may have just come to count on:
// an unreachable pack is first marked, pushes stop counting on marked
// packs at once (they upload those objects again), and only a gc at
// least Grace later deletes it, if no ref reaches it by then. A pack no
// index lists (a push cut short) is marked once older than Grace and
// deleted the same way. Packs that are partly reachable are kept whole.
func (r *Repo) GCRemote(ctx context.Context, name string, opts RemoteGCOptions) (*RemoteGCResult, error) {
	if opts.Grace <= 0 {
		opts.Grace = DefaultRemoteGrace
	}
	rc, err := r.remoteConfig(ctx, name)
	if err != nil {
		return nil, err
	}
	rm, _, err := r.openRemote(ctx, rc, false)
	if err != nil {
		return nil, err
	}
	defer rm.SaveCache()
	now := r.now()
	res := &RemoteGCResult{Remote: rc.Name, DryRun: opts.DryRun, Marked: []string{}, Deleted: []string{},
		Unmarked: []string{}, Orphans: []string{}, ExpiredSnapshots: []string{}}
	refs, err := rm.Refs(ctx)
	if err != nil {
		return nil, err
	}
	var starts []remote.ObjKey
	for _, ref := range refs {
		if strings.HasPrefix(ref.Name, snapshotPrefix) && !ref.Expires.IsZero() && !ref.Expires.After(now) {
			res.ExpiredSnapshots = append(res.ExpiredSnapshots, strings.TrimPrefix(ref.Name, snapshotPrefix))
			if !opts.DryRun {
				if err := rm.DeleteRef(ctx, ref.Name); err != nil {
					return nil, err
				}
			}
			continue
		}
		if !ref.ID.IsZero() {
			starts = append(starts, remote.ObjKey{Kind: remote.KindCheckpoint, ID: ref.ID})
		}
	}
	_, sroots, err := remoteSessions(ctx, rm)
	if err != nil {
		return nil, err
	}
	for _, id := range sroots {
		starts = append(starts, remote.ObjKey{Kind: remote.KindCheckpoint, ID: id})
	}
	// The indexes after the refs: a push indexes every object before it
	// moves a ref, so whatever the refs read reach is listed by now.
	if err := rm.LoadIndex(ctx); err != nil {
		return nil, err
	}
	live, err := remoteReachable(ctx, rm, starts)
	if err != nil {
		return nil, err
	}
	livePacks := map[string]bool{}
	for _, p := range rm.Packs() {
		for _, k := range rm.PackObjects(p) {
			if live[k] {
				livePacks[p] = true
				break
			}
		}
	}
	sizes, err := rm.PackSizes(ctx)
	if err != nil {
		return nil, err
	}
	marks := rm.Marks()
	for _, p := range rm.Packs() {
		mark, marked := marks[p]
		switch {
		case livePacks[p] && marked:
			res.Unmarked = append(res.Unmarked, p)
			if !opts.DryRun {
				if err := rm.UnmarkPack(ctx, p); err != nil {
					return nil, err
				}
			}
		case livePacks[p]:
		case marked && now.Sub(mark) >= opts.Grace:
			res.Deleted = append(res.Deleted, p)
			res.Freed += sizes[p].Size
			if !opts.DryRun {
				if err := rm.DeletePack(ctx, p); err != nil {
					return nil, err
				}
			}
		case !marked:
			res.Marked = append(res.Marked, p)
			if !opts.DryRun {
				if err := rm.MarkPack(ctx, p, now); err != nil {
					return nil, err
				}
			}
		}
	}
	// Packs no index lists: a push cut short, or one writing its index
	// right now. Those older than the grace period are marked like any
	// other, and deleted by a gc a grace period later if still unlisted
	// (a push that found one marked uploads its objects under another
	// name instead of listing it).
	indexed := map[string]bool{}
	for _, p := range rm.Packs() {
		indexed[p] = true
	}
	for name, e := range sizes {
		if indexed[name] || slices.Contains(res.Deleted, name) {
			continue
		}
		mark, marked := marks[name]
		switch {
		case marked && now.Sub(mark) >= opts.Grace:
			if listed, err := rm.HasIndex(ctx, name); err != nil {
				return nil, err
			} else if listed {
				continue // indexed since: the next gc decides
			}
			res.Orphans = append(res.Orphans, e.Key)
			res.Freed += e.Size
			if !opts.DryRun {
				if err := rm.DeleteUnindexedPack(ctx, e.Key); err != nil {
					return nil, err
				}
				if err := rm.UnmarkPack(ctx, name); err != nil {
					return nil, err
				}
			}
		case !marked && now.Sub(e.ModTime) >= opts.Grace:
			res.Marked = append(res.Marked, name)
			if !opts.DryRun {
				if err := rm.MarkPack(ctx, name, now); err != nil {
					return nil, err
				}
			}
		}
	}
	slices.Sort(res.Orphans)
	return res, nil
}

// remoteReachable returns every object the start checkpoints reach on
// the remote (what the indexes list of it).
func remoteReachable(ctx context.Context, rm *remote.Remote, starts []remote.ObjKey) (map[remote.ObjKey]bool, error) {
	live := map[remote.ObjKey]bool{}
	frontier := starts
	var trees []remote.ObjKey
	for len(frontier) > 0 {
		var want []remote.ObjKey
		for _, k := range frontier {
			if !live[k] && rm.Listed(k) {
				live[k] = true
				want = append(want, k)
			}
		}
		frontier = nil
		err := rm.Fetch(ctx, want, func(k remote.ObjKey, data []byte, _ json.RawMessage) error {
			cp, err := object.DecodeCheckpoint(data)
			if err != nil {
				return err
			}
			trees = append(trees, remote.ObjKey{Kind: remote.KindTree, ID: cp.Tree})
			for _, p := range cp.Parents {
				frontier = append(frontier, remote.ObjKey{Kind: remote.KindCheckpoint, ID: p})
			}
			return nil
		})
		if err != nil {
			return nil, err
		}
	}
	for len(trees) > 0 {
		var want []remote.ObjKey
		for _, k := range trees {
			if !live[k] && rm.Listed(k) {
				live[k] = true
				want = append(want, k)
			}
		}
		trees = nil
		err := rm.Fetch(ctx, want, func(k remote.ObjKey, data []byte, _ json.RawMessage) error {
			t, err := object.DecodeTree(data)
			if err != nil {
				return err
			}
			for _, e := range t.Entries {
				if object.IsDir(e.Mode) {
					trees = append(trees, remote.ObjKey{Kind: remote.KindTree, ID: e.ID})
				} else {
					live[remote.ObjKey{Kind: remote.KindBlob, ID: e.ID}] = true
				}
			}
			return nil
		})
		if err != nil {
			return nil, err
		}
	}
	return live, nil
}
