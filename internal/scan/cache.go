package scan

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"
	"unsafe"

	"github.com/seed1cedbf7c/ckpt/internal/atomicfile"
	"github.com/seed1cedbf7c/ckpt/internal/object"
)

// The stat cache is a flat file, rebuilt by every full save, that lets a scan
// skip reading files whose metadata has not changed (like git's index).
//
// Layout (fixed-size integers big-endian, varints unsigned LEB128):
//
//	header:  "CKPTSC07" | clock int64 | generation int64 | seq int64 | len(instance) u16 |
//	         instance | len(watch) u16 | watch
//	block*:  entry* | CRC-32C of the block's entries u32
//	entry:   varint len(name) | name | varint mode |
//	         directory: id [32]
//	         otherwise: varint size | mtime i64 | ctime i64 | varint ino
//	index:   (len(dir) u32 | dir | tree id [32] | dev u64 | offset u64 | length u32 | count u32 | flags u8 | size u64)*
//	footer:  index offset u64 | index length u32 | CRC-32C of header and index u32 | "CKPTSCEND"
//
// A block holds one directory's entries sorted by name: the stat data of its
// files and symlinks (their device is the block's) and the tree ids of its
// subdirectories. File ids are not stored: a file whose stat data matches is
// the file of the same name in the directory's cached tree, which the scan
// reads from the store when the directory has changed. Loading maps the
// file and reads its index; a scan reads each directory's block when it
// gets there and verifies its checksum. The clock is the file system's time
// taken before the scan that wrote the file; an entry is trusted only if
// its mtime is older (git's racy-timestamp rule). A cache whose generation
// or instance differs from the store's is ignored; so is a damaged one,
// and one whose seq (the store's count of cache writes when it was
// written) is ahead of the store's: its database was rolled back.
// Watch is the file-system watcher's token for the moment the scan that
// wrote the file began ("" without a watcher; see internal/watch).
const cacheMagic = "CKPTSC07"

const footerMagic = "CKPTSCEND"

// castagnoli is CRC-32C, computed in hardware on amd64 and arm64.
var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// Cache is a loaded stat cache: its index in memory, its blocks read from
// the file (or from memory) when a scan reaches each directory.
type Cache struct {
	Clock      int64
	Generation int64
	// Seq is the store's count of cache writes this cache was written at.
	Seq      int64
	Instance string
	// Watch is the watcher token of the scan that wrote the cache.
	Watch string
	data  []byte // the whole file, mapped (nil for a cache in memory)
	// mem: a cache kept in memory, whose blocks are held by their refs
	// (blockRef.raw) and shared with the caches made from it.
	mem bool

	linkedOnce sync.Once
	linked     map[string]bool
	unmap      func()
	dirs       map[string]blockRef
}

type blockRef struct {
	raw    []byte // in memory: the entries and their CRC (else at offset in data)
	tree   object.ID
	dev    uint64
	offset int64
	length int // entries, without the CRC
	count  int
	flags  uint8
	size   int64 // the bytes of the files below the directory
}

// Block flags.
const (
	// flagLinked: the directory holds a file with other hard links; a
	// change made through another link does not show in this directory's
	// events, so a watcher cannot vouch for it.
	flagLinked = 1 << iota
	// flagNested: the directory holds a nested repository (git backend),
	// whose checked-out commit every save must read.
	flagNested
)

// cachedEntry is one decoded cache entry. id is set for directories only.
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

// LoadCache maps a cache file and reads its index. A missing file gives
// (nil, nil); a damaged one an error (callers treat both as "no cache").
// Cache files are replaced by rename, never rewritten in place, so the
// mapping stays valid while it is used.
func LoadCache(path string) (*Cache, error) {
	f, err := os.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if fi.Size() == 0 || fi.Size() > 1<<34 {
		return nil, fmt.Errorf("stat cache: bad size %d", fi.Size())
	}
	data, unmap, err := mapFile(f, fi.Size())
	if err != nil {
		return nil, fmt.Errorf("stat cache: %w", err)
	}
	c, err := parseCache(data)
	if err != nil {
		unmap()
		return nil, err
	}
	c.unmap = unmap
	return c, nil
}

// WriteFile writes the cache to path (a temporary file renamed into
// place), for a cache kept in memory.
func (c *Cache) WriteFile(path string) error {
	if c == nil || !c.mem {
		return errors.New("stat cache: nothing to write")
	}
	return atomicfile.WriteFile(path, c.encode(), 0o600)
}

// encode lays a cache in memory out as a file.
func (c *Cache) encode() []byte {
	hd := encodeHeader(c.Clock, c.Generation, c.Seq, c.Instance, c.Watch)
	dirs := make([]string, 0, len(c.dirs))
	n := len(hd)
	for d, b := range c.dirs {
		dirs = append(dirs, d)
		n += len(b.raw) + len(d) + indexEntryLen
	}
	slices.Sort(dirs) // the same cache, the same file
	out := make([]byte, 0, n+footerLen)
	out = append(out, hd...)
	var index []byte
	for _, d := range dirs {
		b := c.dirs[d]
		index = appendIndex(index, d, b.tree, b.dev, int64(len(out)), len(b.raw)-4, b.count, b.flags, b.size)
		out = append(out, b.raw...)
	}
	out = append(out, index...)
	return appendFooter(out, int64(len(out)-len(index)), index, crc32.Checksum(hd, castagnoli))
}

// indexEntryLen is the size of an index entry without its directory name.
const indexEntryLen = 4 + 32 + 8 + 8 + 4 + 4 + 1 + 8

// footerLen is the size of the file's footer.
const footerLen = 8 + 4 + 4 + len(footerMagic)

// encodeHeader returns the file's header.
func encodeHeader(clock, generation, seq int64, instance, watch string) []byte {
	hd := []byte(cacheMagic)
	hd = binary.BigEndian.AppendUint64(hd, uint64(clock))
	hd = binary.BigEndian.AppendUint64(hd, uint64(generation))
	hd = binary.BigEndian.AppendUint64(hd, uint64(seq))
	hd = binary.BigEndian.AppendUint16(hd, uint16(len(instance)))
	hd = append(hd, instance...)
	hd = binary.BigEndian.AppendUint16(hd, uint16(len(watch)))
	return append(hd, watch...)
}

// appendIndex appends one block's index entry.
func appendIndex(index []byte, dir string, tree object.ID, dev uint64, off int64, length, count int, flags uint8, size int64) []byte {
	index = binary.BigEndian.AppendUint32(index, uint32(len(dir)))
	index = append(index, dir...)
	index = append(index, tree[:]...)
	index = binary.BigEndian.AppendUint64(index, dev)
	index = binary.BigEndian.AppendUint64(index, uint64(off))
	index = binary.BigEndian.AppendUint32(index, uint32(length))
	index = binary.BigEndian.AppendUint32(index, uint32(count))
	index = append(index, flags)
	return binary.BigEndian.AppendUint64(index, uint64(size))
}

// appendFooter appends the footer of a file whose index starts at ioff;
// hdrCRC is the CRC-32C of its header.
func appendFooter(b []byte, ioff int64, index []byte, hdrCRC uint32) []byte {
	b = binary.BigEndian.AppendUint64(b, uint64(ioff))
	b = binary.BigEndian.AppendUint32(b, uint32(len(index)))
	b = binary.BigEndian.AppendUint32(b, crc32.Update(hdrCRC, castagnoli, index))
	return append(b, footerMagic...)
}

// SetSeq changes the seq a cache kept in memory records (the store's
// count of cache writes; see loadCache in the root package).
func (c *Cache) SetSeq(seq int64) error {
	if c == nil || !c.mem {
		return errors.New("stat cache: not in memory")
	}
	c.Seq = seq
	return nil
}

// Close releases the cache file's mapping.
func (c *Cache) Close() {
	if c != nil && c.unmap != nil {
		c.unmap()
		c.unmap = nil
		c.data = nil
	}
}

func parseCache(data []byte) (*Cache, error) {
	c, err := readIndex(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		return nil, err
	}
	c.data = data
	return c, nil
}

func readIndex(src io.ReaderAt, size int64) (*Cache, error) {
	bad := func(what string) (*Cache, error) { return nil, fmt.Errorf("stat cache: %s", what) }
	const footerLen = int64(footerLen)
	hdrFixed := int64(len(cacheMagic) + 26)
	if size < hdrFixed+footerLen {
		return bad("too short")
	}
	ft := make([]byte, footerLen)
	if _, err := src.ReadAt(ft, size-footerLen); err != nil || string(ft[16:]) != footerMagic {
		return bad("bad footer")
	}
	ioff := int64(binary.BigEndian.Uint64(ft))
	ilen := int64(binary.BigEndian.Uint32(ft[8:]))
	if ioff < hdrFixed || ioff+ilen != size-footerLen {
		return bad("bad footer")
	}
	hdr := make([]byte, hdrFixed)
	if _, err := src.ReadAt(hdr, 0); err != nil || string(hdr[:8]) != cacheMagic {
		return bad("bad header")
	}
	c := &Cache{dirs: map[string]blockRef{}}
	c.Clock = int64(binary.BigEndian.Uint64(hdr[8:]))
	c.Generation = int64(binary.BigEndian.Uint64(hdr[16:]))
	c.Seq = int64(binary.BigEndian.Uint64(hdr[24:]))
	n := int64(binary.BigEndian.Uint16(hdr[32:]))
	if hdrFixed+n > ioff {
		return bad("bad header")
	}
	inst := make([]byte, n)
	if _, err := src.ReadAt(inst, hdrFixed); err != nil {
		return bad("bad header")
	}
	c.Instance = string(inst)
	var wl [2]byte
	if hdrFixed+n+2 > ioff {
		return bad("bad header")
	}
	if _, err := src.ReadAt(wl[:], hdrFixed+n); err != nil {
		return bad("bad header")
	}
	wn := int64(binary.BigEndian.Uint16(wl[:]))
	if hdrFixed+n+2+wn > ioff {
		return bad("bad header")
	}
	watch := make([]byte, wn)
	if _, err := src.ReadAt(watch, hdrFixed+n+2); err != nil {
		return bad("bad header")
	}
	c.Watch = string(watch)
	inst = append(append(inst, wl[:]...), watch...) // covered by the checksum
	n += 2 + wn
	idx := make([]byte, ilen)
	if _, err := src.ReadAt(idx, ioff); err != nil {
		return bad("truncated index")
	}
	crc := crc32.Update(crc32.Update(crc32.Checksum(hdr, castagnoli), castagnoli, inst), castagnoli, idx)
	if crc != binary.BigEndian.Uint32(ft[12:]) {
		return bad("checksum mismatch")
	}
	for p := 0; p < len(idx); {
		if p+4 > len(idx) {
			return bad("bad index")
		}
		dl := int(binary.BigEndian.Uint32(idx[p:]))
		p += 4
		if p+dl+32+33 > len(idx) {
			return bad("bad index")
		}
		dir := string(idx[p : p+dl])
		p += dl
		var ref blockRef
		copy(ref.tree[:], idx[p:])
		ref.dev = binary.BigEndian.Uint64(idx[p+32:])
		ref.offset = int64(binary.BigEndian.Uint64(idx[p+40:]))
		ref.length = int(binary.BigEndian.Uint32(idx[p+48:]))
		ref.count = int(binary.BigEndian.Uint32(idx[p+52:]))
		ref.flags = idx[p+56]
		ref.size = int64(binary.BigEndian.Uint64(idx[p+57:]))
		p += 65
		if ref.offset < hdrFixed+n || ref.offset+int64(ref.length)+4 > ioff {
			return bad("bad index")
		}
		c.dirs[dir] = ref
	}
	return c, nil
}

// RootTree returns the tree of the workspace's root when the cache was
// written (false: the cache holds no root).
func (c *Cache) RootTree() (object.ID, bool) {
	if c == nil {
		return object.ZeroID, false
	}
	b, ok := c.dirs[""]
	return b.tree, ok && b.tree != object.ZeroID
}

// block returns the cached entries of dir, decoded; false if there are
// none or the block is damaged.
func (c *Cache) block(dir string) (object.ID, []cachedEntry, bool) {
	d, b, ok := c.blockBytes(dir)
	if !ok {
		return object.ID{}, nil, false
	}
	if crc32.Checksum(d[:b.length], castagnoli) != binary.BigEndian.Uint32(d[b.length:]) {
		return object.ID{}, nil, false
	}
	d = d[:b.length]
	out := make([]cachedEntry, b.count)
	p := 0
	uv := func() (uint64, bool) {
		v, n := binary.Uvarint(d[p:])
		if n <= 0 {
			return 0, false
		}
		p += n
		return v, true
	}
	for i := range out {
		e := &out[i]
		nl, ok := uv()
		if !ok || nl > uint64(len(d)-p) {
			return object.ID{}, nil, false
		}
		if nl > 0 {
			// The name points into the cache's data: it is only compared
			// during the scan, which ends before the cache is closed.
			e.name = unsafe.String(&d[p], int(nl))
		}
		p += int(nl)
		mode, ok := uv()
		if !ok {
			return object.ID{}, nil, false
		}
		e.mode = uint32(mode)
		if object.IsDir(e.mode) {
			if p+32 > len(d) {
				return object.ID{}, nil, false
			}
			copy(e.id[:], d[p:])
			p += 32
			continue
		}
		size, ok := uv()
		if !ok || p+16 > len(d) {
			return object.ID{}, nil, false
		}
		e.size = int64(size)
		e.mtime = int64(binary.BigEndian.Uint64(d[p:]))
		e.ctime = int64(binary.BigEndian.Uint64(d[p+8:]))
		p += 16
		if e.ino, ok = uv(); !ok {
			return object.ID{}, nil, false
		}
		e.dev = b.dev
	}
	if p != len(d) {
		return object.ID{}, nil, false
	}
	return b.tree, out, true
}

// blockBytes returns dir's block as stored (entries and CRC) and its ref.
func (c *Cache) blockBytes(dir string) ([]byte, blockRef, bool) {
	if c == nil || c.data == nil && !c.mem {
		return nil, blockRef{}, false
	}
	b, ok := c.dirs[dir]
	if !ok {
		return nil, blockRef{}, false
	}
	if c.mem {
		return b.raw, b, len(b.raw) == b.length+4
	}
	return c.data[b.offset : b.offset+int64(b.length)+4], b, true
}

// Dirs returns the number of directory blocks (for tests and stats).
func (c *Cache) Dirs() int {
	if c == nil {
		return 0
	}
	return len(c.dirs)
}

// DirList returns the directories the cache holds a block for (the
// directories a scan descended).
func (c *Cache) DirList() []string {
	if c == nil {
		return nil
	}
	out := make([]string, 0, len(c.dirs))
	for d := range c.dirs {
		out = append(out, d)
	}
	return out
}

// Trees returns the tree ids the cache refers to (one per directory): a
// scan trusting the cache takes unchanged files' blobs from these trees, so
// gc must keep them.
func (c *Cache) Trees() []object.ID {
	if c == nil {
		return nil
	}
	out := make([]object.ID, 0, len(c.dirs))
	for _, b := range c.dirs {
		out = append(out, b.tree)
	}
	return out
}

// CacheWriter streams a new cache to a temporary file (or memory); Commit
// writes the index and renames the file into place, Abort removes it.
// Block is safe for concurrent use.
//
// In memory, the new cache holds each block by reference: a block copied
// from an old cache in memory is shared with it, not copied, so a save
// costs what its changed directories cost, not the size of the cache.
type CacheWriter struct {
	mu     sync.Mutex
	path   string
	f      *os.File            // nil in memory mode
	mem    map[string]blockRef // memory mode: the blocks
	w      *bufio.Writer
	off    int64
	hdrCRC uint32
	index  []byte
	read   []string // see ReadDirs
	err    error
	// Clock is the file system's time when the writer was created (the
	// mtime of its new temporary file).
	Clock  int64
	clock  int64
	gen    int64
	seq    int64
	inst   string
	watch  string
	hdrLen int64
}

// NewCacheWriter starts a cache file at path; path "" keeps it in memory
// (see [CacheWriter.Cache]). clock 0 takes the clock from the temporary
// file's mtime (see [FSClock]). watch is the watcher token of the scan
// ("" when there is none). The cache's Seq is 0.
func NewCacheWriter(path string, clock, generation int64, instance, watch string) (*CacheWriter, error) {
	return NewCacheWriterSeq(path, clock, generation, 0, instance, watch)
}

// NewCacheWriterSeq is [NewCacheWriter] for a cache recording seq, the
// store's count of cache writes including this one.
func NewCacheWriterSeq(path string, clock, generation, seq int64, instance, watch string) (*CacheWriter, error) {
	cw := &CacheWriter{path: path, gen: generation, seq: seq, inst: instance, watch: watch}
	if path == "" {
		if clock == 0 {
			clock = time.Now().Add(-2 * time.Second).UnixNano()
		}
		cw.Clock, cw.clock = clock, clock
		cw.mem = map[string]blockRef{}
		return cw, nil
	}
	var out io.Writer
	{
		f, err := os.CreateTemp(filepath.Dir(path), ".statcache-*")
		if err != nil {
			return nil, err
		}
		cw.f = f
		out = f
		if clock == 0 {
			if st, err := fstat(int(f.Fd())); err == nil {
				clock = st.mtime
			}
		}
	}
	if clock == 0 {
		clock = time.Now().Add(-2 * time.Second).UnixNano()
	}
	cw.Clock, cw.clock = clock, clock
	cw.w = bufio.NewWriterSize(out, 256<<10)
	hd := encodeHeader(clock, generation, seq, instance, watch)
	cw.hdrCRC = crc32.Checksum(hd, castagnoli)
	cw.w.Write(hd)
	cw.off = int64(len(hd))
	cw.hdrLen = cw.off
	return cw, nil
}

// reset discards the blocks written so far, for a scan that starts over.
func (w *CacheWriter) reset() {
	if w == nil {
		return
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.err != nil {
		return
	}
	w.read = w.read[:0]
	if w.mem != nil {
		clear(w.mem)
		return
	}
	if w.err = w.w.Flush(); w.err != nil {
		return
	}
	if w.err = w.f.Truncate(w.hdrLen); w.err == nil {
		_, w.err = w.f.Seek(w.hdrLen, io.SeekStart)
	}
	w.w.Reset(w.f)
	w.index = w.index[:0]
	w.off = w.hdrLen
}

// Size is the cache's size in bytes (as a file).
func (c *Cache) Size() int {
	if c == nil {
		return 0
	}
	if !c.mem {
		return len(c.data)
	}
	n := len(cacheMagic) + 28 + len(c.Instance) + len(c.Watch) + footerLen
	for d, b := range c.dirs {
		n += len(b.raw) + len(d) + indexEntryLen
	}
	return n
}

// Cache returns the committed in-memory cache. The writer must not be
// used after.
func (w *CacheWriter) Cache() (*Cache, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.mem == nil {
		return nil, errors.New("stat cache: not in memory")
	}
	if w.err != nil {
		return nil, w.err
	}
	c := &Cache{Clock: w.clock, Generation: w.gen, Seq: w.seq, Instance: w.inst, Watch: w.watch, mem: true, dirs: w.mem}
	w.mem, w.err = nil, errors.New("stat cache: taken")
	return c, nil
}

// rawBlock returns the stored bytes (entries and CRC) of dir's block.
func (c *Cache) rawBlock(dir string) ([]byte, int, uint64, bool) {
	d, b, ok := c.blockBytes(dir)
	return d, b.count, b.dev, ok
}

// blockFlags returns the flags of dir's block.
func (c *Cache) blockFlags(dir string) uint8 {
	if c == nil {
		return 0
	}
	return c.dirs[dir].flags
}

// flaggedBelow reports whether dir or a directory below it has a block
// flag (a hard-linked file, a nested repository): such a directory is
// never taken whole from the cache (computed once per cache).
func (c *Cache) flaggedBelow(dir string) bool {
	if c == nil {
		return false
	}
	c.linkedOnce.Do(func() {
		c.linked = map[string]bool{}
		for d, ref := range c.dirs {
			if ref.flags == 0 {
				continue
			}
			for {
				if c.linked[d] {
					break
				}
				c.linked[d] = true
				if d == "" {
					break
				}
				if i := strings.LastIndexByte(d, '/'); i >= 0 {
					d = d[:i]
				} else {
					d = ""
				}
			}
		}
	})
	return c.linked[dir]
}

// Block appends one directory's entries (sorted by name); dev is the
// device of its files, flags its block flags, size the bytes of the files
// below it.
func (w *CacheWriter) Block(dir string, tree object.ID, dev uint64, es []cachedEntry, flags uint8, size int64) {
	if w == nil {
		return
	}
	b := encodeEntries(es)
	crc := crc32.Checksum(b, castagnoli)
	b = binary.BigEndian.AppendUint32(b, crc)
	w.appendBlock(dir, tree, dev, b, len(es), flags, size, true)
	w.mu.Lock()
	w.read = append(w.read, dir)
	w.mu.Unlock()
}

// ReadDirs returns the directories whose blocks were made from what the
// scan read (not copied from the old cache): every directory the scan
// found that the old cache did not have is among them.
func (w *CacheWriter) ReadDirs() []string {
	if w == nil {
		return nil
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	return slices.Clone(w.read)
}

// copyBlock appends an unchanged directory's block from the old cache
// from as is (entries and CRC; the caller has checked every entry is
// unchanged).
func (w *CacheWriter) copyBlock(from *Cache, dir string, tree object.ID, dev uint64, raw []byte, count int, flags uint8, size int64) {
	if w == nil {
		return
	}
	// A cache in memory shares its blocks, which never change; a mapped
	// file is unmapped when its save ends.
	w.appendBlock(dir, tree, dev, raw, count, flags, size, from.mem)
}

// shareBlocks puts into an in-memory writer every block of the in-memory
// cache from for which keep holds, as it is (its bytes shared: they never
// change), under one lock. It reports false, doing nothing, unless both
// are in memory (then copyBlock it is).
func (w *CacheWriter) shareBlocks(from *Cache, keep func(dir string) bool) bool {
	if w == nil || from == nil || !from.mem {
		return false
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.mem == nil {
		return false
	}
	if w.err != nil {
		return true
	}
	for dir, ref := range from.dirs {
		if len(ref.raw) == ref.length+4 && keep(dir) {
			w.mem[dir] = ref
		}
	}
	return true
}

// sizeFor makes an empty in-memory writer's map as large as the cache it
// is made from will make it (growing it block by block was most of the
// cost of taking unchanged directories from the cache).
func (w *CacheWriter) sizeFor(from *Cache) {
	if w == nil || from == nil {
		return
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.mem != nil && len(w.mem) == 0 && w.err == nil {
		w.mem = make(map[string]blockRef, len(from.dirs)+len(from.dirs)/8)
	}
}

// appendBlock appends a block; owned: b is not changed or unmapped later
// (an in-memory writer keeps it without copying).
func (w *CacheWriter) appendBlock(dir string, tree object.ID, dev uint64, b []byte, count int, flags uint8, size int64, owned bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.err != nil {
		return
	}
	if w.mem != nil {
		if !owned {
			b = slices.Clone(b)
		}
		w.mem[dir] = blockRef{raw: b[:len(b):len(b)], tree: tree, dev: dev, length: len(b) - 4, count: count, flags: flags, size: size}
		return
	}
	_, w.err = w.w.Write(b)
	w.index = appendIndex(w.index, dir, tree, dev, w.off, len(b)-4, count, flags, size)
	w.off += int64(len(b))
}

func encodeEntries(es []cachedEntry) []byte {
	n := 4
	for i := range es {
		n += len(es[i].name) + 40
	}
	b := make([]byte, 0, n)
	for i := range es {
		e := &es[i]
		b = binary.AppendUvarint(b, uint64(len(e.name)))
		b = append(b, e.name...)
		b = binary.AppendUvarint(b, uint64(e.mode))
		if object.IsDir(e.mode) {
			b = append(b, e.id[:]...)
			continue
		}
		b = binary.AppendUvarint(b, uint64(e.size))
		b = binary.BigEndian.AppendUint64(b, uint64(e.mtime))
		b = binary.BigEndian.AppendUint64(b, uint64(e.ctime))
		b = binary.AppendUvarint(b, e.ino)
	}
	return b
}

// Commit writes the index and footer and renames the file into place.
func (w *CacheWriter) Commit() error {
	if w == nil {
		return nil
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.f == nil { // in memory (its blocks perhaps taken by Cache)
		return w.err
	}
	if w.err == nil {
		_, w.err = w.w.Write(w.index)
	}
	if w.err == nil {
		_, w.err = w.w.Write(appendFooter(nil, w.off, w.index, w.hdrCRC))
	}
	if w.err == nil {
		w.err = w.w.Flush()
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
