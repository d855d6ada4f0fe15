package testutil

import (
	"sync"
	"time"
)

// Clock is a settable clock for Options.Now; it moves only when told.
// It is safe for concurrent use.
type Clock struct {
	mu sync.Mutex
	t  time.Time
}

// NewClock returns a clock set to an RFC 3339 time.
func NewClock(rfc3339 string) *Clock {
	c := &Clock{}
	c.Set(rfc3339)
	return c
}

// Now returns the clock's time.
func (c *Clock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }

// Set sets the clock to an RFC 3339 time; it panics on a malformed one.
func (c *Clock) Set(rfc3339 string) {
	t, err := time.Parse(time.RFC3339, rfc3339)
	if err != nil {
		panic(err)
	}
	c.mu.Lock()
	c.t = t
	c.mu.Unlock()
}

// Add moves the clock by d.
func (c *Clock) Add(d time.Duration) { c.mu.Lock(); c.t = c.t.Add(d); c.mu.Unlock() }
