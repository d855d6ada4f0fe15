package store

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/seed1cedbf7c/ckpt/internal/failpoint"
	"github.com/seed1cedbf7c/ckpt/internal/object"
)

// Memory is an in-process store for the Go API and tests. It keeps
// everything in maps and forgets it when the process ends. Objects are still
// verified on every read, so tests exercise the same integrity paths.
type Memory struct {
	mu        sync.RWMutex
	workspace string
	created   time.Time
	blobs     map[object.ID][]byte
	trees     map[object.ID][]byte
	cps       map[object.ID]*memCP
	seq       int64
	refs      map[string]Ref
	ops       []Op
	journal   *Journal
	meta      map[string]string
	lockCh    chan struct{}
	pruned    map[object.ID]bool
	opSeq     int64
	sess      *memSessions
}

type memCP struct {
	data  []byte
	seq   int64
	stats Stats
}

var _ Store = (*Memory)(nil)

// NewMemory returns an empty memory store for workspace.
func NewMemory(workspace string) *Memory {
	return &Memory{
		workspace: workspace, created: time.Now(),
		blobs: map[object.ID][]byte{}, trees: map[object.ID][]byte{},
		cps: map[object.ID]*memCP{}, refs: map[string]Ref{},
		meta:   map[string]string{"generation": "1"},
		lockCh: make(chan struct{}, 1),
	}
}

// Info describes the store.
func (m *Memory) Info(ctx context.Context) (Info, error) {
	m.mu.RLock()
	defer m.mu.RUnlock()
	var size int64
	for _, b := range m.blobs {
		size += int64(len(b))
	}
	for _, b := range m.trees {
		size += int64(len(b))
	}
	var gen, seq int64
	fmt.Sscan(m.meta["generation"], &gen)
	fmt.Sscan(m.meta["cache_seq"], &seq)
	return Info{Backend: "memory", Workspace: m.workspace, Created: m.created, Size: size, Instance: fmt.Sprintf("mem-%p", m), Generation: gen, CacheSeq: seq}, nil
}

// Meta returns a setting.
func (m *Memory) Meta(ctx context.Context, key string) (string, error) {
	m.mu.RLock()
	defer m.mu.RUnlock()
	return m.meta[key], nil
}

// HasBlob reports whether the blob exists.
func (m *Memory) HasBlob(ctx context.Context, id object.ID) (bool, error) {
	m.mu.RLock()
	defer m.mu.RUnlock()
	_, ok := m.blobs[id]
	return ok, nil
}

// ReadBlob returns a verified blob.
func (m *Memory) ReadBlob(ctx context.Context, id object.ID) ([]byte, error) {
	m.mu.RLock()
	b, ok := m.blobs[id]
	m.mu.RUnlock()
	if !ok {
		return nil, &NotFoundError{Kind: "blob", ID: id}
	}
	if sum(b) != id {
		return nil, &CorruptError{Kind: "blob", ID: id, Detail: "content does not match its hash"}
	}
	return bytes.Clone(b), nil
}

// OpenBlob streams a verified blob.
func (m *Memory) OpenBlob(ctx context.Context, id object.ID) (io.ReadCloser, int64, error) {
	b, err := m.ReadBlob(ctx, id)
	if err != nil {
		return nil, 0, err
	}
	return io.NopCloser(bytes.NewReader(b)), int64(len(b)), nil
}

// HasTree reports whether the tree exists.
func (m *Memory) HasTree(ctx context.Context, id object.ID) (bool, error) {
	m.mu.RLock()
	defer m.mu.RUnlock()
	_, ok := m.trees[id]
	return ok, nil
}

// ReadTree returns a verified tree.
func (m *Memory) ReadTree(ctx context.Context, id object.ID) (*object.Tree, error) {
	m.mu.RLock()
	b, ok := m.trees[id]
	m.mu.RUnlock()
	if !ok {
		return nil, &NotFoundError{Kind: "tree", ID: id}
	}
	return decodeTree(id, encRaw, b)
}

func (m *Memory) record(id object.ID, c *memCP) (*Record, error) {
	if sum(c.data) != id {
		return nil, &CorruptError{Kind: "checkpoint", ID: id, Detail: "content does not match its hash"}
	}
	cp, err := object.DecodeCheckpoint(c.data)
	if err != nil {
		return nil, &CorruptError{Kind: "checkpoint", ID: id, Detail: err.Error()}
	}
	return &Record{Checkpoint: cp, ID: id, Seq: c.seq, Stats: c.stats}, nil
}

// Checkpoint returns a verified checkpoint.
func (m *Memory) Checkpoint(ctx context.Context, id object.ID) (*Record, error) {
	m.mu.RLock()
	c, ok := m.cps[id]
	m.mu.RUnlock()
	if !ok {
		return nil, &NotFoundError{Kind: "checkpoint", ID: id}
	}
	return m.record(id, c)
}

// Checkpoints lists checkpoints newest first.
func (m *Memory) Checkpoints(ctx context.Context, f ListFilter) ([]*Record, error) {
	m.mu.RLock()
	var out []*Record
	for id, c := range m.cps {
		r, err := m.record(id, c)
		if err != nil {
			m.mu.RUnlock()
			return nil, err
		}
		if f.Kind != "" && r.Kind != f.Kind || f.BeforeSeq > 0 && r.Seq >= f.BeforeSeq {
			continue
		}
		out = append(out, r)
	}
	m.mu.RUnlock()
	sort.Slice(out, func(i, j int) bool { return out[i].Seq > out[j].Seq })
	if f.Limit > 0 && len(out) > f.Limit {
		out = out[:f.Limit]
	}
	return out, nil
}

// FindCheckpoints resolves a hex prefix.
func (m *Memory) FindCheckpoints(ctx context.Context, prefix string, limit int) ([]object.ID, error) {
	m.mu.RLock()
	defer m.mu.RUnlock()
	prefix = strings.ToLower(prefix)
	var out []object.ID
	for id := range m.cps {
		if strings.HasPrefix(id.String(), prefix) {
			out = append(out, id)
		}
	}
	sort.Slice(out, func(i, j int) bool { return bytes.Compare(out[i][:], out[j][:]) < 0 })
	if len(out) > limit {
		out = out[:limit]
	}
	return out, nil
}

// Ref returns a ref.
func (m *Memory) Ref(ctx context.Context, name string) (Ref, error) {
	m.mu.RLock()
	defer m.mu.RUnlock()
	r, ok := m.refs[name]
	if !ok {
		return Ref{}, fmt.Errorf("ref %s: %w", name, ErrNotFound)
	}
	return r, nil
}

// Refs lists refs by prefix.
func (m *Memory) Refs(ctx context.Context, prefix string) ([]Ref, error) {
	m.mu.RLock()
	defer m.mu.RUnlock()
	var out []Ref
	for n, r := range m.refs {
		if strings.HasPrefix(n, prefix) {
			out = append(out, r)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}

// Ops returns the op log after seq.
func (m *Memory) Ops(ctx context.Context, after int64) ([]Op, error) {
	m.mu.RLock()
	defer m.mu.RUnlock()
	var out []Op
	for _, op := range m.ops {
		if op.Seq > after {
			out = append(out, op)
		}
	}
	return out, nil
}

// Journal returns the pending journal.
func (m *Memory) Journal(ctx context.Context) (*Journal, error) {
	m.mu.RLock()
	defer m.mu.RUnlock()
	if m.journal == nil {
		return nil, nil
	}
	j := *m.journal
	return &j, nil
}

// Lock takes the store's lock (in-process only).
func (m *Memory) Lock(ctx context.Context, timeout time.Duration, waiting func(string)) (func(), error) {
	t := time.NewTimer(timeout)
	defer t.Stop()
	select {
	case m.lockCh <- struct{}{}:
		return func() { <-m.lockCh }, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	case <-t.C:
		return nil, &LockedError{Path: "memory store", Holder: "another goroutine", Waited: timeout}
	}
}

// Update applies fn's writes atomically.
func (m *Memory) Update(ctx context.Context, fn func(Tx) error) error {
	tx := &memTx{m: m, blobs: map[object.ID][]byte{}, trees: map[object.ID][]byte{}, cps: map[object.ID]*memCP{},
		refs: map[string]*Ref{}, meta: map[string]string{}}
	if err := fn(tx); err != nil {
		return err
	}
	if err := failpoint.Hit("store/before-commit", ""); err != nil {
		return err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	for id, b := range tx.blobs {
		m.blobs[id] = b
	}
	for id, b := range tx.trees {
		m.trees[id] = b
	}
	for _, id := range tx.cpOrder {
		if _, ok := m.cps[id]; ok {
			continue
		}
		m.seq++
		c := tx.cps[id]
		c.seq = m.seq
		m.cps[id] = c
	}
	for n, r := range tx.refs {
		if r == nil {
			delete(m.refs, n)
		} else {
			m.refs[n] = *r
		}
	}
	for _, op := range tx.ops {
		m.opSeq++
		op.Seq = m.opSeq
		m.ops = append(m.ops, op)
	}
	if tx.journalSet {
		m.journal = tx.journal
	}
	for _, id := range tx.pruned {
		if m.pruned == nil {
			m.pruned = map[object.ID]bool{}
		}
		m.pruned[id] = true
	}
	for k, v := range tx.meta {
		m.meta[k] = v
	}
	return nil
}

// Fsck verifies every object.
func (m *Memory) Fsck(ctx context.Context, report func(Problem), progress func(done, total int64)) (int64, error) {
	m.mu.RLock()
	defer m.mu.RUnlock()
	var n int64
	blobs := map[object.ID]bool{}
	trees := map[object.ID]bool{}
	for id, b := range m.blobs {
		n++
		if sum(b) != id {
			report(Problem{Kind: "blob", ID: id, Detail: "content does not match its hash"})
			continue
		}
		blobs[id] = true
	}
	parsed := map[object.ID]*object.Tree{}
	for id, b := range m.trees {
		n++
		t, err := decodeTree(id, encRaw, b)
		if err != nil {
			report(Problem{Kind: "tree", ID: id, Detail: err.(*CorruptError).Detail})
			continue
		}
		trees[id] = true
		parsed[id] = t
	}
	for id, t := range parsed {
		checkTreeRefs(id, t, blobs, trees, report)
	}
	for id, c := range m.cps {
		n++
		r, err := m.record(id, c)
		if err != nil {
			report(Problem{Kind: "checkpoint", ID: id, Detail: err.(*CorruptError).Detail})
			continue
		}
		if !trees[r.Tree] && r.Tree != object.EmptyTree {
			report(Problem{Kind: "checkpoint", ID: id, Detail: "missing tree " + r.Tree.String()})
		}
		for _, p := range r.Parents {
			if _, ok := m.cps[p]; !ok && !m.pruned[p] {
				report(Problem{Kind: "checkpoint", ID: id, Detail: "missing parent " + p.String()})
			}
		}
	}
	for name, r := range m.refs {
		if _, ok := m.cps[r.ID]; !ok {
			report(Problem{Kind: "ref", Name: name, ID: r.ID, Detail: "points to a missing checkpoint"})
		}
	}
	return n, nil
}

// Close does nothing.
func (m *Memory) Close() error { return nil }

// Corrupt flips a bit of a stored object (for tests of integrity checks).
func (m *Memory) Corrupt(id object.ID) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, tab := range []map[object.ID][]byte{m.blobs, m.trees} {
		if b, ok := tab[id]; ok && len(b) > 0 {
			b = bytes.Clone(b)
			b[0] ^= 1
			tab[id] = b
			return true
		}
	}
	return false
}

type memTx struct {
	m          *Memory
	mu         sync.Mutex
	blobs      map[object.ID][]byte
	trees      map[object.ID][]byte
	cps        map[object.ID]*memCP
	cpOrder    []object.ID
	refs       map[string]*Ref
	ops        []Op
	journal    *Journal
	journalSet bool
	meta       map[string]string
	pruned     []object.ID
}

func (t *memTx) HasBlob(id object.ID) (bool, error) {
	t.mu.Lock()
	_, ok := t.blobs[id]
	t.mu.Unlock()
	if ok {
		return true, nil
	}
	return t.m.HasBlob(context.Background(), id)
}

func (t *memTx) PutBlob(id object.ID, data []byte) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.blobs[id] = bytes.Clone(data)
	return nil
}

func (t *memTx) PutBlobFrom(id object.ID, data []byte, base object.ID) error {
	return t.PutBlob(id, data)
}

func (t *memTx) PutTreeFrom(id object.ID, data []byte, base object.ID) error {
	return t.PutTree(id, data)
}

func (t *memTx) NewBlobWriter() BlobWriter {
	var buf bytes.Buffer
	return &memBlobWriter{Buffer: &buf, t: t}
}

type memBlobWriter struct {
	*bytes.Buffer
	t *memTx
}

func (w *memBlobWriter) Commit(id object.ID) error { return w.t.PutBlob(id, w.Bytes()) }
func (w *memBlobWriter) Abort()                    { w.Reset() }

func (t *memTx) HasTree(id object.ID) (bool, error) {
	t.mu.Lock()
	_, ok := t.trees[id]
	t.mu.Unlock()
	if ok {
		return true, nil
	}
	return t.m.HasTree(context.Background(), id)
}

func (t *memTx) PutTree(id object.ID, data []byte) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.trees[id] = bytes.Clone(data)
	return nil
}

func (t *memTx) ReadTree(id object.ID) (*object.Tree, error) {
	t.mu.Lock()
	b, ok := t.trees[id]
	t.mu.Unlock()
	if ok {
		return decodeTree(id, encRaw, b)
	}
	return t.m.ReadTree(context.Background(), id)
}

func (t *memTx) PutCheckpoint(cp *object.Checkpoint, st Stats) (object.ID, error) {
	data := cp.Encode()
	id := sum(data)
	t.mu.Lock()
	defer t.mu.Unlock()
	if _, ok := t.cps[id]; !ok {
		t.cps[id] = &memCP{data: data, stats: st}
		t.cpOrder = append(t.cpOrder, id)
	}
	return id, nil
}

func (t *memTx) MarkPruned(id object.ID) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.pruned = append(t.pruned, id)
	return nil
}

func (t *memTx) SetRef(r Ref) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	if r.Time.IsZero() {
		r.Time = time.Now()
	}
	t.refs[r.Name] = &r
	return nil
}

func (t *memTx) DeleteRef(name string) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.refs[name] = nil
	return nil
}

func (t *memTx) AppendOp(op Op) (int64, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if op.Time.IsZero() {
		op.Time = time.Now()
	}
	t.ops = append(t.ops, op)
	t.m.mu.RLock()
	n := t.m.opSeq + int64(len(t.ops))
	t.m.mu.RUnlock()
	return n, nil
}

func (t *memTx) SetJournal(j *Journal) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	if j != nil {
		c := *j
		c.Time = time.Now()
		j = &c
	}
	t.journal, t.journalSet = j, true
	return nil
}

func (t *memTx) SetMeta(key, value string) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.meta[key] = value
	return nil
}
