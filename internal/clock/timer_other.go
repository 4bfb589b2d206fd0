//go:build !linux

package clock

import (
	"errors"
	"time"
)

// Timer is a fine timer; outside Linux there is no timerfd, so NewTimer
// returns none and a nil Timer sleeps with time.Sleep.
type Timer struct{}

// NewTimer fails outside Linux: the Waiter then sleeps on Go's timers.
func NewTimer() (*Timer, error) {
	return nil, errors.New("cannot create a fine timer: timerfd is Linux only")
}

// Sleep waits d with time.Sleep.
func (t *Timer) Sleep(d time.Duration) {
	if d > 0 {
		time.Sleep(d)
	}
}

// Close releases nothing.
func (t *Timer) Close() error { return nil }
