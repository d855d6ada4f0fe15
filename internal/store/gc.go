package store

import (
	"context"
	"sort"

	"github.com/seed1cedbf7c/ckpt/internal/object"
)

// Garbage collection works in two steps. A [Marker], built from the store's
// [Index], marks what is kept: checkpoints, the trees and blobs below them,
// the delta bases of marked objects and the chunks of marked chunked blobs.
// It counts the stored bytes it marks, so a caller can add checkpoints
// newest first and stop at a size budget. [Store.Sweep] then deletes
// everything unmarked in one transaction, together with the refs and the
// prefix of the operation log that the caller drops.

// ObjectInfo is what gc needs to know about one stored object without
// reading its content.
type ObjectInfo struct {
	// Stored is the number of bytes the object takes in the store.
	Stored int64
	// Base is the object it is stored as a delta against (zero: none).
	Base object.ID
	// Chunks are the chunks of a chunked blob.
	Chunks []object.ID
}

// CheckpointInfo is a stored checkpoint's place in the store.
type CheckpointInfo struct {
	ID      object.ID
	Seq     int64
	Tree    object.ID
	Stored  int64
	Parents []object.ID
}

// Index lists every stored object, for a [Marker].
type Index struct {
	Blobs       map[object.ID]ObjectInfo
	Trees       map[object.ID]ObjectInfo
	Chunks      map[object.ID]int64
	Checkpoints map[object.ID]CheckpointInfo
	// Total is the number of bytes all objects take.
	Total int64
}

// Totals is what a store holds, counted (see [Store.Totals]).
type Totals struct {
	Blobs, Trees, Chunks, Checkpoints int
	// Stored is the bytes the objects and checkpoints take, as
	// [Index.Total] counts them.
	Stored int64
	// Content is the blobs' sizes added up: the distinct file contents.
	Content int64
}

// SweepPlan is what [Store.Sweep] deletes.
type SweepPlan struct {
	Checkpoints []object.ID
	Trees       []object.ID
	Blobs       []object.ID
	Chunks      []object.ID
	// Refs are deleted by name (expired snapshots).
	Refs []string
	// OpsBefore: operation log entries with a smaller seq are deleted.
	OpsBefore int64
	// ReencodeTrees and ReencodeBlobs are kept objects stored as deltas
	// against objects the plan deletes: they are rewritten in full first.
	ReencodeTrees []object.ID
	ReencodeBlobs []object.ID
	// Bytes is the number of stored bytes the plan frees.
	Bytes int64
}

// Empty reports whether the plan deletes nothing.
func (p *SweepPlan) Empty() bool {
	return len(p.Checkpoints)+len(p.Trees)+len(p.Blobs)+len(p.Chunks)+len(p.Refs) == 0 && p.OpsBefore <= 0
}

// TreeReader reads a verified tree.
type TreeReader func(ctx context.Context, id object.ID) (*object.Tree, error)

// Marker marks the objects gc keeps.
type Marker struct {
	idx     *Index
	read    TreeReader
	cps     map[object.ID]bool
	walked  map[object.ID]bool // trees whose entries are marked
	trees   map[object.ID]bool
	blobs   map[object.ID]bool
	chunks  map[object.ID]bool
	live    int64
	liveCps int
	missing []object.ID
}

// NewMarker returns a marker over idx that reads trees with read.
func NewMarker(idx *Index, read TreeReader) *Marker {
	return &Marker{idx: idx, read: read, cps: map[object.ID]bool{}, walked: map[object.ID]bool{}, trees: map[object.ID]bool{},
		blobs: map[object.ID]bool{}, chunks: map[object.ID]bool{}}
}

// Live returns the stored bytes marked so far.
func (m *Marker) Live() int64 { return m.live }

// Marked reports whether a checkpoint is marked.
func (m *Marker) Marked(id object.ID) bool { return m.cps[id] }

// Checkpoint marks a checkpoint and everything it needs, returning the
// stored bytes newly marked. An unknown id is ignored (it was pruned).
func (m *Marker) Checkpoint(ctx context.Context, id object.ID) (int64, error) {
	if m.cps[id] {
		return 0, nil
	}
	ci, ok := m.idx.Checkpoints[id]
	if !ok {
		return 0, nil
	}
	before := m.live
	m.cps[id] = true
	m.liveCps++
	m.live += ci.Stored
	if err := m.Tree(ctx, ci.Tree); err != nil {
		return 0, err
	}
	return m.live - before, nil
}

// Tree marks a tree and everything below it.
func (m *Marker) Tree(ctx context.Context, id object.ID) error {
	// A tree kept only as another's delta base is marked but not walked.
	if id == object.EmptyTree || m.walked[id] {
		return nil
	}
	if _, ok := m.idx.Trees[id]; !ok {
		m.missing = append(m.missing, id)
		return nil
	}
	m.walked[id] = true
	m.markObject(m.trees, m.idx.Trees, id)
	t, err := m.read(ctx, id)
	if err != nil {
		return err
	}
	for _, e := range t.Entries {
		if object.IsDir(e.Mode) {
			if err := m.Tree(ctx, e.ID); err != nil {
				return err
			}
			continue
		}
		if _, ok := m.idx.Blobs[e.ID]; ok {
			m.markObject(m.blobs, m.idx.Blobs, e.ID)
		}
	}
	return ctx.Err()
}

// Blob marks a blob (and its base or chunks).
func (m *Marker) Blob(id object.ID) {
	if _, ok := m.idx.Blobs[id]; ok {
		m.markObject(m.blobs, m.idx.Blobs, id)
	}
}

// markObject marks id in set (and a chunked blob's chunks). Delta bases
// are not followed: a kept object whose base is not kept is re-encoded in
// full by the sweep (see [SweepPlan.Reencode]), so the base can go.
func (m *Marker) markObject(set map[object.ID]bool, infos map[object.ID]ObjectInfo, id object.ID) {
	if set[id] {
		return
	}
	info, ok := infos[id]
	if !ok {
		return
	}
	set[id] = true
	m.live += info.Stored
	for _, c := range info.Chunks {
		if !m.chunks[c] {
			m.chunks[c] = true
			m.live += m.idx.Chunks[c]
		}
	}
}

// Plan returns what a sweep deletes: everything not marked.
func (m *Marker) Plan() *SweepPlan {
	p := &SweepPlan{}
	for id, ci := range m.idx.Checkpoints {
		if !m.cps[id] {
			p.Checkpoints = append(p.Checkpoints, id)
			p.Bytes += ci.Stored
		}
	}
	for id, oi := range m.idx.Trees {
		if !m.trees[id] {
			p.Trees = append(p.Trees, id)
			p.Bytes += oi.Stored
		} else if !oi.Base.IsZero() && !m.trees[oi.Base] {
			p.ReencodeTrees = append(p.ReencodeTrees, id)
		}
	}
	for id, oi := range m.idx.Blobs {
		if !m.blobs[id] {
			p.Blobs = append(p.Blobs, id)
			p.Bytes += oi.Stored
		} else if !oi.Base.IsZero() && !m.blobs[oi.Base] {
			p.ReencodeBlobs = append(p.ReencodeBlobs, id)
		}
	}
	for id, n := range m.idx.Chunks {
		if !m.chunks[id] {
			p.Chunks = append(p.Chunks, id)
			p.Bytes += n
		}
	}
	for _, s := range [][]object.ID{p.Checkpoints, p.Trees, p.Blobs, p.Chunks, p.ReencodeTrees, p.ReencodeBlobs} {
		sort.Slice(s, func(i, j int) bool { return string(s[i][:]) < string(s[j][:]) })
	}
	return p
}

// ReencodeCost estimates how many bytes re-encoding the plan's objects adds:
// each becomes about as large as the full object at the end of its delta
// chain.
func (m *Marker) ReencodeCost(p *SweepPlan) int64 {
	var n int64
	cost := func(infos map[object.ID]ObjectInfo, ids []object.ID) {
		for _, id := range ids {
			info := infos[id]
			full := info
			for hops := 0; !full.Base.IsZero() && hops <= maxDeltaDepth+1; hops++ {
				b, ok := infos[full.Base]
				if !ok {
					break
				}
				full = b
			}
			if full.Stored > info.Stored {
				n += full.Stored - info.Stored
			}
		}
	}
	cost(m.idx.Trees, p.ReencodeTrees)
	cost(m.idx.Blobs, p.ReencodeBlobs)
	return n
}

// SweepResult counts what a sweep deleted.
type SweepResult struct {
	Checkpoints, Trees, Blobs, Chunks, Refs, Ops, Reencoded int
	Bytes                                                   int64
}

// Usage is how much space a store takes.
type Usage struct {
	// File is the size of the store's files on disk.
	File int64
	// Used is the part holding data: the database's pages in use (as the
	// WAL has them), without free pages and without the WAL's copies.
	Used int64
}
