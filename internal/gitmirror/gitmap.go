package gitmirror

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"strconv"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/seed1cedbf7c/ckpt/internal/object"
	_ "modernc.org/sqlite" // the "sqlite" database/sql driver
)

// MapFile is the name of the mirror's cache in the store directory.
const MapFile = "gitmap.db"

// mapVersion changes whenever the mapping from ckpt objects to git objects
// changes (modes, commit format); a map of another version is discarded.
const mapVersion = "1"

const mapSchema = `
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS objects (kind INTEGER NOT NULL, id BLOB NOT NULL, oid BLOB NOT NULL,
	PRIMARY KEY (kind, id)) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS commits (checkpoint BLOB PRIMARY KEY, oid BLOB NOT NULL) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS refs (name TEXT PRIMARY KEY, oid BLOB NOT NULL) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS timeline (checkpoint BLOB PRIMARY KEY, seq INTEGER NOT NULL) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS packs (name TEXT PRIMARY KEY, size INTEGER NOT NULL) WITHOUT ROWID;
`

// Object kinds in the map (a blob and a tree may share a ckpt id).
const (
	kindBlob = 1
	kindTree = 2
)

// gitmap is the persistent cache of the mirror: which git object each ckpt
// blob and tree became, which commit each checkpoint became, the refs the
// mirror wrote (its ledger), the timeline and the packs the mirror wrote.
// It can always be rebuilt: a lost entry costs a re-export, the ledger is
// recovered from the refs' commits (see Mirror.adopt), and packs it no
// longer lists are left to git's gc like the user's own.
type gitmap struct {
	path string
	db   *sql.DB
	get  *sql.Stmt
}

func openMap(ctx context.Context, path string) (*gitmap, error) {
	m, err := openMapOnce(ctx, path)
	if err != nil {
		// A cache that cannot be opened (damaged, another version) is rebuilt.
		for _, suffix := range []string{"", "-wal", "-shm"} {
			os.Remove(path + suffix)
		}
		m, err = openMapOnce(ctx, path)
	}
	if err != nil {
		return nil, fmt.Errorf("open git object map %s: %w (it is a cache: removing it is safe)", path, err)
	}
	return m, nil
}

func openMapOnce(ctx context.Context, path string) (*gitmap, error) {
	// Made 0600 before SQLite opens it (an empty file is a new database),
	// so it and its -wal and -shm files are private whatever the umask.
	if f, err := os.OpenFile(path, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o600); err == nil {
		f.Chmod(0o600)
		f.Close()
	}
	dsn := "file:" + path + "?_txlock=immediate&_pragma=busy_timeout(120000)" +
		"&_pragma=journal_mode(WAL)&_pragma=synchronous(NORMAL)&_pragma=mmap_size(1073741824)"
	db, err := sql.Open("sqlite", dsn)
	if err != nil {
		return nil, err
	}
	db.SetMaxOpenConns(2)
	m := &gitmap{path: path, db: db}
	if err := m.init(ctx); err != nil {
		db.Close()
		return nil, err
	}
	return m, nil
}

func (m *gitmap) init(ctx context.Context) error {
	if _, err := m.db.ExecContext(ctx, mapSchema); err != nil {
		return err
	}
	var ver string
	err := m.db.QueryRowContext(ctx, `SELECT value FROM meta WHERE key='version'`).Scan(&ver)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		if _, err := m.db.ExecContext(ctx, `INSERT INTO meta(key, value) VALUES ('version', ?)`, mapVersion); err != nil {
			return err
		}
	case err != nil:
		return err
	case ver != mapVersion:
		return fmt.Errorf("git object map version %s, want %s", ver, mapVersion)
	}
	m.get, err = m.db.PrepareContext(ctx, `SELECT oid FROM objects WHERE kind=? AND id=?`)
	return err
}

func (m *gitmap) close() error {
	if m.get != nil {
		m.get.Close()
	}
	return m.db.Close()
}

// object returns the git object a ckpt blob or tree became.
func (m *gitmap) object(ctx context.Context, kind int, id object.ID) (plumbing.Hash, bool, error) {
	var b []byte
	err := m.get.QueryRowContext(ctx, kind, id[:]).Scan(&b)
	if errors.Is(err, sql.ErrNoRows) {
		return plumbing.ZeroHash, false, nil
	}
	if err != nil || len(b) != len(plumbing.ZeroHash) {
		return plumbing.ZeroHash, false, err
	}
	var h plumbing.Hash
	copy(h[:], b)
	return h, true, nil
}

func (m *gitmap) commit(ctx context.Context, cp object.ID) (plumbing.Hash, bool, error) {
	var b []byte
	err := m.db.QueryRowContext(ctx, `SELECT oid FROM commits WHERE checkpoint=?`, cp[:]).Scan(&b)
	if errors.Is(err, sql.ErrNoRows) {
		return plumbing.ZeroHash, false, nil
	}
	if err != nil || len(b) != len(plumbing.ZeroHash) {
		return plumbing.ZeroHash, false, err
	}
	var h plumbing.Hash
	copy(h[:], b)
	return h, true, nil
}

// commits looks up the commits of many checkpoints, adding those found
// to out.
func (m *gitmap) commits(ctx context.Context, ids []object.ID, out map[object.ID]plumbing.Hash) error {
	return m.batch(ctx, `SELECT checkpoint, oid FROM commits WHERE checkpoint IN (`, nil, ids, func(id []byte, oid plumbing.Hash) {
		var k object.ID
		copy(k[:], id)
		out[k] = oid
	})
}

// mapKey names an object of the map.
type mapKey struct {
	kind int
	id   object.ID
}

// objects looks up many objects of one kind, adding those found to out.
func (m *gitmap) objects(ctx context.Context, kind int, ids []object.ID, out map[mapKey]plumbing.Hash) error {
	return m.batch(ctx, `SELECT id, oid FROM objects WHERE kind=? AND id IN (`, []any{kind}, ids, func(id []byte, oid plumbing.Hash) {
		k := mapKey{kind: kind}
		copy(k.id[:], id)
		out[k] = oid
	})
}

// batch runs query (ending in "IN (") with args and the ids, a few hundred
// at a time, and calls found with each row's two columns.
func (m *gitmap) batch(ctx context.Context, query string, args []any, ids []object.ID, found func(id []byte, oid plumbing.Hash)) error {
	const batch = 250
	for len(ids) > 0 {
		n := min(len(ids), batch)
		a := make([]any, 0, len(args)+n)
		a = append(a, args...)
		q := make([]byte, 0, len(query)+2*n+1)
		q = append(q, query...)
		for i, id := range ids[:n] {
			if i > 0 {
				q = append(q, ',')
			}
			q = append(q, '?')
			a = append(a, id[:])
		}
		q = append(q, ')')
		rows, err := m.db.QueryContext(ctx, string(q), a...)
		if err != nil {
			return err
		}
		for rows.Next() {
			var idb, oidb []byte
			if err := rows.Scan(&idb, &oidb); err != nil {
				rows.Close()
				return err
			}
			var h plumbing.Hash
			copy(h[:], oidb)
			found(idb, h)
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return err
		}
		ids = ids[n:]
	}
	return nil
}

// mapping is one new entry of the object map.
type mapping struct {
	kind int
	id   object.ID
	oid  plumbing.Hash
}

// record stores new object mappings and commits, and the pack holding
// their objects (if any), in one transaction.
func (m *gitmap) record(ctx context.Context, objs []mapping, commits map[object.ID]plumbing.Hash, pack *packInfo) error {
	if len(objs) == 0 && len(commits) == 0 && pack == nil {
		return nil
	}
	tx, err := m.db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	if pack != nil {
		if _, err := tx.ExecContext(ctx, `INSERT OR REPLACE INTO packs(name, size) VALUES (?, ?)`, pack.Name, pack.Size); err != nil {
			return err
		}
	}
	st, err := tx.PrepareContext(ctx, `INSERT OR REPLACE INTO objects(kind, id, oid) VALUES (?, ?, ?)`)
	if err != nil {
		return err
	}
	for _, o := range objs {
		if _, err := st.ExecContext(ctx, o.kind, o.id[:], o.oid[:]); err != nil {
			st.Close()
			return err
		}
	}
	st.Close()
	for cp, oid := range commits {
		if _, err := tx.ExecContext(ctx, `INSERT OR REPLACE INTO commits(checkpoint, oid) VALUES (?, ?)`, cp[:], oid[:]); err != nil {
			return err
		}
	}
	return tx.Commit()
}

func (m *gitmap) meta(ctx context.Context, key string) (string, error) {
	var v string
	err := m.db.QueryRowContext(ctx, `SELECT value FROM meta WHERE key=?`, key).Scan(&v)
	if errors.Is(err, sql.ErrNoRows) {
		return "", nil
	}
	return v, err
}

func (m *gitmap) setMeta(ctx context.Context, key, value string) error {
	_, err := m.db.ExecContext(ctx, `INSERT OR REPLACE INTO meta(key, value) VALUES (?, ?)`, key, value)
	return err
}

// ledger returns the refs the mirror wrote, with the value it wrote.
func (m *gitmap) ledger(ctx context.Context) (map[string]plumbing.Hash, error) {
	rows, err := m.db.QueryContext(ctx, `SELECT name, oid FROM refs`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := map[string]plumbing.Hash{}
	for rows.Next() {
		var name string
		var b []byte
		if err := rows.Scan(&name, &b); err != nil {
			return nil, err
		}
		var h plumbing.Hash
		copy(h[:], b)
		out[name] = h
	}
	return out, rows.Err()
}

// setLedger records that the mirror set name to oid (zero: deleted it).
func (m *gitmap) setLedger(ctx context.Context, name string, oid plumbing.Hash) error {
	var err error
	if oid.IsZero() {
		_, err = m.db.ExecContext(ctx, `DELETE FROM refs WHERE name=?`, name)
	} else {
		_, err = m.db.ExecContext(ctx, `INSERT OR REPLACE INTO refs(name, oid) VALUES (?, ?)`, name, oid[:])
	}
	return err
}

// timelineEntry is a checkpoint on the timeline and the position (op log
// order) at which it was last HEAD or about to be left.
type timelineEntry struct {
	id  object.ID
	seq int64
}

// advanceTimeline records entries (positions increasing) and the op
// sequence number read up to, keeps only the newest max, and returns them
// newest first.
func (m *gitmap) advanceTimeline(ctx context.Context, entries []timelineEntry, lastOp int64, max int) ([]timelineEntry, error) {
	tx, err := m.db.BeginTx(ctx, nil)
	if err != nil {
		return nil, err
	}
	defer tx.Rollback()
	for _, e := range entries {
		if _, err := tx.ExecContext(ctx, `INSERT INTO timeline(checkpoint, seq) VALUES (?, ?)
			ON CONFLICT(checkpoint) DO UPDATE SET seq=max(seq, excluded.seq)`, e.id[:], e.seq); err != nil {
			return nil, err
		}
	}
	if _, err := tx.ExecContext(ctx, `DELETE FROM timeline WHERE checkpoint NOT IN
		(SELECT checkpoint FROM timeline ORDER BY seq DESC LIMIT ?)`, max); err != nil {
		return nil, err
	}
	if _, err := tx.ExecContext(ctx, `INSERT OR REPLACE INTO meta(key, value) VALUES ('last_op', ?)`, strconv.FormatInt(lastOp, 10)); err != nil {
		return nil, err
	}
	rows, err := tx.QueryContext(ctx, `SELECT checkpoint, seq FROM timeline ORDER BY seq DESC`)
	if err != nil {
		return nil, err
	}
	var out []timelineEntry
	for rows.Next() {
		var b []byte
		var e timelineEntry
		if err := rows.Scan(&b, &e.seq); err != nil {
			rows.Close()
			return nil, err
		}
		copy(e.id[:], b)
		out = append(out, e)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, err
	}
	return out, tx.Commit()
}

// dropTimeline removes a checkpoint from the timeline (it no longer exists).
func (m *gitmap) dropTimeline(ctx context.Context, id object.ID) error {
	_, err := m.db.ExecContext(ctx, `DELETE FROM timeline WHERE checkpoint=?`, id[:])
	return err
}

// addPack records a pack the mirror wrote.
func (m *gitmap) addPack(ctx context.Context, p packInfo) error {
	return m.record(ctx, nil, nil, &p)
}

// packs returns the packs the mirror wrote, by name.
func (m *gitmap) packs(ctx context.Context) ([]packInfo, error) {
	rows, err := m.db.QueryContext(ctx, `SELECT name, size FROM packs ORDER BY name`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []packInfo
	for rows.Next() {
		var p packInfo
		if err := rows.Scan(&p.Name, &p.Size); err != nil {
			return nil, err
		}
		out = append(out, p)
	}
	return out, rows.Err()
}

// dropPacks forgets packs (removed by the mirror, or gone).
func (m *gitmap) dropPacks(ctx context.Context, names []string) error {
	if len(names) == 0 {
		return nil
	}
	tx, err := m.db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	for _, n := range names {
		if _, err := tx.ExecContext(ctx, `DELETE FROM packs WHERE name=?`, n); err != nil {
			return err
		}
	}
	return tx.Commit()
}
