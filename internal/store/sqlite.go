package store

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/seed1cedbf7c/ckpt/internal/failpoint"
	"github.com/seed1cedbf7c/ckpt/internal/object"
	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"
)

// DBName is the database file inside a store directory.
const DBName = "ckpt.db"

// schemaVersion is the schema of stores this ckpt creates. Version 3 added
// S2 blobs (encS2), which a ckpt that reads only version 2 cannot decode:
// such a ckpt refuses the store by its version instead of calling its
// blobs corrupt. A version 2 store is read as it is, and becomes version 3
// when its first blob is stored (see Update): only then may it hold one.
const schemaVersion = "3"

// readsSchema reports whether this ckpt reads stores of schema version v.
func readsSchema(v string) bool { return v == "2" || v == schemaVersion }

const schema = `
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS blobs (
	id BLOB NOT NULL UNIQUE, size INTEGER NOT NULL, enc INTEGER NOT NULL, data BLOB NOT NULL,
	depth INTEGER NOT NULL DEFAULT 0);
CREATE TABLE IF NOT EXISTS chunks (
	id BLOB NOT NULL UNIQUE, size INTEGER NOT NULL, enc INTEGER NOT NULL, data BLOB NOT NULL);
CREATE TABLE IF NOT EXISTS trees (
	id BLOB NOT NULL UNIQUE, enc INTEGER NOT NULL, data BLOB NOT NULL,
	depth INTEGER NOT NULL DEFAULT 0);
CREATE TABLE IF NOT EXISTS checkpoints (
	seq INTEGER PRIMARY KEY AUTOINCREMENT,
	id BLOB NOT NULL UNIQUE,
	data BLOB NOT NULL,
	time INTEGER NOT NULL,
	kind TEXT NOT NULL,
	tree BLOB NOT NULL,
	added INTEGER NOT NULL, modified INTEGER NOT NULL, deleted INTEGER NOT NULL,
	files INTEGER NOT NULL, bytes INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS refs (
	name TEXT PRIMARY KEY, id BLOB NOT NULL, symbolic TEXT NOT NULL DEFAULT '',
	time INTEGER NOT NULL, expires INTEGER NOT NULL DEFAULT 0);
CREATE TABLE IF NOT EXISTS ops (
	seq INTEGER PRIMARY KEY AUTOINCREMENT, time INTEGER NOT NULL, kind TEXT NOT NULL,
	before BLOB, after BLOB, target INTEGER NOT NULL DEFAULT 0, checkpoint BLOB,
	detail TEXT NOT NULL DEFAULT '');
CREATE TABLE IF NOT EXISTS journal (
	id INTEGER PRIMARY KEY CHECK (id = 1), kind TEXT NOT NULL, data BLOB NOT NULL, time INTEGER NOT NULL);
`

// SQLite is the native store: one SQLite database in WAL mode.
type SQLite struct {
	dir  string
	db   *sql.DB
	lock *fileLock
	// readOnly, if not nil, says why the store cannot be written: it was
	// opened read-only, and every write fails with a NotWritableError.
	readOnly error
	// rd, if set, is a read transaction all reads go through (a view made
	// by snapshot).
	rd querier
	// key is the database's entry in openDBs; closed, once Close ran.
	key    string
	closed bool

	mu    sync.Mutex
	stmts map[string]*sql.Stmt

	// recent, if set, keeps new versions' content for delta bases (see
	// KeepRecent).
	recent *recentCache

	// ver is the connection DataVersion asks, held so its answers compare;
	// verClosed, set by Close, keeps it from being taken again.
	verMu     sync.Mutex
	ver       *sql.Conn
	verClosed bool
}

var _ Store = (*SQLite)(nil)

// OpenSQLite opens (creating if needed) the store in dir for workspace.
// A store created for another workspace is refused. A new store's database
// is created whole (see createDB); an existing ckpt.db that is empty, not
// SQLite, or not a ckpt database is a [*CorruptError] naming it.
func OpenSQLite(ctx context.Context, dir, workspace string) (*SQLite, error) {
	if err := MkdirPrivate(dir); err != nil {
		return nil, fmt.Errorf("create store %s: %w", dir, err)
	}
	tighten(dir)
	path := filepath.Join(dir, DBName)
	// While this process has the database open, its files are never
	// opened outside SQLite: closing such a descriptor would drop every
	// lock SQLite holds on the file (POSIX), and another process would
	// then fold the WAL away under this one.
	openDBs.Lock()
	defer openDBs.Unlock()
	if e := openDBs.n[dbKey(path)]; e != nil {
		if e.readOnly != nil {
			return registerReadOnly(openReadOnly(ctx, dir, workspace, e.readOnly))
		}
		db, err := sql.Open("sqlite", dsn(path))
		if err != nil {
			return nil, fmt.Errorf("open store %s: %w", dir, err)
		}
		return openedSQLite(ctx, dir, workspace, db)
	}
	if err := checkDBFile(ctx, path); errors.Is(err, fs.ErrNotExist) {
		// Refused before anything (the lock file) is written there.
		if err := CheckNewStoreDir(dir); err != nil {
			return nil, err
		}
		if err := dirWritable(dir); err != nil {
			return nil, &NotWritableError{Store: dir, Err: err}
		}
		if err := createDB(ctx, dir, workspace); err != nil {
			return nil, err
		}
	} else if err != nil {
		return nil, err
	}
	if why := storeWritable(dir); why != nil {
		return registerReadOnly(openReadOnly(ctx, dir, workspace, why))
	}
	db, err := sql.Open("sqlite", dsn(path))
	if err != nil {
		return nil, fmt.Errorf("open store %s: %w", dir, err)
	}
	return openedSQLite(ctx, dir, workspace, db)
}

// openDBs counts, per database file, the stores this process has open
// (see OpenSQLite).
var openDBs = struct {
	sync.Mutex
	n map[string]*openDB
}{n: map[string]*openDB{}}

type openDB struct {
	n        int
	readOnly error // why the first one was opened read-only
}

// register counts s in openDBs (openDBs held).
func (s *SQLite) register() {
	s.key = dbKey(filepath.Join(s.dir, DBName))
	if s.key == "" {
		return // gone again: nothing to protect
	}
	e := openDBs.n[s.key]
	if e == nil {
		e = &openDB{readOnly: s.readOnly}
		openDBs.n[s.key] = e
	}
	e.n++
}

func registerReadOnly(s *SQLite, err error) (*SQLite, error) {
	if err == nil {
		s.register()
	}
	return s, err
}

// dbKey identifies a database file by its device and inode (a store
// deleted and made again is another file), else by its absolute path,
// symlinks resolved in its directory; "" when it does not exist yet.
// Stat opens nothing, so it drops no lock.
func dbKey(path string) string {
	fi, err := os.Stat(path)
	if err != nil {
		return ""
	}
	if id, ok := fileID(fi); ok {
		return id
	}
	dir, name := filepath.Split(path)
	if real, err := filepath.EvalSymlinks(dir); err == nil {
		dir = real
	}
	if abs, err := filepath.Abs(dir); err == nil {
		dir = abs
	}
	return filepath.Join(dir, name)
}

// openedSQLite finishes opening a store (openDBs held).
func openedSQLite(ctx context.Context, dir, workspace string, db *sql.DB) (*SQLite, error) {
	db.SetMaxOpenConns(8)
	db.SetMaxIdleConns(4)
	s := &SQLite{dir: dir, db: db, lock: newFileLock(filepath.Join(dir, "lock"))}
	if err := s.init(ctx, workspace); err != nil {
		db.Close()
		return nil, err
	}
	s.register()
	return s, nil
}

// init checks an existing database: a ckpt store of a schema this ckpt
// reads, for this workspace; a writable one gets the tables later
// versions added.
func (s *SQLite) init(ctx context.Context, workspace string) error {
	var ver string
	err := s.db.QueryRowContext(ctx, `SELECT value FROM meta WHERE key='schema'`).Scan(&ver)
	if isNoTable(err) || errors.Is(err, sql.ErrNoRows) {
		// A database, but not ckpt's: never made into a store in place.
		return errNotCkptDB(filepath.Join(s.dir, DBName))
	}
	if err != nil {
		return s.wrap("open store "+s.dir, err)
	}
	if !readsSchema(ver) {
		return &SchemaError{Store: s.dir, Version: ver}
	}
	if s.readOnly == nil {
		if _, err := s.db.ExecContext(ctx, migrations); err != nil {
			return s.wrap("open store "+s.dir, err)
		}
	}
	var ws string
	if err := s.db.QueryRowContext(ctx, `SELECT value FROM meta WHERE key='workspace'`).Scan(&ws); err == nil &&
		workspace != "" && ws != workspace {
		return &WorkspaceMismatchError{Store: s.dir, Recorded: ws, Workspace: workspace}
	}
	if s.readOnly == nil && workspace != "" {
		// Stores made before the workspace's device was recorded.
		var dev string
		err := s.db.QueryRowContext(ctx, `SELECT value FROM meta WHERE key=?`, WorkspaceDevKey).Scan(&dev)
		if d, ok := deviceOf(workspace); ok && errors.Is(err, sql.ErrNoRows) {
			if _, err := s.db.ExecContext(ctx, `INSERT OR IGNORE INTO meta(key, value) VALUES(?, ?)`, WorkspaceDevKey, d); err != nil {
				return s.wrap("open store "+s.dir, err)
			}
		}
	}
	return nil
}

// SchemaError: the store was written by a ckpt with another schema.
type SchemaError struct{ Store, Version string }

// Error implements error.
func (e *SchemaError) Error() string {
	return fmt.Sprintf("store %s has schema version %s; this ckpt understands versions 2 and %s", e.Store, e.Version, schemaVersion)
}

// Hint suggests what to do.
func (e *SchemaError) Hint() string {
	return "use the ckpt version that created this store, or move it aside (and start a new one with --store elsewhere)"
}

// WorkspaceMismatchError: the store belongs to another workspace.
type WorkspaceMismatchError struct{ Store, Recorded, Workspace string }

// Error implements error.
func (e *WorkspaceMismatchError) Error() string {
	return fmt.Sprintf("store %s belongs to workspace %s, not %s", e.Store, e.Recorded, e.Workspace)
}

// Hint suggests what to do.
func (e *WorkspaceMismatchError) Hint() string {
	return fmt.Sprintf("run ckpt in %s (or with -C %s), or give this workspace its own store (unset CKPT_STORE, or another --store)", e.Recorded, e.Recorded)
}

func isNoTable(err error) bool {
	return err != nil && strings.Contains(err.Error(), "no such table")
}

func unwrapPathErr(err error) error {
	var pe *os.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// wrap turns SQLite corruption codes into CorruptError and busy into ErrLocked.
func (s *SQLite) wrap(op string, err error) error {
	if err == nil {
		return nil
	}
	var se *sqlite.Error
	if errors.As(err, &se) {
		switch se.Code() & 0xff {
		case sqlite3.SQLITE_CORRUPT, sqlite3.SQLITE_NOTADB:
			return &CorruptError{Kind: "database", Detail: fmt.Sprintf("%s: %s", filepath.Join(s.dir, DBName), se.Error())}
		case sqlite3.SQLITE_BUSY, sqlite3.SQLITE_LOCKED:
			return fmt.Errorf("%s: %w: %v", op, ErrLocked, se)
		case sqlite3.SQLITE_FULL:
			return fmt.Errorf("%s: %w (%s): %v", op, ErrFull, s.dir, se)
		}
	}
	return fmt.Errorf("%s: %w", op, err)
}

func (s *SQLite) update(ctx context.Context, fn func(*sql.Tx) error) error {
	if err := s.Writable(); err != nil {
		return err
	}
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return s.wrap("begin transaction", err)
	}
	if err := fn(tx); err != nil {
		tx.Rollback()
		return err
	}
	return s.commit(ctx, tx)
}

// commit commits tx, begun with ctx. Cancelled, database/sql may have
// rolled tx back before the commit, which then says only ErrTxDone: the
// error is the cancellation's.
func (s *SQLite) commit(ctx context.Context, tx *sql.Tx) error {
	if err := tx.Commit(); err != nil {
		if ctx.Err() != nil {
			err = ctx.Err()
		}
		return s.wrap("commit", err)
	}
	return nil
}

// prepared returns a statement prepared on the pool (database/sql
// re-prepares it per connection as needed).
func (s *SQLite) prepared(ctx context.Context, q string) (*sql.Stmt, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if st, ok := s.stmts[q]; ok {
		return st, nil
	}
	st, err := s.db.PrepareContext(ctx, q)
	if err != nil {
		return nil, err
	}
	if s.stmts == nil {
		s.stmts = map[string]*sql.Stmt{}
	}
	s.stmts[q] = st
	return st, nil
}

// querier runs queries: the pool, or one read transaction (fsck).
type querier interface {
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

// reader is where reads go: the snapshot of a read transaction when this
// is a view made by snapshot, else the pool.
func (s *SQLite) reader() querier {
	if s.rd != nil {
		return s.rd
	}
	return s.db
}

// queryRow runs a one-row query: in the read transaction of a snapshot
// view, else through a statement prepared on the pool.
//
// A cancelled ctx stops it before it starts; once started it runs to its
// end (a lookup by key, a count of checkpoints: it cannot take long).
// Given a context that can be cancelled, the driver starts two
// goroutines for every statement (one to interrupt SQLite, one to close
// the rows) and has SQLite call back into Go every thousand steps: a
// save makes a few hundred lookups, and on two busy cores those
// goroutines waited to be scheduled longer than the lookups took.
func (s *SQLite) queryRow(ctx context.Context, q string, args ...any) (*sql.Row, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	ctx = context.WithoutCancel(ctx)
	if s.rd != nil {
		return s.rd.QueryRowContext(ctx, q, args...), nil
	}
	st, err := s.prepared(ctx, q)
	if err != nil {
		return nil, err
	}
	return st.QueryRowContext(ctx, args...), nil
}

// snapshot returns a view of the store whose reads all see one consistent
// state (a read transaction: in WAL mode, commits made meanwhile stay
// invisible to it), and a function ending it. Only reads may be made
// through the view.
func (s *SQLite) snapshot(ctx context.Context) (*SQLite, func(), error) {
	tx, err := s.db.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return nil, nil, s.wrap("begin read transaction", err)
	}
	v := &SQLite{dir: s.dir, db: s.db, lock: s.lock, readOnly: s.readOnly, rd: tx}
	return v, func() { tx.Rollback() }, nil
}

// Dir returns the store directory.
func (s *SQLite) Dir() string { return s.dir }

// DataVersion returns a number that differs from the one before whenever
// the database was committed to since the last call, by this process or
// another: SQLite's data_version, asked on a connection held for it and
// used for nothing else. A watcher of the store learns of every commit
// this way without opening the store's files, which would drop the locks
// SQLite holds on them (see OpenSQLite).
func (s *SQLite) DataVersion(ctx context.Context) (int64, error) {
	s.verMu.Lock()
	defer s.verMu.Unlock()
	if s.verClosed {
		return 0, s.wrap("read the data version", sql.ErrConnDone)
	}
	if s.ver == nil {
		c, err := s.db.Conn(ctx)
		if err != nil {
			return 0, s.wrap("read the data version", err)
		}
		s.ver = c
	}
	var v int64
	if err := s.ver.QueryRowContext(ctx, `PRAGMA data_version`).Scan(&v); err != nil {
		// A fresh connection next time: its first answer differs anyway.
		s.ver.Close()
		s.ver = nil
		return 0, s.wrap("read the data version", err)
	}
	return v, nil
}

// Close closes the database.
func (s *SQLite) Close() error {
	s.verMu.Lock()
	s.verClosed = true
	if s.ver != nil {
		s.ver.Close()
		s.ver = nil
	}
	s.verMu.Unlock()
	err := s.db.Close()
	openDBs.Lock()
	if e := openDBs.n[s.key]; e != nil && !s.closed {
		s.closed = true
		if e.n--; e.n <= 0 {
			delete(openDBs.n, s.key)
		}
	}
	openDBs.Unlock()
	return err
}

// Info describes the store.
func (s *SQLite) Info(ctx context.Context) (Info, error) {
	in := Info{Backend: "sqlite", Path: s.dir}
	rows, err := s.db.QueryContext(ctx, `SELECT key, value FROM meta`)
	if err != nil {
		return in, s.wrap("read store info", err)
	}
	defer rows.Close()
	for rows.Next() {
		var k, v string
		if err := rows.Scan(&k, &v); err != nil {
			return in, s.wrap("read store info", err)
		}
		switch k {
		case "workspace":
			in.Workspace = v
		case "created":
			var ns int64
			fmt.Sscan(v, &ns)
			in.Created = time.Unix(0, ns)
		case "instance":
			in.Instance = v
		case "generation":
			fmt.Sscan(v, &in.Generation)
		case "cache_seq":
			fmt.Sscan(v, &in.CacheSeq)
		}
	}
	for _, n := range []string{DBName, DBName + "-wal", DBName + "-shm"} {
		if fi, err := os.Stat(filepath.Join(s.dir, n)); err == nil {
			in.Size += fi.Size()
		}
	}
	return in, s.wrap("read store info", rows.Err())
}

// Meta returns a setting.
func (s *SQLite) Meta(ctx context.Context, key string) (string, error) {
	var v string
	err := s.db.QueryRowContext(ctx, `SELECT value FROM meta WHERE key=?`, key).Scan(&v)
	if errors.Is(err, sql.ErrNoRows) {
		return "", nil
	}
	return v, s.wrap("read setting "+key, err)
}

// HasBlob reports whether the blob exists.
func (s *SQLite) HasBlob(ctx context.Context, id object.ID) (bool, error) {
	return s.has(ctx, "blobs", id)
}

// HasTree reports whether the tree exists.
func (s *SQLite) HasTree(ctx context.Context, id object.ID) (bool, error) {
	return s.has(ctx, "trees", id)
}

// hasBatch bounds the ids one HasTrees query looks up.
const hasBatch = 500

// HasTrees reports whether the store holds every one of ids. It looks
// them up a batch per query: a scan that took many directories from its
// stat cache checks them all, and one query per tree cost more than the
// lookups themselves.
func (s *SQLite) HasTrees(ctx context.Context, ids []object.ID) (bool, error) {
	uniq := make(map[object.ID]bool, len(ids))
	for _, id := range ids {
		uniq[id] = true
	}
	args := make([]any, 0, min(len(uniq), hasBatch))
	check := func() (bool, error) {
		if len(args) == 0 {
			return true, nil
		}
		q := `SELECT count(*) FROM trees WHERE id IN (?` + strings.Repeat(`,?`, len(args)-1) + `)`
		var n int
		if err := s.reader().QueryRowContext(ctx, q, args...).Scan(&n); err != nil {
			return false, s.wrap("look up trees", err)
		}
		all := n == len(args)
		args = args[:0]
		return all, nil
	}
	for id := range uniq {
		args = append(args, id[:])
		if len(args) == hasBatch {
			if ok, err := check(); !ok || err != nil {
				return false, err
			}
		}
	}
	return check()
}

func (s *SQLite) has(ctx context.Context, table string, id object.ID) (bool, error) {
	row, err := s.queryRow(ctx, `SELECT 1 FROM `+table+` WHERE id=?`, id[:])
	if err != nil {
		return false, s.wrap("look up "+table, err)
	}
	var one int
	err = row.Scan(&one)
	if errors.Is(err, sql.ErrNoRows) {
		return false, nil
	}
	if err != nil {
		return false, s.wrap("look up "+table, err)
	}
	return true, nil
}

func (s *SQLite) readRow(ctx context.Context, table string, id object.ID) (size int64, enc int, data []byte, err error) {
	size, enc, data, _, err = s.readRowDepth(ctx, table, id)
	return
}

func (s *SQLite) readRowDepth(ctx context.Context, table string, id object.ID) (size int64, enc int, data []byte, depth int, err error) {
	q := `SELECT size, enc, data, 0 FROM ` + table + ` WHERE id=?`
	switch table {
	case "trees":
		q = `SELECT -1, enc, data, depth FROM trees WHERE id=?`
	case "blobs":
		q = `SELECT size, enc, data, depth FROM blobs WHERE id=?`
	}
	row, err := s.queryRow(ctx, q, id[:])
	if err == nil {
		err = row.Scan(&size, &enc, &data, &depth)
	}
	if errors.Is(err, sql.ErrNoRows) {
		return 0, 0, nil, 0, &NotFoundError{Kind: strings.TrimSuffix(table, "s"), ID: id}
	}
	if err != nil {
		return 0, 0, nil, 0, s.wrap("read "+strings.TrimSuffix(table, "s")+" "+id.String(), err)
	}
	return size, enc, data, depth, nil
}

// rawContent returns the verified content of a blob or tree, following
// delta chains, and its delta depth. Chunked blobs are not followed (they
// are never delta bases).
func (s *SQLite) rawContent(ctx context.Context, table string, id object.ID, hops int) ([]byte, int, error) {
	kind := strings.TrimSuffix(table, "s")
	size, enc, data, depth, err := s.readRowDepth(ctx, table, id)
	if err != nil {
		return nil, 0, err
	}
	var out []byte
	switch enc {
	case encChunked:
		return nil, 0, errChunked
	case encDelta:
		if hops >= maxDeltaDepth || len(data) < 32 {
			return nil, 0, &CorruptError{Kind: kind, ID: id, Detail: "delta chain too long or truncated"}
		}
		base := object.ID(data[:32])
		bdata, _, err := s.rawContent(ctx, table, base, hops+1)
		if err != nil {
			var ce *CorruptError
			if errors.As(err, &ce) || errors.Is(err, ErrNotFound) || errors.Is(err, errChunked) {
				return nil, 0, &CorruptError{Kind: kind, ID: id, Detail: "delta base " + base.String() + ": " + err.Error()}
			}
			return nil, 0, err
		}
		out, err = decompressDelta(data[32:], bdata, size)
		if err != nil {
			return nil, 0, &CorruptError{Kind: kind, ID: id, Detail: err.Error()}
		}
	default:
		out, err = decompress(enc, data, size)
		if err != nil {
			return nil, 0, &CorruptError{Kind: kind, ID: id, Detail: err.Error()}
		}
	}
	if (size >= 0 && int64(len(out)) != size) || sum(out) != id {
		return nil, 0, &CorruptError{Kind: kind, ID: id, Detail: "content does not match its hash"}
	}
	return out, depth, nil
}

var errChunked = errors.New("chunked blob")

// readVerified reads a blob or chunk row, decodes and verifies it.
func (s *SQLite) readChunk(ctx context.Context, id object.ID) ([]byte, error) {
	size, enc, data, err := s.readRow(ctx, "chunks", id)
	if err != nil {
		return nil, err
	}
	out, err := decompress(enc, data, size)
	if err != nil || int64(len(out)) != size || sum(out) != id {
		return nil, &CorruptError{Kind: "chunk", ID: id, Detail: "content does not match its hash"}
	}
	return out, nil
}

// ReadBlob returns a verified blob.
func (s *SQLite) ReadBlob(ctx context.Context, id object.ID) ([]byte, error) {
	size, enc, data, err := s.readRow(ctx, "blobs", id)
	if err != nil {
		return nil, err
	}
	var out []byte
	if enc == encChunked {
		ids, sizes, err := decodeChunkList(data)
		if err != nil {
			return nil, &CorruptError{Kind: "blob", ID: id, Detail: err.Error()}
		}
		out = make([]byte, 0, min(max(size, 0), 64<<20))
		for i, cid := range ids {
			c, err := s.readChunk(ctx, cid)
			if err != nil {
				return nil, blobCorrupt(id, err)
			}
			if int64(len(c)) != sizes[i] {
				return nil, &CorruptError{Kind: "blob", ID: id, Detail: "chunk size mismatch"}
			}
			out = append(out, c...)
		}
	} else {
		out, _, err = s.rawContent(ctx, "blobs", id, 0)
		return out, err
	}
	if int64(len(out)) != size || sum(out) != id {
		return nil, &CorruptError{Kind: "blob", ID: id, Detail: "content does not match its hash"}
	}
	return out, nil
}

func blobCorrupt(id object.ID, err error) error {
	var ce *CorruptError
	if errors.As(err, &ce) {
		return &CorruptError{Kind: "blob", ID: id, Detail: "chunk " + ce.ID.String() + " does not match its hash"}
	}
	if errors.Is(err, ErrNotFound) {
		return &CorruptError{Kind: "blob", ID: id, Detail: "missing " + err.Error()}
	}
	return err
}

// OpenBlob streams a blob, verifying as it goes.
func (s *SQLite) OpenBlob(ctx context.Context, id object.ID) (io.ReadCloser, int64, error) {
	size, enc, data, err := s.readRow(ctx, "blobs", id)
	if err != nil {
		return nil, 0, err
	}
	if enc != encChunked {
		out, _, err := s.rawContent(ctx, "blobs", id, 0)
		if err != nil {
			return nil, 0, err
		}
		return io.NopCloser(bytes.NewReader(out)), size, nil
	}
	ids, sizes, err := decodeChunkList(data)
	if err != nil {
		return nil, 0, &CorruptError{Kind: "blob", ID: id, Detail: err.Error()}
	}
	return newChunkReader(id, size, ids, sizes, func(cid object.ID) ([]byte, error) {
		return s.readChunk(ctx, cid)
	}), size, nil
}

// ReadTree returns a verified tree.
func (s *SQLite) ReadTree(ctx context.Context, id object.ID) (*object.Tree, error) {
	raw, _, err := s.rawContent(ctx, "trees", id, 0)
	if err != nil {
		return nil, err
	}
	// A tree read is mostly a changed directory's last version, about to
	// be the base of its next one.
	s.recent.put("trees", id, raw)
	t, err := object.DecodeTree(raw)
	if err != nil {
		return nil, &CorruptError{Kind: "tree", ID: id, Detail: err.Error()}
	}
	return t, nil
}

func decodeTree(id object.ID, enc int, data []byte) (*object.Tree, error) {
	raw, err := decompress(enc, data, -1)
	if err != nil {
		return nil, &CorruptError{Kind: "tree", ID: id, Detail: err.Error()}
	}
	if sum(raw) != id {
		return nil, &CorruptError{Kind: "tree", ID: id, Detail: "content does not match its hash"}
	}
	t, err := object.DecodeTree(raw)
	if err != nil {
		return nil, &CorruptError{Kind: "tree", ID: id, Detail: err.Error()}
	}
	return t, nil
}

const cpCols = `seq, id, data, added, modified, deleted, files, bytes`

func (s *SQLite) scanRecord(sc interface{ Scan(...any) error }) (*Record, error) {
	var (
		r    Record
		idb  []byte
		data []byte
	)
	if err := sc.Scan(&r.Seq, &idb, &data, &r.Stats.Added, &r.Stats.Modified, &r.Stats.Deleted, &r.Stats.Files, &r.Stats.Bytes); err != nil {
		return nil, err
	}
	copy(r.ID[:], idb)
	if len(idb) != 32 || sum(data) != r.ID {
		return nil, &CorruptError{Kind: "checkpoint", ID: r.ID, Detail: "content does not match its hash"}
	}
	cp, err := object.DecodeCheckpoint(data)
	if err != nil {
		return nil, &CorruptError{Kind: "checkpoint", ID: r.ID, Detail: err.Error()}
	}
	r.Checkpoint = cp
	return &r, nil
}

// Checkpoint returns a verified checkpoint.
func (s *SQLite) Checkpoint(ctx context.Context, id object.ID) (*Record, error) {
	row := s.db.QueryRowContext(ctx, `SELECT `+cpCols+` FROM checkpoints WHERE id=?`, id[:])
	r, err := s.scanRecord(row)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, &NotFoundError{Kind: "checkpoint", ID: id}
	}
	if err != nil {
		var ce *CorruptError
		if errors.As(err, &ce) {
			return nil, err
		}
		return nil, s.wrap("read checkpoint "+id.String(), err)
	}
	return r, nil
}

// Checkpoints lists checkpoints newest first.
func (s *SQLite) Checkpoints(ctx context.Context, f ListFilter) ([]*Record, error) {
	q := `SELECT ` + cpCols + ` FROM checkpoints`
	var where []string
	var args []any
	if f.Kind != "" {
		where, args = append(where, `kind=?`), append(args, f.Kind)
	}
	if f.BeforeSeq > 0 {
		where, args = append(where, `seq<?`), append(args, f.BeforeSeq)
	}
	if len(where) > 0 {
		q += ` WHERE ` + strings.Join(where, ` AND `)
	}
	q += ` ORDER BY seq DESC`
	if f.Limit > 0 {
		q += fmt.Sprintf(` LIMIT %d`, f.Limit)
	}
	rows, err := s.db.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, s.wrap("list checkpoints", err)
	}
	var out []*Record
	err = s.scanRecords(rows, "list checkpoints", func(r *Record) { out = append(out, r) })
	return out, err
}

// scanRecords calls fn with each checkpoint record rows holds, and closes
// rows. A corrupt record's error is returned as it is; others are
// wrapped as op's.
func (s *SQLite) scanRecords(rows *sql.Rows, op string, fn func(*Record)) error {
	defer rows.Close()
	for rows.Next() {
		r, err := s.scanRecord(rows)
		if err != nil {
			var ce *CorruptError
			if errors.As(err, &ce) {
				return err
			}
			return s.wrap(op, err)
		}
		fn(r)
	}
	return s.wrap(op, rows.Err())
}

// FindCheckpoints resolves a hex prefix.
func (s *SQLite) FindCheckpoints(ctx context.Context, prefix string, limit int) ([]object.ID, error) {
	lo, hi, ok := prefixRange(prefix)
	if !ok {
		return nil, nil
	}
	q := `SELECT id FROM checkpoints WHERE id >= ?`
	args := []any{lo}
	if hi != nil {
		q += ` AND id < ?`
		args = append(args, hi)
	}
	q += fmt.Sprintf(` ORDER BY id LIMIT %d`, limit)
	rows, err := s.db.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, s.wrap("find checkpoint", err)
	}
	defer rows.Close()
	var out []object.ID
	for rows.Next() {
		var b []byte
		if err := rows.Scan(&b); err != nil {
			return nil, s.wrap("find checkpoint", err)
		}
		var id object.ID
		copy(id[:], b)
		if strings.HasPrefix(id.String(), prefix) {
			out = append(out, id)
		}
	}
	return out, s.wrap("find checkpoint", rows.Err())
}

// prefixRange returns the byte range [lo, hi) of ids starting with the hex
// prefix (hi nil: unbounded).
func prefixRange(prefix string) (lo, hi []byte, ok bool) {
	prefix = strings.ToLower(prefix)
	if prefix == "" || len(prefix) > 64 {
		return nil, nil, false
	}
	for _, c := range prefix {
		if !strings.ContainsRune("0123456789abcdef", c) {
			return nil, nil, false
		}
	}
	p := prefix
	if len(p)%2 == 1 {
		p += "0"
	}
	lo, _ = hex.DecodeString(p)
	// hi = lo + 1 at the last significant nibble.
	hiHex := []byte(prefix)
	for i := len(hiHex) - 1; i >= 0; i-- {
		if hiHex[i] != 'f' {
			hiHex[i] = "0123456789abcdef"[strings.IndexByte("0123456789abcdef", hiHex[i])+1]
			hiHex = hiHex[:i+1]
			if len(hiHex)%2 == 1 {
				hiHex = append(hiHex, '0')
			}
			hi, _ = hex.DecodeString(string(hiHex))
			return lo, hi, true
		}
	}
	return lo, nil, true
}

// Ref returns a ref.
func (s *SQLite) Ref(ctx context.Context, name string) (Ref, error) {
	row := s.db.QueryRowContext(ctx, `SELECT name, id, symbolic, time, expires FROM refs WHERE name=?`, name)
	r, err := scanRef(row)
	if errors.Is(err, sql.ErrNoRows) {
		return Ref{}, fmt.Errorf("ref %s: %w", name, ErrNotFound)
	}
	return r, s.wrap("read ref "+name, err)
}

func scanRef(sc interface{ Scan(...any) error }) (Ref, error) {
	var (
		r        Ref
		idb      []byte
		t, e     int64
		symbolic string
	)
	if err := sc.Scan(&r.Name, &idb, &symbolic, &t, &e); err != nil {
		return r, err
	}
	copy(r.ID[:], idb)
	r.Symbolic = symbolic
	r.Time = time.Unix(0, t)
	if e != 0 {
		r.Expires = time.Unix(0, e)
	}
	return r, nil
}

// Refs lists refs by prefix.
func (s *SQLite) Refs(ctx context.Context, prefix string) ([]Ref, error) {
	rows, err := s.reader().QueryContext(ctx, `SELECT name, id, symbolic, time, expires FROM refs WHERE substr(name, 1, ?) = ? ORDER BY name`, len(prefix), prefix)
	if err != nil {
		return nil, s.wrap("list refs", err)
	}
	defer rows.Close()
	var out []Ref
	for rows.Next() {
		r, err := scanRef(rows)
		if err != nil {
			return nil, s.wrap("list refs", err)
		}
		out = append(out, r)
	}
	return out, s.wrap("list refs", rows.Err())
}

// Ops returns the op log after seq.
func (s *SQLite) Ops(ctx context.Context, after int64) ([]Op, error) {
	rows, err := s.reader().QueryContext(ctx, `SELECT seq, time, kind, before, after, target, checkpoint, detail FROM ops WHERE seq > ? ORDER BY seq`, after)
	if err != nil {
		return nil, s.wrap("read operation log", err)
	}
	defer rows.Close()
	var out []Op
	for rows.Next() {
		var (
			op            Op
			t             int64
			before, aft   []byte
			checkpointRaw []byte
		)
		if err := rows.Scan(&op.Seq, &t, &op.Kind, &before, &aft, &op.Target, &checkpointRaw, &op.Detail); err != nil {
			return nil, s.wrap("read operation log", err)
		}
		op.Time = time.Unix(0, t)
		copy(op.Before[:], before)
		copy(op.After[:], aft)
		copy(op.Checkpoint[:], checkpointRaw)
		out = append(out, op)
	}
	return out, s.wrap("read operation log", rows.Err())
}

// Journal returns the pending journal.
func (s *SQLite) Journal(ctx context.Context) (*Journal, error) {
	var (
		j Journal
		t int64
	)
	err := s.db.QueryRowContext(ctx, `SELECT kind, data, time FROM journal WHERE id=1`).Scan(&j.Kind, &j.Data, &t)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, nil
	}
	if err != nil {
		return nil, s.wrap("read journal", err)
	}
	j.Time = time.Unix(0, t)
	return &j, nil
}

// Lock takes the inter-process operation lock.
func (s *SQLite) Lock(ctx context.Context, timeout time.Duration, waiting func(string)) (func(), error) {
	if err := s.Writable(); err != nil {
		return nil, err
	}
	return s.lock.acquire(ctx, timeout, waiting)
}

// Update runs fn in one transaction.
func (s *SQLite) Update(ctx context.Context, fn func(Tx) error) error {
	if err := s.Writable(); err != nil {
		return err
	}
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return s.wrap("begin transaction", err)
	}
	t := &sqliteTx{s: s, tx: tx, ctx: ctx, wctx: context.WithoutCancel(ctx), blobs: map[object.ID]bool{}, trees: map[object.ID]bool{},
		queue: make(chan txOp, 256), done: make(chan struct{})}
	// The transaction holds the write lock from its start (BEGIN
	// IMMEDIATE), so a table empty now has no committed row until it
	// commits: lookups of that table need not ask SQLite. A cold save
	// into a new store spared one query per file this way.
	var hasBlobs, hasTrees bool
	if err := tx.QueryRowContext(t.wctx, `SELECT EXISTS(SELECT 1 FROM blobs), EXISTS(SELECT 1 FROM trees)`).Scan(&hasBlobs, &hasTrees); err != nil {
		tx.Rollback()
		if ctx.Err() != nil {
			return ctx.Err()
		}
		return s.wrap("begin transaction", err)
	}
	t.noBlobs, t.noTrees = !hasBlobs, !hasTrees
	if t.noBlobs {
		// This transaction may store the first blobs, in S2: a store of
		// schema version 2 becomes version 3 with them (see schemaVersion).
		if _, err := tx.ExecContext(t.wctx, `UPDATE meta SET value=? WHERE key='schema' AND value<>?`, schemaVersion, schemaVersion); err != nil {
			tx.Rollback()
			if ctx.Err() != nil {
				return ctx.Err() // database/sql rolled the transaction back
			}
			return s.wrap("begin transaction", err)
		}
	}
	t.budget = sync.NewCond(&t.bmu)
	go t.writer()
	ferr := fn(t)
	werr := t.finish()
	if ferr != nil {
		tx.Rollback()
		return ferr
	}
	if werr != nil {
		tx.Rollback()
		return werr
	}
	if err := failpoint.Hit("store/before-commit", ""); err != nil {
		tx.Rollback()
		return err
	}
	return s.commit(ctx, tx)
}

// A transaction's statements run on one goroutine, in order. Inserts of
// objects are queued without waiting (their data counted against a byte
// budget), so the scan's workers keep hashing and compressing while
// SQLite writes; statements whose result is needed wait for their turn.
type txOp struct {
	op    string
	q     string
	args  []any
	bytes int
	reply chan error // nil: asynchronous
	fn    func(*sql.Tx) error
}

const queueBudget = 4 << 20

type sqliteTx struct {
	s    *SQLite
	tx   *sql.Tx
	ctx  context.Context
	wctx context.Context // ctx without its cancellation, for the writer's inserts

	queue chan txOp
	done  chan struct{}

	mu     sync.Mutex // guards err, blobs, trees, closed
	err    error      // first failure of an asynchronous statement
	blobs  map[object.ID]bool
	trees  map[object.ID]bool
	closed bool

	// noBlobs and noTrees say the table had no row when the transaction
	// began: no row but this transaction's can be in it until it commits.
	// HasBlob, HasTree and HasTrees then answer from blobs and trees
	// alone, so every insert into those tables must record its id there
	// first: putObject and NewBlobWriter do. An insert that bypasses
	// them would be invisible to this transaction's lookups.
	noBlobs, noTrees bool

	bmu    sync.Mutex
	budget *sync.Cond
	queued int

	stmts map[string]*sql.Stmt // writer goroutine only
}

func (t *sqliteTx) writer() {
	defer close(t.done)
	for op := range t.queue {
		var err error
		if t.failed() == nil {
			if op.fn != nil {
				err = op.fn(t.tx)
			} else {
				var st *sql.Stmt
				st, err = t.stmt(op.q)
				if err == nil {
					// Without cancellation (see queryRow): a cancelled
					// ctx rolls the whole transaction back (database/sql
					// watches it), and each insert is short.
					_, err = st.ExecContext(t.wctx, op.args...)
				}
			}
			if err != nil && t.ctx.Err() != nil {
				// Cancelled: database/sql rolled the transaction back,
				// and the statement failed for that.
				err = t.ctx.Err()
			}
			if err != nil {
				err = t.s.wrap(op.op, err)
			}
		} else {
			err = t.failed()
		}
		if op.bytes > 0 {
			t.bmu.Lock()
			t.queued -= op.bytes
			t.budget.Broadcast()
			t.bmu.Unlock()
		}
		if op.reply != nil {
			op.reply <- err
		} else if err != nil {
			t.mu.Lock()
			if t.err == nil {
				t.err = err
			}
			t.mu.Unlock()
		}
	}
}

func (t *sqliteTx) failed() error {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.err
}

// stmt returns a prepared statement for q (SQLite would otherwise parse
// every insert again). Writer goroutine only.
func (t *sqliteTx) stmt(q string) (*sql.Stmt, error) {
	if st, ok := t.stmts[q]; ok {
		return st, nil
	}
	st, err := t.tx.PrepareContext(t.ctx, q)
	if err != nil {
		return nil, err
	}
	if t.stmts == nil {
		t.stmts = map[string]*sql.Stmt{}
	}
	t.stmts[q] = st
	return st, nil
}

// async queues a statement; it fails later, at the next sync or at commit.
func (t *sqliteTx) async(op, q string, size int, args ...any) error {
	if err := t.failed(); err != nil {
		return err
	}
	t.bmu.Lock()
	for t.queued > 0 && t.queued+size > queueBudget {
		t.budget.Wait()
	}
	t.queued += size
	t.bmu.Unlock()
	t.queue <- txOp{op: op, q: q, args: args, bytes: size}
	return nil
}

// sync runs a statement (or fn) after everything queued before it.
func (t *sqliteTx) sync(op, q string, args ...any) error {
	reply := make(chan error, 1)
	t.queue <- txOp{op: op, q: q, args: args, reply: reply}
	if err := <-reply; err != nil {
		return err
	}
	return t.failed()
}

func (t *sqliteTx) syncFn(op string, fn func(*sql.Tx) error) error {
	reply := make(chan error, 1)
	t.queue <- txOp{op: op, fn: fn, reply: reply}
	if err := <-reply; err != nil {
		return err
	}
	return t.failed()
}

// finish drains the queue and stops the writer.
func (t *sqliteTx) finish() error {
	t.mu.Lock()
	closed := t.closed
	t.closed = true
	t.mu.Unlock()
	if !closed {
		close(t.queue)
	}
	<-t.done
	return t.failed()
}

func (t *sqliteTx) HasBlob(id object.ID) (bool, error) {
	t.mu.Lock()
	if t.blobs[id] {
		t.mu.Unlock()
		return true, nil
	}
	t.mu.Unlock()
	if t.noBlobs {
		// Only this transaction's rows can be in the table (see noBlobs:
		// every insert records its id in t.blobs). One missing from the
		// bounded set was forgotten at most: storing it again is ignored
		// (see maxTxBlobs).
		return false, nil
	}
	return t.s.HasBlob(t.ctx, id)
}

func (t *sqliteTx) HasTree(id object.ID) (bool, error) {
	t.mu.Lock()
	if t.trees[id] {
		t.mu.Unlock()
		return true, nil
	}
	t.mu.Unlock()
	if t.noTrees {
		return false, nil
	}
	return t.s.HasTree(t.ctx, id)
}

// HasTrees reports whether every one of ids is stored, this
// transaction's own trees included.
func (t *sqliteTx) HasTrees(ids []object.ID) (bool, error) {
	rest := make([]object.ID, 0, len(ids))
	t.mu.Lock()
	for _, id := range ids {
		if !t.trees[id] {
			rest = append(rest, id)
		}
	}
	t.mu.Unlock()
	if t.noTrees && len(rest) > 0 {
		return false, nil
	}
	return t.s.HasTrees(t.ctx, rest)
}

func (t *sqliteTx) PutBlob(id object.ID, data []byte) error {
	return t.PutBlobFrom(id, data, object.ZeroID)
}

// encode returns data's stored form: a delta against base when that is
// smaller than data compressed on its own, else compressed. A delta of at
// most an eighth of data is taken without compressing data at all: zstd's
// fastest level seldom does better on trees and source files, and missing
// it only costs a few bytes, while compressing every new version of a
// directory was most of a served save's encoding time.
func (t *sqliteTx) encode(table string, data []byte, base object.ID) (enc int, c []byte, depth int) {
	d, dep, ok := t.deltaFor(table, data, base)
	if ok && len(d) <= len(data)/8 {
		return encDelta, d, dep
	}
	// A store's first save (its blob table empty when the transaction
	// began) compresses its files with S2: see compressFast.
	enc, c = compressOwned(data, table == "blobs" && t.noBlobs)
	if ok && len(d) < len(c) {
		return encDelta, d, dep
	}
	return enc, c, 0
}

// deltaFor returns the delta encoding of data against base (base's id
// first) and its depth, if base is a committed object of table with a
// short enough chain.
func (t *sqliteTx) deltaFor(table string, data []byte, base object.ID) ([]byte, int, bool) {
	if base.IsZero() || len(data) < 64 || len(data) >= ChunkThreshold {
		return nil, 0, false
	}
	bdata, depth, ok := t.recentBase(table, base)
	if !ok {
		var err error
		if bdata, depth, err = t.s.rawContent(t.ctx, table, base, 0); err != nil {
			return nil, 0, false
		}
	}
	if depth+1 > maxDeltaDepth || len(bdata) < 64 || len(bdata) >= ChunkThreshold {
		return nil, 0, false
	}
	d, err := compressDelta(data, bdata)
	if err != nil {
		return nil, 0, false
	}
	return append(base[:len(base):len(base)], d...), depth + 1, true
}

func (t *sqliteTx) PutBlobFrom(id object.ID, data []byte, base object.ID) error {
	return t.putObject("blobs", t.blobs, id, data, base)
}

// putObject queues a blob or tree, compressed or as a delta against base,
// unless this transaction already stored it. done is the transaction's set
// of ids written to table.
func (t *sqliteTx) putObject(table string, done map[object.ID]bool, id object.ID, data []byte, base object.ID) error {
	t.mu.Lock()
	seen := done[id]
	t.mu.Unlock()
	if seen {
		return nil
	}
	enc, c, depth := t.encode(table, data, base)
	t.mu.Lock()
	if table == "blobs" {
		t.markBlob(id)
	} else {
		done[id] = true
	}
	t.mu.Unlock()
	if !base.IsZero() {
		// A new version of something: the next one's likely base.
		t.s.recent.put(table, id, data)
	}
	if table == "trees" {
		return t.async("store tree "+id.String(), `INSERT OR IGNORE INTO trees(id, enc, data, depth) VALUES(?, ?, ?, ?)`, len(c), id[:], enc, c, depth)
	}
	return t.async("store blob "+id.String(), `INSERT OR IGNORE INTO blobs(id, size, enc, data, depth) VALUES(?, ?, ?, ?, ?)`, len(c), id[:], len(data), enc, c, depth)
}

// maxTxBlobs bounds the blobs a transaction remembers putting. The set
// only spares storing the same content twice in one transaction (HasBlob
// cannot see its uncommitted rows); forgetting some costs at most storing
// a duplicate again, which INSERT OR IGNORE drops. Unbounded, it was the
// largest thing a cold save of a million files held: ~60 bytes a file,
// twice that in the heap the collector lets grow.
var maxTxBlobs = 1 << 16

// markBlob records that this transaction put blob id (t.mu held).
func (t *sqliteTx) markBlob(id object.ID) {
	if len(t.blobs) >= maxTxBlobs {
		clear(t.blobs)
	}
	t.blobs[id] = true
}

func (t *sqliteTx) putChunk(data []byte) (object.ID, error) {
	id := sum(data)
	enc, c := compressOwned(data, t.noBlobs)
	err := t.async("store chunk", `INSERT OR IGNORE INTO chunks(id, size, enc, data) VALUES(?, ?, ?, ?)`, len(c), id[:], len(data), enc, c)
	return id, err
}

func (t *sqliteTx) NewBlobWriter() BlobWriter {
	return &chunkWriter{put: t.putChunk, commit: func(id object.ID, size int64, list []byte) error {
		t.mu.Lock()
		t.markBlob(id)
		t.mu.Unlock()
		return t.async("store blob "+id.String(), `INSERT OR IGNORE INTO blobs(id, size, enc, data) VALUES(?, ?, ?, ?)`, len(list), id[:], size, encChunked, list)
	}}
}

func (t *sqliteTx) PutTree(id object.ID, data []byte) error {
	return t.PutTreeFrom(id, data, object.ZeroID)
}

func (t *sqliteTx) PutTreeFrom(id object.ID, data []byte, base object.ID) error {
	return t.putObject("trees", t.trees, id, data, base)
}

func (t *sqliteTx) ReadTree(id object.ID) (*object.Tree, error) {
	// A tree this transaction did not write is committed: read it on the
	// pool, in parallel, instead of queueing behind this transaction's
	// inserts.
	t.mu.Lock()
	local := t.trees[id]
	t.mu.Unlock()
	if !local {
		return t.s.ReadTree(t.ctx, id)
	}
	if raw := t.s.recent.get("trees", id); raw != nil {
		// Written by this transaction: its content is what was put.
		return decodeTree(id, encRaw, raw)
	}
	var (
		enc      int
		data     []byte
		notFound bool
	)
	err := t.syncFn("read tree "+id.String(), func(tx *sql.Tx) error {
		err := tx.QueryRowContext(t.ctx, `SELECT enc, data FROM trees WHERE id=?`, id[:]).Scan(&enc, &data)
		if errors.Is(err, sql.ErrNoRows) {
			notFound = true
			return nil
		}
		return err
	})
	if notFound {
		return nil, &NotFoundError{Kind: "tree", ID: id}
	}
	if err != nil {
		return nil, err
	}
	if enc == encDelta {
		// Deltas only point to committed bases.
		if len(data) < 32 {
			return nil, &CorruptError{Kind: "tree", ID: id, Detail: "truncated delta"}
		}
		bdata, _, err := t.s.rawContent(t.ctx, "trees", object.ID(data[:32]), 1)
		if err != nil {
			return nil, &CorruptError{Kind: "tree", ID: id, Detail: "delta base: " + err.Error()}
		}
		raw, err := decompressDelta(data[32:], bdata, -1)
		if err != nil {
			return nil, &CorruptError{Kind: "tree", ID: id, Detail: err.Error()}
		}
		return decodeTree(id, encRaw, raw)
	}
	return decodeTree(id, enc, data)
}

func (t *sqliteTx) PutCheckpoint(cp *object.Checkpoint, st Stats) (object.ID, error) {
	data := cp.Encode()
	id := sum(data)
	err := t.sync("store checkpoint", `INSERT OR IGNORE INTO checkpoints(id, data, time, kind, tree, added, modified, deleted, files, bytes)
		VALUES(?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`, id[:], data, cp.Time.UnixNano(), cp.Kind, cp.Tree[:],
		st.Added, st.Modified, st.Deleted, st.Files, st.Bytes)
	return id, err
}

func (t *sqliteTx) MarkPruned(id object.ID) error {
	return t.sync("mark pruned "+id.String(), `INSERT OR IGNORE INTO pruned(id, time) VALUES(?, ?)`, id[:], time.Now().UnixNano())
}

func (t *sqliteTx) SetRef(r Ref) error {
	var exp int64
	if !r.Expires.IsZero() {
		exp = r.Expires.UnixNano()
	}
	tm := r.Time
	if tm.IsZero() {
		tm = time.Now()
	}
	return t.sync("set ref "+r.Name, `INSERT OR REPLACE INTO refs(name, id, symbolic, time, expires) VALUES(?, ?, ?, ?, ?)`,
		r.Name, r.ID[:], r.Symbolic, tm.UnixNano(), exp)
}

func (t *sqliteTx) DeleteRef(name string) error {
	return t.sync("delete ref "+name, `DELETE FROM refs WHERE name=?`, name)
}

func (t *sqliteTx) AppendOp(op Op) (int64, error) {
	tm := op.Time
	if tm.IsZero() {
		tm = time.Now()
	}
	var seq int64
	err := t.syncFn("append operation", func(tx *sql.Tx) error {
		res, err := tx.ExecContext(t.ctx, `INSERT INTO ops(time, kind, before, after, target, checkpoint, detail) VALUES(?, ?, ?, ?, ?, ?, ?)`,
			tm.UnixNano(), op.Kind, nullID(op.Before), nullID(op.After), op.Target, nullID(op.Checkpoint), op.Detail)
		if err == nil {
			seq, err = res.LastInsertId()
		}
		return err
	})
	return seq, err
}

func nullID(id object.ID) any {
	if id.IsZero() {
		return nil
	}
	return id[:]
}

func (t *sqliteTx) SetJournal(j *Journal) error {
	if j == nil {
		return t.sync("clear journal", `DELETE FROM journal`)
	}
	return t.sync("write journal", `INSERT OR REPLACE INTO journal(id, kind, data, time) VALUES(1, ?, ?, ?)`, j.Kind, j.Data, time.Now().UnixNano())
}

func (t *sqliteTx) SetMeta(key, value string) error {
	return t.sync("set "+key, `INSERT OR REPLACE INTO meta(key, value) VALUES(?, ?)`, key, value)
}

// RecordedWorkspace returns the workspace path recorded in the store in
// dir, or "" if dir holds no store.
func RecordedWorkspace(dir string) string {
	path := filepath.Join(dir, DBName)
	if _, err := os.Stat(path); err != nil {
		return ""
	}
	var ws string
	if queryReadOnly(path, func(db *sql.DB) error {
		return db.QueryRow(`SELECT value FROM meta WHERE key='workspace'`).Scan(&ws)
	}) != nil {
		return ""
	}
	return ws
}

// HasHistory reports whether the store in dir holds at least one
// checkpoint (a store created by a command that only looked holds none).
func HasHistory(dir string) bool {
	path := filepath.Join(dir, DBName)
	if _, err := os.Stat(path); err != nil {
		return false
	}
	return queryReadOnly(path, func(db *sql.DB) error {
		var one int
		return db.QueryRow(`SELECT 1 FROM checkpoints LIMIT 1`).Scan(&one)
	}) == nil
}
