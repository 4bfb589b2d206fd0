package testutil

import (
	"context"
	"sync"
	"time"
)

// FakeClock is a clock whose Sleep returns at once and moves Now on by
// the time asked (a driver.Clock). Tests of code that waits and re-checks
// use it to run through minutes of backoff without waiting, and count
// or read the waits afterwards. It is safe for concurrent use: a fake
// server may read Now while the code under test sleeps.
type FakeClock struct {
	mu         sync.Mutex
	start, now time.Time
	sleeps     []time.Duration
}

// NewFakeClock returns a clock that reads start until it sleeps.
func NewFakeClock(start time.Time) *FakeClock { return &FakeClock{start: start, now: start} }

// Start is the time the clock started at.
func (c *FakeClock) Start() time.Time { return c.start }

// Now is the clock's time: start plus every sleep so far.
func (c *FakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

// Sleep moves the clock on by d (when positive) and returns ctx's error.
func (c *FakeClock) Sleep(ctx context.Context, d time.Duration) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.sleeps = append(c.sleeps, d)
	if d > 0 {
		c.now = c.now.Add(d)
	}
	return ctx.Err()
}

// Sleeps returns every wait asked for so far, in order.
func (c *FakeClock) Sleeps() []time.Duration {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]time.Duration(nil), c.sleeps...)
}
