package remote

import (
	"context"
	"errors"
	"math/rand/v2"
	"sync/atomic"
	"time"
)

// Retry wraps a backend so that operations failing for a reason that may
// pass (a reset connection, a 500 or 503, a short read) are tried again,
// with exponential backoff and jitter, at most Attempts times in all.
// Missing objects, failed conditions, refused credentials and a missing
// bucket are answers, not faults: they return at once.
type Retry struct {
	Backend
	Attempts int           // 0: 6
	Base     time.Duration // first backoff (0: 100 ms)
	Max      time.Duration // longest backoff (0: 5 s)
	// Retries counts the retries made (for tests and --verbose).
	Retries atomic.Int64
}

func (r *Retry) do(ctx context.Context, fn func() error) error {
	attempts := r.Attempts
	if attempts <= 0 {
		attempts = 6
	}
	base, maxd := r.Base, r.Max
	if base <= 0 {
		base = 100 * time.Millisecond
	}
	if maxd <= 0 {
		maxd = 5 * time.Second
	}
	var err error
	for i := 0; i < attempts; i++ {
		if i > 0 {
			r.Retries.Add(1)
			d := base << (i - 1)
			if d > maxd {
				d = maxd
			}
			d = d/2 + rand.N(d/2+1)
			select {
			case <-ctx.Done():
				return errors.Join(ctx.Err(), err)
			case <-time.After(d):
			}
		}
		if err = fn(); err == nil || !transient(ctx, err) {
			return err
		}
	}
	return err
}

// transient reports whether err may pass on a retry.
func transient(ctx context.Context, err error) bool {
	if ctx.Err() != nil {
		return false
	}
	var (
		be *BucketError
		ae *AccessError
		re *RegionError
		ce *NoCredentialsError
		qe *RequestError
	)
	switch {
	case errors.Is(err, ErrNotExist), errors.Is(err, ErrPrecondition), errors.Is(err, ErrShort),
		errors.As(err, &be), errors.As(err, &ae), errors.As(err, &re), errors.As(err, &ce), errors.As(err, &qe),
		errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		return false
	}
	return true
}

func (r *Retry) Get(ctx context.Context, key string) (data []byte, etag string, err error) {
	err = r.do(ctx, func() error {
		var e error
		data, etag, e = r.Backend.Get(ctx, key)
		return e
	})
	return data, etag, err
}

func (r *Retry) GetRange(ctx context.Context, key string, offset, length int64) (data []byte, err error) {
	err = r.do(ctx, func() error {
		var e error
		data, e = r.Backend.GetRange(ctx, key, offset, length)
		return e
	})
	return data, err
}

// Put retries a write. A conditional write that failed in a way that
// leaves its outcome unknown may, on the retry, find its own value and
// report ErrPrecondition: callers of conditional writes check what is
// there before they take that as a conflict.
func (r *Retry) Put(ctx context.Context, key string, data []byte, cond Cond) (etag string, err error) {
	err = r.do(ctx, func() error {
		var e error
		etag, e = r.Backend.Put(ctx, key, data, cond)
		return e
	})
	return etag, err
}

func (r *Retry) List(ctx context.Context, prefix string) (out []Entry, err error) {
	err = r.do(ctx, func() error {
		var e error
		out, e = r.Backend.List(ctx, prefix)
		return e
	})
	return out, err
}

func (r *Retry) Delete(ctx context.Context, key string) error {
	return r.do(ctx, func() error { return r.Backend.Delete(ctx, key) })
}
