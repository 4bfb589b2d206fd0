// Package clock sleeps precisely. Go's timers wake a goroutine through the
// network poller, whose timeout has millisecond resolution on Linux: a
// 50 µs sleep takes about 1 ms, a 20 ms one up to 21 ms. A load generator
// that dispatches late, or a test target that answers late, bends every
// figure perflab reports; so the last stretch of a wait is slept on a
// timerfd read through the poller: it wakes within about 0.1 ms and, unlike
// nanosleep, does not hold a Go P (with GOMAXPROCS=1 a nanosleep starves
// every other goroutine until sysmon steps in).
package clock

import (
	"context"
	"fmt"
	"os"
	"runtime"
	"time"

	"golang.org/x/sys/unix"
)

// Coarse is the part of a wait left to the fine timer; longer waits sleep
// on a Go timer until Coarse before their end.
const Coarse = 2 * time.Millisecond

// Timer is a fine timer for one goroutine at a time.
type Timer struct {
	fd  int
	f   *os.File
	buf [8]byte
}

// NewTimer returns a fine timer; Close it when done.
func NewTimer() (*Timer, error) {
	fd, err := unix.TimerfdCreate(unix.CLOCK_MONOTONIC, unix.TFD_NONBLOCK|unix.TFD_CLOEXEC)
	if err != nil {
		return nil, fmt.Errorf("cannot create timerfd: %w", err)
	}
	return &Timer{fd: fd, f: os.NewFile(uintptr(fd), "timerfd")}, nil
}

// Sleep waits d, parking the goroutine in the network poller. A nil
// Timer (timerfd unavailable) falls back to time.Sleep.
func (t *Timer) Sleep(d time.Duration) {
	if d <= 0 {
		return
	}
	if t == nil {
		time.Sleep(d)
		return
	}
	spec := unix.ItimerSpec{Value: unix.NsecToTimespec(int64(d))}
	if err := unix.TimerfdSettime(t.fd, 0, &spec, nil); err != nil {
		time.Sleep(d)
		return
	}
	if _, err := t.f.Read(t.buf[:]); err != nil {
		time.Sleep(d)
	}
}

// Close releases the timer.
func (t *Timer) Close() error { return t.f.Close() }

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
	if rest := time.Until(t); rest > 0 {
		ft, err := NewTimer()
		if err != nil {
			time.Sleep(rest)
		} else {
			ft.Sleep(rest)
			ft.Close()
		}
	}
	return ctx.Err() == nil
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
