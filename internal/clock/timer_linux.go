package clock

import (
	"fmt"
	"os"
	"time"

	"golang.org/x/sys/unix"
)

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
