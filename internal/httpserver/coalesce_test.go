package httpserver

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// waitFor polls cond (a minute at most: the test then fails).
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for i := 0; !cond(); i++ {
		if i == 12000 {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// Callers that arrive while a run is under way share the next run, and
// each gets a result computed after it called: a change made before a
// request is in its answer.
func TestCoalescedSharesTheNextRun(t *testing.T) {
	var (
		version atomic.Int64 // the "store"
		release = make(chan struct{})
		first   atomic.Bool
	)
	c := newCoalesced(func(ctx context.Context) (int64, error) {
		v := version.Load()
		if first.CompareAndSwap(false, true) {
			<-release // the first run is slow
		}
		return v, nil
	})
	ctx := context.Background()
	var wg sync.WaitGroup
	var a int64
	wg.Go(func() {
		var err error
		if a, err = c.do(ctx); err != nil {
			t.Error(err)
		}
	})
	waitFor(t, "the first run", first.Load)
	version.Store(1) // a save while the first run reads
	const late = 10
	got := make([]int64, late)
	for i := range late {
		wg.Go(func() {
			var err error
			if got[i], err = c.do(ctx); err != nil {
				t.Error(err)
			}
		})
	}
	waitFor(t, "the late callers to queue", func() bool { return c.waiting() == late })
	close(release)
	wg.Wait()
	if a != 0 {
		t.Errorf("the first caller got %d, want 0", a)
	}
	for i, v := range got {
		if v != 1 {
			t.Errorf("late caller %d got %d: a result read before its request", i, v)
		}
	}
	c.mu.Lock()
	runs := c.runs
	c.mu.Unlock()
	if runs != 2 {
		t.Errorf("%d runs for 1+%d callers, want 2", runs, late)
	}
}

// A run whose callers have all gone is cancelled, and a caller that
// comes after gets a run of its own.
func TestCoalescedCancelsARunNobodyWaitsFor(t *testing.T) {
	started := make(chan struct{}, 4)
	var n atomic.Int64
	c := newCoalesced(func(ctx context.Context) (int64, error) {
		k := n.Add(1)
		started <- struct{}{}
		if k == 1 {
			<-ctx.Done()
			return 0, ctx.Err()
		}
		return k, nil
	})
	ctx, cancel := context.WithCancel(context.Background())
	errc := make(chan error, 1)
	go func() { _, err := c.do(ctx); errc <- err }()
	<-started
	cancel()
	if err := <-errc; !errors.Is(err, context.Canceled) {
		t.Fatalf("the caller that gave up: %v", err)
	}
	v, err := c.do(context.Background())
	if err != nil || v != 2 {
		t.Fatalf("the next caller: %d, %v; want a run of its own (2)", v, err)
	}
}
