package store

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/seed1cedbf7c/ckpt/internal/object"
)

func openTest(t *testing.T) *SQLite {
	t.Helper()
	s, err := OpenSQLite(context.Background(), t.TempDir(), "/ws")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// openAgain opens a second handle of s's database, as another process
// would (its own connections), closed when the test ends.
func openAgain(t *testing.T, s *SQLite) *SQLite {
	t.Helper()
	other, err := OpenSQLite(context.Background(), s.Dir(), "/ws")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { other.Close() })
	return other
}

func backends(t *testing.T) map[string]Store {
	return map[string]Store{"sqlite": openTest(t), "memory": NewMemory("/ws")}
}

func randBytes(r *rand.Rand, n int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(r.UintN(256))
	}
	return b
}

func putBlob(t *testing.T, s Store, data []byte) object.ID {
	t.Helper()
	id := object.Sum(data)
	err := s.Update(context.Background(), func(tx Tx) error {
		if len(data) >= ChunkThreshold {
			w := tx.NewBlobWriter()
			w.Write(data)
			return w.Commit(id)
		}
		return tx.PutBlob(id, data)
	})
	if err != nil {
		t.Fatal(err)
	}
	return id
}

func TestBlobRoundTrip(t *testing.T) {
	ctx := context.Background()
	r := rand.New(rand.NewPCG(1, 1))
	for name, s := range backends(t) {
		t.Run(name, func(t *testing.T) {
			// The empty blob, as nil and as an empty slice.
			for _, empty := range [][]byte{nil, {}} {
				id := putBlob(t, s, empty)
				if got, err := s.ReadBlob(ctx, id); err != nil || len(got) != 0 {
					t.Fatalf("empty blob: %q, %v", got, err)
				}
			}
			for _, n := range []int{0, 1, 63, 64, 1000, 100 << 10, ChunkThreshold, ChunkThreshold*3 + 12345} {
				data := randBytes(r, n)
				if n%2 == 0 {
					data = bytes.Repeat([]byte("compressible "), n/13+1)[:n]
				}
				id := putBlob(t, s, data)
				got, err := s.ReadBlob(ctx, id)
				if err != nil || !bytes.Equal(got, data) {
					t.Fatalf("size %d: ReadBlob = %d bytes, %v", n, len(got), err)
				}
				rc, size, err := s.OpenBlob(ctx, id)
				if err != nil || size != int64(n) {
					t.Fatalf("size %d: OpenBlob: %d %v", n, size, err)
				}
				streamed, err := io.ReadAll(rc)
				if err != nil || !bytes.Equal(streamed, data) {
					t.Fatalf("size %d: streamed %d bytes, %v", n, len(streamed), err)
				}
			}
		})
	}
}

// A small edit in the middle of a large file stores only the chunks around it.
func TestChunkingStoresLittle(t *testing.T) {
	s := openTest(t)
	r := rand.New(rand.NewPCG(2, 2))
	data := randBytes(r, 24<<20)
	putBlob(t, s, data)
	before, _ := s.Info(context.Background())
	s.db.Exec(`PRAGMA wal_checkpoint(TRUNCATE)`)
	var chunksBefore int
	s.db.QueryRow(`SELECT count(*) FROM chunks`).Scan(&chunksBefore)
	edited := bytes.Clone(data)
	copy(edited[12<<20:], []byte("a small edit in the middle"))
	putBlob(t, s, edited)
	var chunksAfter int
	var newBytes int64
	s.db.QueryRow(`SELECT count(*) FROM chunks`).Scan(&chunksAfter)
	s.db.QueryRow(`SELECT sum(length(data)) FROM chunks WHERE rowid > (SELECT max(rowid) FROM chunks) - ?`, chunksAfter-chunksBefore).Scan(&newBytes)
	if added := chunksAfter - chunksBefore; added < 1 || added > 3 {
		t.Fatalf("edit added %d chunks (of %d), want 1-3", added, chunksBefore)
	}
	if newBytes > 9<<20 {
		t.Fatalf("edit stored %d new bytes, want a few MiB at most", newBytes)
	}
	_ = before
}

func TestCorruptionDetectedOnRead(t *testing.T) {
	ctx := context.Background()
	s := openTest(t)
	r := rand.New(rand.NewPCG(3, 3))
	small := []byte("a small blob that is stored raw")
	comp := bytes.Repeat([]byte("zstd compressed content "), 100)
	big := randBytes(r, ChunkThreshold+1000)
	ids := []object.ID{putBlob(t, s, small), putBlob(t, s, comp), putBlob(t, s, big)}
	tr := object.Tree{Entries: []object.Entry{{Name: "f", Mode: object.ModeFile | 0o644, Size: int64(len(small)), ID: ids[0]}}}
	tid := object.Sum(tr.Encode())
	var cpID object.ID
	s.Update(ctx, func(tx Tx) error {
		tx.PutTree(tid, tr.Encode())
		var err error
		cpID, err = tx.PutCheckpoint(&object.Checkpoint{Tree: tid, Time: time.Unix(1, 0), Kind: "manual"}, Stats{})
		return err
	})
	flip := func(table string, id object.ID) {
		t.Helper()
		var data []byte
		if err := s.db.QueryRow(`SELECT data FROM `+table+` WHERE id=?`, id[:]).Scan(&data); err != nil {
			t.Fatal(err)
		}
		data[len(data)/2] ^= 0x10
		if _, err := s.db.Exec(`UPDATE `+table+` SET data=? WHERE id=?`, data, id[:]); err != nil {
			t.Fatal(err)
		}
	}
	check := func(what string, err error, want object.ID) {
		t.Helper()
		var ce *CorruptError
		if !errors.As(err, &ce) || !errors.Is(err, ErrCorrupt) {
			t.Fatalf("%s: got %v, want a CorruptError", what, err)
		}
		if !want.IsZero() && ce.ID != want {
			t.Fatalf("%s: error names %s, want %s", what, ce.ID, want)
		}
	}
	flip("blobs", ids[0])
	_, err := s.ReadBlob(ctx, ids[0])
	check("raw blob", err, ids[0])
	flip("blobs", ids[1])
	_, err = s.ReadBlob(ctx, ids[1])
	check("compressed blob", err, ids[1])
	// Corrupt one chunk of the chunked blob.
	var cid []byte
	s.db.QueryRow(`SELECT id FROM chunks LIMIT 1`).Scan(&cid)
	flip("chunks", object.ID(cid))
	_, err = s.ReadBlob(ctx, ids[2])
	check("chunked blob", err, ids[2])
	rc, _, err := s.OpenBlob(ctx, ids[2])
	if err == nil {
		_, err = io.ReadAll(rc)
	}
	check("streamed chunked blob", err, ids[2])
	flip("trees", tid)
	_, err = s.ReadTree(ctx, tid)
	check("tree", err, tid)
	flip("checkpoints", cpID)
	_, err = s.Checkpoint(ctx, cpID)
	check("checkpoint", err, cpID)
	// fsck reports each, once.
	var probs []Problem
	if _, err := s.Fsck(ctx, func(p Problem) { probs = append(probs, p) }, nil); err != nil {
		t.Fatal(err)
	}
	kinds := map[string]int{}
	for _, p := range probs {
		kinds[p.Kind]++
	}
	if kinds["blob"] != 2 || kinds["chunk"] != 1 || kinds["tree"] != 1 || kinds["checkpoint"] != 1 {
		t.Fatalf("fsck problems: %v", probs)
	}
}

func TestFindCheckpointsByPrefix(t *testing.T) {
	ctx := context.Background()
	for name, s := range backends(t) {
		t.Run(name, func(t *testing.T) {
			var ids []object.ID
			s.Update(ctx, func(tx Tx) error {
				for i := 0; i < 300; i++ {
					id, _ := tx.PutCheckpoint(&object.Checkpoint{Tree: object.EmptyTree, Time: time.Unix(int64(i), 0), Kind: "manual"}, Stats{})
					ids = append(ids, id)
				}
				return nil
			})
			for _, id := range ids {
				for _, n := range []int{4, 5, 12, 64} {
					got, err := s.FindCheckpoints(ctx, id.String()[:n], 10)
					if err != nil {
						t.Fatal(err)
					}
					found := false
					for _, g := range got {
						found = found || g == id
					}
					if !found {
						t.Fatalf("prefix %s did not find %s (got %v)", id.String()[:n], id, got)
					}
				}
			}
			if got, _ := s.FindCheckpoints(ctx, "fffffffffffff", 10); len(got) > 1 {
				t.Fatalf("unexpected %v", got)
			}
		})
	}
}

// TestCheckpointsBeforeSeq: pages cut by BeforeSeq, with and without a
// kind, walk the whole history newest first, each checkpoint once.
func TestCheckpointsBeforeSeq(t *testing.T) {
	ctx := context.Background()
	for name, s := range backends(t) {
		t.Run(name, func(t *testing.T) {
			var want []object.ID // newest first
			err := s.Update(ctx, func(tx Tx) error {
				for i := range 25 {
					kind := "manual"
					if i%3 == 0 {
						kind = "turn"
					}
					id, err := tx.PutCheckpoint(&object.Checkpoint{Tree: object.EmptyTree, Time: time.Unix(int64(i), 0), Kind: kind}, Stats{})
					if err != nil {
						return err
					}
					want = append([]object.ID{id}, want...)
				}
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
			for _, kind := range []string{"", "turn"} {
				var got []object.ID
				var before int64
				for {
					page, err := s.Checkpoints(ctx, ListFilter{Limit: 4, Kind: kind, BeforeSeq: before})
					if err != nil {
						t.Fatal(err)
					}
					for _, r := range page {
						if kind != "" && r.Kind != kind || before > 0 && r.Seq >= before {
							t.Fatalf("kind %q before %d: got %s (%s, seq %d)", kind, before, r.ID, r.Kind, r.Seq)
						}
						got = append(got, r.ID)
					}
					if len(page) < 4 {
						break
					}
					before = page[len(page)-1].Seq
				}
				all, err := s.Checkpoints(ctx, ListFilter{Kind: kind})
				if err != nil {
					t.Fatal(err)
				}
				if len(got) != len(all) || kind == "" && len(all) != len(want) {
					t.Fatalf("kind %q: %d paged, %d listed, %d stored", kind, len(got), len(all), len(want))
				}
				for i := range all {
					if got[i] != all[i].ID {
						t.Fatalf("kind %q: page order differs at %d", kind, i)
					}
				}
			}
		})
	}
}

func TestPrefixRange(t *testing.T) {
	for _, c := range []struct{ p, lo, hi string }{
		{"ab", "ab", "ac"}, {"abc", "abc0", "abd0"}, {"af", "af", "b0"}, {"ff", "ff", ""}, {"fff", "fff0", ""}, {"0f", "0f", "10"},
	} {
		lo, hi, ok := prefixRange(c.p)
		if !ok || hexs(lo) != c.lo || hexs(hi) != c.hi {
			t.Errorf("prefixRange(%q) = %x, %x; want %s, %s", c.p, lo, hi, c.lo, c.hi)
		}
	}
	if _, _, ok := prefixRange("xyz"); ok {
		t.Error("non-hex prefix accepted")
	}
}

func hexs(b []byte) string {
	const h = "0123456789abcdef"
	var out []byte
	for _, c := range b {
		out = append(out, h[c>>4], h[c&15])
	}
	return string(out)
}

func TestLockSerializesAndTimesOut(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	a, err := OpenSQLite(ctx, dir, "/ws")
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	b, err := OpenSQLite(ctx, dir, "/ws")
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	unlock, err := a.Lock(ctx, time.Second, nil)
	if err != nil {
		t.Fatal(err)
	}
	waited := ""
	_, err = b.Lock(ctx, 300*time.Millisecond, func(h string) { waited = h })
	var le *LockedError
	if !errors.As(err, &le) || !errors.Is(err, ErrLocked) {
		t.Fatalf("got %v, want a LockedError", err)
	}
	if waited == "" {
		t.Error("waiting callback not called")
	}
	var mu sync.Mutex
	got := false
	go func() {
		time.Sleep(100 * time.Millisecond)
		mu.Lock()
		got = true
		mu.Unlock()
		unlock()
	}()
	unlock2, err := b.Lock(ctx, 5*time.Second, nil)
	if err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	if !got {
		t.Fatal("second lock acquired while the first was held")
	}
	mu.Unlock()
	unlock2()
}

func TestWorkspaceMismatch(t *testing.T) {
	dir := t.TempDir()
	s, err := OpenSQLite(context.Background(), dir, "/one")
	if err != nil {
		t.Fatal(err)
	}
	s.Close()
	_, err = OpenSQLite(context.Background(), dir, "/two")
	var we *WorkspaceMismatchError
	if !errors.As(err, &we) {
		t.Fatalf("got %v", err)
	}
	if RecordedWorkspace(dir) != "/one" {
		t.Fatal("RecordedWorkspace")
	}
	if RecordedWorkspace(filepath.Join(dir, "none")) != "" {
		t.Fatal("RecordedWorkspace of nothing")
	}
}

func TestChunkBoundariesStable(t *testing.T) {
	r := rand.New(rand.NewPCG(9, 9))
	data := randBytes(r, 20<<20)
	cut := func(d []byte) []int {
		var out []int
		for len(d) > 0 {
			n := chunkBoundary(d, true)
			out = append(out, n)
			d = d[n:]
		}
		return out
	}
	a := cut(data)
	for _, n := range a[:len(a)-1] {
		if n < chunkMin || n > chunkMax {
			t.Fatalf("chunk size %d out of range", n)
		}
	}
	// Inserting bytes at the front shifts, but boundaries resynchronize.
	b := cut(append([]byte("prefix"), data...))
	same := 0
	for i := 1; i < len(a) && i < len(b); i++ {
		if a[len(a)-i] == b[len(b)-i] {
			same++
		}
	}
	if same < len(a)/2 {
		t.Fatalf("only %d of %d chunks survived an insertion", same, len(a))
	}
}

// Edited versions of a file are stored as small deltas, read back exactly,
// chains stay bounded, and a corrupt base is reported through its deltas.
func TestDeltas(t *testing.T) {
	ctx := context.Background()
	s := openTest(t)
	r := rand.New(rand.NewPCG(4, 4))
	var lines []string
	for i := 0; i < 200; i++ {
		lines = append(lines, fmt.Sprintf("line %d: %x\n", i, r.Uint64()))
	}
	version := func(v int) []byte {
		ls := append([]string(nil), lines...)
		for k := 0; k <= v; k++ {
			ls[(k*37)%len(ls)] = fmt.Sprintf("edited in version %d (%d)\n", v, k)
		}
		return []byte(strings.Join(ls, ""))
	}
	var ids []object.ID
	base := object.ZeroID
	for v := 0; v < 25; v++ {
		data := version(v)
		id := object.Sum(data)
		if err := s.Update(ctx, func(tx Tx) error { return tx.PutBlobFrom(id, data, base) }); err != nil {
			t.Fatal(err)
		}
		ids = append(ids, id)
		base = id
	}
	var deltas, maxDepth int
	var deltaBytes, fullBytes int64
	rows, _ := s.db.Query(`SELECT enc, depth, length(data) FROM blobs`)
	for rows.Next() {
		var enc, depth int
		var n int64
		rows.Scan(&enc, &depth, &n)
		if enc == encDelta {
			deltas++
			deltaBytes += n
		} else {
			fullBytes += n
		}
		maxDepth = max(maxDepth, depth)
	}
	rows.Close()
	if deltas < 20 || maxDepth > maxDeltaDepth {
		t.Fatalf("%d deltas, max depth %d", deltas, maxDepth)
	}
	if deltaBytes/int64(deltas) > fullBytes/int64(25-deltas)/5 {
		t.Fatalf("deltas average %d bytes vs %d for full versions: not small", deltaBytes/int64(deltas), fullBytes/int64(25-deltas))
	}
	for v, id := range ids {
		got, err := s.ReadBlob(ctx, id)
		if err != nil || !bytes.Equal(got, version(v)) {
			t.Fatalf("version %d: %v", v, err)
		}
	}
	if _, err := s.Fsck(ctx, func(p Problem) { t.Errorf("fsck: %v", p) }, nil); err != nil {
		t.Fatal(err)
	}
	// Corrupt the first version: every delta that depends on it fails to
	// read, as corrupt, naming the object read.
	var data []byte
	s.db.QueryRow(`SELECT data FROM blobs WHERE id=?`, ids[0][:]).Scan(&data)
	data[len(data)/2] ^= 1
	s.db.Exec(`UPDATE blobs SET data=? WHERE id=?`, data, ids[0][:])
	_, err := s.ReadBlob(ctx, ids[1])
	var ce *CorruptError
	if !errors.As(err, &ce) || ce.ID != ids[1] {
		t.Fatalf("reading a delta of a corrupt base: %v", err)
	}
	n := 0
	s.Fsck(ctx, func(p Problem) { n++ }, nil)
	if n < 2 {
		t.Fatalf("fsck found %d problems, want the base and its dependents", n)
	}
}

// manyEntries returns n file entries of a directory, in order.
func manyEntries(n int) []object.Entry {
	var es []object.Entry
	for i := 0; i < n; i++ {
		es = append(es, object.Entry{Name: fmt.Sprintf("file%04d.go", i), Mode: object.ModeFile | 0o644, Size: int64(i), ID: object.Sum([]byte{byte(i), byte(i >> 8)})})
	}
	return es
}

func TestTreeDeltas(t *testing.T) {
	ctx := context.Background()
	s := openTest(t)
	es := manyEntries(300)
	t1 := &object.Tree{Entries: es}
	es2 := append([]object.Entry(nil), es...)
	es2[150].ID = object.Sum([]byte("changed"))
	t2 := &object.Tree{Entries: es2}
	d1, d2 := t1.Encode(), t2.Encode()
	id1, id2 := object.Sum(d1), object.Sum(d2)
	s.Update(ctx, func(tx Tx) error { return tx.PutTree(id1, d1) })
	s.Update(ctx, func(tx Tx) error { return tx.PutTreeFrom(id2, d2, id1) })
	var enc int
	var n int
	s.db.QueryRow(`SELECT enc, length(data) FROM trees WHERE id=?`, id2[:]).Scan(&enc, &n)
	if enc != encDelta || n > 200 {
		t.Fatalf("changed tree stored with encoding %d, %d bytes", enc, n)
	}
	got, err := s.ReadTree(ctx, id2)
	if err != nil || got.Entries[150].ID != es2[150].ID {
		t.Fatalf("read back: %v", err)
	}
	// A tree read inside a transaction follows its delta too.
	s.Update(ctx, func(tx Tx) error {
		tr, err := tx.ReadTree(id2)
		if err != nil || len(tr.Entries) != 300 {
			t.Fatalf("tx read: %v", err)
		}
		return nil
	})
}

// A directory back to an earlier state puts a tree the store holds, with
// the version it replaced as base (a scan no longer looks a changed
// directory's tree up first): the stored row stays as it was, so no delta
// chain can loop back on itself.
func TestPutTreeAgainKeepsItsRow(t *testing.T) {
	ctx := context.Background()
	s := openTest(t)
	es := manyEntries(300)
	d1 := (&object.Tree{Entries: es}).Encode()
	es[150].ID = object.Sum([]byte("changed"))
	d2 := (&object.Tree{Entries: es}).Encode()
	id1, id2 := object.Sum(d1), object.Sum(d2)
	row := func(id object.ID) (enc int, data []byte) {
		t.Helper()
		if err := s.db.QueryRow(`SELECT enc, data FROM trees WHERE id=?`, id[:]).Scan(&enc, &data); err != nil {
			t.Fatal(err)
		}
		return enc, data
	}
	for _, put := range []func(tx Tx) error{
		func(tx Tx) error { return tx.PutTree(id1, d1) },
		func(tx Tx) error { return tx.PutTreeFrom(id2, d2, id1) },
	} {
		if err := s.Update(ctx, put); err != nil {
			t.Fatal(err)
		}
	}
	enc1, data1 := row(id1)
	if enc, _ := row(id2); enc != encDelta {
		t.Fatalf("the second version is stored with encoding %d, want a delta", enc)
	}
	// Back to the first version, twice: in its own transaction, and in one
	// that also stores the second again.
	for _, put := range []func(tx Tx) error{
		func(tx Tx) error { return tx.PutTreeFrom(id1, d1, id2) },
		func(tx Tx) error {
			if err := tx.PutTreeFrom(id2, d2, id1); err != nil {
				return err
			}
			return tx.PutTreeFrom(id1, d1, id2)
		},
	} {
		if err := s.Update(ctx, put); err != nil {
			t.Fatal(err)
		}
		if enc, data := row(id1); enc != enc1 || !bytes.Equal(data, data1) {
			t.Fatalf("putting a stored tree again changed its row (encoding %d, was %d)", enc, enc1)
		}
	}
	for _, id := range []object.ID{id1, id2} {
		if _, err := s.ReadTree(ctx, id); err != nil {
			t.Fatalf("read %s: %v", id, err)
		}
	}
}

// A version given a base it shares nothing with is stored on its own, not
// as a delta no smaller than the data; one close to its base is a delta.
func TestDeltaOnlyWhenSmaller(t *testing.T) {
	ctx := context.Background()
	s := openTest(t)
	r := rand.New(rand.NewPCG(7, 7))
	random := func(n int) []byte {
		b := make([]byte, n)
		for i := range b {
			b[i] = byte(r.Uint32())
		}
		return b
	}
	base, other := random(8192), random(8192)
	near := append(append([]byte(nil), base[:4000]...), append([]byte("edit"), base[4004:]...)...)
	ib, io, in := object.Sum(base), object.Sum(other), object.Sum(near)
	for _, put := range []func(tx Tx) error{
		func(tx Tx) error { return tx.PutBlob(ib, base) },
		func(tx Tx) error { return tx.PutBlobFrom(io, other, ib) },
		func(tx Tx) error { return tx.PutBlobFrom(in, near, ib) },
	} {
		if err := s.Update(ctx, put); err != nil {
			t.Fatal(err)
		}
	}
	for _, c := range []struct {
		id    object.ID
		data  []byte
		delta bool
	}{{io, other, false}, {in, near, true}} {
		var enc, n int
		s.db.QueryRow(`SELECT enc, length(data) FROM blobs WHERE id=?`, c.id[:]).Scan(&enc, &n)
		if (enc == encDelta) != c.delta || n > len(c.data)+64 {
			t.Errorf("stored with encoding %d, %d bytes (delta wanted: %v)", enc, n, c.delta)
		}
		got, err := s.ReadBlob(ctx, c.id)
		if err != nil || !bytes.Equal(got, c.data) {
			t.Fatalf("read back: %v", err)
		}
	}
}

// A cancelled context still stops a transaction and a lookup, though the
// store runs their statements without one (see queryRow): the
// transaction commits nothing and says why, and a lookup asked with it
// fails.
func TestCancelledContextStopsTheStore(t *testing.T) {
	s := openTest(t)
	ctx, cancel := context.WithCancel(context.Background())
	blob := func(i int) ([]byte, object.ID) {
		b := []byte(fmt.Sprintf("blob %d of a cancelled transaction\n", i))
		return b, object.Sum(b)
	}
	err := s.Update(ctx, func(tx Tx) error {
		for i := 0; i < 200; i++ {
			if i == 100 {
				cancel()
			}
			b, id := blob(i)
			if err := tx.PutBlob(id, b); err != nil {
				return err
			}
		}
		return nil
	})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("a cancelled transaction returned %v, want context.Canceled", err)
	}
	for i := 0; i < 200; i++ {
		_, id := blob(i)
		if ok, err := s.HasBlob(context.Background(), id); err != nil || ok {
			t.Fatalf("blob %d after the cancelled transaction: stored %v, %v", i, ok, err)
		}
	}
	_, id := blob(0)
	if _, err := s.HasBlob(ctx, id); !errors.Is(err, context.Canceled) {
		t.Fatalf("a lookup with a cancelled context returned %v, want context.Canceled", err)
	}
	if _, err := s.ReadBlob(ctx, id); !errors.Is(err, context.Canceled) {
		t.Fatalf("a read with a cancelled context returned %v, want context.Canceled", err)
	}
}

// Totals adds up in SQL what Index lists object by object: the same
// counts and stored bytes, and the blobs' sizes (raw, compressed, deltas,
// chunked) as their contents' lengths.
func TestTotalsMatchIndex(t *testing.T) {
	ctx := context.Background()
	s := openTest(t)
	r := rand.New(rand.NewPCG(5, 5))
	var content int64
	add := func(data []byte) object.ID {
		content += int64(len(data))
		return putBlob(t, s, data)
	}
	add(randBytes(r, 10))                                 // raw: too small to compress
	add(bytes.Repeat([]byte("compressible line\n"), 500)) // zstd
	base := randBytes(r, 8192)
	ib := add(base)
	near := append(append([]byte(nil), base[:4000]...), append([]byte("edit"), base[4004:]...)...)
	content += int64(len(near))
	if err := s.Update(ctx, func(tx Tx) error { return tx.PutBlobFrom(object.Sum(near), near, ib) }); err != nil {
		t.Fatal(err)
	}
	add(randBytes(r, ChunkThreshold+12345)) // chunked
	add(randBytes(r, 0x300))
	tree := (&object.Tree{Entries: []object.Entry{{Name: "a", Mode: object.ModeFile | 0o644, Size: int64(len(base)), ID: ib}}}).Encode()
	tid := object.Sum(tree)
	if err := s.Update(ctx, func(tx Tx) error {
		if err := tx.PutTree(tid, tree); err != nil {
			return err
		}
		for i := 0; i < 3; i++ {
			if _, err := tx.PutCheckpoint(&object.Checkpoint{Tree: tid, Time: time.Unix(int64(i), 0), Kind: "manual", Message: strings.Repeat("m", i)}, Stats{}); err != nil {
				return err
			}
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	for _, st := range []Store{s, NewMemory("")} {
		if m, ok := st.(*Memory); ok {
			// The same objects in the memory store.
			content = 0
			for _, n := range []int{10, 200, 5000} {
				data := randBytes(r, n)
				content += int64(n)
				putBlob(t, m, data)
			}
		}
		idx, err := st.Index(ctx)
		if err != nil {
			t.Fatal(err)
		}
		got, err := st.Totals(ctx)
		if err != nil {
			t.Fatal(err)
		}
		want := Totals{Blobs: len(idx.Blobs), Trees: len(idx.Trees), Chunks: len(idx.Chunks), Checkpoints: len(idx.Checkpoints), Stored: idx.Total, Content: content}
		if *got != want {
			t.Errorf("%T: totals %+v, want %+v (from the index)", st, *got, want)
		}
		if st == Store(s) && (got.Chunks == 0 || got.Checkpoints != 3 || got.Trees != 1 || got.Blobs != 6) {
			t.Errorf("the test's store holds %+v: want 6 blobs (one chunked), a tree, 3 checkpoints", *got)
		}
	}
}
