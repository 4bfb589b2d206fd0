package driver

import (
	"context"
	"time"
)

// Clock is the time a read-back waits by. Drivers use WallClock; tests
// give them a fake one, so that re-checks with backoff take no real time.
type Clock interface {
	Now() time.Time
	// Sleep waits d, or until ctx is done, and then returns ctx's error.
	Sleep(ctx context.Context, d time.Duration) error
}

// WallClock is the real time.
type WallClock struct{}

// Now is time.Now.
func (WallClock) Now() time.Time { return time.Now() }

// Sleep waits d or until ctx is done.
func (WallClock) Sleep(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// The backoff between read-back looks: the first re-check this long after
// the first look, each wait after that twice the last, at most
// RecheckMaxWait.
const (
	RecheckFirstWait = 500 * time.Millisecond
	RecheckMaxWait   = 5 * time.Second
)

// Recheck calls look at once and, as long as it returns true (something
// is still missing), again after a wait that starts at RecheckFirstWait
// and doubles up to RecheckMaxWait, until deadline: the last look is at
// the deadline, never after it (unless look itself runs past it). A look
// already under way when the deadline passes is not cut short. It
// returns how many looks it made, and ctx's error when ctx ended first.
func Recheck(ctx context.Context, clk Clock, deadline time.Time, look func(ctx context.Context) (again bool)) (int, error) {
	wait := RecheckFirstWait
	for n := 1; ; n++ {
		if !look(ctx) {
			return n, nil
		}
		left := deadline.Sub(clk.Now())
		if left <= 0 {
			return n, nil
		}
		if err := clk.Sleep(ctx, min(wait, left)); err != nil {
			return n, err
		}
		wait = min(2*wait, RecheckMaxWait)
	}
}

// Settle sets c.State from how the read-back ended: lost when an answer
// at the end still showed data missing; else unverified, with reason,
// when some of it got no answer; else late when c.Late is not 0; else
// ok.
func (c *Check) Settle(lost, unanswered bool, reason string) {
	switch {
	case lost:
		c.State = CheckLost
	case unanswered:
		c.State, c.Reason = CheckUnverified, reason
	case c.Late != 0:
		c.State = CheckLate
	default:
		c.State = CheckOK
	}
}
