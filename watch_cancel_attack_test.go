//go:build linux

package ckpt

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"testing"
	"time"
)

// A save the watcher serves, its client cancelled at a random moment: the
// client's answer must be true once the watcher is done. An error means
// no checkpoint was made; a result is the newest checkpoint. (The client
// used to stop waiting at the cancellation, while the watcher could
// still commit the save it had begun for it.)
func TestAttackCancelServedSaveAtRandom(t *testing.T) {
	ctx := context.Background()
	g := dirsOfFiles{dirs: 20, files: 50}
	r, ws := g.open(t)
	if _, err := r.Save(ctx, SaveOptions{}); err != nil {
		t.Fatal(err)
	}
	startWatcher(t, r)
	nl := r.st.(namedLocker)
	rnd := rand.New(rand.NewPCG(21, 22))
	// Cancel within twice what a served save of such a change takes here
	// (the race detector makes it many times slower).
	var span time.Duration
	for i := 0; i < 3; i++ {
		g.change(t, ws, rnd, 40, fmt.Sprint("warm-up ", i))
		start := time.Now()
		if _, err := r.Save(ctx, SaveOptions{Kind: KindTurn}); err != nil {
			t.Fatal(err)
		}
		span = max(span, 2*time.Since(start))
	}
	rounds := 60
	if testing.Short() {
		rounds = 30
	}
	served, cancelled := 0, 0
	for round := 0; round < rounds; round++ {
		g.change(t, ws, rnd, 40, fmt.Sprint("round ", round))
		before, err := r.List(ctx, ListOptions{})
		if err != nil {
			t.Fatal(err)
		}
		cctx, cancel := context.WithCancel(ctx)
		timer := time.AfterFunc(time.Duration(rnd.Int64N(int64(span))), cancel)
		res, err := r.Save(cctx, SaveOptions{Kind: KindTurn, Message: fmt.Sprint("round ", round)})
		timer.Stop()
		cancel()
		// Whatever the watcher was doing for the client is over.
		if err := r.waitServeLock(ctx, nl); err != nil {
			t.Fatal(err)
		}
		after, lerr := r.List(ctx, ListOptions{})
		if lerr != nil {
			t.Fatal(lerr)
		}
		if err == nil {
			if res.Served {
				served++
			}
			if len(after) != len(before)+1 || after[0].ID != res.Checkpoint.ID {
				t.Fatalf("round %d: a save that returned %s is not the newest checkpoint", round, res.Checkpoint.ID)
			}
			continue
		}
		cancelled++
		if !errors.Is(err, context.Canceled) {
			t.Errorf("round %d: a cancelled save returned %v, not an error wrapping context.Canceled", round, err)
		}
		if len(after) != len(before) {
			t.Fatalf("round %d: a save that failed (%v) made a checkpoint: %d -> %d", round, err, len(before), len(after))
		}
	}
	t.Logf("%d saves served, %d cancelled", served, cancelled)
	if served == 0 || cancelled == 0 {
		t.Fatalf("%d saves served, %d cancelled: the test wants both", served, cancelled)
	}
	attackVerify(t, r, ws)
}
