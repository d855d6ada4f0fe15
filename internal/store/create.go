package store

import (
	"bytes"
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/seed1cedbf7c/ckpt/internal/failpoint"
)

// sqliteMagic starts every SQLite database file.
const sqliteMagic = "SQLite format 3\x00"

// tempDBPrefix names a database being created; it becomes ckpt.db by a
// rename once complete, so ckpt.db never exists half-made.
const tempDBPrefix = ".ckpt-tmp-db-"

// dsn is the connection string of the database at path.
func dsn(path string) string {
	return "file:" + path + "?_txlock=immediate&_pragma=busy_timeout(120000)" +
		"&_pragma=journal_mode(WAL)&_pragma=synchronous(FULL)&_pragma=foreign_keys(0)" +
		"&_pragma=cache_size(-1000)&_pragma=journal_size_limit(8388608)"
}

// badDB is the error for a ckpt.db that cannot be a store's database.
func badDB(path, detail string) error {
	return &CorruptError{Kind: "database", Detail: path + ": " + detail}
}

// checkDBFile checks that path, which exists, looks like a SQLite
// database: a regular file starting with SQLite's header. A zero-byte or
// foreign file is corruption, never an empty store. A missing file gives
// an error wrapping fs.ErrNotExist. A database not in WAL mode (ckpt's
// always are; a copy made with VACUUM INTO is not) is first checked to be
// ckpt's through a read-only connection, so that a foreign database is
// never changed by opening it.
func checkDBFile(ctx context.Context, path string) error {
	fi, err := os.Lstat(path)
	if err != nil {
		return err
	}
	if !fi.Mode().IsRegular() {
		return badDB(path, fmt.Sprintf("not a regular file (%s)", fi.Mode().Type()))
	}
	if fi.Size() == 0 {
		return badDB(path, "empty file (0 bytes), not a database")
	}
	f, err := os.Open(path)
	if err != nil {
		return fmt.Errorf("open store database %s: %w", path, unwrapPathErr(err))
	}
	defer f.Close()
	head := make([]byte, 100) // SQLite's file header
	if _, err := io.ReadFull(f, head); err != nil {
		if errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF) {
			return badDB(path, fmt.Sprintf("truncated (%d bytes), not a database", fi.Size()))
		}
		return fmt.Errorf("read store database %s: %w", path, unwrapPathErr(err))
	}
	if !bytes.Equal(head[:len(sqliteMagic)], []byte(sqliteMagic)) {
		return badDB(path, "not a SQLite database")
	}
	if head[18] == 2 && head[19] == 2 {
		return nil // WAL mode: OpenSQLite checks the schema before writing
	}
	db, err := sql.Open("sqlite", "file:"+path+"?mode=ro&_pragma=busy_timeout(120000)")
	if err != nil {
		return fmt.Errorf("open store database %s: %w", path, err)
	}
	defer db.Close()
	var ver string
	err = db.QueryRowContext(ctx, `SELECT value FROM meta WHERE key='schema'`).Scan(&ver)
	if isNoTable(err) || errors.Is(err, sql.ErrNoRows) {
		return errNotCkptDB(path)
	}
	if err != nil {
		return (&SQLite{dir: filepath.Dir(path)}).wrap("open store "+filepath.Dir(path), err)
	}
	return nil
}

func errNotCkptDB(path string) error {
	return badDB(path, "not a ckpt store database (no schema version in its meta table)")
}

// createDB makes a new store database at dir/ckpt.db for workspace. It is
// built complete under a temporary name (mode 0600) and renamed into
// place, holding the store's lock so that two processes creating the same
// store make one database. A directory that holds other files than
// ckpt's own is refused (see [CheckNewStoreDir]).
func createDB(ctx context.Context, dir, workspace string) error {
	unlock, err := newFileLock(filepath.Join(dir, "lock")).acquire(ctx, 2*time.Minute, nil)
	if err != nil {
		return fmt.Errorf("create store %s: %w", dir, err)
	}
	defer unlock()
	path := filepath.Join(dir, DBName)
	if _, err := os.Lstat(path); err == nil {
		return nil // another process made it meanwhile
	}
	if err := CheckNewStoreDir(dir); err != nil {
		return err
	}
	// Leftovers of a creation that was killed (we hold the lock: no other
	// creation is running).
	if des, err := os.ReadDir(dir); err == nil {
		for _, de := range des {
			if strings.HasPrefix(de.Name(), tempDBPrefix) {
				os.Remove(filepath.Join(dir, de.Name()))
			}
		}
	}
	var rnd [6]byte
	rand.Read(rnd[:])
	tmp := filepath.Join(dir, tempDBPrefix+hex.EncodeToString(rnd[:]))
	defer func() {
		for _, sfx := range []string{"", "-wal", "-shm", "-journal"} {
			os.Remove(tmp + sfx)
		}
	}()
	// SQLite gives the -wal and -shm files the database file's mode.
	f, err := os.OpenFile(tmp, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o600)
	if err != nil {
		return fmt.Errorf("create store %s: %w", dir, unwrapPathErr(err))
	}
	err = f.Chmod(0o600) // whatever the umask
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("create store %s: %w", dir, err)
	}
	// Creation is short and must never be half-done: a signal's
	// cancellation interrupting SQLite could leave the committed schema in
	// a -wal file that the rename below does not carry.
	if err := initDB(context.WithoutCancel(ctx), tmp, workspace); err != nil {
		return fmt.Errorf("create store %s: %w", dir, err)
	}
	if err := checkNewDB(tmp); err != nil {
		return fmt.Errorf("create store %s: %w", dir, err)
	}
	if err := failpoint.Hit("store/create", dir); err != nil {
		return err
	}
	if err := syncFile(tmp); err != nil {
		return fmt.Errorf("create store %s: %w", dir, err)
	}
	if err := os.Rename(tmp, path); err != nil {
		return fmt.Errorf("create store %s: %w", dir, unwrapPathErr(err))
	}
	return syncFile(dir)
}

// initDB writes the schema and the store's identity into the new
// database at path, in one transaction, and closes it (SQLite then folds
// the WAL into the file and removes it).
func initDB(ctx context.Context, path, workspace string) error {
	db, err := sql.Open("sqlite", dsn(path))
	if err != nil {
		return err
	}
	defer db.Close()
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	if _, err := tx.ExecContext(ctx, schema+migrations); err != nil {
		return err
	}
	var inst [8]byte
	rand.Read(inst[:])
	meta := map[string]string{
		"schema": schemaVersion, "workspace": workspace, "created": fmt.Sprint(time.Now().UnixNano()),
		"instance": hex.EncodeToString(inst[:]), "generation": "1",
	}
	if dev, ok := deviceOf(workspace); ok {
		meta[WorkspaceDevKey] = dev
	}
	for k, v := range meta {
		if _, err := tx.ExecContext(ctx, `INSERT OR IGNORE INTO meta(key, value) VALUES(?, ?)`, k, v); err != nil {
			return err
		}
	}
	if err := tx.Commit(); err != nil {
		return err
	}
	return db.Close()
}

// checkNewDB makes sure the database initDB made is whole in its own
// file: no write-ahead log left beside it, and its schema readable.
func checkNewDB(path string) error {
	if fi, err := os.Stat(path + "-wal"); err == nil && fi.Size() > 0 {
		return fmt.Errorf("the new database's log was not folded into it (%d bytes left in %s)", fi.Size(), path+"-wal")
	}
	db, err := sql.Open("sqlite", "file:"+path+"?mode=ro")
	if err != nil {
		return err
	}
	defer db.Close()
	var ver string
	if err := db.QueryRow(`SELECT value FROM meta WHERE key='schema'`).Scan(&ver); err != nil || ver != schemaVersion {
		return fmt.Errorf("the new database does not read back (schema %q): %v", ver, err)
	}
	return db.Close()
}

func syncFile(path string) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	err = f.Sync()
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// ownFiles are the names ckpt itself may keep in a store directory before
// its database exists (settings written first, a lock, a stale cache).
var ownFiles = map[string]bool{
	"config.toml": true, "lock": true, "statcache": true, "watch.log": true, "watch.sock": true,
	"hooks.log": true, "hooks.log.1": true,
	// The git backend's map (a cache) in <gitdir>/ckpt.
	"gitmap.db": true, "gitmap.db-wal": true, "gitmap.db-shm": true,
}

// CheckNewStoreDir refuses to create a store in dir when dir holds
// anything but ckpt's own files: a directory that is neither empty nor a
// store (--store /, --store ~) is not ckpt's to fill, as restic refuses to
// init a non-empty directory. A missing dir is fine.
func CheckNewStoreDir(dir string) error {
	des, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("create store %s: %w", dir, unwrapPathErr(err))
	}
	var foreign []string
	for _, de := range des {
		n := de.Name()
		if ownFiles[n] || strings.HasSuffix(n, ".lock") || strings.HasPrefix(n, tempDBPrefix) ||
			strings.HasPrefix(n, ".statcache-") || strings.HasPrefix(n, ".ckpt-tmp-") || strings.HasPrefix(n, ".probe-") {
			continue
		}
		foreign = append(foreign, n)
	}
	if len(foreign) == 0 {
		return nil
	}
	return &NotAStoreError{Dir: dir, Entries: foreign}
}

// NotAStoreError: a store was to be created in a directory that already
// holds other files.
type NotAStoreError struct {
	Dir     string
	Entries []string // what it holds (not ckpt's)
}

// Error implements error.
func (e *NotAStoreError) Error() string {
	ex := e.Entries
	more := ""
	if len(ex) > 3 {
		more = fmt.Sprintf(", and %d more", len(ex)-3)
		ex = ex[:3]
	}
	return fmt.Sprintf("store directory %s is not empty and is not a ckpt store (it holds %s%s)", e.Dir, strings.Join(ex, ", "), more)
}

// Hint suggests what to do.
func (e *NotAStoreError) Hint() string {
	return "give --store (or CKPT_STORE) a new or empty directory, or an existing ckpt store; or leave it unset for the default under $XDG_STATE_HOME/ckpt"
}

// WorkspaceDevKey is the meta key recording the device (st_dev) of the
// file system the workspace is on, so that `ckpt workspaces --prune` can
// tell a deleted workspace from one on a disk that is not mounted.
const WorkspaceDevKey = "workspace_dev"

// deviceOf returns the device number of the file system holding path.
func deviceOf(path string) (string, bool) {
	if path == "" {
		return "", false
	}
	fi, err := os.Stat(path)
	if err != nil {
		return "", false
	}
	dev, ok := FileDevice(fi)
	if !ok {
		return "", false
	}
	return strconv.FormatUint(dev, 10), true
}

// RecordedMeta returns the settings (meta table) of the store in dir, or
// nil if dir holds no store that can be read.
func RecordedMeta(dir string) map[string]string {
	path := filepath.Join(dir, DBName)
	if _, err := os.Stat(path); err != nil {
		return nil
	}
	var out map[string]string
	err := queryReadOnly(path, func(db *sql.DB) error {
		rows, err := db.Query(`SELECT key, value FROM meta`)
		if err != nil {
			return err
		}
		defer rows.Close()
		out = map[string]string{}
		for rows.Next() {
			var k, v string
			if err := rows.Scan(&k, &v); err != nil {
				return err
			}
			out[k] = v
		}
		return rows.Err()
	})
	if err != nil {
		return nil
	}
	return out
}
