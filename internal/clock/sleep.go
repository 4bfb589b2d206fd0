// Package clock sleeps precisely. Go's timers wake a goroutine through the
// network poller, whose timeout has millisecond resolution on Linux: a
// 50 µs sleep takes about 1 ms, a 20 ms one up to 21 ms. A load generator
// that dispatches late, or a test target that answers late, bends every
// figure perflab reports; so the last stretch of a wait is slept on a
// timerfd read through the poller: it wakes within about 0.1 ms and, unlike
// nanosleep, does not hold a Go P (with GOMAXPROCS=1 a nanosleep starves
// every other goroutine until sysmon steps in). Outside Linux there is no
// timerfd: the last stretch is a time.Sleep (timer_other.go).
package clock

import (
	"context"
	"runtime"
	"time"
)

// Coarse is the part of a wait left to the fine timer; longer waits sleep
// on a Go timer until Coarse before their end.
const Coarse = 2 * time.Millisecond

// Sleep waits d, or until ctx is done, and reports whether it waited to
// the end with ctx still live. Only the last Coarse of the wait ignores ctx.
func Sleep(ctx context.Context, d time.Duration) bool {
	return Until(ctx, time.Now().Add(d))
}

// Until waits until t, or until ctx is done; see Sleep.
func Until(ctx context.Context, t time.Time) bool {
	var w Waiter
	defer w.Close()
	return w.Until(ctx, t)
}

// Waiter waits for a series of deadlines in one goroutine, such as the
// tokens of a stream: a Go timer for the coarse part of each wait, and one
// fine timer for the last Coarse, opened on the first wait that needs it
// and held until Close rather than opened for every deadline. The zero
// Waiter is ready to use.
type Waiter struct {
	coarse *time.Timer
	fine   *Timer // nil until needed; stays nil when timerfd is unavailable: Timer.Sleep falls back to time.Sleep
}

// Until waits until t, or until ctx is done, and reports whether ctx is
// still live. Only the last Coarse of a wait ignores ctx.
func (w *Waiter) Until(ctx context.Context, t time.Time) bool {
	if d := time.Until(t) - Coarse; d > 0 {
		if w.coarse == nil {
			w.coarse = time.NewTimer(d)
		} else {
			w.coarse.Reset(d)
		}
		select {
		case <-w.coarse.C:
		case <-ctx.Done():
			w.coarse.Stop()
			return false
		}
	}
	if rest := time.Until(t); rest > 0 {
		if w.fine == nil {
			w.fine, _ = NewTimer()
		}
		w.fine.Sleep(rest)
	}
	return ctx.Err() == nil
}

// Close releases the Waiter's timers.
func (w *Waiter) Close() {
	if w.coarse != nil {
		w.coarse.Stop()
	}
	if w.fine != nil {
		_ = w.fine.Close()
	}
}

// Spin is how much of a wait UntilSpun spends spinning.
const Spin = 200 * time.Microsecond

// UntilSpun waits until t as Until does up to Spin before it, then spins
// (yielding the processor to other goroutines between looks at the
// clock): the thread never goes idle, so the wait ends within a few
// microseconds of t instead of the 40–100 µs a wake-up from the poller
// takes. It costs up to Spin of CPU per wait: for a fixture whose delay
// must be exact, such as the built-in gateway's.
func UntilSpun(ctx context.Context, t time.Time) bool {
	if !Until(ctx, t.Add(-Spin)) {
		return false
	}
	for time.Now().Before(t) {
		runtime.Gosched()
	}
	return ctx.Err() == nil
}
