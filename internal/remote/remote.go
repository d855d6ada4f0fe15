package remote

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"

	"filippo.io/age"
	"github.com/klauspost/compress/zstd"
	"golang.org/x/sync/errgroup"

	"github.com/seed1cedbf7c/ckpt/internal/atomicfile"
	"github.com/seed1cedbf7c/ckpt/internal/object"
	"github.com/seed1cedbf7c/ckpt/internal/store"
)

// Object kinds in packs.
const (
	KindBlob       = 'b'
	KindTree       = 't'
	KindCheckpoint = 'c'
)

// Keys of the layout.
const (
	configKey   = "config"
	packPrefix  = "packs/"
	indexPrefix = "index/"
	refPrefix   = "refs/"
	gcPrefix    = "gc/"
	packMagic   = "CKPTPACK1\n"
	formatName  = "ckpt-remote"
	scheme      = "age+xchacha20poly1305"
	keyCheckMsg = "ckpt remote key check"
)

// PackSize is the size at which a pack is closed and uploaded.
var PackSize = 8 << 20

// ObjKey names an object of a remote: its kind and id.
type ObjKey struct {
	Kind byte
	ID   object.ID
}

func (k ObjKey) String() string { return kindName(k.Kind) + " " + k.ID.String() }

func kindName(k byte) string {
	switch k {
	case KindBlob:
		return "blob"
	case KindTree:
		return "tree"
	case KindCheckpoint:
		return "checkpoint"
	}
	return fmt.Sprintf("kind %q", k)
}

// Config is a remote's "config" object. It is never encrypted: it holds
// the master key wrapped for the age recipients.
type Config struct {
	Format     string      `json:"format"`
	Version    int         `json:"version"`
	ID         string      `json:"id"`
	Created    time.Time   `json:"created"`
	Encryption *Encryption `json:"encryption,omitempty"`
}

// Encryption describes an encrypted remote.
type Encryption struct {
	Scheme string `json:"scheme"`
	// Key is the master key, age-encrypted to the recipients.
	Key []byte `json:"key"`
	// Check is an HMAC under the name key of a fixed message: it tells a
	// wrong key from a right one without revealing anything.
	Check string `json:"check"`
}

// Options open a remote.
type Options struct {
	// Create writes the remote's config if it has none.
	Create bool
	// Recipients, with Create, make a new remote encrypted to them.
	Recipients []age.Recipient
	// Identities open an encrypted remote's key.
	Identities []age.Identity
	// Key is the master key remembered from an earlier open (nil: none).
	Key []byte
	// CacheDir keeps the remote's decoded indexes ("" none).
	CacheDir string
}

// Remote is an opened remote.
type Remote struct {
	be       Backend
	cfg      Config
	seal     *sealer
	cacheDir string

	mu    sync.Mutex
	index map[ObjKey]loc
	packs map[string]bool // packs with an index
	// marked: packs a remote gc found unreachable and will delete after
	// the grace period; a push does not count on their objects.
	marked map[string]time.Time
	// ixs: every loaded index, by pack; dirty: the cache lacks some.
	ixs   map[string]*indexFile
	dirty bool
	bytes int64 // uploaded
	down  int64 // downloaded
}

type loc struct {
	pack  string
	off   int64
	n     int64
	size  int64
	stats json.RawMessage
}

// NotInitializedError: the remote holds no ckpt data.
type NotInitializedError struct{ Remote string }

func (e *NotInitializedError) Error() string {
	return fmt.Sprintf("%s holds no checkpoints (no ckpt config object)", e.Remote)
}

// Hint says what to do.
func (e *NotInitializedError) Hint() string {
	return "push to it first (ckpt push), or check the URL and prefix"
}

// KeyError: an encrypted remote's key cannot be opened.
type KeyError struct {
	Remote string
	Err    error
}

func (e *KeyError) Error() string {
	if e.Err == nil {
		return fmt.Sprintf("%s is encrypted and no age identity was given", e.Remote)
	}
	return fmt.Sprintf("%s is encrypted and its key does not open with the identities given: %v", e.Remote, e.Err)
}
func (e *KeyError) Unwrap() error { return e.Err }

// Hint says what to do.
func (e *KeyError) Hint() string {
	return "pass --identity FILE (an age identity file whose recipient the remote was encrypted to), or set CKPT_AGE_IDENTITY"
}

// CorruptError: an object on the remote does not match its hash or does
// not decode. It wraps store.ErrCorrupt (exit status 3).
type CorruptError struct {
	Remote string
	Key    string // the backend key holding it
	Obj    ObjKey
	Detail string
}

func (e *CorruptError) Error() string {
	s := "corrupt remote object " + e.Remote + "/" + e.Key
	if !e.Obj.ID.IsZero() {
		s += " (" + e.Obj.String() + ")"
	}
	return s + ": " + e.Detail
}

func (e *CorruptError) Unwrap() error { return store.ErrCorrupt }

// Hint says what to do.
func (e *CorruptError) Hint() string {
	return "nothing damaged was imported; ckpt fsck --remote NAME --repair removes the damaged packs, then ckpt push --full from a store that holds these checkpoints uploads them again"
}

// Open opens the remote on be.
func Open(ctx context.Context, be Backend, o Options) (*Remote, error) {
	r := &Remote{be: be, cacheDir: o.CacheDir, index: map[ObjKey]loc{}, packs: map[string]bool{}, marked: map[string]time.Time{}, ixs: map[string]*indexFile{}}
	data, _, err := be.Get(ctx, configKey)
	if errors.Is(err, ErrNotExist) {
		if !o.Create {
			return nil, &NotInitializedError{Remote: be.String()}
		}
		if err := r.create(ctx, o); err == nil {
			return r, nil
		} else if !errors.Is(err, ErrPrecondition) {
			return nil, err
		}
		// Another store created it meanwhile: use theirs.
		data, _, err = be.Get(ctx, configKey)
	}
	if err != nil {
		return nil, err
	}
	if err := json.Unmarshal(data, &r.cfg); err != nil || r.cfg.Format != formatName {
		return nil, &CorruptError{Remote: be.String(), Key: configKey, Detail: "not a ckpt remote config"}
	}
	if r.cfg.Version != 1 {
		return nil, fmt.Errorf("%s has remote format version %d; this ckpt reads version 1 (upgrade ckpt)", be.String(), r.cfg.Version)
	}
	if e := r.cfg.Encryption; e != nil {
		if e.Scheme != scheme {
			return nil, fmt.Errorf("%s is encrypted with %q, which this ckpt does not know", be.String(), e.Scheme)
		}
		key := o.Key
		if key == nil || !checkKey(key, e.Check) {
			if len(o.Identities) == 0 {
				return nil, &KeyError{Remote: be.String()}
			}
			if key, err = unwrapKey(e.Key, o.Identities); err != nil {
				return nil, &KeyError{Remote: be.String(), Err: err}
			}
			if !checkKey(key, e.Check) {
				return nil, &CorruptError{Remote: be.String(), Key: configKey, Detail: "the key check does not match the key"}
			}
		}
		if r.seal, err = newSealer(key); err != nil {
			return nil, err
		}
	} else if len(o.Recipients) > 0 {
		return nil, fmt.Errorf("%s already holds checkpoints that are not encrypted; use another prefix for an encrypted remote", be.String())
	}
	return r, nil
}

func keyCheck(key []byte) string {
	m := hmac.New(sha256.New, key[32:])
	m.Write([]byte(keyCheckMsg))
	return hex.EncodeToString(m.Sum(nil))
}

func checkKey(key []byte, check string) bool {
	return len(key) == keyLen && hmac.Equal([]byte(keyCheck(key)), []byte(check))
}

func (r *Remote) create(ctx context.Context, o Options) error {
	id := make([]byte, 16)
	rand.Read(id)
	r.cfg = Config{Format: formatName, Version: 1, ID: hex.EncodeToString(id), Created: time.Now().UTC()}
	if len(o.Recipients) > 0 {
		key, wrapped, err := newKey(o.Recipients)
		if err != nil {
			return err
		}
		r.cfg.Encryption = &Encryption{Scheme: scheme, Key: wrapped, Check: keyCheck(key)}
		if r.seal, err = newSealer(key); err != nil {
			return err
		}
	}
	data, _ := json.MarshalIndent(r.cfg, "", "  ")
	_, err := r.be.Put(ctx, configKey, data, Cond{IfNoneMatch: true})
	return err
}

// Config returns the remote's config.
func (r *Remote) Config() Config { return r.cfg }

// Key returns the master key of an encrypted remote (nil otherwise), for
// a store to remember.
func (r *Remote) Key() []byte {
	if r.seal == nil {
		return nil
	}
	return r.seal.key
}

// Encrypted reports whether the remote is encrypted.
func (r *Remote) Encrypted() bool { return r.seal != nil }

// Backend returns the backend.
func (r *Remote) Backend() Backend { return r.be }

// Uploaded returns the bytes uploaded so far.
func (r *Remote) Uploaded() int64 {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.bytes
}

var (
	zOnce sync.Once
	zEnc  *zstd.Encoder
	zDec  *zstd.Decoder
)

// smallDecode is the largest object the shared decoder decodes; larger
// ones stream through a decoder of their own, cut off at their size.
const smallDecode = 16 << 20

// docLimit bounds what an index or a session document may decode to.
const docLimit = 512 << 20

func codec() (*zstd.Encoder, *zstd.Decoder) {
	zOnce.Do(func() {
		zEnc, _ = zstd.NewWriter(nil, zstd.WithEncoderLevel(zstd.SpeedDefault), zstd.WithLowerEncoderMem(true))
		// A remote may be hostile: a few bytes that decode to gigabytes
		// must fail, not fill memory.
		zDec, _ = zstd.NewReader(nil, zstd.WithDecoderConcurrency(0), zstd.WithDecoderMaxMemory(smallDecode+1))
	})
	return zEnc, zDec
}

// encode compresses (and seals) plaintext for storage.
func (r *Remote) encode(plain []byte) []byte {
	e, _ := codec()
	out := e.EncodeAll(plain, nil)
	if r.seal != nil {
		out = r.seal.seal(out)
	}
	return out
}

// decode undoes encode, refusing plaintext longer than limit.
func (r *Remote) decode(stored []byte, limit int64) ([]byte, error) {
	if r.seal != nil {
		var err error
		if stored, err = r.seal.open(stored); err != nil {
			return nil, err
		}
	}
	if limit <= smallDecode {
		_, d := codec()
		out, err := d.DecodeAll(stored, nil)
		if err != nil {
			return nil, err
		}
		if int64(len(out)) > limit {
			return nil, fmt.Errorf("it decodes to more than the %d bytes it should hold", limit)
		}
		return out, nil
	}
	d, err := zstd.NewReader(bytes.NewReader(stored), zstd.WithDecoderConcurrency(1), zstd.WithDecoderMaxMemory(uint64(limit)+1))
	if err != nil {
		return nil, err
	}
	defer d.Close()
	out, err := io.ReadAll(io.LimitReader(d, limit+1))
	if err != nil {
		return nil, err
	}
	if int64(len(out)) > limit {
		return nil, fmt.Errorf("it decodes to more than the %d bytes it should hold", limit)
	}
	return out, nil
}

// indexFile is an index's plaintext: where each object of one pack lies.
type indexFile struct {
	Version int          `json:"v"`
	Pack    string       `json:"pack"`
	Size    int64        `json:"size"`
	Objects []indexEntry `json:"objects"`
}

type indexEntry struct {
	Kind  string          `json:"k"`
	ID    object.ID       `json:"id"`
	Off   int64           `json:"o"`
	N     int64           `json:"n"`
	Size  int64           `json:"u"`
	Stats json.RawMessage `json:"st,omitempty"`
}

func packKey(name string) string { return packPrefix + name[:2] + "/" + name }

// LoadIndex reads every index of the remote (those the cache directory
// holds from there), and the packs a gc has marked for deletion.
func (r *Remote) LoadIndex(ctx context.Context) error {
	if err := r.loadMarks(ctx); err != nil {
		return err
	}
	ents, err := r.be.List(ctx, indexPrefix)
	if err != nil {
		return err
	}
	cached := r.loadCache()
	listed := map[string]bool{}
	var todo []string
	r.mu.Lock()
	known := len(r.ixs)
	r.mu.Unlock()
	for _, e := range ents {
		name := strings.TrimPrefix(e.Key, indexPrefix)
		listed[name] = true
		r.mu.Lock()
		_, have := r.ixs[name]
		r.mu.Unlock()
		switch {
		case have:
		case cached[name] != nil:
			r.addIndex(cached[name])
		default:
			todo = append(todo, name)
		}
	}
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(8)
	for _, name := range todo {
		g.Go(func() error {
			ix, err := r.readIndex(gctx, name)
			if err != nil {
				return err
			}
			r.addIndex(ix)
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		return err
	}
	r.mu.Lock()
	stale := known == 0 && len(cached) != len(listed)
	for name := range cached {
		stale = stale || !listed[name]
	}
	r.dirty = r.dirty || len(todo) > 0 || stale
	r.mu.Unlock()
	return r.SaveCache()
}

// cacheFile is where a store keeps a remote's decoded indexes, in one
// file (binary: a push after a turn reads 100,000 entries in a few
// milliseconds, where parsing as many index files took most of it).
func (r *Remote) cacheFile() string {
	if r.cacheDir == "" {
		return ""
	}
	return filepath.Join(r.cacheDir, "index.bin")
}

const cacheMagic = "CKPTIXC1\n"

// loadCache reads the index cache; a missing or damaged one is empty.
func (r *Remote) loadCache() map[string]*indexFile {
	p := r.cacheFile()
	if p == "" {
		return nil
	}
	data, err := os.ReadFile(p)
	if err != nil || !bytes.HasPrefix(data, []byte(cacheMagic)) {
		return nil
	}
	out, ok := decodeCache(data[len(cacheMagic):])
	if !ok {
		return nil
	}
	return out
}

func decodeCache(b []byte) (map[string]*indexFile, bool) {
	num := func() (int64, bool) {
		v, n := binary.Uvarint(b)
		if n <= 0 || v > 1<<62 {
			return 0, false
		}
		b = b[n:]
		return int64(v), true
	}
	packs, ok := num()
	if !ok {
		return nil, false
	}
	out := map[string]*indexFile{}
	for ; packs > 0; packs-- {
		if len(b) < 32 {
			return nil, false
		}
		ix := &indexFile{Version: 1, Pack: hex.EncodeToString(b[:32])}
		b = b[32:]
		var count int64
		if ix.Size, ok = num(); !ok {
			return nil, false
		}
		if count, ok = num(); !ok || count > int64(len(b)) {
			return nil, false
		}
		ix.Objects = make([]indexEntry, count)
		for i := range ix.Objects {
			e := &ix.Objects[i]
			if len(b) < 33 {
				return nil, false
			}
			e.Kind = string(b[:1])
			copy(e.ID[:], b[1:33])
			b = b[33:]
			var sl int64
			for _, f := range []*int64{&e.Off, &e.N, &e.Size, &sl} {
				if *f, ok = num(); !ok {
					return nil, false
				}
			}
			if sl > int64(len(b)) {
				return nil, false
			}
			if sl > 0 {
				e.Stats = json.RawMessage(bytes.Clone(b[:sl]))
			}
			b = b[sl:]
		}
		if !ix.valid() {
			return nil, false // damaged: read the indexes again
		}
		out[ix.Pack] = ix
	}
	return out, len(b) == 0
}

// SaveCache writes the index cache if it changed (it is only a cache:
// a failure to write it is ignored).
func (r *Remote) SaveCache() error {
	p := r.cacheFile()
	r.mu.Lock()
	if p == "" || !r.dirty {
		r.mu.Unlock()
		return nil
	}
	names := make([]string, 0, len(r.ixs))
	for n := range r.ixs {
		names = append(names, n)
	}
	sort.Strings(names)
	var b bytes.Buffer
	b.WriteString(cacheMagic)
	var tmp [binary.MaxVarintLen64]byte
	put := func(v int64) { b.Write(tmp[:binary.PutUvarint(tmp[:], uint64(v))]) }
	put(int64(len(names)))
	for _, n := range names {
		ix := r.ixs[n]
		raw, _ := hex.DecodeString(n)
		b.Write(raw)
		put(ix.Size)
		put(int64(len(ix.Objects)))
		for _, e := range ix.Objects {
			b.WriteString(e.Kind)
			b.Write(e.ID[:])
			put(e.Off)
			put(e.N)
			put(e.Size)
			put(int64(len(e.Stats)))
			b.Write(e.Stats)
		}
	}
	r.dirty = false
	r.mu.Unlock()
	if err := os.MkdirAll(filepath.Dir(p), 0o700); err == nil {
		atomicfile.WriteFile(p, b.Bytes(), 0o600)
	}
	return nil
}

func validName(name string) bool {
	if len(name) != 64 {
		return false
	}
	_, err := hex.DecodeString(name)
	return err == nil && strings.ToLower(name) == name
}

func (r *Remote) readIndex(ctx context.Context, name string) (*indexFile, error) {
	key := indexPrefix + name
	if !validName(name) {
		return nil, &CorruptError{Remote: r.be.String(), Key: key, Detail: "not an index name"}
	}
	data, _, err := r.be.Get(ctx, key)
	if err != nil {
		return nil, err
	}
	plain, err := r.decode(data, docLimit)
	if err != nil {
		return nil, &CorruptError{Remote: r.be.String(), Key: key, Detail: err.Error()}
	}
	var ix indexFile
	if err := json.Unmarshal(plain, &ix); err != nil || ix.Pack != name || ix.Version != 1 {
		return nil, &CorruptError{Remote: r.be.String(), Key: key, Detail: "the index does not decode or names another pack"}
	}
	if !ix.valid() {
		return nil, &CorruptError{Remote: r.be.String(), Key: key, Detail: "an index entry lies outside its pack"}
	}
	return &ix, nil
}

// valid reports whether every entry lies inside the pack, within the
// bounds a read may ask for.
func (ix *indexFile) valid() bool {
	for _, e := range ix.Objects {
		if len(e.Kind) != 1 || e.Off < 0 || e.N <= 0 || e.N > maxRange || e.Off > ix.Size || e.Off+e.N > ix.Size || e.Size < 0 || e.Size > maxRange {
			return false
		}
	}
	return true
}

func (r *Remote) addIndex(ix *indexFile) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.packs[ix.Pack] = true
	r.ixs[ix.Pack] = ix
	_, newMarked := r.marked[ix.Pack]
	for _, e := range ix.Objects {
		k := ObjKey{e.Kind[0], e.ID}
		if old, ok := r.index[k]; ok && newMarked {
			if _, oldMarked := r.marked[old.pack]; !oldMarked {
				// An object in two packs is where no gc wants to delete
				// it, whatever the order indexes load in.
				continue
			}
		}
		r.index[k] = loc{pack: ix.Pack, off: e.Off, n: e.N, size: e.Size, stats: e.Stats}
	}
}

// Has reports whether the remote holds an object a push may count on: its
// loaded index lists it, in a pack no gc has marked for deletion.
func (r *Remote) Has(k ObjKey) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	l, ok := r.index[k]
	if ok {
		_, marked := r.marked[l.pack]
		ok = !marked
	}
	return ok
}

// Listed reports whether an index lists the object (marked or not): it
// can be downloaded.
func (r *Remote) Listed(k ObjKey) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	_, ok := r.index[k]
	return ok
}

// Stats returns the stats pushed with a checkpoint.
func (r *Remote) Stats(id object.ID) json.RawMessage {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.index[ObjKey{KindCheckpoint, id}].stats
}

// Packs lists the packs with an index, and Objects counts the objects.
func (r *Remote) Packs() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make([]string, 0, len(r.packs))
	for p := range r.packs {
		out = append(out, p)
	}
	sort.Strings(out)
	return out
}

// Objects returns every indexed object.
func (r *Remote) Objects() []ObjKey {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make([]ObjKey, 0, len(r.index))
	for k := range r.index {
		out = append(out, k)
	}
	return out
}

// Packer gathers new objects into packs and uploads them, a few at once.
// An object's pack is uploaded before its index, so an index never names
// a pack that is not there.
type Packer struct {
	r     *Remote
	base  context.Context
	g     *errgroup.Group
	ctx   context.Context
	buf   bytes.Buffer
	ents  []indexEntry
	added map[ObjKey]bool
	// flushed: a pack of this packer has been sent on its way.
	flushed bool
	// ordered: each pack waits for those before it (see Barrier).
	ordered bool
	// Uploaded reports each uploaded pack's size (may be nil).
	Uploaded func(n int64)
}

// NewPacker starts packing.
func (r *Remote) NewPacker(ctx context.Context) *Packer {
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(3)
	return &Packer{r: r, base: ctx, g: g, ctx: gctx, added: map[ObjKey]bool{}}
}

// Add packs an object unless the remote or this packer has it. stats
// (checkpoints) is kept in the index.
func (p *Packer) Add(k ObjKey, data []byte, stats json.RawMessage) error {
	if p.added[k] || p.r.Has(k) {
		return nil
	}
	return p.AddEncoded(k, p.r.EncodeObject(k, data), int64(len(data)), stats)
}

// EncodeObject gives an object's stored form in a pack (compressed, and
// sealed on an encrypted remote). It is safe to call from several
// goroutines, so that a push compresses on every core.
func (r *Remote) EncodeObject(k ObjKey, data []byte) []byte {
	plain := make([]byte, 0, len(data)+1)
	plain = append(append(plain, k.Kind), data...)
	return r.encode(plain)
}

// AddEncoded packs an object EncodeObject encoded (size is the object's
// own), unless the remote or this packer has it. Not for concurrent use.
func (p *Packer) AddEncoded(k ObjKey, enc []byte, size int64, stats json.RawMessage) error {
	if p.added[k] || p.r.Has(k) {
		return nil
	}
	if err := p.ctx.Err(); err != nil {
		return err
	}
	p.added[k] = true
	if p.buf.Len() == 0 {
		p.buf.WriteString(packMagic)
	}
	p.ents = append(p.ents, indexEntry{Kind: string(k.Kind), ID: k.ID, Off: int64(p.buf.Len()), N: int64(len(enc)), Size: size, Stats: stats})
	p.buf.Write(enc)
	if p.buf.Len() >= PackSize {
		return p.flush()
	}
	return nil
}

func (p *Packer) flush() error {
	if len(p.ents) == 0 {
		return nil
	}
	if p.ordered && p.flushed {
		// This pack's objects may name objects of packs in flight: they
		// must be listed first.
		if err := p.wait(); err != nil {
			return err
		}
	}
	p.flushed = true
	data := bytes.Clone(p.buf.Bytes())
	ents := p.ents
	p.buf.Reset()
	p.ents = nil
	p.g.Go(func() error { return p.r.upload(p.ctx, data, ents, p.Uploaded) })
	return nil
}

// Barrier makes every object added so far listed before any added later:
// an object added after it may name (as a tree names its entries) one
// added before. While everything fits in the first pack it costs
// nothing — one pack is listed all at once — otherwise it uploads what is
// pending and waits.
// From the first barrier on, packs go up one after another (objects that
// name others come after them, and may fill several packs); before it
// (blobs, which name nothing) several go up at once.
func (p *Packer) Barrier() error {
	p.ordered = true
	if !p.flushed {
		return nil
	}
	return p.Wait()
}

// Wait uploads what is pending and waits for every upload: after it
// returns nil, the remote's index lists every object added.
func (p *Packer) Wait() error {
	if err := p.flush(); err != nil {
		return err
	}
	return p.wait()
}

func (p *Packer) wait() error {
	err := p.g.Wait()
	g, gctx := errgroup.WithContext(p.base)
	g.SetLimit(3)
	p.g, p.ctx = g, gctx
	return err
}

func (r *Remote) upload(ctx context.Context, data []byte, ents []indexEntry, uploaded func(int64)) error {
	var name string
	for {
		sum := sha256.Sum256(data)
		name = hex.EncodeToString(sum[:])
		_, err := r.be.Put(ctx, packKey(name), data, Cond{IfNoneMatch: true})
		if err == nil {
			break
		}
		if !errors.Is(err, ErrPrecondition) {
			return err
		}
		// The same pack is there (a push cut short wrote it): reuse it,
		// unless a gc marked it for deletion. Then the pack goes up under
		// another name, padded: a gc that deletes the marked one, a grace
		// period after marking it, must not take this push's objects.
		r.mu.Lock()
		_, marked := r.marked[name]
		r.mu.Unlock()
		if !marked {
			break
		}
		pad := make([]byte, 16)
		rand.Read(pad)
		data = append(data, pad...)
	}
	ix := &indexFile{Version: 1, Pack: name, Size: int64(len(data)), Objects: ents}
	plain, _ := json.Marshal(ix)
	enc := r.encode(plain)
	if _, err := r.be.Put(ctx, indexPrefix+name, enc, Cond{IfNoneMatch: true}); err != nil && !errors.Is(err, ErrPrecondition) {
		return err
	}
	r.addIndex(ix)
	r.mu.Lock()
	r.dirty = true
	r.bytes += int64(len(data) + len(enc))
	r.mu.Unlock()
	if uploaded != nil {
		uploaded(int64(len(data) + len(enc)))
	}
	return nil
}

// Downloaded returns the bytes of objects downloaded so far.
func (r *Remote) Downloaded() int64 {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.down
}

// Size returns an object's stored size (0 if the index lacks it).
func (r *Remote) Size(k ObjKey) int64 {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.index[k].n
}

// Fetch downloads objects, verifies each against its id and passes it to
// fn (one call at a time). Objects of one pack come in as few range
// requests as their positions allow.
func (r *Remote) Fetch(ctx context.Context, keys []ObjKey, fn func(k ObjKey, data []byte, stats json.RawMessage) error) error {
	type want struct {
		k ObjKey
		l loc
	}
	byPack := map[string][]want{}
	r.mu.Lock()
	for _, k := range keys {
		l, ok := r.index[k]
		if !ok {
			r.mu.Unlock()
			return &CorruptError{Remote: r.be.String(), Key: indexPrefix, Obj: k, Detail: "no index lists it (the remote lacks an object a ref or tree needs)"}
		}
		byPack[l.pack] = append(byPack[l.pack], want{k, l})
	}
	r.mu.Unlock()
	var fnMu sync.Mutex
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(6)
	for pack, ws := range byPack {
		sort.Slice(ws, func(i, j int) bool { return ws[i].l.off < ws[j].l.off })
		for i := 0; i < len(ws); {
			j := i + 1
			start, end := ws[i].l.off, ws[i].l.off+ws[i].l.n
			for j < len(ws) && ws[j].l.off-end < 256<<10 && ws[j].l.off+ws[j].l.n-start < 16<<20 {
				end = max(end, ws[j].l.off+ws[j].l.n)
				j++
			}
			group := ws[i:j]
			i = j
			g.Go(func() error {
				key := packKey(pack)
				data, err := r.be.GetRange(gctx, key, start, end-start)
				if err != nil {
					if errors.Is(err, ErrNotExist) {
						return &CorruptError{Remote: r.be.String(), Key: key, Detail: "the pack an index names is missing"}
					}
					if errors.Is(err, ErrShort) {
						return &CorruptError{Remote: r.be.String(), Key: key, Detail: "the pack is shorter than its index says"}
					}
					return err
				}
				r.mu.Lock()
				r.down += int64(len(data))
				r.mu.Unlock()
				for _, w := range group {
					content, err := r.decodeObject(key, w.k, data[w.l.off-start:w.l.off-start+w.l.n], w.l.size)
					if err != nil {
						return err
					}
					fnMu.Lock()
					err = fn(w.k, content, w.l.stats)
					fnMu.Unlock()
					if err != nil {
						return err
					}
				}
				return nil
			})
		}
	}
	return g.Wait()
}

func (r *Remote) decodeObject(key string, k ObjKey, stored []byte, size int64) ([]byte, error) {
	plain, err := r.decode(stored, size+1)
	if err != nil {
		return nil, &CorruptError{Remote: r.be.String(), Key: key, Obj: k, Detail: err.Error()}
	}
	if len(plain) == 0 || plain[0] != k.Kind {
		return nil, &CorruptError{Remote: r.be.String(), Key: key, Obj: k, Detail: "its kind does not match the index"}
	}
	content := plain[1:]
	if int64(len(content)) != size {
		return nil, &CorruptError{Remote: r.be.String(), Key: key, Obj: k, Detail: fmt.Sprintf("it holds %d bytes, its index says %d", len(content), size)}
	}
	if object.Sum(content) != k.ID {
		return nil, &CorruptError{Remote: r.be.String(), Key: key, Obj: k, Detail: "its content does not match its hash"}
	}
	return content, nil
}

// Ref is a remote ref.
type Ref struct {
	Name     string    `json:"name"`
	ID       object.ID `json:"id"`
	Symbolic string    `json:"symbolic,omitempty"`
	Time     time.Time `json:"time"`
	Expires  time.Time `json:"expires,omitzero"`
	// ETag is the version read (for a conditional update).
	ETag string `json:"-"`
}

func (r *Remote) refKey(name string) string {
	if r.seal != nil {
		return refPrefix + r.seal.name(name)
	}
	return refPrefix + name
}

// Refs reads every ref of the remote.
func (r *Remote) Refs(ctx context.Context) ([]Ref, error) {
	ents, err := r.be.List(ctx, refPrefix)
	if err != nil {
		return nil, err
	}
	out := make([]Ref, len(ents))
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(8)
	for i, e := range ents {
		g.Go(func() error {
			data, etag, err := r.be.Get(gctx, e.Key)
			if errors.Is(err, ErrNotExist) {
				return nil // deleted meanwhile
			}
			if err != nil {
				return err
			}
			ref, err := r.decodeRef(e.Key, data)
			if err != nil {
				return err
			}
			if r.refKey(ref.Name) != e.Key {
				return &CorruptError{Remote: r.be.String(), Key: e.Key, Detail: "it holds a ref of another name (" + ref.Name + ")"}
			}
			ref.ETag = etag
			out[i] = ref
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		return nil, err
	}
	refs := out[:0]
	for _, ref := range out {
		if ref.Name != "" {
			refs = append(refs, ref)
		}
	}
	sort.Slice(refs, func(i, j int) bool { return refs[i].Name < refs[j].Name })
	return refs, nil
}

func (r *Remote) decodeRef(key string, data []byte) (Ref, error) {
	if r.seal != nil {
		plain, err := r.seal.open(data)
		if err != nil {
			return Ref{}, &CorruptError{Remote: r.be.String(), Key: key, Detail: err.Error()}
		}
		data = plain
	}
	var ref Ref
	if err := json.Unmarshal(data, &ref); err != nil || ref.Name == "" || (ref.ID.IsZero() && ref.Symbolic == "") {
		return Ref{}, &CorruptError{Remote: r.be.String(), Key: key, Detail: "not a ref"}
	}
	return ref, nil
}

// GetRef reads one ref (ErrNotExist if absent).
func (r *Remote) GetRef(ctx context.Context, name string) (Ref, error) {
	key := r.refKey(name)
	data, etag, err := r.be.Get(ctx, key)
	if err != nil {
		return Ref{}, err
	}
	ref, err := r.decodeRef(key, data)
	if err != nil {
		return Ref{}, err
	}
	if ref.Name != name {
		return Ref{}, &CorruptError{Remote: r.be.String(), Key: key, Detail: "it holds a ref of another name (" + ref.Name + ")"}
	}
	ref.ETag = etag
	return ref, nil
}

// PutRef writes a ref if the remote still has the version ref.ETag names
// ("": if the remote has no such ref). It returns ErrPrecondition when
// another writer got there first.
func (r *Remote) PutRef(ctx context.Context, ref Ref) (string, error) {
	data, _ := json.Marshal(ref)
	if r.seal != nil {
		data = r.seal.seal(data)
	}
	cond := Cond{IfMatch: ref.ETag, IfNoneMatch: ref.ETag == ""}
	etag, err := r.be.Put(ctx, r.refKey(ref.Name), data, cond)
	if errors.Is(err, ErrPrecondition) {
		// A retried write may have found its own first attempt.
		if cur, gerr := r.GetRef(ctx, ref.Name); gerr == nil && cur.ID == ref.ID && cur.Symbolic == ref.Symbolic && cur.Time.Equal(ref.Time) {
			return cur.ETag, nil
		}
	}
	return etag, err
}

// DeleteRef removes a ref.
func (r *Remote) DeleteRef(ctx context.Context, name string) error {
	return r.be.Delete(ctx, r.refKey(name))
}

// UnindexedPacks lists the packs no index names: what a push cut short
// left (gc removes them once they are old).
func (r *Remote) UnindexedPacks(ctx context.Context) ([]Entry, error) {
	ents, err := r.be.List(ctx, packPrefix)
	if err != nil {
		return nil, err
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []Entry
	for _, e := range ents {
		name := e.Key[strings.LastIndexByte(e.Key, '/')+1:]
		if !r.packs[name] {
			out = append(out, e)
		}
	}
	return out, nil
}

// MissingPacks lists the packs an index names that are not there.
func (r *Remote) MissingPacks(ctx context.Context) ([]string, error) {
	ents, err := r.be.List(ctx, packPrefix)
	if err != nil {
		return nil, err
	}
	there := map[string]bool{}
	for _, e := range ents {
		there[e.Key[strings.LastIndexByte(e.Key, '/')+1:]] = true
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []string
	for p := range r.packs {
		if !there[p] {
			out = append(out, packKey(p))
		}
	}
	sort.Strings(out)
	return out, nil
}

// DropPack removes a damaged pack from the remote: its index first (so its
// objects are no longer listed and a push uploads them again), then the
// pack. key is the pack's key (packs/xx/NAME).
func (r *Remote) DropPack(ctx context.Context, key string) error {
	name := key[strings.LastIndexByte(key, '/')+1:]
	if !strings.HasPrefix(key, packPrefix) || !validName(name) {
		return fmt.Errorf("%q is not a pack", key)
	}
	if err := r.be.Delete(ctx, indexPrefix+name); err != nil {
		return err
	}
	r.mu.Lock()
	delete(r.packs, name)
	delete(r.ixs, name)
	r.dirty = true
	for k, l := range r.index {
		if l.pack == name {
			delete(r.index, k)
		}
	}
	r.mu.Unlock()
	return r.be.Delete(ctx, key)
}

const sessionPrefix = "sessions/"

func (r *Remote) sessionKey(id string) string {
	if r.seal != nil {
		return sessionPrefix + r.seal.name("session:"+id)
	}
	s := sha256.Sum256([]byte(id))
	return sessionPrefix + hex.EncodeToString(s[:])
}

// PutSession stores a session document (compressed, sealed when the
// remote is encrypted) under a key derived from its id.
func (r *Remote) PutSession(ctx context.Context, id string, plain []byte) error {
	_, err := r.be.Put(ctx, r.sessionKey(id), r.encode(plain), Cond{})
	return err
}

// Sessions returns every session document of the remote.
func (r *Remote) Sessions(ctx context.Context) ([][]byte, error) {
	ents, err := r.be.List(ctx, sessionPrefix)
	if err != nil {
		return nil, err
	}
	out := make([][]byte, len(ents))
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(8)
	for i, e := range ents {
		g.Go(func() error {
			data, _, err := r.be.Get(gctx, e.Key)
			if errors.Is(err, ErrNotExist) {
				return nil
			}
			if err != nil {
				return err
			}
			if out[i], err = r.decode(data, docLimit); err != nil {
				return &CorruptError{Remote: r.be.String(), Key: e.Key, Detail: err.Error()}
			}
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		return nil, err
	}
	docs := out[:0]
	for _, d := range out {
		if d != nil {
			docs = append(docs, d)
		}
	}
	return docs, nil
}

// Mark is a pack a gc marked for deletion, and when.
type Mark struct {
	Pack string    `json:"pack"`
	Time time.Time `json:"time"`
}

func (r *Remote) loadMarks(ctx context.Context) error {
	ents, err := r.be.List(ctx, gcPrefix)
	if err != nil {
		return err
	}
	marks := map[string]time.Time{}
	for _, e := range ents {
		name := strings.TrimPrefix(e.Key, gcPrefix)
		if !validName(name) {
			continue
		}
		t := e.ModTime
		if data, _, err := r.be.Get(ctx, e.Key); err == nil {
			var m Mark
			if json.Unmarshal(data, &m) == nil && !m.Time.IsZero() {
				t = m.Time
			}
		}
		marks[name] = t
	}
	r.mu.Lock()
	r.marked = marks
	r.mu.Unlock()
	return nil
}

// Marks returns the packs marked for deletion.
func (r *Remote) Marks() map[string]time.Time {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make(map[string]time.Time, len(r.marked))
	for k, v := range r.marked {
		out[k] = v
	}
	return out
}

// MarkPack marks a pack for deletion at now.
func (r *Remote) MarkPack(ctx context.Context, name string, now time.Time) error {
	data, _ := json.Marshal(Mark{Pack: name, Time: now.UTC()})
	if _, err := r.be.Put(ctx, gcPrefix+name, data, Cond{}); err != nil {
		return err
	}
	r.mu.Lock()
	r.marked[name] = now
	r.mu.Unlock()
	return nil
}

// UnmarkPack takes a pack's mark back (a ref reaches it again).
func (r *Remote) UnmarkPack(ctx context.Context, name string) error {
	if err := r.be.Delete(ctx, gcPrefix+name); err != nil {
		return err
	}
	r.mu.Lock()
	delete(r.marked, name)
	r.mu.Unlock()
	return nil
}

// PackObjects returns the objects an index lists in a pack.
func (r *Remote) PackObjects(name string) []ObjKey {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []ObjKey
	for k, l := range r.index {
		if l.pack == name {
			out = append(out, k)
		}
	}
	return out
}

// PackSizes returns the size of every pack on the remote.
func (r *Remote) PackSizes(ctx context.Context) (map[string]Entry, error) {
	ents, err := r.be.List(ctx, packPrefix)
	if err != nil {
		return nil, err
	}
	out := map[string]Entry{}
	for _, e := range ents {
		out[e.Key[strings.LastIndexByte(e.Key, '/')+1:]] = e
	}
	return out, nil
}

// DeleteUnindexedPack removes a pack no index lists.
func (r *Remote) DeleteUnindexedPack(ctx context.Context, key string) error {
	return r.be.Delete(ctx, key)
}

// DeletePack removes a marked pack: its index, the pack, then the mark.
func (r *Remote) DeletePack(ctx context.Context, name string) error {
	if err := r.DropPack(ctx, packKey(name)); err != nil {
		return err
	}
	return r.UnmarkPack(ctx, name)
}

// HasIndex reports whether pack name has an index on the remote now.
func (r *Remote) HasIndex(ctx context.Context, name string) (bool, error) {
	ents, err := r.be.List(ctx, indexPrefix+name)
	if err != nil {
		return false, err
	}
	for _, e := range ents {
		if e.Key == indexPrefix+name {
			return true, nil
		}
	}
	return false, nil
}
