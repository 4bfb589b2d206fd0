package engine

import (
	"context"
	"time"

	"github.com/perflab/perflab/internal/clock"
	"github.com/perflab/perflab/internal/driver"
)

// vu is one virtual user of the open model's pool: it waits on its own
// channel for an intended start time and returns itself to the idle pool
// when the operation ends.
type vu struct {
	id   int
	work chan time.Time
	res  driver.Result
}

// runOpen issues arrivals on the schedule. Each arrival goes to an idle VU;
// if none is idle, a new VU starts up to VUsMax; at the cap the arrival waits
// in the backlog (if one is allowed and has room) or is counted as dropped.
// A late dispatch never moves an arrival's intended start: latency is
// measured from the schedule, so a stalling target cannot hide.
func (r *run) runOpen(stop context.Context) Summary {
	idle := make(chan *vu, r.w.VUsMax)
	for i := 0; i < r.w.VUsMin; i++ {
		idle <- r.startVU(idle)
	}
	var (
		sum     Summary
		backlog []time.Time // FIFO of intended starts waiting for a VU
		timer   = time.NewTimer(time.Hour)
		n       uint64
	)
	timer.Stop()
	defer timer.Stop()
	fine, err := clock.NewTimer()
	if err != nil {
		fine = nil
	} else {
		defer fine.Close()
	}
	for {
		backlog = handOut(idle, backlog)
		elapsed := time.Since(r.start)
		wait, over := r.w.Rate.Pace(elapsed, n)
		if over {
			// The schedule lasts its whole duration, past its last arrival.
			wait = r.w.Rate.Duration() - elapsed
			if wait <= 0 && len(backlog) == 0 {
				break
			}
			if len(backlog) > 0 {
				wait = max(wait, time.Hour) // wait for VUs to take the backlog
			}
		}
		if stop.Err() != nil {
			return r.stopOpen(idle, n, sum.Dropped, backlog)
		}
		if wait > 0 {
			if wait <= clock.Coarse && len(backlog) == 0 {
				fine.Sleep(wait) // close to the due time: a Go timer would wake up to 1 ms late
			} else {
				var freed chan *vu // only worth waking for while arrivals wait
				if len(backlog) > 0 {
					freed = idle
				}
				if wait > clock.Coarse {
					wait -= clock.Coarse // wake early; the next pass sleeps the rest finely
				}
				timer.Reset(wait)
				select {
				case <-stop.Done():
					return r.stopOpen(idle, n, sum.Dropped, backlog)
				case v := <-freed:
					timer.Stop()
					idle <- v // handOut gives it the oldest waiting arrival
				case <-timer.C:
				}
				continue
			}
			if over {
				continue
			}
		}
		intended := r.start.Add(elapsed + wait)
		n++
		r.rec.RecordLag(time.Since(intended))
		if !r.dispatch(idle, &backlog, intended) {
			sum.Dropped++
			r.rec.AddDropped(1)
		}
	}
	sum.LoadEnd = time.Now()
	sum.Scheduled = n
	r.closeIdle(idle)
	return sum
}

// stopOpen ends the schedule early: arrivals still waiting in the backlog
// were never served and count as dropped.
func (r *run) stopOpen(idle chan *vu, scheduled, dropped uint64, backlog []time.Time) Summary {
	r.rec.AddDropped(int64(len(backlog)))
	r.closeIdle(idle)
	return Summary{LoadEnd: time.Now(), Scheduled: scheduled, Dropped: dropped + uint64(len(backlog))}
}

// dispatch hands one arrival to an idle or new VU, or queues it; it returns
// false when the arrival had to be dropped.
func (r *run) dispatch(idle chan *vu, backlog *[]time.Time, intended time.Time) bool {
	if len(*backlog) == 0 {
		select {
		case v := <-idle:
			v.work <- intended
			return true
		default:
		}
	}
	if r.vus < r.w.VUsMax {
		v := r.startVU(idle)
		v.work <- intended
		return true
	}
	if len(*backlog) < r.w.Backlog {
		*backlog = append(*backlog, intended)
		return true
	}
	return false
}

// handOut gives waiting arrivals, oldest first, to idle VUs.
func handOut(idle chan *vu, backlog []time.Time) []time.Time {
	for len(backlog) > 0 {
		select {
		case v := <-idle:
			v.work <- backlog[0]
			backlog = backlog[1:]
		default:
			return backlog
		}
	}
	return backlog[:0]
}

// startVU starts a VU goroutine; it is not idle until it has done the work
// its creator sends it.
func (r *run) startVU(idle chan *vu) *vu {
	v := &vu{id: r.addVU(), work: make(chan time.Time, 1)}
	r.wg.Add(1)
	go func() {
		defer r.wg.Done()
		for intended := range v.work {
			r.do(v.id, &v.res, intended)
			idle <- v
		}
	}()
	return v
}

// closeIdle ends every VU once it is idle: busy ones finish their operation
// first (drain bounds how long that may take).
func (r *run) closeIdle(idle chan *vu) {
	r.mu.Lock()
	n := r.vus
	r.mu.Unlock()
	go func() {
		for i := 0; i < n; i++ {
			v := <-idle
			close(v.work)
		}
	}()
}
