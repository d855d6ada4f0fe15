package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/seed1cedbf7c/ckpt/internal/object"
)

// migrations are tables added after schema version 2 that older versions
// ignore (so they did not change the schema version; S2 blobs did, see
// schemaVersion).
const migrations = `
CREATE TABLE IF NOT EXISTS pruned (id BLOB PRIMARY KEY, time INTEGER NOT NULL);
` + sessionMigrations

func nowNano() int64 { return time.Now().UnixNano() }

// Totals counts the objects and adds up their sizes in SQL, in one read
// transaction: what Index would total, without holding an entry per
// object (some 200 bytes each, hundreds of megabytes at a million
// files) or reading any content.
func (s *SQLite) Totals(ctx context.Context) (*Totals, error) {
	v, end, err := s.snapshot(ctx)
	if err != nil {
		return nil, err
	}
	defer end()
	t := &Totals{}
	var blobBytes, treeBytes, chunkBytes int64
	err = v.rd.QueryRowContext(ctx, `SELECT
		(SELECT count(*) FROM blobs WHERE length(id)=32),
		(SELECT coalesce(sum(length(data)), 0) FROM blobs WHERE length(id)=32),
		(SELECT coalesce(sum(size), 0) FROM blobs WHERE length(id)=32),
		(SELECT count(*) FROM trees WHERE length(id)=32),
		(SELECT coalesce(sum(length(data)), 0) FROM trees WHERE length(id)=32),
		(SELECT count(*) FROM chunks WHERE length(id)=32),
		(SELECT coalesce(sum(length(data)), 0) FROM chunks WHERE length(id)=32)`).Scan(
		&t.Blobs, &blobBytes, &t.Content, &t.Trees, &treeBytes, &t.Chunks, &chunkBytes)
	if err != nil {
		return nil, s.wrap("count objects", err)
	}
	// As Index counts them: each object's data, its id and 16 bytes.
	t.Stored = blobBytes + treeBytes + chunkBytes + 48*int64(t.Blobs+t.Trees+t.Chunks)
	rows, err := v.rd.QueryContext(ctx, `SELECT `+cpCols+` FROM checkpoints`)
	if err != nil {
		return nil, s.wrap("count checkpoints", err)
	}
	err = s.scanRecords(rows, "count checkpoints", func(r *Record) {
		t.Checkpoints++
		t.Stored += recordStored(r)
	})
	return t, err
}

// recordStored is what a checkpoint's record takes in the store, as gc
// counts it.
func recordStored(r *Record) int64 { return int64(len(r.Encode())) + 120 }

// Index lists every stored object with its stored size, delta base and
// chunks, reading no content but chunk lists.
func (s *SQLite) Index(ctx context.Context) (*Index, error) {
	idx := &Index{Blobs: map[object.ID]ObjectInfo{}, Trees: map[object.ID]ObjectInfo{},
		Chunks: map[object.ID]int64{}, Checkpoints: map[object.ID]CheckpointInfo{}}
	scanObjects := func(table string, into map[object.ID]ObjectInfo) error {
		rows, err := s.db.QueryContext(ctx, fmt.Sprintf(`SELECT id, length(data), enc,
			CASE WHEN enc=%d THEN substr(data, 1, 32) WHEN enc=%d THEN data ELSE NULL END FROM %s`, encDelta, encChunked, table))
		if err != nil {
			return s.wrap("gc: list "+table, err)
		}
		defer rows.Close()
		for rows.Next() {
			var (
				idb   []byte
				n     int64
				enc   int
				extra []byte
			)
			if err := rows.Scan(&idb, &n, &enc, &extra); err != nil {
				return s.wrap("gc: list "+table, err)
			}
			if len(idb) != 32 {
				continue
			}
			id := object.ID(idb)
			info := ObjectInfo{Stored: n + int64(len(idb)) + 16}
			switch enc {
			case encDelta:
				if len(extra) == 32 {
					info.Base = object.ID(extra)
				}
			case encChunked:
				ids, _, err := decodeChunkList(extra)
				if err != nil {
					return &CorruptError{Kind: "blob", ID: id, Detail: err.Error()}
				}
				info.Chunks = ids
			}
			into[id] = info
			idx.Total += info.Stored
		}
		return s.wrap("gc: list "+table, rows.Err())
	}
	if err := scanObjects("blobs", idx.Blobs); err != nil {
		return nil, err
	}
	if err := scanObjects("trees", idx.Trees); err != nil {
		return nil, err
	}
	rows, err := s.db.QueryContext(ctx, `SELECT id, length(data) FROM chunks`)
	if err != nil {
		return nil, s.wrap("gc: list chunks", err)
	}
	for rows.Next() {
		var idb []byte
		var n int64
		if err := rows.Scan(&idb, &n); err != nil {
			rows.Close()
			return nil, s.wrap("gc: list chunks", err)
		}
		if len(idb) == 32 {
			idx.Chunks[object.ID(idb)] = n + 48
			idx.Total += n + 48
		}
	}
	rows.Close()
	rows, err = s.db.QueryContext(ctx, `SELECT `+cpCols+` FROM checkpoints`)
	if err != nil {
		return nil, s.wrap("gc: list checkpoints", err)
	}
	err = s.scanRecords(rows, "gc: list checkpoints", func(r *Record) {
		n := recordStored(r)
		idx.Checkpoints[r.ID] = CheckpointInfo{ID: r.ID, Seq: r.Seq, Tree: r.Tree, Stored: n, Parents: r.Parents}
		idx.Total += n
	})
	if err != nil {
		return nil, err
	}
	return idx, nil
}

// Sweep deletes what the plan lists in one transaction and records the
// deleted checkpoints as pruned.
func (s *SQLite) Sweep(ctx context.Context, p *SweepPlan) (SweepResult, error) {
	var res SweepResult
	// Full content of kept objects whose delta base goes, read before the
	// transaction (the bases are still there).
	type full struct {
		table string
		id    object.ID
		enc   int
		data  []byte
	}
	var rewrites []full
	for _, t := range []struct {
		table string
		ids   []object.ID
	}{{"trees", p.ReencodeTrees}, {"blobs", p.ReencodeBlobs}} {
		for _, id := range t.ids {
			raw, _, err := s.rawContent(ctx, t.table, id, 0)
			if err != nil {
				return res, fmt.Errorf("gc: re-encode %s %s: %w", strings.TrimSuffix(t.table, "s"), id, err)
			}
			enc, c := compressOwned(raw, false)
			rewrites = append(rewrites, full{t.table, id, enc, c})
		}
	}
	err := s.update(ctx, func(tx *sql.Tx) error {
		for _, f := range rewrites {
			if _, err := tx.ExecContext(ctx, `UPDATE `+f.table+` SET enc=?, data=?, depth=0 WHERE id=?`, f.enc, f.data, f.id[:]); err != nil {
				return err
			}
			res.Reencoded++
		}
		del := func(table string, ids []object.ID) (int, error) {
			st, err := tx.PrepareContext(ctx, `DELETE FROM `+table+` WHERE id=?`)
			if err != nil {
				return 0, err
			}
			defer st.Close()
			n := 0
			for _, id := range ids {
				r, err := st.ExecContext(ctx, id[:])
				if err != nil {
					return n, err
				}
				k, _ := r.RowsAffected()
				n += int(k)
			}
			return n, nil
		}
		var err error
		if res.Checkpoints, err = del("checkpoints", p.Checkpoints); err != nil {
			return err
		}
		now := nowNano()
		for _, id := range p.Checkpoints {
			if _, err := tx.ExecContext(ctx, `INSERT OR IGNORE INTO pruned(id, time) VALUES(?, ?)`, id[:], now); err != nil {
				return err
			}
		}
		if res.Trees, err = del("trees", p.Trees); err != nil {
			return err
		}
		if res.Blobs, err = del("blobs", p.Blobs); err != nil {
			return err
		}
		if res.Chunks, err = del("chunks", p.Chunks); err != nil {
			return err
		}
		for _, name := range p.Refs {
			r, err := tx.ExecContext(ctx, `DELETE FROM refs WHERE name=?`, name)
			if err != nil {
				return err
			}
			k, _ := r.RowsAffected()
			res.Refs += int(k)
		}
		if p.OpsBefore > 0 {
			r, err := tx.ExecContext(ctx, `DELETE FROM ops WHERE seq < ?`, p.OpsBefore)
			if err != nil {
				return err
			}
			k, _ := r.RowsAffected()
			res.Ops = int(k)
		}
		res.Bytes = p.Bytes
		return nil
	})
	if err != nil {
		return SweepResult{}, s.wrap("gc: delete", err)
	}
	return res, nil
}

// Pruned reports whether gc deleted the checkpoint.
func (s *SQLite) Pruned(ctx context.Context, id object.ID) (bool, error) {
	var one int
	err := s.reader().QueryRowContext(ctx, `SELECT 1 FROM pruned WHERE id=?`, id[:]).Scan(&one)
	if errors.Is(err, sql.ErrNoRows) {
		return false, nil
	}
	return err == nil, s.wrap("read pruned", err)
}

// Vacuum rewrites the database to give freed space back to the file system.
func (s *SQLite) Vacuum(ctx context.Context) error {
	if _, err := s.db.ExecContext(ctx, `PRAGMA wal_checkpoint(TRUNCATE)`); err != nil {
		return s.wrap("gc: checkpoint the WAL", err)
	}
	if _, err := s.db.ExecContext(ctx, `VACUUM`); err != nil {
		return s.wrap("gc: compact the database", err)
	}
	_, err := s.db.ExecContext(ctx, `PRAGMA wal_checkpoint(TRUNCATE)`)
	return s.wrap("gc: checkpoint the WAL", err)
}

// Usage reports the size of the store's files and how much holds data.
func (s *SQLite) Usage(ctx context.Context) (Usage, error) {
	var u Usage
	for _, n := range []string{DBName, DBName + "-wal"} {
		if fi, err := os.Stat(filepath.Join(s.dir, n)); err == nil {
			u.File += fi.Size()
		}
	}
	// One statement, so one read of the database: counted apart, a
	// compaction committed in between gave its free pages as in use.
	var pages, free, size int64
	err := s.db.QueryRowContext(ctx, `SELECT p.page_count, f.freelist_count, z.page_size
		FROM pragma_page_count() p, pragma_freelist_count() f, pragma_page_size() z`).Scan(&pages, &free, &size)
	if err != nil {
		return u, s.wrap("read store size", err)
	}
	u.Used = (pages - free) * size
	return u, nil
}

// CheckpointSpan returns how many checkpoints the store holds and when
// the oldest was made (zero when there are none), without reading them:
// what automatic gc looks at before it lists them.
func (s *SQLite) CheckpointSpan(ctx context.Context) (int, time.Time, error) {
	var n int
	var oldest sql.NullInt64
	row, err := s.queryRow(ctx, `SELECT COUNT(*), MIN(time) FROM checkpoints`)
	if err == nil {
		err = row.Scan(&n, &oldest)
	}
	if err != nil {
		return 0, time.Time{}, s.wrap("count checkpoints", err)
	}
	if !oldest.Valid {
		return n, time.Time{}, nil
	}
	return n, time.Unix(0, oldest.Int64), nil
}

// Clear deletes every checkpoint, object, ref, op, journal and pruned
// record, keeping the store's identity; it bumps the generation so caches
// built on the old objects are dropped.
func (s *SQLite) Clear(ctx context.Context, extraTables ...string) error {
	err := s.update(ctx, func(tx *sql.Tx) error {
		for _, t := range append([]string{"checkpoints", "trees", "blobs", "chunks", "refs", "ops", "journal", "pruned"}, extraTables...) {
			if _, err := tx.ExecContext(ctx, `DELETE FROM `+t); err != nil && !isNoTable(err) {
				return err
			}
		}
		_, err := tx.ExecContext(ctx, `UPDATE meta SET value = CAST(value AS INTEGER) + 1 WHERE key='generation'`)
		return err
	})
	if err != nil {
		return s.wrap("clear", err)
	}
	return s.Vacuum(ctx)
}
