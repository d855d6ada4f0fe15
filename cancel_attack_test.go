//go:build linux

package ckpt

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// A cold save of a few thousand files cancelled from another goroutine at
// a random moment: it either commits whole or leaves HEAD and the list of
// checkpoints as they were; a cancelled save's error says so; the next
// save and fsck are clean and every checkpoint restores exactly.
func TestAttackCancelColdSaveAtRandom(t *testing.T) {
	ctx := context.Background()
	g := dirsOfFiles{dirs: 40, files: 50, pad: 200}
	r, ws := g.open(t)
	rnd := rand.New(rand.NewPCG(11, 12))
	cancelled, committed := 0, 0
	rounds := 12
	if testing.Short() {
		rounds = 8
	}
	for round := 0; round < rounds; round++ {
		// Change a few files so each save has something to store.
		g.change(t, ws, rnd, 30, fmt.Sprint("round ", round))
		before, err := r.List(ctx, ListOptions{})
		if err != nil {
			t.Fatal(err)
		}
		cctx, cancel := context.WithCancel(ctx)
		timer := time.AfterFunc(time.Duration(rnd.IntN(150_000))*time.Microsecond, cancel)
		res, err := r.Save(cctx, SaveOptions{AllowEmpty: true, Message: fmt.Sprint("round ", round)})
		timer.Stop()
		cancel()
		after, lerr := r.List(ctx, ListOptions{})
		if lerr != nil {
			t.Fatal(lerr)
		}
		if err == nil {
			committed++
			if len(after) != len(before)+1 || after[0].ID != res.Checkpoint.ID {
				t.Fatalf("round %d: a save that succeeded is not the newest checkpoint", round)
			}
			continue
		}
		cancelled++
		if !errors.Is(err, context.Canceled) {
			t.Logf("round %d: a cancelled save returned %v (not context.Canceled)", round, err)
		}
		if len(after) != len(before) || (len(before) > 0 && after[0].ID != before[0].ID) {
			t.Fatalf("round %d: a failed save (%v) changed the checkpoints: %d -> %d", round, err, len(before), len(after))
		}
		if fr, err := r.Fsck(ctx); err != nil || len(fr.Problems) != 0 {
			t.Fatalf("round %d: fsck after a cancelled save: %+v %v", round, fr, err)
		}
		// A normal save right after.
		res, err = r.Save(ctx, SaveOptions{AllowEmpty: true})
		if err != nil {
			t.Fatalf("round %d: save after a cancelled one: %v", round, err)
		}
		if got := fullScanTree(t, r); got != res.Checkpoint.Tree {
			t.Fatalf("round %d: save after a cancelled one recorded %s, a full scan sees %s", round, res.Checkpoint.Tree, got)
		}
	}
	t.Logf("%d saves cancelled, %d committed", cancelled, committed)
	attackVerify(t, r, ws)
}

// dirsOfFiles is a workspace of dirs directories of files small files
// each, every file's content padded with pad digits.
type dirsOfFiles struct{ dirs, files, pad int }

func (g dirsOfFiles) path(ws string, d, f int) string {
	return filepath.Join(ws, fmt.Sprintf("dir%02d", d), fmt.Sprintf("f%03d.txt", f))
}

// open makes the workspace and opens it with a store of its own.
func (g dirsOfFiles) open(t *testing.T) (*Repo, string) {
	t.Helper()
	ws := t.TempDir()
	for d := 0; d < g.dirs; d++ {
		if err := os.MkdirAll(filepath.Dir(g.path(ws, d, 0)), 0o755); err != nil {
			t.Fatal(err)
		}
		for f := 0; f < g.files; f++ {
			content := fmt.Sprintf("dir %d file %d\n", d, f)
			if g.pad > 0 {
				content += fmt.Sprintf("%0*d\n", g.pad, d*f)
			}
			if err := os.WriteFile(g.path(ws, d, f), []byte(content), 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	r, err := Open(context.Background(), ws, Options{Store: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close() })
	return r, ws
}

// change writes n files picked at random, tagging their content.
func (g dirsOfFiles) change(t *testing.T, ws string, rnd *rand.Rand, n int, tag string) {
	t.Helper()
	for i := 0; i < n; i++ {
		p := g.path(ws, rnd.IntN(g.dirs), rnd.IntN(g.files))
		if err := os.WriteFile(p, []byte(fmt.Sprint(tag, " ", i, "\n")), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}
