package gitmirror

import (
	"bytes"
	"context"
	"crypto/sha1"
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/format/idxfile"
	gitobject "github.com/go-git/go-git/v5/plumbing/object"
	"github.com/seed1cedbf7c/ckpt/internal/object"
	"github.com/seed1cedbf7c/ckpt/internal/store"
)

// Source is where the mirror reads checkpoints and their objects from
// (a [store.Store]).
type Source interface {
	ReadTree(ctx context.Context, id object.ID) (*object.Tree, error)
	OpenBlob(ctx context.Context, id object.ID) (io.ReadCloser, int64, error)
	Checkpoint(ctx context.Context, id object.ID) (*store.Record, error)
}

// Committer is the author and committer of every exported commit.
const (
	CommitterName  = "ckpt"
	CommitterEmail = "ckpt@localhost"
)

// Trailer is the commit message trailer naming the exported checkpoint.
const Trailer = "Ckpt-Checkpoint"

// smallBlob is the size up to which a blob is read into memory whole;
// larger blobs are streamed twice (hash, then write if new).
const smallBlob = 8 << 20

// exporter turns ckpt checkpoints into git commits. One exporter serves
// one operation; it collects new objects in one pack and new map entries,
// and records them at the end (flush).
type exporter struct {
	m       *Mirror
	src     Source
	added   []mapping
	commits map[object.ID]plumbing.Hash
	// present caches object ids known to be in the repository (checked or
	// written during this export).
	present map[plumbing.Hash]bool
	// known holds map entries looked up in batches, a directory at a time,
	// and knownCommits those of commits (see prefetchCommits).
	known        map[mapKey]plumbing.Hash
	knownCommits map[object.ID]plumbing.Hash
	looked       map[object.ID]bool // the checkpoints prefetchCommits looked up
	// pack receives the objects this export writes (created on the first).
	pack *packWriter
	// written counts the git objects this export wrote.
	written int
	// deep makes the export trust no cached tree or commit: every tree is
	// rebuilt from the store and every object it names looked up, so that
	// objects git's gc removed are written again (see Mirror.Sync).
	deep bool
	// verified holds the trees a deep export rebuilt.
	verified map[object.ID]plumbing.Hash
}

func (m *Mirror) newExporter(src Source) *exporter {
	return &exporter{m: m, src: src, commits: map[object.ID]plumbing.Hash{}, present: map[plumbing.Hash]bool{},
		known: map[mapKey]plumbing.Hash{}, knownCommits: map[object.ID]plumbing.Hash{}, looked: map[object.ID]bool{}, verified: map[object.ID]plumbing.Hash{}}
}

// flush writes the export's pack, then records it and the new map entries
// (an entry must never name an object that is not yet durable). It returns
// the pack's name ("" if the export wrote nothing).
func (x *exporter) flush(ctx context.Context) (string, error) {
	var name string
	var pack *packInfo
	if x.pack != nil {
		pw := x.pack
		x.pack = nil
		var idx *idxfile.MemoryIndex
		var size int64
		var err error
		if name, idx, size, err = pw.finish(); err != nil {
			return "", err
		}
		if name != "" {
			x.m.objects.add(name, idx, size)
			pack = &packInfo{Name: name, Size: size}
		}
	}
	err := x.m.db.record(ctx, x.added, x.commits, pack)
	x.added, x.commits = nil, map[object.ID]plumbing.Hash{}
	return name, err
}

// prefetchCommits looks up in the map, in one query, the commits of the
// checkpoints the export is about to need.
func (x *exporter) prefetchCommits(ctx context.Context, ids []object.ID) error {
	for _, id := range ids {
		x.looked[id] = true
	}
	return x.m.db.commits(ctx, ids, x.knownCommits)
}

// abort drops what the export wrote and did not flush.
func (x *exporter) abort() {
	if x.pack != nil {
		x.pack.abort()
		x.pack = nil
	}
}

// has reports whether the repository holds the object in a pack (or this
// export wrote it).
func (x *exporter) has(h plumbing.Hash) (bool, error) {
	if x.present[h] {
		return true, nil
	}
	ok, err := x.m.objects.has(h)
	if err != nil {
		return false, fmt.Errorf("look up git object %s in %s: %w", h, x.m.lay.CommonDir, err)
	}
	if ok {
		x.present[h] = true
	}
	return ok, nil
}

// cached returns the git object a ckpt object became, if the map knows it
// and the repository still holds it (git gc may have pruned an object whose
// refs the mirror deleted).
func (x *exporter) cached(ctx context.Context, kind int, id object.ID) (plumbing.Hash, bool, error) {
	h, ok := x.known[mapKey{kind, id}]
	if !ok {
		var err error
		if h, ok, err = x.m.db.object(ctx, kind, id); err != nil || !ok {
			return h, false, err
		}
	}
	ok, err := x.has(h)
	return h, ok, err
}

// prefetch looks up a changed directory's entries in the map in one query
// per kind (instead of one per entry).
func (x *exporter) prefetch(ctx context.Context, t *object.Tree, below map[string][]Gitlink) error {
	var blobs, trees []object.ID
	for _, e := range t.Entries {
		switch {
		case !object.IsDir(e.Mode):
			blobs = append(blobs, e.ID)
		case len(below[e.Name]) == 0:
			trees = append(trees, e.ID)
		}
	}
	if err := x.m.db.objects(ctx, kindBlob, blobs, x.known); err != nil {
		return err
	}
	return x.m.db.objects(ctx, kindTree, trees, x.known)
}

// store adds an object the repository lacks to the export's pack.
func (x *exporter) store(h plumbing.Hash, t plumbing.ObjectType, size int64, content io.Reader) error {
	if x.pack == nil {
		pw, err := x.m.objects.newPackWriter()
		if err != nil {
			return err
		}
		x.pack = pw
	}
	if err := x.pack.add(h, t, size, content); err != nil {
		return fmt.Errorf("write git object %s: %w", h, err)
	}
	x.present[h] = true
	x.written++
	return nil
}

// write stores an object (if the repository lacks it) and returns its id.
func (x *exporter) write(t plumbing.ObjectType, data []byte) (plumbing.Hash, error) {
	h := gitHash(t, data)
	if ok, err := x.has(h); err != nil || ok {
		return h, err
	}
	return h, x.store(h, t, int64(len(data)), bytes.NewReader(data))
}

// gitHash is the git object id of content (SHA-1 of "type size\0content").
func gitHash(t plumbing.ObjectType, data []byte) plumbing.Hash {
	h := sha1.New()
	h.Write(t.Bytes())
	h.Write([]byte{' '})
	h.Write(strconv.AppendInt(nil, int64(len(data)), 10))
	h.Write([]byte{0})
	h.Write(data)
	var out plumbing.Hash
	h.Sum(out[:0])
	return out
}

// blob exports a ckpt blob of the given size.
func (x *exporter) blob(ctx context.Context, id object.ID, size int64) (plumbing.Hash, error) {
	if h, ok, err := x.cached(ctx, kindBlob, id); err != nil || ok {
		return h, err
	}
	var h plumbing.Hash
	var err error
	if size <= smallBlob {
		h, err = x.smallBlob(ctx, id)
	} else {
		h, err = x.largeBlob(ctx, id)
	}
	if err != nil {
		return h, fmt.Errorf("export blob %s: %w", id, err)
	}
	x.added = append(x.added, mapping{kindBlob, id, h})
	return h, nil
}

func (x *exporter) smallBlob(ctx context.Context, id object.ID) (plumbing.Hash, error) {
	rc, _, err := x.src.OpenBlob(ctx, id)
	if err != nil {
		return plumbing.ZeroHash, err
	}
	data, err := io.ReadAll(rc)
	if cerr := rc.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return plumbing.ZeroHash, err
	}
	return x.write(plumbing.BlobObject, data)
}

// largeBlob hashes a large blob from the store, then writes it if the
// repository lacks it, streaming both times.
func (x *exporter) largeBlob(ctx context.Context, id object.ID) (plumbing.Hash, error) {
	rc, size, err := x.src.OpenBlob(ctx, id)
	if err != nil {
		return plumbing.ZeroHash, err
	}
	hh := sha1.New()
	fmt.Fprintf(hh, "blob %d\x00", size)
	_, err = io.Copy(hh, rc)
	if cerr := rc.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return plumbing.ZeroHash, err
	}
	var h plumbing.Hash
	hh.Sum(h[:0])
	if ok, err := x.has(h); err != nil || ok {
		return h, err
	}
	rc, size, err = x.src.OpenBlob(ctx, id)
	if err != nil {
		return h, err
	}
	defer rc.Close()
	return h, x.store(h, plumbing.BlobObject, size, rc)
}

// gitMode maps a ckpt tree entry mode to git's: 100755 if any exec bit is
// set, else 100644; 120000 for symlinks; 040000 for directories.
func gitMode(mode uint32) filemode.FileMode {
	switch {
	case object.IsDir(mode):
		return filemode.Dir
	case object.IsSymlink(mode):
		return filemode.Symlink
	case mode&0o111 != 0:
		return filemode.Executable
	}
	return filemode.Regular
}

// sortGit sorts tree entries in git's order: by name bytes, comparing a
// directory's name as if it ended in "/".
func sortGit(es []gitobject.TreeEntry) {
	key := func(e gitobject.TreeEntry) string {
		if e.Mode == filemode.Dir {
			return e.Name + "/"
		}
		return e.Name
	}
	sort.Slice(es, func(i, j int) bool { return key(es[i]) < key(es[j]) })
}

// tree exports a ckpt tree (zero id: an empty directory) with the gitlinks
// below it (paths relative to it). A tree without gitlinks below is
// cached; one with gitlinks depends on the checkpoint and is not.
func (x *exporter) tree(ctx context.Context, id object.ID, links []Gitlink) (plumbing.Hash, error) {
	if len(links) == 0 && !id.IsZero() {
		if x.deep {
			if h, ok := x.verified[id]; ok {
				return h, nil
			}
		} else if h, ok, err := x.cached(ctx, kindTree, id); err != nil || ok {
			return h, err
		}
	}
	t := &object.Tree{}
	if !id.IsZero() {
		var err error
		if t, err = x.src.ReadTree(ctx, id); err != nil {
			return plumbing.ZeroHash, err
		}
	}
	direct := map[string]plumbing.Hash{}
	below := map[string][]Gitlink{}
	for _, l := range links {
		first, rest, ok := strings.Cut(l.Path, "/")
		if !ok {
			direct[first] = l.Commit
			continue
		}
		below[first] = append(below[first], Gitlink{Path: rest, Commit: l.Commit})
	}
	if err := x.prefetch(ctx, t, below); err != nil {
		return plumbing.ZeroHash, err
	}
	es := make([]gitobject.TreeEntry, 0, len(t.Entries)+len(links))
	for _, e := range t.Entries {
		if _, ok := direct[e.Name]; ok {
			continue // a gitlink replaces whatever the scan saw there
		}
		var h plumbing.Hash
		var err error
		if object.IsDir(e.Mode) {
			h, err = x.tree(ctx, e.ID, below[e.Name])
			delete(below, e.Name)
		} else {
			h, err = x.blob(ctx, e.ID, e.Size)
		}
		if err != nil {
			return plumbing.ZeroHash, err
		}
		es = append(es, gitobject.TreeEntry{Name: e.Name, Mode: gitMode(e.Mode), Hash: h})
	}
	for name, sub := range below {
		if e, ok := t.Find(name); ok && !object.IsDir(e.Mode) {
			continue // a file where the gitlink's directory was: keep the file
		}
		h, err := x.tree(ctx, object.ZeroID, sub)
		if err != nil {
			return plumbing.ZeroHash, err
		}
		es = append(es, gitobject.TreeEntry{Name: name, Mode: filemode.Dir, Hash: h})
	}
	for name, c := range direct {
		es = append(es, gitobject.TreeEntry{Name: name, Mode: filemode.Submodule, Hash: c})
	}
	sortGit(es)
	var buf bytes.Buffer
	for _, e := range es {
		buf.WriteString(strconv.FormatUint(uint64(e.Mode), 8))
		buf.WriteByte(' ')
		buf.WriteString(e.Name)
		buf.WriteByte(0)
		buf.Write(e.Hash[:])
	}
	h, err := x.write(plumbing.TreeObject, buf.Bytes())
	if err != nil {
		return h, fmt.Errorf("export tree %s: %w", id, err)
	}
	if len(links) == 0 && !id.IsZero() {
		x.added = append(x.added, mapping{kindTree, id, h})
		x.verified[id] = h
	}
	return h, nil
}

// commit exports a checkpoint as a detached commit (no parent) and returns
// its id.
func (x *exporter) commit(ctx context.Context, id object.ID) (plumbing.Hash, error) {
	if h, ok := x.commits[id]; ok {
		return h, nil
	}
	h, ok := x.knownCommits[id]
	if !ok && !x.looked[id] {
		var err error
		if h, ok, err = x.m.db.commit(ctx, id); err != nil {
			return h, err
		}
	}
	if ok && !x.deep {
		if ok, err := x.has(h); err != nil {
			return h, err
		} else if ok {
			return h, nil
		}
	}
	rec, err := x.src.Checkpoint(ctx, id)
	if err != nil {
		return plumbing.ZeroHash, err
	}
	links, err := ParseGitlinks(rec.Meta[MetaGitlinks])
	if err != nil {
		return plumbing.ZeroHash, fmt.Errorf("checkpoint %s: %w", id.Short(), err)
	}
	tree, err := x.tree(ctx, rec.Tree, links)
	if err != nil {
		return plumbing.ZeroHash, fmt.Errorf("export checkpoint %s: %w", id.Short(), err)
	}
	sig := gitobject.Signature{Name: CommitterName, Email: CommitterEmail, When: rec.Time.UTC().Truncate(time.Second)}
	c := &gitobject.Commit{Author: sig, Committer: sig, TreeHash: tree, Message: CommitMessage(rec)}
	obj := &plumbing.MemoryObject{}
	if err := c.Encode(obj); err != nil {
		return plumbing.ZeroHash, err
	}
	data, err := readAll(obj)
	if err != nil {
		return plumbing.ZeroHash, err
	}
	h, err = x.write(plumbing.CommitObject, data)
	if err != nil {
		return h, fmt.Errorf("export checkpoint %s: %w", id.Short(), err)
	}
	x.commits[id] = h
	return h, nil
}

func readAll(o plumbing.EncodedObject) ([]byte, error) {
	r, err := o.Reader()
	if err != nil {
		return nil, err
	}
	defer r.Close()
	return io.ReadAll(r)
}

// CommitMessage is the message of a checkpoint's commit: its message (or,
// when it has none, "ckpt <kind> checkpoint <short id>"), a blank line and
// the trailer "Ckpt-Checkpoint: <64-hex id>". NUL bytes, which git
// refuses in messages, are dropped.
func CommitMessage(rec *store.Record) string {
	msg := strings.TrimRight(strings.ReplaceAll(rec.Message, "\x00", ""), "\n \t")
	if strings.TrimSpace(msg) == "" {
		msg = fmt.Sprintf("ckpt %s checkpoint %s", rec.Kind, rec.ID.Short())
	}
	return msg + "\n\n" + Trailer + ": " + rec.ID.String() + "\n"
}

// ParseTrailer returns the checkpoint id a commit message's trailer names.
func ParseTrailer(msg string) (object.ID, bool) {
	lines := strings.Split(strings.TrimRight(msg, "\n"), "\n")
	for i := len(lines) - 1; i >= 0; i-- {
		v, ok := strings.CutPrefix(lines[i], Trailer+": ")
		if !ok {
			if strings.TrimSpace(lines[i]) == "" {
				break
			}
			continue
		}
		id, err := object.ParseID(strings.TrimSpace(v))
		return id, err == nil
	}
	return object.ZeroID, false
}
