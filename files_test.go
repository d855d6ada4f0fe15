package ckpt

import (
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"testing"
)

func TestFilesAtRevision(t *testing.T) {
	ctx := context.Background()
	r, ws := openTest(t, map[string]string{
		"a.txt":         "one\n",
		"dir/b.bin":     "\x00\xff\x01",
		"dir/sub/c.txt": "c\n",
		"caf\xe9/n.txt": "latin-1 name\n",
		"run.sh":        "#!/bin/sh\n",
	})
	if err := os.Chmod(filepath.Join(ws, "run.sh"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("a.txt", filepath.Join(ws, "link")); err != nil {
		t.Fatal(err)
	}
	first := mustSave(t, r, "first")
	writeFile(t, ws, "a.txt", "two\n")
	mustSave(t, r, "second")

	read := func(rev, p string) string { t.Helper(); return readRev(t, r, rev, p) }
	for _, c := range []struct{ rev, path, want string }{
		{"HEAD", "a.txt", "two\n"},
		{"HEAD~1", "a.txt", "one\n"},
		{first.ID.String(), "./a.txt", "one\n"},
		{"HEAD", "dir/b.bin", "\x00\xff\x01"},
		{"HEAD", "caf\xe9/n.txt", "latin-1 name\n"},
		{"HEAD", "link", "a.txt"}, // a symlink's content is its target
	} {
		if got := read(c.rev, c.path); got != c.want {
			t.Errorf("%s:%s = %q, want %q", c.rev, c.path, got, c.want)
		}
	}

	_, _, err := r.OpenFile(ctx, "HEAD", "nope.txt")
	if !errors.Is(err, ErrNotFound) || Hint(err) == "" {
		t.Errorf("missing path: %v (hint %q), want ErrNotFound with a hint", err, Hint(err))
	}
	if _, _, err := r.OpenFile(ctx, "HEAD", "dir"); err == nil || Hint(err) == "" {
		t.Errorf("directory: %v, want an error with a hint", err)
	}
	if _, err := r.Stat(ctx, "HEAD", "a.txt/x"); !errors.Is(err, ErrNotFound) {
		t.Errorf("below a file: %v, want ErrNotFound", err)
	}

	type row struct{ path, typ, mode string }
	rows := func(rev, p string, rec bool) []row {
		t.Helper()
		es, err := r.ListTree(ctx, rev, p, rec)
		if err != nil {
			t.Fatal(err)
		}
		var out []row
		for _, e := range es {
			out = append(out, row{string(e.Path), e.Type, e.Mode})
		}
		return out
	}
	eq := func(got, want []row) {
		t.Helper()
		if len(got) != len(want) {
			t.Fatalf("got %v, want %v", got, want)
		}
		for i := range got {
			if got[i] != want[i] {
				t.Fatalf("got %v, want %v", got, want)
			}
		}
	}
	eq(rows("HEAD", "", false), []row{
		{"a.txt", "file", "100644"}, {"caf\xe9", "dir", "040000"}, {"dir", "dir", "040000"},
		{"link", "symlink", "120000"}, {"run.sh", "file", "100755"},
	})
	eq(rows("HEAD", "dir", false), []row{{"dir/b.bin", "file", "100644"}, {"dir/sub", "dir", "040000"}})
	eq(rows("HEAD", "dir", true), []row{{"dir/b.bin", "file", "100644"}, {"dir/sub/c.txt", "file", "100644"}})
	eq(rows("HEAD", "a.txt", true), []row{{"a.txt", "file", "100644"}})
	if es, _ := r.ListTree(ctx, "HEAD", "", true); len(es) != 6 {
		t.Errorf("recursive listing has %d entries, want 6", len(es))
	}
	if _, err := r.ListTree(ctx, "HEAD", "gone", false); !errors.Is(err, ErrNotFound) {
		t.Errorf("missing directory: %v, want ErrNotFound", err)
	}
	if _, err := r.ListTree(ctx, "nosuchrev", "", false); !errors.Is(err, ErrNotFound) {
		t.Errorf("unknown revision: %v, want ErrNotFound", err)
	}

	// A partial checkpoint holds only its paths.
	res, err := r.Save(ctx, SaveOptions{Paths: []string{"dir/sub"}})
	if err != nil {
		t.Fatal(err)
	}
	part := res.Checkpoint.ID.String()
	eq(rows(part, "", false), []row{{"dir", "dir", "040000"}})
	eq(rows(part, "", true), []row{{"dir/sub/c.txt", "file", "100644"}})
	if _, err := r.Stat(ctx, part, "a.txt"); !errors.Is(err, ErrNotFound) {
		t.Errorf("outside a partial checkpoint's paths: %v, want ErrNotFound", err)
	}
}

// readRev reads file p of revision rev through Repo.OpenFile.
func readRev(t *testing.T, r *Repo, rev, p string) string {
	t.Helper()
	rc, _, err := r.OpenFile(context.Background(), rev, p)
	if err != nil {
		t.Fatal(err)
	}
	defer rc.Close()
	b, err := io.ReadAll(rc)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
