package engine

import (
	"time"

	"github.com/perflab/perflab/internal/clock"
)

// Clock is the time a run goes by: when operations start and end, when the
// schedule's arrivals are due, when intervals close. Run uses the machine's
// clock unless the workload names another; tests give a fake one, so that
// what a run records does not depend on how busy the machine was.
type Clock interface {
	Now() time.Time
	// NewTimer returns a timer that fires once, d from now (at once for
	// d <= 0).
	NewTimer(d time.Duration) Timer
}

// Timer is a Clock's one-shot timer, as time.Timer: after Reset or Stop
// returns, no value from before is received.
type Timer interface {
	C() <-chan time.Time
	Reset(d time.Duration)
	Stop()
}

// realClock is the machine's clock.
type realClock struct{}

func (realClock) Now() time.Time { return time.Now() }

func (realClock) NewTimer(d time.Duration) Timer { return realTimer{time.NewTimer(d)} }

type realTimer struct{ t *time.Timer }

func (t realTimer) C() <-chan time.Time   { return t.t.C }
func (t realTimer) Reset(d time.Duration) { t.t.Reset(d) }
func (t realTimer) Stop()                 { t.t.Stop() }

// sleeper waits the last stretch before a due arrival. On the machine's
// clock it sleeps on a fine timer (a Go timer wakes up to 1 ms late); on
// another clock it waits on that clock's timer. Close it when done.
type sleeper struct {
	fine  *clock.Timer
	timer Timer // not the machine's clock
}

func (r *run) newSleeper() *sleeper {
	if _, machine := r.clk.(realClock); !machine {
		return &sleeper{timer: r.clk.NewTimer(time.Hour)}
	}
	fine, err := clock.NewTimer()
	if err != nil {
		fine = nil // clock.Timer falls back to time.Sleep
	}
	return &sleeper{fine: fine}
}

func (s *sleeper) sleep(d time.Duration) {
	if s.timer == nil {
		s.fine.Sleep(d)
		return
	}
	s.timer.Reset(d)
	<-s.timer.C()
}

func (s *sleeper) close() {
	if s.fine != nil {
		_ = s.fine.Close()
	}
	if s.timer != nil {
		s.timer.Stop()
	}
}
