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
	ws := t.TempDir()
	for d := 0; d < 40; d++ {
		dir := filepath.Join(ws, fmt.Sprintf("dir%02d", d))
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		for f := 0; f < 50; f++ {
			os.WriteFile(filepath.Join(dir, fmt.Sprintf("f%03d.txt", f)), []byte(fmt.Sprintf("dir %d file %d\n%0200d\n", d, f, d*f)), 0o644)
		}
	}
	r, err := Open(ctx, ws, Options{Store: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	rnd := rand.New(rand.NewPCG(11, 12))
	cancelled, committed := 0, 0
	rounds := 12
	if testing.Short() {
		rounds = 8
	}
	for round := 0; round < rounds; round++ {
		// Change a few files so each save has something to store.
		for i := 0; i < 30; i++ {
			p := filepath.Join(ws, fmt.Sprintf("dir%02d", rnd.IntN(40)), fmt.Sprintf("f%03d.txt", rnd.IntN(50)))
			os.WriteFile(p, []byte(fmt.Sprint("round ", round, " ", i, "\n")), 0o644)
		}
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
