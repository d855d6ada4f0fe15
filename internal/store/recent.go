package store

import (
	"container/list"
	"sync"

	"github.com/seed1cedbf7c/ckpt/internal/object"
)

// recentCache keeps the content of the blobs and trees a long-running
// process (a watcher saving turn after turn) stored as new versions of
// something, and of the trees it read: a file or directory that changed
// once is likely to change again, and its last version is then the delta
// base (a save reads a changed directory's last tree first). Reading a base back
// from the database costs a query and a decompression per link of its
// delta chain; from here it costs one query.
//
// Content is named by its hash, and is checked against it when used, so
// an entry is never wrong. Whether the object is still in the store is
// not cached: every use as a delta base asks the database, inside the
// writing transaction (which no other writer can commit past), for the
// object's row, and with it its current delta depth.
type recentCache struct {
	mu    sync.Mutex
	max   int
	size  int
	m     map[recentKey]*list.Element
	order list.List // of *recentEntry, most recent first
	hits  int       // bases taken from here (for tests)
}

type recentKey struct {
	tree bool
	id   object.ID
}

type recentEntry struct {
	key  recentKey
	data []byte
}

// recentMaxEntry bounds the size of one cached object.
const recentMaxEntry = 256 << 10

// KeepRecent makes the store keep up to maxBytes of the content it stores
// as new versions, for the next save's delta bases (see recentCache). Call
// it once, before the store is used concurrently.
func (s *SQLite) KeepRecent(maxBytes int) {
	if maxBytes <= 0 {
		s.recent = nil
		return
	}
	s.recent = &recentCache{max: maxBytes, m: map[recentKey]*list.Element{}}
}

func (c *recentCache) get(table string, id object.ID) []byte {
	if c == nil {
		return nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.m[recentKey{table == "trees", id}]
	if !ok {
		return nil
	}
	c.order.MoveToFront(e)
	return e.Value.(*recentEntry).data
}

// put keeps a copy of data (the caller may reuse it).
func (c *recentCache) put(table string, id object.ID, data []byte) {
	if c == nil || len(data) > recentMaxEntry || len(data) > c.max {
		return
	}
	k := recentKey{table == "trees", id}
	c.mu.Lock()
	defer c.mu.Unlock()
	if e, ok := c.m[k]; ok {
		c.order.MoveToFront(e)
		return
	}
	c.m[k] = c.order.PushFront(&recentEntry{key: k, data: append([]byte(nil), data...)})
	c.size += len(data)
	for c.size > c.max {
		e := c.order.Back()
		old := e.Value.(*recentEntry)
		c.order.Remove(e)
		delete(c.m, old.key)
		c.size -= len(old.data)
	}
}

// recentBase returns a delta base from the cache with its current depth
// in the store, or ok false: not cached, not (or no longer) in the store,
// stored in chunks, or not matching its hash.
func (t *sqliteTx) recentBase(table string, base object.ID) (data []byte, depth int, ok bool) {
	data = t.s.recent.get(table, base)
	if data == nil || sum(data) != base {
		return nil, 0, false
	}
	var enc int
	row, err := t.s.queryRow(t.ctx, `SELECT enc, depth FROM `+table+` WHERE id=?`, base[:])
	if err == nil {
		err = row.Scan(&enc, &depth)
	}
	if err != nil || enc == encChunked {
		return nil, 0, false // gone (collected), unreadable: no delta
	}
	t.s.recent.mu.Lock()
	t.s.recent.hits++
	t.s.recent.mu.Unlock()
	return data, depth, true
}
