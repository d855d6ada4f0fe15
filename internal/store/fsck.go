package store

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/seed1cedbf7c/ckpt/internal/failpoint"
	"github.com/seed1cedbf7c/ckpt/internal/object"
)

// Fsck verifies every object and reference in the database, as of one
// moment: it reads in one read transaction, so saves, gc and other writers
// committing while it runs never make a healthy store look corrupt (their
// changes are not seen, and are checked by the next fsck).
func (s *SQLite) Fsck(ctx context.Context, report func(Problem), progress func(done, total int64)) (int64, error) {
	v, end, err := s.snapshot(ctx)
	if err != nil {
		return 0, err
	}
	defer end()
	return v.fsck(ctx, report, progress)
}

func (s *SQLite) fsck(ctx context.Context, report func(Problem), progress func(done, total int64)) (int64, error) {
	var total int64
	for _, t := range []string{"blobs", "chunks", "trees", "checkpoints"} {
		var n int64
		if err := s.reader().QueryRowContext(ctx, `SELECT count(*) FROM `+t).Scan(&n); err != nil {
			return 0, s.wrap("fsck", err)
		}
		total += n
	}
	// SQLite's own structure first.
	rows, err := s.reader().QueryContext(ctx, `PRAGMA quick_check`)
	if err != nil {
		return 0, s.wrap("fsck", err)
	}
	for rows.Next() {
		var msg string
		rows.Scan(&msg)
		if msg != "ok" {
			report(Problem{Kind: "database", Detail: msg})
		}
	}
	rows.Close()

	var done int64
	tick := func() {
		done++
		if progress != nil && done%256 == 0 {
			progress(done, total)
		}
	}
	chunks := map[object.ID]int64{}
	blobs := map[object.ID]bool{}
	trees := map[object.ID]bool{}
	cps := map[object.ID]bool{}

	// Chunks.
	err = s.each(ctx, `SELECT id, size, enc, data FROM chunks`, func(id object.ID, size int64, enc int, data []byte) {
		tick()
		chunks[id] = size
		out, err := decompress(enc, data, size)
		if err != nil || int64(len(out)) != size || sum(out) != id {
			report(Problem{Kind: "chunk", ID: id, Detail: "content does not match its hash"})
			chunks[id] = -1
		}
	})
	if err != nil {
		return done, err
	}
	if err := failpoint.Hit("fsck/between", "chunks"); err != nil {
		return done, err
	}
	// Blobs.
	err = s.each(ctx, `SELECT id, size, enc, data FROM blobs`, func(id object.ID, size int64, enc int, data []byte) {
		tick()
		blobs[id] = true
		if enc == encChunked {
			ids, sizes, err := decodeChunkList(data)
			if err != nil {
				report(Problem{Kind: "blob", ID: id, Detail: err.Error()})
				return
			}
			var n int64
			for i, c := range ids {
				if sz, ok := chunks[c]; !ok {
					report(Problem{Kind: "blob", ID: id, Detail: "missing chunk " + c.String()})
					return
				} else if sz == -1 {
					return // reported as a corrupt chunk
				} else if sz != sizes[i] {
					report(Problem{Kind: "blob", ID: id, Detail: "chunk size mismatch for " + c.String()})
					return
				}
				n += sizes[i]
			}
			if n != size {
				report(Problem{Kind: "blob", ID: id, Detail: "chunk sizes do not add up"})
				return
			}
			// Whole-content hash.
			r, _, err := s.OpenBlob(ctx, id)
			if err == nil {
				buf := make([]byte, 1<<20)
				for {
					_, err = r.Read(buf)
					if err != nil {
						break
					}
				}
				if !errors.Is(err, io.EOF) {
					report(Problem{Kind: "blob", ID: id, Detail: err.Error()})
					return
				}
			}
			return
		}
		if enc == encDelta {
			if _, _, err := s.rawContent(ctx, "blobs", id, 0); err != nil {
				report(Problem{Kind: "blob", ID: id, Detail: problemDetail(err)})
			}
			return
		}
		out, err := decompress(enc, data, size)
		if err != nil || int64(len(out)) != size || sum(out) != id {
			report(Problem{Kind: "blob", ID: id, Detail: "content does not match its hash"})
		}
	})
	if err != nil {
		return done, err
	}
	if err := failpoint.Hit("fsck/between", "blobs"); err != nil {
		return done, err
	}
	// Trees: verify, then check references once all trees are known.
	type pending struct {
		id object.ID
		t  *object.Tree
	}
	var all []pending
	err = s.each(ctx, `SELECT id, -1, enc, data FROM trees`, func(id object.ID, _ int64, enc int, data []byte) {
		tick()
		trees[id] = true
		var t *object.Tree
		var err error
		if enc == encDelta {
			t, err = s.ReadTree(ctx, id)
		} else {
			t, err = decodeTree(id, enc, data)
		}
		if err != nil {
			report(Problem{Kind: "tree", ID: id, Detail: problemDetail(err)})
			return
		}
		all = append(all, pending{id, t})
	})
	if err != nil {
		return done, err
	}
	for _, p := range all {
		checkTreeRefs(p.id, p.t, blobs, trees, report)
	}
	all = nil
	if err := failpoint.Hit("fsck/between", "trees"); err != nil {
		return done, err
	}
	// Checkpoints.
	rows, err = s.reader().QueryContext(ctx, `SELECT `+cpCols+` FROM checkpoints`)
	if err != nil {
		return done, s.wrap("fsck", err)
	}
	var recs []*Record
	for rows.Next() {
		tick()
		r, err := s.scanRecord(rows)
		if err != nil {
			if ce, ok := err.(*CorruptError); ok {
				report(Problem{Kind: "checkpoint", ID: ce.ID, Detail: ce.Detail})
				continue
			}
			rows.Close()
			return done, s.wrap("fsck", err)
		}
		cps[r.ID] = true
		recs = append(recs, r)
	}
	rows.Close()
	for _, r := range recs {
		if !trees[r.Tree] && r.Tree != object.EmptyTree {
			report(Problem{Kind: "checkpoint", ID: r.ID, Detail: "missing tree " + r.Tree.String()})
		}
		for _, p := range r.Parents {
			if !cps[p] {
				if pruned, _ := s.Pruned(ctx, p); pruned {
					continue // history gc removed
				}
				report(Problem{Kind: "checkpoint", ID: r.ID, Detail: "missing parent " + p.String()})
			}
		}
	}
	if err := failpoint.Hit("fsck/between", "checkpoints"); err != nil {
		return done, err
	}
	// Refs and ops.
	refs, err := s.Refs(ctx, "")
	if err != nil {
		return done, err
	}
	if err := failpoint.Hit("fsck/between", "refs"); err != nil {
		return done, err
	}
	for _, r := range refs {
		if !cps[r.ID] {
			report(Problem{Kind: "ref", Name: r.Name, ID: r.ID, Detail: "points to a missing checkpoint"})
		}
	}
	ops, err := s.Ops(ctx, 0)
	if err != nil {
		return done, err
	}
	for _, op := range ops {
		for _, id := range []object.ID{op.Before, op.After, op.Checkpoint} {
			if !id.IsZero() && !cps[id] && !op.Expired() {
				if pruned, _ := s.Pruned(ctx, id); pruned {
					continue // removed by gc; the op stays as a record
				}
				report(Problem{Kind: "op", Name: fmt.Sprintf("#%d %s", op.Seq, op.Kind), ID: id, Detail: "refers to a missing checkpoint"})
			}
		}
	}
	if progress != nil {
		progress(done, total)
	}
	return done, nil
}

func problemDetail(err error) string {
	var ce *CorruptError
	if errors.As(err, &ce) {
		return ce.Detail
	}
	return err.Error()
}

// Expired reports whether the op refers to checkpoints that retention has
// since removed (marked by gc in Detail); such ops are kept for the record.
func (op Op) Expired() bool { return op.Detail == "expired" }

func checkTreeRefs(id object.ID, t *object.Tree, blobs, trees map[object.ID]bool, report func(Problem)) {
	for _, e := range t.Entries {
		switch {
		case object.IsDir(e.Mode):
			if !trees[e.ID] && e.ID != object.EmptyTree {
				report(Problem{Kind: "tree", ID: id, Detail: fmt.Sprintf("entry %q: missing tree %s", e.Name, e.ID)})
			}
		default:
			if !blobs[e.ID] {
				report(Problem{Kind: "tree", ID: id, Detail: fmt.Sprintf("entry %q: missing blob %s", e.Name, e.ID)})
			}
		}
	}
}

func (s *SQLite) each(ctx context.Context, q string, fn func(id object.ID, size int64, enc int, data []byte)) error {
	rows, err := s.reader().QueryContext(ctx, q)
	if err != nil {
		return s.wrap("fsck", err)
	}
	defer rows.Close()
	for rows.Next() {
		var (
			idb  []byte
			size int64
			enc  int
			data []byte
		)
		if err := rows.Scan(&idb, &size, &enc, &data); err != nil {
			return s.wrap("fsck", err)
		}
		var id object.ID
		copy(id[:], idb)
		if len(idb) != 32 {
			continue
		}
		fn(id, size, enc, data)
	}
	return s.wrap("fsck", rows.Err())
}
