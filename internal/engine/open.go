package engine

import (
	"context"
	"sync"
	"time"

	"github.com/perflab/perflab/internal/clock"
	"github.com/perflab/perflab/internal/driver"
)

// vu is one virtual user of the open model's pool: it waits on its own
// channel for an intended start time and returns itself to the pool when
// the operation ends.
type vu struct {
	id   int
	work chan time.Time
	res  driver.Result
}

// pool holds the idle VUs as a stack: the VU that finished last is the next
// one used, so a steady rate keeps reusing the same few VUs (warm
// connections, warm caches) however large the pool once grew. A FIFO would
// cycle through every VU the pool ever started.
type pool struct {
	mu     sync.Mutex
	idle   []*vu
	closed bool
	freed  chan struct{} // signalled (never blocking) when a VU becomes idle
}

func newPool(size int) *pool {
	return &pool{idle: make([]*vu, 0, size), freed: make(chan struct{}, 1)}
}

// get takes the most recently idle VU, or returns nil.
func (p *pool) get() *vu {
	p.mu.Lock()
	defer p.mu.Unlock()
	n := len(p.idle)
	if n == 0 {
		return nil
	}
	v := p.idle[n-1]
	p.idle[n-1] = nil
	p.idle = p.idle[:n-1]
	return v
}

// put makes v idle; on a closed pool it ends v instead.
func (p *pool) put(v *vu) {
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		close(v.work)
		return
	}
	p.idle = append(p.idle, v)
	p.mu.Unlock()
	select {
	case p.freed <- struct{}{}:
	default:
	}
}

// close ends every idle VU now and every busy one when its operation ends.
func (p *pool) close() {
	p.mu.Lock()
	p.closed = true
	idle := p.idle
	p.idle = nil
	p.mu.Unlock()
	for _, v := range idle {
		close(v.work)
	}
}

// runOpen issues arrivals on the schedule. Each arrival goes to an idle VU;
// if none is idle, a new VU starts up to VUsMax; at the cap the arrival waits
// in the backlog (if one is allowed and has room) or is counted as dropped.
// A late dispatch never moves an arrival's intended start: latency is
// measured from the schedule, so a stalling target cannot hide.
func (r *run) runOpen(stop context.Context) Summary {
	p := newPool(r.w.VUsMax)
	for i := 0; i < r.w.VUsMin; i++ {
		p.put(r.startVU(p))
	}
	var (
		sum      Summary
		backlog  []time.Time // FIFO of intended starts waiting for a VU
		timer    = time.NewTimer(time.Hour)
		n        uint64
		lastWake time.Time
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
		backlog = handOut(p, backlog)
		elapsed := time.Since(r.start)
		wait, over := r.w.Shard.pace(r.w.Rate, elapsed, n)
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
			return r.stopOpen(p, n, sum.Dropped, backlog)
		}
		if wait > 0 && !over && !lastWake.IsZero() {
			// Wake at most once a quantum: arrivals due closer together
			// than that go out together, each still timed from its own
			// intended start.
			if next := lastWake.Add(r.w.Quantum).Sub(r.start) - elapsed; next > wait {
				wait = next
			}
		}
		if wait > 0 {
			if wait <= clock.Coarse && len(backlog) == 0 {
				fine.Sleep(wait) // close to the due time: a Go timer would wake up to 1 ms late
				lastWake = time.Now()
			} else {
				var freed chan struct{} // only worth waking for while arrivals wait
				if len(backlog) > 0 {
					freed = p.freed
				}
				if wait > clock.Coarse {
					wait -= clock.Coarse // wake early; the next pass sleeps the rest finely
				}
				timer.Reset(wait)
				select {
				case <-stop.Done():
					return r.stopOpen(p, n, sum.Dropped, backlog)
				case <-freed:
					timer.Stop() // handOut gives the freed VU the oldest waiting arrival
				case <-timer.C:
				}
				lastWake = time.Now()
				continue
			}
			if over {
				continue
			}
			elapsed = time.Since(r.start)
			wait, _ = r.w.Shard.pace(r.w.Rate, elapsed, n)
			if wait > 0 {
				continue
			}
		}
		intended := r.start.Add(elapsed + wait)
		n++
		r.rec.RecordLag(time.Since(intended))
		if !r.dispatch(p, &backlog, intended) {
			sum.Dropped++
			r.rec.AddDropped(1)
		}
	}
	sum.LoadEnd = time.Now()
	sum.Scheduled = n
	p.close()
	return sum
}

// stopOpen ends the schedule early: arrivals still waiting in the backlog
// were never served and count as dropped.
func (r *run) stopOpen(p *pool, scheduled, dropped uint64, backlog []time.Time) Summary {
	r.rec.AddDropped(int64(len(backlog)))
	p.close()
	return Summary{LoadEnd: time.Now(), Scheduled: scheduled, Dropped: dropped + uint64(len(backlog))}
}

// dispatch hands one arrival to an idle or new VU, or queues it; it returns
// false when the arrival had to be dropped.
func (r *run) dispatch(p *pool, backlog *[]time.Time, intended time.Time) bool {
	if len(*backlog) == 0 {
		if v := p.get(); v != nil {
			v.work <- intended
			return true
		}
	}
	if r.vus < r.w.VUsMax {
		v := r.startVU(p)
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
func handOut(p *pool, backlog []time.Time) []time.Time {
	for len(backlog) > 0 {
		v := p.get()
		if v == nil {
			return backlog
		}
		v.work <- backlog[0]
		backlog = backlog[1:]
	}
	return backlog[:0]
}

// startVU starts a VU goroutine; it is not idle until it has done the work
// its creator sends it.
func (r *run) startVU(p *pool) *vu {
	v := &vu{id: r.addVU(), work: make(chan time.Time, 1)}
	r.wg.Add(1)
	go func() {
		defer r.wg.Done()
		for intended := range v.work {
			r.do(v.id, &v.res, intended)
			p.put(v)
		}
	}()
	return v
}
