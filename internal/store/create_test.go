package store

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"sync"
	"testing"
)

// A copy of a store made with VACUUM INTO is in rollback-journal mode: it
// is still a ckpt database and opens (in WAL mode again).
func TestOpenRollbackModeCopy(t *testing.T) {
	ctx := context.Background()
	s := openTest(t)
	id := putBlob(t, s, []byte("hello"))
	copyDir := t.TempDir()
	if _, err := s.db.ExecContext(ctx, `VACUUM INTO ?`, filepath.Join(copyDir, DBName)); err != nil {
		t.Fatal(err)
	}
	c, err := OpenSQLite(ctx, copyDir, "/ws")
	if err != nil {
		t.Fatalf("open the copy: %v", err)
	}
	defer c.Close()
	if b, err := c.ReadBlob(ctx, id); err != nil || string(b) != "hello" {
		t.Fatalf("read blob: %q, %v", b, err)
	}
}

// Processes (here goroutines with their own connections) creating the same
// store at once end up with one database: every one of them sees the same
// instance.
func TestCreateConcurrently(t *testing.T) {
	ctx := context.Background()
	dir := filepath.Join(t.TempDir(), "store")
	var wg sync.WaitGroup
	insts := make([]string, 8)
	errs := make([]error, 8)
	for i := range insts {
		wg.Add(1)
		go func() {
			defer wg.Done()
			s, err := OpenSQLite(ctx, dir, "/ws")
			if err != nil {
				errs[i] = err
				return
			}
			defer s.Close()
			in, err := s.Info(ctx)
			insts[i], errs[i] = in.Instance, err
		}()
	}
	wg.Wait()
	for i := range insts {
		if errs[i] != nil {
			t.Fatal(errs[i])
		}
		if insts[i] != insts[0] {
			t.Fatalf("instance %d is %s, want %s: two databases were made", i, insts[i], insts[0])
		}
	}
}

func TestBadDBFile(t *testing.T) {
	ctx := context.Background()
	for name, content := range map[string]string{
		"empty": "", "short": "SQLite", "text": "this is not a database, it is a text file with more than one hundred bytes in it, certainly so",
	} {
		dir := t.TempDir()
		p := filepath.Join(dir, DBName)
		os.WriteFile(p, []byte(content), 0o600)
		_, err := OpenSQLite(ctx, dir, "/ws")
		var ce *CorruptError
		if !errors.As(err, &ce) || ce.Kind != "database" {
			t.Errorf("%s: got %v, want a corrupt database", name, err)
		}
		if b, _ := os.ReadFile(p); string(b) != content {
			t.Errorf("%s: ckpt.db was changed", name)
		}
	}
}
