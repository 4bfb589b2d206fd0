// Package clock sleeps precisely. Go's timers wake a goroutine through the
// network poller, whose timeout has millisecond resolution on Linux: a
// 50 µs sleep takes about 1 ms, a 20 ms one up to 21 ms. A load generator
// that dispatches late, or a test target that answers late, bends every
// figure perflab reports; so the last stretch of a wait is slept with
// nanosleep(2), which wakes within about 0.1 ms.
package clock

import (
	"context"
	"syscall"
	"time"
)

// Coarse is the part of a wait left to nanosleep; longer waits sleep on a
// Go timer until Coarse before their end.
const Coarse = 2 * time.Millisecond

// Sleep waits d, or until ctx is done, and reports whether it waited to
// the end with ctx still live. Only the last Coarse of the wait ignores ctx.
func Sleep(ctx context.Context, d time.Duration) bool {
	return Until(ctx, time.Now().Add(d))
}

// Until waits until t, or until ctx is done; see Sleep.
func Until(ctx context.Context, t time.Time) bool {
	if d := time.Until(t) - Coarse; d > 0 {
		timer := time.NewTimer(d)
		select {
		case <-timer.C:
		case <-ctx.Done():
			timer.Stop()
			return false
		}
	}
	Fine(time.Until(t))
	return ctx.Err() == nil
}

// Fine sleeps d with nanosleep(2), blocking the calling thread; use it only
// for waits of a few milliseconds at most.
func Fine(d time.Duration) {
	if d <= 0 {
		return
	}
	ts := syscall.NsecToTimespec(int64(d))
	for {
		var rem syscall.Timespec
		err := syscall.Nanosleep(&ts, &rem)
		if err != syscall.EINTR {
			return
		}
		ts = rem
	}
}
