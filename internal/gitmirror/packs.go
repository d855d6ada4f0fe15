package gitmirror

import (
	"bufio"
	"compress/zlib"
	"crypto/sha1"
	"encoding/binary"
	"errors"
	"fmt"
	"hash"
	"hash/crc32"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/format/idxfile"
	"github.com/seed1cedbf7c/ckpt/internal/failpoint"
)

// The mirror writes git objects as pack files, never as loose objects: a
// loose object is a file of its own, and past gc.auto (6,700) of them the
// user's next git command starts `git gc --auto` in the middle of their
// work. Each export writes the objects it adds as one pack, with its index,
// into objects/pack, the way git's index-pack leaves them: the pack through
// a temporary file, fsync and rename, then its .idx the same way (git
// ignores a pack without an index, never an index without its pack), then
// a fsync of the directory; refs naming the objects are written only after
// that. See docs/git-backend.md.

// objectIndex answers "does the repository have this object?" for an
// export, from the indexes of the repository's packs (read with go-git's
// idxfile decoder, each once per process, and listed again at the start
// of every operation so that packs git's gc removed or wrote are seen).
//
// Loose objects do not count: an object the user's git left loose (a file
// just added) may be pruned by `git prune` at any time while it is
// unreachable, and an object present only loose is written into the
// export's pack instead. Objects in packs disappear only with their whole
// pack, which the next sync notices (see [Mirror.Sync]).
type objectIndex struct {
	dir   string // objects/pack
	packs []loadedPack
	zw    *zlib.Writer // reused by the packs it writes, one at a time
}

type loadedPack struct {
	name string // "pack-<hex>"
	idx  *idxfile.MemoryIndex
	size int64 // of the .pack file
}

// has reports whether a pack of the repository holds the object.
func (oi *objectIndex) has(h plumbing.Hash) (bool, error) {
	for _, p := range oi.packs {
		if ok, err := p.idx.Contains(h); err != nil || ok {
			return ok, err
		}
	}
	return false, nil
}

// refresh lists the packs of the repository (every pack-*.idx whose .pack
// exists), reads the indexes it has not read yet and forgets packs that are
// gone. It returns the packs' names, sorted.
func (oi *objectIndex) refresh() ([]string, error) {
	des, err := os.ReadDir(oi.dir)
	if errors.Is(err, fs.ErrNotExist) {
		oi.packs = nil
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("list git packs in %s: %w", oi.dir, err)
	}
	oi.recoverTemps(des, time.Now())
	loaded := make(map[string]loadedPack, len(oi.packs))
	for _, p := range oi.packs {
		loaded[p.name] = p
	}
	var names []string
	var packs []loadedPack
	for _, de := range des {
		name, ok := strings.CutSuffix(de.Name(), ".idx")
		if !ok || !isPackName(name) {
			continue
		}
		// An index whose pack is gone (mid-repack) does not count.
		fi, err := os.Stat(filepath.Join(oi.dir, name+".pack"))
		if err != nil {
			continue
		}
		p, ok := loaded[name]
		if !ok {
			idx, err := readIndex(filepath.Join(oi.dir, name+".idx"))
			if errors.Is(err, fs.ErrNotExist) {
				continue // removed since the listing
			}
			if err != nil {
				return nil, err
			}
			p = loadedPack{name: name, idx: idx}
		}
		p.size = fi.Size()
		packs = append(packs, p)
		names = append(names, name)
	}
	oi.packs = packs
	return names, nil
}

// add records a pack the mirror just wrote (its index already in memory).
func (oi *objectIndex) add(name string, idx *idxfile.MemoryIndex, size int64) {
	for _, p := range oi.packs {
		if p.name == name {
			return
		}
	}
	oi.packs = append(oi.packs, loadedPack{name: name, idx: idx, size: size})
}

// forget drops a pack the mirror removed.
func (oi *objectIndex) forget(name string) {
	for i, p := range oi.packs {
		if p.name == name {
			oi.packs = append(oi.packs[:i:i], oi.packs[i+1:]...)
			return
		}
	}
}

func (oi *objectIndex) lookup(name string) (loadedPack, bool) {
	for _, p := range oi.packs {
		if p.name == name {
			return p, true
		}
	}
	return loadedPack{}, false
}

// isPackName reports whether name is "pack-" and 40 hex digits.
func isPackName(name string) bool {
	hex, ok := strings.CutPrefix(name, "pack-")
	return ok && plumbing.IsHash(hex)
}

func readIndex(path string) (*idxfile.MemoryIndex, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	idx := idxfile.NewMemoryIndex()
	if err := idxfile.NewDecoder(bufio.NewReaderSize(f, 1<<20)).Decode(idx); err != nil {
		return nil, fmt.Errorf("read pack index %s: %w", path, err)
	}
	return idx, nil
}

// Temporary files start with "tmp_", as git's own do: `git prune` removes
// any left behind by a crash (and so does the mirror, after an hour).
const (
	tmpPackPrefix = "tmp_pack_ckpt_"
	tmpIdxPrefix  = "tmp_idx_ckpt_"
)

// packWriter writes one pack (version 2, every object whole, zlib
// compressed, as git writes objects it has no delta for) and its index
// (version 2, written with go-git's idxfile encoder).
type packWriter struct {
	dir   string
	f     *os.File
	bw    *bufio.Writer
	off   int64
	crc   hash.Hash32
	zw    *zlib.Writer
	idx   idxfile.Writer
	count uint32
	names map[plumbing.Hash]bool
}

// newPackWriter starts a pack in the repository; the packs an objectIndex
// writes share one compressor, so it writes one at a time.
func (oi *objectIndex) newPackWriter() (*packWriter, error) {
	pw, err := newPackWriter(oi.dir)
	if err != nil {
		return nil, err
	}
	if oi.zw == nil {
		oi.zw = zlib.NewWriter(nil)
	}
	pw.zw = oi.zw
	return pw, nil
}

func newPackWriter(dir string) (*packWriter, error) {
	f, err := os.CreateTemp(dir, tmpPackPrefix)
	if errors.Is(err, fs.ErrNotExist) {
		if err = os.MkdirAll(dir, 0o777); err == nil {
			f, err = os.CreateTemp(dir, tmpPackPrefix)
		}
	}
	if err != nil {
		return nil, fmt.Errorf("create a git pack in %s: %w", dir, err)
	}
	pw := &packWriter{dir: dir, f: f, bw: bufio.NewWriterSize(f, 64<<10), crc: crc32.NewIEEE(),
		names: map[plumbing.Hash]bool{}}
	// The object count is filled in by finish.
	if _, err := pw.bw.Write([]byte{'P', 'A', 'C', 'K', 0, 0, 0, 2, 0, 0, 0, 0}); err != nil {
		pw.abort()
		return nil, err
	}
	pw.off = 12
	return pw, nil
}

// Write implements io.Writer for an entry's bytes: into the file, the
// entry's CRC-32 and the offset.
func (pw *packWriter) Write(p []byte) (int, error) {
	n, err := pw.bw.Write(p)
	pw.crc.Write(p[:n])
	pw.off += int64(n)
	return n, err
}

// add writes an object of type t and size bytes read from content; h must
// be its id (checked).
func (pw *packWriter) add(h plumbing.Hash, t plumbing.ObjectType, size int64, content io.Reader) error {
	if pw.names[h] {
		return nil
	}
	start := pw.off
	pw.crc.Reset()
	if _, err := pw.Write(entryHeader(t, size)); err != nil {
		return err
	}
	sum := sha1.New()
	sum.Write(t.Bytes())
	sum.Write([]byte{' '})
	sum.Write(strconv.AppendInt(nil, size, 10))
	sum.Write([]byte{0})
	if pw.zw == nil {
		pw.zw = zlib.NewWriter(pw)
	} else {
		pw.zw.Reset(pw)
	}
	n, err := io.Copy(io.MultiWriter(pw.zw, sum), content)
	if err != nil {
		return err
	}
	if err := pw.zw.Close(); err != nil {
		return err
	}
	var got plumbing.Hash
	sum.Sum(got[:0])
	if n != size || got != h {
		return fmt.Errorf("git object %s: content hashes to %s (it changed while being written)", h, got)
	}
	pw.idx.Add(h, uint64(start), pw.crc.Sum32())
	pw.names[h] = true
	pw.count++
	return nil
}

// addRaw copies an entry of another pack as it is (n bytes from r), checking
// its CRC-32 against the one its index records.
func (pw *packWriter) addRaw(h plumbing.Hash, r io.Reader, n int64, crc uint32) error {
	if pw.names[h] {
		return nil
	}
	start := pw.off
	pw.crc.Reset()
	if _, err := io.CopyN(pw, r, n); err != nil {
		return err
	}
	if got := pw.crc.Sum32(); got != crc {
		return fmt.Errorf("git object %s: pack entry CRC-32 is %08x, its index says %08x", h, got, crc)
	}
	pw.idx.Add(h, uint64(start), crc)
	pw.names[h] = true
	pw.count++
	return nil
}

// entryHeader is a pack entry's header: the type and the size, 4 bits
// then 7 at a time, each byte but the last with its high bit set.
func entryHeader(t plumbing.ObjectType, size int64) []byte {
	b := make([]byte, 0, 10)
	c := byte(t)<<4 | byte(size&0x0f)
	size >>= 4
	for size > 0 {
		b = append(b, c|0x80)
		c = byte(size & 0x7f)
		size >>= 7
	}
	return append(b, c)
}

// finish completes the pack (object count, trailing checksum), makes it
// durable and renames it into place as pack-<checksum>.pack, then writes
// its .idx the same way and syncs the directory. It returns the pack's
// name ("" and nothing written when it holds no object), its index and
// its size.
func (pw *packWriter) finish() (name string, idx *idxfile.MemoryIndex, size int64, err error) {
	defer func() {
		if err != nil {
			pw.abort()
			err = fmt.Errorf("write git pack in %s: %w", pw.dir, err)
		}
	}()
	if pw.count == 0 {
		pw.abort()
		return "", nil, 0, nil
	}
	if err := pw.bw.Flush(); err != nil {
		return "", nil, 0, err
	}
	var n [4]byte
	binary.BigEndian.PutUint32(n[:], pw.count)
	if _, err := pw.f.WriteAt(n[:], 8); err != nil {
		return "", nil, 0, err
	}
	if _, err := pw.f.Seek(0, io.SeekStart); err != nil {
		return "", nil, 0, err
	}
	sum := sha1.New()
	if _, err := io.Copy(sum, bufio.NewReaderSize(pw.f, 64<<10)); err != nil {
		return "", nil, 0, err
	}
	var checksum plumbing.Hash
	sum.Sum(checksum[:0])
	if _, err := pw.f.Write(checksum[:]); err != nil {
		return "", nil, 0, err
	}
	if err := pw.f.Chmod(0o444); err != nil {
		return "", nil, 0, err
	}
	if err := pw.f.Sync(); err != nil {
		return "", nil, 0, err
	}
	if err := pw.f.Close(); err != nil {
		return "", nil, 0, err
	}
	name = "pack-" + checksum.String()
	if err := pw.idx.OnFooter(checksum); err != nil {
		return "", nil, 0, err
	}
	if idx, err = pw.idx.Index(); err != nil {
		return "", nil, 0, err
	}
	// The index is complete on disk before the pack takes its name, so a
	// crash between the two renames leaves what the next sync needs to
	// finish the job (see recoverTemps).
	tmpIdx, err := writeTempIndex(pw.dir, name, idx)
	if err != nil {
		return "", nil, 0, err
	}
	if err := os.Rename(pw.f.Name(), filepath.Join(pw.dir, name+".pack")); err != nil {
		os.Remove(tmpIdx)
		return "", nil, 0, err
	}
	pw.f = nil
	if err := failpoint.Hit("git/pack-renamed", name); err != nil {
		return "", nil, 0, err
	}
	if err := os.Rename(tmpIdx, filepath.Join(pw.dir, name+".idx")); err != nil {
		return "", nil, 0, err
	}
	syncDir(pw.dir)
	return name, idx, pw.off + int64(len(checksum)), nil
}

// abort removes the temporary pack.
func (pw *packWriter) abort() {
	if pw.f != nil {
		pw.f.Close()
		os.Remove(pw.f.Name())
		pw.f = nil
	}
}

// writeTempIndex writes the index of pack name to a temporary file
// (tmp_idx_ckpt_<name>_*), durably, and returns its path.
func writeTempIndex(dir, name string, idx *idxfile.MemoryIndex) (path string, err error) {
	f, err := os.CreateTemp(dir, tmpIdxPrefix+name+"_")
	if err != nil {
		return "", err
	}
	defer func() {
		if err != nil {
			f.Close()
			os.Remove(f.Name())
		}
	}()
	bw := bufio.NewWriterSize(f, 64<<10)
	if _, err := idxfile.NewEncoder(bw).Encode(idx); err != nil {
		return "", err
	}
	if err := bw.Flush(); err != nil {
		return "", err
	}
	if err := f.Chmod(0o444); err != nil {
		return "", err
	}
	if err := f.Sync(); err != nil {
		return "", err
	}
	return f.Name(), f.Close()
}

// syncDir makes the renames in dir durable where the system allows it
// (some file systems refuse to sync a directory; the renames are then as
// durable as the system makes them).
func syncDir(dir string) {
	if d, err := os.Open(dir); err == nil {
		d.Sync()
		d.Close()
	}
}

// tempAge is the age past which a temporary file of the mirror is taken
// for a crash's leftover (a younger one may belong to a ckpt writing now).
const tempAge = time.Hour

// recoverTemps deals with the mirror's temporary files that a crash left in
// the pack directory (des is its listing): an index whose pack was renamed
// into place is renamed beside it, anything else is removed.
func (oi *objectIndex) recoverTemps(des []fs.DirEntry, now time.Time) {
	for _, de := range des {
		n := de.Name()
		if !strings.HasPrefix(n, tmpPackPrefix) && !strings.HasPrefix(n, tmpIdxPrefix) {
			continue
		}
		fi, err := de.Info()
		if err != nil || now.Sub(fi.ModTime()) < tempAge {
			continue
		}
		path := filepath.Join(oi.dir, n)
		rest, isIdx := strings.CutPrefix(n, tmpIdxPrefix)
		if pack, _, ok := strings.Cut(rest, "_"); isIdx && ok && isPackName(pack) {
			_, perr := os.Stat(filepath.Join(oi.dir, pack+".pack"))
			_, ierr := os.Stat(filepath.Join(oi.dir, pack+".idx"))
			if perr == nil && errors.Is(ierr, fs.ErrNotExist) {
				os.Rename(path, filepath.Join(oi.dir, pack+".idx"))
				continue
			}
		}
		os.Remove(path)
	}
}

// The mirror's own packs are consolidated when there are more than
// maxPacks of them, so that git's gc.autoPackLimit (50 packs) stays far
// off: the smallest are merged into one until the rest form a geometric
// progression, each pack at least rollFactor times the size of the next
// smaller one. A byte is then copied about log4(total/smallest) times over
// the repository's life, and the mirror keeps about that many packs.
const (
	maxPacks   = 10
	rollFactor = 4
)

// packInfo is one of the mirror's packs.
type packInfo struct {
	Name string
	Size int64
}

// planRollUp returns the packs to merge into one (none while there are at
// most maxPacks).
func planRollUp(packs []packInfo) []packInfo {
	if len(packs) <= maxPacks {
		return nil
	}
	ps := append([]packInfo(nil), packs...)
	sort.SliceStable(ps, func(i, j int) bool { return ps[i].Size < ps[j].Size })
	// The largest packs that already form a progression stay: ps[k:].
	k := len(ps) - 1
	for k > 0 && ps[k].Size >= rollFactor*ps[k-1].Size {
		k--
	}
	if len(ps)-k > maxPacks-1 {
		// A progression longer than the limit: merge its smallest.
		return ps[:len(ps)-(maxPacks-1)]
	}
	k = max(k, 2)
	var total int64
	for _, p := range ps[:k] {
		total += p.Size
	}
	// Then those the merged pack would not be rollFactor times smaller than.
	for k < len(ps) && ps[k].Size < rollFactor*total {
		total += ps[k].Size
		k++
	}
	return ps[:k]
}

// rollUp merges packs (the mirror's own) into one: every entry is copied
// as it is (nothing is dropped: pruning is git gc's, which knows every ref,
// index and reflog), the new pack and its index are written durably, and
// only then are the old ones removed, index first. A pack that is gone
// already (git gc repacked it) is skipped. It returns the new pack ("" if
// none was written) and the packs it removed.
func (oi *objectIndex) rollUp(packs []packInfo) (written packInfo, removed []string, err error) {
	type source struct {
		name    string
		f       *os.File
		entries []*idxfile.Entry
		end     int64
	}
	var srcs []source
	defer func() {
		for _, s := range srcs {
			s.f.Close()
		}
	}()
	for _, p := range packs {
		lp, ok := oi.lookup(p.Name)
		if !ok {
			continue
		}
		// Opened before anything is written: a pack git removes after this
		// stays readable through the open file.
		f, err := os.Open(filepath.Join(oi.dir, p.Name+".pack"))
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return written, nil, err
		}
		srcs = append(srcs, source{name: p.Name, f: f})
		s := &srcs[len(srcs)-1]
		fi, err := f.Stat()
		if err != nil {
			return written, nil, err
		}
		s.end = fi.Size() - int64(len(plumbing.ZeroHash))
		it, err := lp.idx.EntriesByOffset()
		if err != nil {
			return written, nil, err
		}
		for {
			e, err := it.Next()
			if err == io.EOF {
				break
			}
			if err != nil {
				return written, nil, err
			}
			s.entries = append(s.entries, e)
		}
	}
	if len(srcs) < 2 {
		return written, nil, nil
	}
	pw, err := newPackWriter(oi.dir)
	if err != nil {
		return written, nil, err
	}
	defer pw.abort()
	for _, s := range srcs {
		br := bufio.NewReaderSize(io.NewSectionReader(s.f, 0, s.end), 256<<10)
		pos := int64(0)
		for i, e := range s.entries {
			start, end := int64(e.Offset), s.end
			if i+1 < len(s.entries) {
				end = int64(s.entries[i+1].Offset)
			}
			if start < pos || end <= start {
				return written, nil, fmt.Errorf("pack %s: bad offsets in its index", s.name)
			}
			if _, err := br.Discard(int(start - pos)); err != nil {
				return written, nil, fmt.Errorf("pack %s: %w", s.name, err)
			}
			// Only whole objects can be copied as they are; the mirror's
			// packs hold nothing else.
			if b, err := br.Peek(1); err != nil {
				return written, nil, fmt.Errorf("pack %s: %w", s.name, err)
			} else if t := plumbing.ObjectType(b[0] >> 4 & 7); t < plumbing.CommitObject || t > plumbing.TagObject {
				return written, nil, fmt.Errorf("pack %s: object %s is stored as a delta; only ckpt's own packs are consolidated", s.name, e.Hash)
			}
			if err := pw.addRaw(e.Hash, br, end-start, e.CRC32); err != nil {
				return written, nil, fmt.Errorf("pack %s: %w", s.name, err)
			}
			pos = end
		}
	}
	name, idx, size, err := pw.finish()
	if err != nil {
		return written, nil, err
	}
	oi.add(name, idx, size)
	written = packInfo{Name: name, Size: size}
	for _, s := range srcs {
		if s.name == name {
			continue
		}
		if err := removePack(oi.dir, s.name); err != nil {
			return written, removed, err
		}
		oi.forget(s.name)
		removed = append(removed, s.name)
	}
	return written, removed, nil
}

// removePack removes a pack: its index first (git stops seeing the pack),
// then the files git may have added beside it, then the pack.
func removePack(dir, name string) error {
	for _, ext := range []string{".idx", ".rev", ".bitmap", ".pack"} {
		if err := os.Remove(filepath.Join(dir, name+ext)); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("remove git pack %s: %w", name, err)
		}
	}
	return nil
}
