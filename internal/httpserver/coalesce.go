package httpserver

import (
	"context"
	"sync"
)

// coalesced runs an expensive read (GET /api/stats adds up the whole
// store and walks HEAD's trees; the store's growth reads its history)
// once at a time, however many requests ask for it at once.
// Each caller gets the result of a run that began after it called, so it
// sees every change made before its request; the callers that arrive
// while a run is under way share the next one. Fifty clients asking
// together cost two runs, not fifty at once competing for the CPU.
type coalesced[T any] struct {
	fn func(context.Context) (T, error)

	mu      sync.Mutex
	running bool
	next    *batch[T] // the callers waiting for the next run
	runs    int       // runs started (for tests)
}

// batch is one run and the callers that share it.
type batch[T any] struct {
	ctx     context.Context
	cancel  context.CancelFunc
	waiters int
	done    chan struct{}
	val     T
	err     error
}

func newCoalesced[T any](fn func(context.Context) (T, error)) *coalesced[T] {
	return &coalesced[T]{fn: fn}
}

// do returns the result of a run of fn that begins after this call. The
// run's context is cancelled once every caller sharing it has gone.
func (c *coalesced[T]) do(ctx context.Context) (T, error) {
	c.mu.Lock()
	b := c.next
	if b == nil || b.waiters == 0 {
		// None waiting, or only callers that all gave up: a new batch.
		b = &batch[T]{done: make(chan struct{})}
		b.ctx, b.cancel = context.WithCancel(context.WithoutCancel(ctx))
		c.next = b
	}
	b.waiters++
	if !c.running {
		c.startLocked()
	}
	c.mu.Unlock()
	select {
	case <-b.done:
		return b.val, b.err
	case <-ctx.Done():
		c.mu.Lock()
		b.waiters--
		if b.waiters == 0 {
			b.cancel()
		}
		c.mu.Unlock()
		var zero T
		return zero, ctx.Err()
	}
}

// startLocked starts the next batch's run; c.mu is held.
func (c *coalesced[T]) startLocked() {
	b := c.next
	c.next = nil
	c.running = true
	c.runs++
	go func() {
		b.val, b.err = c.fn(b.ctx)
		b.cancel()
		close(b.done)
		c.mu.Lock()
		defer c.mu.Unlock()
		c.running = false
		if c.next != nil && c.next.waiters > 0 {
			c.startLocked()
		}
	}()
}

// waiting reports how many callers wait for the next run (for tests).
func (c *coalesced[T]) waiting() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.next == nil {
		return 0
	}
	return c.next.waiters
}
