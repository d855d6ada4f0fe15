package ckpt

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"

	"github.com/seed1cedbf7c/ckpt/internal/object"
	"github.com/seed1cedbf7c/ckpt/internal/remote"
)

// RemoteFsckOptions configure [Repo.FsckRemote].
type RemoteFsckOptions struct {
	// Sample is the percentage of file contents downloaded and verified
	// (1-100; 0: 100). Checkpoints and trees are always all verified, and
	// every blob is checked to be listed.
	Sample int
	// Repair removes the packs that hold damaged objects (and the
	// indexes of missing packs), so that `ckpt push --full` from a store
	// that holds those checkpoints uploads them again.
	Repair bool
}

// RemoteFsckResult reports a remote's check.
type RemoteFsckResult struct {
	Remote      string   `json:"remote"`
	URL         string   `json:"url"`
	Refs        int      `json:"refs"`
	Packs       int      `json:"packs"`
	Checkpoints int      `json:"checkpoints"`
	Trees       int      `json:"trees"`
	Blobs       int      `json:"blobs"`
	Verified    int      `json:"verified"`
	Bytes       int64    `json:"bytes"`
	Sample      int      `json:"sample"`
	Problems    []string `json:"problems"`
	// Unindexed counts packs no index names (a push cut short).
	Unindexed int `json:"unindexed"`
	// Dropped lists the packs a repair removed.
	Dropped []string `json:"dropped,omitempty"`
}

// FsckRemote checks a remote: every index decodes and names a pack that
// is there, every ref decodes and names a checkpoint, every checkpoint and
// tree reachable from the refs downloads and matches its hash, every blob
// they name is listed, and Sample percent of those blobs download and
// match. It returns a *RemoteCorruptError (exit status 3) with the
// problems it found.
func (r *Repo) FsckRemote(ctx context.Context, name string, opts RemoteFsckOptions) (*RemoteFsckResult, error) {
	rc, err := r.remoteConfig(ctx, name)
	if err != nil {
		return nil, err
	}
	rm, _, err := r.openRemote(ctx, rc, false)
	if err != nil {
		return nil, err
	}
	defer rm.SaveCache()
	if opts.Sample <= 0 || opts.Sample > 100 {
		opts.Sample = 100
	}
	res := &RemoteFsckResult{Remote: rc.Name, URL: rc.URL, Sample: opts.Sample, Problems: []string{}}
	problem := func(format string, a ...any) { res.Problems = append(res.Problems, fmt.Sprintf(format, a...)) }
	var ce *remote.CorruptError
	damaged := map[string]bool{}
	if err := rm.LoadIndex(ctx); err != nil {
		if !errors.As(err, &ce) {
			return nil, err
		}
		problem("%v", err)
	}
	res.Packs = len(rm.Packs())
	missing, err := rm.MissingPacks(ctx)
	if err != nil {
		return nil, err
	}
	for _, m := range missing {
		problem("pack %s is missing, though an index lists it", m)
		damaged[m] = true
	}
	un, err := rm.UnindexedPacks(ctx)
	if err != nil {
		return nil, err
	}
	res.Unindexed = len(un)
	refs, err := rm.Refs(ctx)
	if err != nil {
		if !errors.As(err, &ce) {
			return nil, err
		}
		problem("%v", err)
	}
	res.Refs = len(refs)
	// Checkpoints, a generation at a time; then trees, a level at a time.
	fetch := func(keys []remote.ObjKey, fn func(remote.ObjKey, []byte, json.RawMessage) error) error {
		var ok []remote.ObjKey
		for _, k := range keys {
			if rm.Listed(k) {
				ok = append(ok, k)
			} else {
				problem("%s is not on the remote, though %s names it", k, "a ref, checkpoint or tree")
			}
		}
		// Fetch stops at its first error: on one, check one at a time
		// so that each bad object is reported.
		err := rm.Fetch(ctx, ok, fn)
		if err == nil || !errors.As(err, &ce) {
			return err
		}
		for _, k := range ok {
			if err := rm.Fetch(ctx, []remote.ObjKey{k}, fn); err != nil {
				if !errors.As(err, &ce) {
					return err
				}
				problem("%v", err)
				if strings.HasPrefix(ce.Key, "packs/") {
					damaged[ce.Key] = true
				}
			}
		}
		return nil
	}
	seen := map[remote.ObjKey]bool{}
	var frontier []remote.ObjKey
	for _, ref := range refs {
		if !ref.ID.IsZero() {
			frontier = append(frontier, remote.ObjKey{Kind: remote.KindCheckpoint, ID: ref.ID})
		}
	}
	var trees []remote.ObjKey
	for len(frontier) > 0 {
		var want []remote.ObjKey
		for _, k := range frontier {
			if !seen[k] {
				seen[k] = true
				want = append(want, k)
			}
		}
		frontier = nil
		err := fetch(want, func(k remote.ObjKey, data []byte, _ json.RawMessage) error {
			cp, err := object.DecodeCheckpoint(data)
			if err != nil {
				problem("%s does not decode: %v", k, err)
				return nil
			}
			res.Checkpoints++
			trees = append(trees, remote.ObjKey{Kind: remote.KindTree, ID: cp.Tree})
			for _, p := range cp.Parents {
				pk := remote.ObjKey{Kind: remote.KindCheckpoint, ID: p}
				if rm.Listed(pk) {
					frontier = append(frontier, pk)
				} // else: the pushing store's gc had cut the history there
			}
			return nil
		})
		if err != nil {
			return nil, err
		}
	}
	var blobs []remote.ObjKey
	for len(trees) > 0 {
		var want []remote.ObjKey
		for _, k := range trees {
			if !seen[k] {
				seen[k] = true
				want = append(want, k)
			}
		}
		trees = nil
		err := fetch(want, func(k remote.ObjKey, data []byte, _ json.RawMessage) error {
			t, err := object.DecodeTree(data)
			if err != nil {
				problem("%s does not decode: %v", k, err)
				return nil
			}
			res.Trees++
			for _, e := range t.Entries {
				if object.IsDir(e.Mode) {
					trees = append(trees, remote.ObjKey{Kind: remote.KindTree, ID: e.ID})
					continue
				}
				bk := remote.ObjKey{Kind: remote.KindBlob, ID: e.ID}
				if !seen[bk] {
					seen[bk] = true
					blobs = append(blobs, bk)
				}
			}
			return nil
		})
		if err != nil {
			return nil, err
		}
	}
	res.Blobs = len(blobs)
	var sample []remote.ObjKey
	rnd := rand.New(rand.NewPCG(rand.Uint64(), rand.Uint64()))
	for _, k := range blobs {
		if opts.Sample == 100 || rnd.IntN(100) < opts.Sample {
			sample = append(sample, k)
		}
	}
	err = fetch(sample, func(k remote.ObjKey, data []byte, _ json.RawMessage) error {
		res.Verified++
		return nil
	})
	if err != nil {
		return nil, err
	}
	res.Verified += res.Checkpoints + res.Trees
	res.Bytes = rm.Downloaded()
	if opts.Repair {
		for key := range damaged {
			if err := rm.DropPack(ctx, key); err != nil {
				return res, err
			}
			res.Dropped = append(res.Dropped, key)
		}
		slices.Sort(res.Dropped)
	}
	if len(res.Problems) > 0 {
		return res, &RemoteCorruptError{Remote: rc.Name, Problems: res.Problems, Dropped: res.Dropped}
	}
	return res, nil
}
