package ckpt

import (
	"context"
	"sort"
	"time"

	"github.com/seed1cedbf7c/ckpt/internal/object"
	"github.com/seed1cedbf7c/ckpt/internal/store"
)

// GrowthPoint is one checkpoint's part in the store's growth: the file
// contents it was the first (of the checkpoints kept) to hold.
type GrowthPoint struct {
	Checkpoint ID        `json:"checkpoint"`
	Time       time.Time `json:"time"`
	Kind       string    `json:"kind"`
	// New is the size of the distinct file contents no older kept
	// checkpoint holds; Content the running sum of New, oldest first:
	// the distinct content the store held once this checkpoint was made
	// (counting only checkpoints still kept — gc rewrites the past).
	New     int64 `json:"new_bytes"`
	Content int64 `json:"content_bytes"`
	// Logical is the checkpoint's own size (its files' bytes).
	Logical int64 `json:"logical_bytes"`
}

// Growth derives the store's growth from its checkpoints, oldest first:
// no history of sizes is kept, so this is what the checkpoints still
// kept account for. Each tree is read once: a tree seen before holds
// only contents seen before.
func (r *Repo) Growth(ctx context.Context) ([]GrowthPoint, error) {
	recs, err := r.st.Checkpoints(ctx, store.ListFilter{})
	if err != nil {
		return nil, err
	}
	sort.SliceStable(recs, func(i, j int) bool {
		if !recs[i].Time.Equal(recs[j].Time) {
			return recs[i].Time.Before(recs[j].Time)
		}
		return recs[i].Seq < recs[j].Seq
	})
	trees, blobs := map[ID]bool{}, map[ID]bool{}
	var walk func(id ID) (int64, error)
	walk = func(id ID) (int64, error) {
		if id.IsZero() || trees[id] {
			return 0, nil
		}
		trees[id] = true
		t, err := r.st.ReadTree(ctx, id)
		if err != nil {
			return 0, err
		}
		var n int64
		for _, e := range t.Entries {
			if object.IsDir(e.Mode) {
				m, err := walk(e.ID)
				if err != nil {
					return 0, err
				}
				n += m
			} else if !blobs[e.ID] {
				blobs[e.ID] = true
				n += e.Size
			}
		}
		return n, nil
	}
	out := make([]GrowthPoint, 0, len(recs))
	var total int64
	for _, rec := range recs {
		n, err := walk(rec.Tree)
		if err != nil {
			return nil, err
		}
		total += n
		out = append(out, GrowthPoint{Checkpoint: rec.ID, Time: rec.Time, Kind: rec.Kind, New: n, Content: total, Logical: rec.Stats.Bytes})
	}
	return out, nil
}

// StoreUsage is the store's size: its files on disk, and the part of
// them holding data (what max_size limits, and what gc frees at once —
// the files shrink only when the store is compacted).
type StoreUsage struct {
	File int64 `json:"disk_bytes"`
	Used int64 `json:"used_bytes"`
}

// Usage reports the store's size; it is cheap (no object is read).
func (r *Repo) Usage(ctx context.Context) (StoreUsage, error) {
	u, err := r.st.Usage(ctx)
	return StoreUsage{File: u.File, Used: u.Used}, err
}

// StoreVersion returns a number that changes with every commit to the
// store, by this process or another, without opening the store's files;
// ok is false when the store cannot tell (the memory store, a store that
// failed to answer). A watcher compares it from one poll to the next.
func (r *Repo) StoreVersion(ctx context.Context) (v int64, ok bool) {
	dv, is := r.st.(interface {
		DataVersion(context.Context) (int64, error)
	})
	if !is {
		return 0, false
	}
	v, err := dv.DataVersion(ctx)
	return v, err == nil
}
