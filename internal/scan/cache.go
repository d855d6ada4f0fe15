package scan

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"hash"
	"io"
	"os"
	"path/filepath"
	"sort"
	"sync"

	"github.com/seed1cedbf7c/ckpt/internal/object"
)

// The stat cache is a flat file, rebuilt by every full save, that lets a scan
// skip reading files whose metadata has not changed (like git's index).
//
// Layout (integers big-endian):
//
//	header:  "CKPTSC01" | clock int64 | generation int64 | len(instance) u16 | instance
//	block*:  len(dir) u32 | dir | tree id [32] | count u32 | entry*
//	entry:   len(name) u16 | name | mode u32 | size i64 | mtime i64 | ctime i64 |
//	         ino u64 | dev u64 | id [32]
//	trailer: 0xffffffff | sha256 of everything before it [32]
//
// A block holds one directory's entries sorted by name, subdirectories
// included (their id is the subtree's id, their stat fields zero). The clock
// is the file system's time taken before the scan that wrote the file; an
// entry is trusted only if its mtime is older (git's racy-timestamp rule).
// A cache whose generation or instance differs from the store's is ignored.
const cacheMagic = "CKPTSC01"

const entryFixed = 4 + 8*5 + 32

// Cache is a loaded stat cache.
type Cache struct {
	Clock      int64
	Generation int64
	Instance   string
	data       []byte
	dirs       map[string]blockRef
}

type blockRef struct {
	tree  object.ID
	start int // offset of first entry
	count int
}

// cachedEntry is one decoded cache entry.
type cachedEntry struct {
	name  string
	mode  uint32
	size  int64
	mtime int64
	ctime int64
	ino   uint64
	dev   uint64
	id    object.ID
}

// LoadCache reads a cache file. A missing file gives (nil, nil); a damaged
// one an error (callers treat both as "no cache").
func LoadCache(path string) (*Cache, error) {
	data, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	return parseCache(data)
}

func parseCache(data []byte) (*Cache, error) {
	bad := func(what string) (*Cache, error) { return nil, fmt.Errorf("stat cache: %s", what) }
	if len(data) < len(cacheMagic)+18+36 || string(data[:8]) != cacheMagic {
		return bad("bad header")
	}
	body := data[:len(data)-32]
	if sha256.Sum256(body) != [32]byte(data[len(data)-32:]) {
		return bad("checksum mismatch")
	}
	c := &Cache{data: data, dirs: map[string]blockRef{}}
	p := 8
	c.Clock = int64(binary.BigEndian.Uint64(data[p:]))
	c.Generation = int64(binary.BigEndian.Uint64(data[p+8:]))
	n := int(binary.BigEndian.Uint16(data[p+16:]))
	p += 18
	if p+n > len(body) {
		return bad("bad header")
	}
	c.Instance = string(data[p : p+n])
	p += n
	for {
		if p+4 > len(body) {
			return bad("truncated")
		}
		dl := binary.BigEndian.Uint32(data[p:])
		if dl == 0xffffffff {
			if p+4 != len(body) {
				return bad("trailing data")
			}
			return c, nil
		}
		p += 4
		if p+int(dl)+36 > len(body) {
			return bad("truncated block")
		}
		dir := string(data[p : p+int(dl)])
		p += int(dl)
		var b blockRef
		copy(b.tree[:], data[p:])
		b.count = int(binary.BigEndian.Uint32(data[p+32:]))
		p += 36
		b.start = p
		for range b.count {
			if p+2 > len(body) {
				return bad("truncated entry")
			}
			nl := int(binary.BigEndian.Uint16(data[p:]))
			p += 2 + nl + entryFixed
			if p > len(body) {
				return bad("truncated entry")
			}
		}
		c.dirs[dir] = b
	}
}

// block returns the cached entries of dir, decoded.
func (c *Cache) block(dir string) (object.ID, []cachedEntry, bool) {
	if c == nil {
		return object.ID{}, nil, false
	}
	b, ok := c.dirs[dir]
	if !ok {
		return object.ID{}, nil, false
	}
	out := make([]cachedEntry, b.count)
	p := b.start
	d := c.data
	for i := range out {
		nl := int(binary.BigEndian.Uint16(d[p:]))
		p += 2
		e := &out[i]
		e.name = string(d[p : p+nl])
		p += nl
		e.mode = binary.BigEndian.Uint32(d[p:])
		e.size = int64(binary.BigEndian.Uint64(d[p+4:]))
		e.mtime = int64(binary.BigEndian.Uint64(d[p+12:]))
		e.ctime = int64(binary.BigEndian.Uint64(d[p+20:]))
		e.ino = binary.BigEndian.Uint64(d[p+28:])
		e.dev = binary.BigEndian.Uint64(d[p+36:])
		copy(e.id[:], d[p+44:])
		p += entryFixed
	}
	return b.tree, out, true
}

// Dirs returns the number of directory blocks (for tests and stats).
func (c *Cache) Dirs() int {
	if c == nil {
		return 0
	}
	return len(c.dirs)
}

// Without returns a copy of c without the blocks of the given directories,
// so their files are re-hashed by the next scan.
func (c *Cache) Without(dirs map[string]bool) *Cache {
	if c == nil {
		return nil
	}
	n := &Cache{Clock: c.Clock, Generation: c.Generation, Instance: c.Instance, data: c.data, dirs: make(map[string]blockRef, len(c.dirs))}
	for d, b := range c.dirs {
		if !dirs[d] {
			n.dirs[d] = b
		}
	}
	return n
}

// WriteFile writes c to path atomically (temp file + rename).
func (c *Cache) WriteFile(path string) error {
	w, err := NewCacheWriter(path, c.Clock, c.Generation, c.Instance)
	if err != nil {
		return err
	}
	dirs := make([]string, 0, len(c.dirs))
	for d := range c.dirs {
		dirs = append(dirs, d)
	}
	sort.Strings(dirs)
	for _, d := range dirs {
		tree, es, _ := c.block(d)
		w.Block(d, tree, es)
	}
	return w.Commit()
}

// CacheWriter streams a new cache to a temporary file (or memory); Commit
// renames it into place, Abort removes it. Block is safe for concurrent use.
type CacheWriter struct {
	mu   sync.Mutex
	path string
	f    *os.File      // nil in memory mode
	mem  *bytes.Buffer // memory mode
	w    *bufio.Writer
	h    hash.Hash
	err  error
}

// NewCacheWriter starts a cache file at path; path "" keeps it in memory
// (see [CacheWriter.Cache]).
func NewCacheWriter(path string, clock, generation int64, instance string) (*CacheWriter, error) {
	cw := &CacheWriter{path: path, h: sha256.New()}
	var out io.Writer
	if path == "" {
		cw.mem = &bytes.Buffer{}
		out = cw.mem
	} else {
		f, err := os.CreateTemp(filepath.Dir(path), ".statcache-*")
		if err != nil {
			return nil, err
		}
		cw.f = f
		out = f
	}
	cw.w = bufio.NewWriterSize(io.MultiWriter(out, cw.h), 256<<10)
	var hd bytes.Buffer
	hd.WriteString(cacheMagic)
	binary.Write(&hd, binary.BigEndian, clock)
	binary.Write(&hd, binary.BigEndian, generation)
	binary.Write(&hd, binary.BigEndian, uint16(len(instance)))
	hd.WriteString(instance)
	cw.w.Write(hd.Bytes())
	return cw, nil
}

// Cache returns the committed in-memory cache.
func (w *CacheWriter) Cache() (*Cache, error) {
	if w.mem == nil {
		return nil, errors.New("stat cache: not in memory")
	}
	return parseCache(w.mem.Bytes())
}

// Block appends one directory's entries (sorted by name).
func (w *CacheWriter) Block(dir string, tree object.ID, es []cachedEntry) {
	if w == nil {
		return
	}
	b := w.encode(dir, tree, es)
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.err == nil {
		_, w.err = w.w.Write(b)
	}
}

func (w *CacheWriter) encode(dir string, tree object.ID, es []cachedEntry) []byte {
	n := 4 + len(dir) + 36
	for i := range es {
		n += 2 + len(es[i].name) + entryFixed
	}
	b := make([]byte, 0, n)
	b = binary.BigEndian.AppendUint32(b, uint32(len(dir)))
	b = append(b, dir...)
	b = append(b, tree[:]...)
	b = binary.BigEndian.AppendUint32(b, uint32(len(es)))
	for i := range es {
		e := &es[i]
		b = binary.BigEndian.AppendUint16(b, uint16(len(e.name)))
		b = append(b, e.name...)
		b = binary.BigEndian.AppendUint32(b, e.mode)
		b = binary.BigEndian.AppendUint64(b, uint64(e.size))
		b = binary.BigEndian.AppendUint64(b, uint64(e.mtime))
		b = binary.BigEndian.AppendUint64(b, uint64(e.ctime))
		b = binary.BigEndian.AppendUint64(b, e.ino)
		b = binary.BigEndian.AppendUint64(b, e.dev)
		b = append(b, e.id[:]...)
	}
	return b
}

// Commit finishes the file and renames it into place.
func (w *CacheWriter) Commit() error {
	if w == nil {
		return nil
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.err == nil {
		_, w.err = w.w.Write([]byte{0xff, 0xff, 0xff, 0xff})
	}
	if w.err == nil {
		w.err = w.w.Flush()
	}
	sum := w.h.Sum(nil)
	if w.mem != nil {
		w.mem.Write(sum)
		return w.err
	}
	if w.err == nil {
		_, w.err = w.f.Write(sum)
	}
	if cerr := w.f.Close(); w.err == nil {
		w.err = cerr
	}
	if w.err == nil {
		w.err = os.Rename(w.f.Name(), w.path)
	}
	if w.err != nil {
		os.Remove(w.f.Name())
	}
	return w.err
}

// Abort removes the temporary file.
func (w *CacheWriter) Abort() {
	if w == nil {
		return
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.f != nil {
		w.f.Close()
		os.Remove(w.f.Name())
	}
	w.err = errors.New("aborted")
}
