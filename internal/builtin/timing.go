package builtin

import (
	"context"
	"time"

	"github.com/perflab/perflab/internal/clock"
)

// answerClock times a built-in target's answers: it reads the monotonic
// clock and waits for deadlines. fineClock and spinClock wait with package
// clock, to about 0.1 ms and a few µs; tests put in a fake that records
// every deadline and returns at once, so they check when an answer is due
// without timing it.
type answerClock interface {
	now() time.Time
	// waiter returns what waits for the deadlines of one request; the
	// caller closes it when the request is done.
	waiter() waiter
}

type waiter interface {
	// until waits until t, or until ctx is done, and reports whether ctx
	// is still live.
	until(ctx context.Context, t time.Time) bool
	close()
}

// fineClock waits on a Go timer, then on a fine timer for the last
// clock.Coarse: opened on a request's first wait, held to its end
// (clock.Waiter).
type fineClock struct{}

func (fineClock) now() time.Time { return time.Now() }
func (fineClock) waiter() waiter { return &fineWaiter{} }

// spinClock spins the end of every wait (clock.UntilSpun), for a delay
// that must be exact, such as the gateway's.
type spinClock struct{}

func (spinClock) now() time.Time { return time.Now() }
func (spinClock) waiter() waiter { return spinWaiter{} }

type spinWaiter struct{}

func (spinWaiter) until(ctx context.Context, t time.Time) bool { return clock.UntilSpun(ctx, t) }
func (spinWaiter) close()                                      {}

// sleep waits d on c, or until ctx is done, and reports whether the wait
// ran to the end with ctx still live.
func sleep(ctx context.Context, c answerClock, d time.Duration) bool {
	if d <= 0 {
		return ctx.Err() == nil
	}
	return sleepUntil(ctx, c, c.now().Add(d))
}

// sleepUntil waits until t on c, or until ctx is done, and reports
// whether ctx is still live.
func sleepUntil(ctx context.Context, c answerClock, t time.Time) bool {
	w := c.waiter()
	defer w.close()
	return w.until(ctx, t)
}

// fineWaiter waits for the deadlines of one request, such as the tokens of
// a stream, on one clock.Waiter.
type fineWaiter struct{ w clock.Waiter }

func (f *fineWaiter) until(ctx context.Context, t time.Time) bool { return f.w.Until(ctx, t) }
func (f *fineWaiter) close()                                      { f.w.Close() }
