package store

import (
	"context"
	"fmt"

	"github.com/seed1cedbf7c/ckpt/internal/object"
)

// Index lists every stored object.
func (m *Memory) Index(ctx context.Context) (*Index, error) {
	m.mu.RLock()
	defer m.mu.RUnlock()
	idx := &Index{Blobs: map[object.ID]ObjectInfo{}, Trees: map[object.ID]ObjectInfo{},
		Chunks: map[object.ID]int64{}, Checkpoints: map[object.ID]CheckpointInfo{}}
	for id, b := range m.blobs {
		idx.Blobs[id] = ObjectInfo{Stored: int64(len(b))}
		idx.Total += int64(len(b))
	}
	for id, b := range m.trees {
		idx.Trees[id] = ObjectInfo{Stored: int64(len(b))}
		idx.Total += int64(len(b))
	}
	for id, c := range m.cps {
		r, err := m.record(id, c)
		if err != nil {
			return nil, err
		}
		idx.Checkpoints[id] = CheckpointInfo{ID: id, Seq: c.seq, Tree: r.Tree, Stored: int64(len(c.data)), Parents: r.Parents}
		idx.Total += int64(len(c.data))
	}
	return idx, nil
}

// Totals counts what the store holds.
func (m *Memory) Totals(ctx context.Context) (*Totals, error) {
	idx, err := m.Index(ctx)
	if err != nil {
		return nil, err
	}
	t := &Totals{Blobs: len(idx.Blobs), Trees: len(idx.Trees), Chunks: len(idx.Chunks), Checkpoints: len(idx.Checkpoints), Stored: idx.Total}
	m.mu.RLock()
	defer m.mu.RUnlock()
	for _, b := range m.blobs {
		t.Content += int64(len(b))
	}
	return t, nil
}

// Sweep deletes what the plan lists.
func (m *Memory) Sweep(ctx context.Context, p *SweepPlan) (SweepResult, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	var res SweepResult
	if m.pruned == nil {
		m.pruned = map[object.ID]bool{}
	}
	for _, id := range p.Checkpoints {
		if _, ok := m.cps[id]; ok {
			delete(m.cps, id)
			m.pruned[id] = true
			res.Checkpoints++
		}
	}
	for _, id := range p.Trees {
		if _, ok := m.trees[id]; ok {
			delete(m.trees, id)
			res.Trees++
		}
	}
	for _, id := range p.Blobs {
		if _, ok := m.blobs[id]; ok {
			delete(m.blobs, id)
			res.Blobs++
		}
	}
	for _, name := range p.Refs {
		if _, ok := m.refs[name]; ok {
			delete(m.refs, name)
			res.Refs++
		}
	}
	if p.OpsBefore > 0 {
		kept := m.ops[:0:0]
		for _, op := range m.ops {
			if op.Seq >= p.OpsBefore {
				kept = append(kept, op)
			} else {
				res.Ops++
			}
		}
		m.ops = kept
	}
	res.Bytes = p.Bytes
	return res, nil
}

// Pruned reports whether gc deleted a checkpoint.
func (m *Memory) Pruned(ctx context.Context, id object.ID) (bool, error) {
	m.mu.RLock()
	defer m.mu.RUnlock()
	return m.pruned[id], nil
}

// Vacuum does nothing: freed memory is the garbage collector's.
func (m *Memory) Vacuum(ctx context.Context) error { return nil }

// Usage reports the bytes held.
func (m *Memory) Usage(ctx context.Context) (Usage, error) {
	idx, err := m.Index(ctx)
	if err != nil {
		return Usage{}, err
	}
	return Usage{File: idx.Total, Used: idx.Total}, nil
}

// Clear forgets all history.
func (m *Memory) Clear(ctx context.Context, extraTables ...string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.blobs, m.trees, m.cps = map[object.ID][]byte{}, map[object.ID][]byte{}, map[object.ID]*memCP{}
	m.refs, m.ops, m.journal, m.pruned, m.sess = map[string]Ref{}, nil, nil, nil, nil
	var gen int64
	fmt.Sscan(m.meta["generation"], &gen)
	m.meta["generation"] = fmt.Sprint(gen + 1)
	return nil
}
