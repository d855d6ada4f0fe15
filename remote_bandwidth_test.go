package ckpt

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"

	"github.com/seed1cedbf7c/ckpt/internal/object"
)

// TestRemotePushAfterTurnSendsWhatChanged: after a turn that changes 20
// files of a 2,000-file tree, a push uploads about those files and the
// directories above them, not whole packs or the tree.
func TestRemotePushAfterTurnSendsWhatChanged(t *testing.T) {
	ctx := context.Background()
	rnd := rand.New(rand.NewPCG(5, 5))
	ws := t.TempDir()
	const dirs, per, size = 20, 100, 4096
	buf := make([]byte, size)
	write := func(d, f int) {
		for i := range buf {
			buf[i] = byte(rnd.Uint32())
		}
		p := filepath.Join(ws, fmt.Sprintf("d%02d", d), fmt.Sprintf("f%03d.bin", f))
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, buf, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for d := 0; d < dirs; d++ {
		for f := 0; f < per; f++ {
			write(d, f)
		}
	}
	r := openTestRepo(t, ws)
	if _, err := r.AddRemote(ctx, RemoteConfig{Name: "origin", URL: fileRemote(t)}); err != nil {
		t.Fatal(err)
	}
	if _, err := r.Save(ctx, SaveOptions{}); err != nil {
		t.Fatal(err)
	}
	cold, err := r.Push(ctx, "", PushOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for d := 0; d < dirs; d++ { // one file in each directory: the worst case for trees
		write(d, rnd.IntN(per))
	}
	sr, err := r.Save(ctx, SaveOptions{})
	if err != nil {
		t.Fatal(err)
	}
	turn, err := r.Push(ctx, "", PushOptions{})
	if err != nil {
		t.Fatal(err)
	}
	// What changed: 20 files, the 20 directories' trees, the root tree
	// and the checkpoint.
	changed := int64(dirs * size)
	root, err := r.st.ReadTree(ctx, sr.Checkpoint.Tree)
	if err != nil {
		t.Fatal(err)
	}
	changed += int64(len(root.Encode()))
	for _, e := range root.Entries {
		if object.IsDir(e.Mode) {
			sub, err := r.st.ReadTree(ctx, e.ID)
			if err != nil {
				t.Fatal(err)
			}
			changed += int64(len(sub.Encode()))
		}
	}
	t.Logf("cold push %d bytes; after a 20-file turn %d bytes (%d objects) for %d bytes that changed", cold.Bytes, turn.Bytes, turn.Objects, changed)
	if turn.Objects != dirs+dirs+1+1 {
		t.Errorf("the turn pushed %d objects, want %d (20 files, 20 directories, the root, the checkpoint)", turn.Objects, dirs*2+2)
	}
	if turn.Bytes > changed*11/10+4096 {
		t.Errorf("the turn uploaded %d bytes for %d bytes that changed", turn.Bytes, changed)
	}
}
