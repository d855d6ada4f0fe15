package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
)

// ErrNotWritable is wrapped by [*NotWritableError].
var ErrNotWritable = errors.New("store is not writable")

// NotWritableError: the store can be read but not written (another
// user's store, a read-only mount, files made read-only). It wraps
// [ErrNotWritable].
type NotWritableError struct {
	Store string
	Err   error // why: the directory or file that cannot be written
}

// Error implements error.
func (e *NotWritableError) Error() string {
	return fmt.Sprintf("store %s is not writable: %v", e.Store, e.Err)
}

// Unwrap returns [ErrNotWritable].
func (e *NotWritableError) Unwrap() error { return ErrNotWritable }

// Hint suggests what to do.
func (e *NotWritableError) Hint() string {
	return "ckpt can read this store (list, log, show, diff, status and fsck work) but not change it; " +
		"run as the user who owns it, make it writable, or copy it (cp -a) and use --store with the copy"
}

// Writable returns a [*NotWritableError] if the store was opened
// read-only, else nil.
func (s *SQLite) Writable() error {
	if s.readOnly != nil {
		return &NotWritableError{Store: s.dir, Err: s.readOnly}
	}
	return nil
}

// notWritable reports whether err means a write was refused by
// permissions or a read-only file system.
func notWritable(err error) bool {
	return errors.Is(err, fs.ErrPermission) || errors.Is(err, syscall.EROFS)
}

// dirWritable checks that a file can be created in dir.
func dirWritable(dir string) error {
	f, err := os.CreateTemp(dir, ".probe-*")
	if err != nil {
		return unwrapPathErr(err)
	}
	f.Close()
	os.Remove(f.Name())
	return nil
}

// storeWritable returns why the store in dir cannot be written, or nil:
// SQLite must create files in the directory (the -wal and -shm) and write
// the database and the lock file.
func storeWritable(dir string) error {
	if err := dirWritable(dir); err != nil {
		if notWritable(err) {
			return fmt.Errorf("cannot create files in it (%w)", err)
		}
		return nil // something else: let opening report it
	}
	for _, n := range []string{DBName, DBName + "-wal", DBName + "-shm", "lock"} {
		err := probeWritable(filepath.Join(dir, n))
		if err == nil {
			continue
		}
		if notWritable(err) {
			return fmt.Errorf("%s is read-only (%w)", n, unwrapPathErr(err))
		}
	}
	return nil
}

// openReadOnly opens the store for reading only; why says what cannot be
// written. SQLite's read-only mode still needs the -shm file to exist or to
// be creatable, and creates it (and a -wal) when it can, leaving files the
// store's owner may then not be able to write. So when no connection has
// the database open (no -shm, no -wal with content: everything is in the
// database file) it is opened immutable, reading the file alone and
// creating nothing; otherwise read-only through the existing -shm, and
// immutable if that fails. (Immutable assumes nobody writes the database
// meanwhile: true of a backup or a mount; the owner of a store starting a
// write during the read can make that read fail, and a retry succeeds.)
func openReadOnly(ctx context.Context, dir, workspace string, why error) (*SQLite, error) {
	path := filepath.Join(dir, DBName)
	var last error
	for _, m := range readOnlyModes(path, why) {
		db, err := sql.Open("sqlite", "file:"+path+"?"+m+"&_pragma=busy_timeout(120000)")
		if err != nil {
			return nil, fmt.Errorf("open store %s: %w", dir, err)
		}
		db.SetMaxOpenConns(8)
		db.SetMaxIdleConns(4)
		s := &SQLite{dir: dir, db: db, lock: newFileLock(filepath.Join(dir, "lock")), readOnly: why}
		err = s.init(ctx, workspace)
		if err == nil {
			return s, nil
		}
		db.Close()
		last = err
		var ce *CorruptError
		var se *SchemaError
		var we *WorkspaceMismatchError
		if errors.As(err, &ce) || errors.As(err, &se) || errors.As(err, &we) {
			return nil, err
		}
	}
	return nil, last
}

// readOnlyModes returns the URI parameters to try in turn to read the
// database at path without writing anything in a store that cannot be
// written (why, nil when it can: then SQLite's read-only mode is fine).
// See openReadOnly.
func readOnlyModes(path string, why error) []string {
	if why == nil {
		return []string{"mode=ro"}
	}
	wal, werr := os.Stat(path + "-wal")
	_, serr := os.Stat(path + "-shm")
	if (werr == nil && wal.Size() > 0) || serr == nil {
		return []string{"mode=ro", "mode=ro&immutable=1"}
	}
	return []string{"mode=ro&immutable=1"}
}

// queryReadOnly runs fn on a read-only connection to the store database
// at path that writes nothing in the store (see readOnlyModes), trying each
// way until one works.
func queryReadOnly(path string, fn func(db *sql.DB) error) error {
	err := errors.New("no way to read " + path)
	for _, m := range readOnlyModes(path, storeWritable(filepath.Dir(path))) {
		var db *sql.DB
		db, err = sql.Open("sqlite", "file:"+path+"?"+m+"&_pragma=busy_timeout(5000)")
		if err != nil {
			continue
		}
		err = fn(db)
		db.Close()
		if err == nil {
			return nil
		}
	}
	return err
}
