package ckpt

import (
	"context"
	"fmt"
	"testing"
)

// An unchanged save records no checkpoint, but the stat cache it writes
// must stay usable: every later save of the unchanged tree, in this
// process or another, reads no file. (The cache once recorded a count of
// cache writes that the unchanged save's rolled-back transaction never
// stored; the next save took it for a cache ahead of its database, dropped
// it and read every file again, and so on for every save after.)
func TestUnchangedSavesKeepTheStatCache(t *testing.T) {
	ctx := context.Background()
	files := map[string]string{}
	for i := range 50 {
		files[fmt.Sprintf("d%d/f.txt", i%5)+fmt.Sprint(i)] = fmt.Sprint("file ", i, "\n")
	}
	r, ws := openTest(t, files)
	if _, err := r.Save(ctx, SaveOptions{}); err != nil {
		t.Fatal(err)
	}
	for i := range 4 {
		res, err := r.Save(ctx, SaveOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if res.Created || res.Hashed != 0 {
			t.Fatalf("unchanged save %d: created %v, read %d files", i+1, res.Created, res.Hashed)
		}
	}
	// Another process (a new Repo on the same store) trusts it too.
	r2, err := Open(ctx, ws, Options{Store: r.StoreDir()})
	if err != nil {
		t.Fatal(err)
	}
	defer r2.Close()
	if res, err := r2.Save(ctx, SaveOptions{}); err != nil || res.Hashed != 0 {
		t.Fatalf("a new process's unchanged save read %d files (%v)", res.Hashed, err)
	}
}
