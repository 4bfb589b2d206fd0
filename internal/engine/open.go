package engine

import (
	"context"
	"sync"
	"sync/atomic"
	"time"

	"github.com/perflab/perflab/internal/clock"
	"github.com/perflab/perflab/internal/driver"
)

// vu is one virtual user of the open model's pool: it waits on its own
// channel for an intended start time and returns itself to the pool when
// the operation ends (after taking the arrivals already due, when the
// pool lets it: pool.claim).
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
	// claim takes the next arrival if it is due at now, for a VU that has
	// just finished its operation; nil when arrivals may wait in a backlog.
	claim func(now time.Time) (time.Time, bool)
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
// measured from the schedule, so a stalling target cannot hide. The
// schedule ends at its duration, whatever it has not issued by then.
//
// The dispatcher wakes at most once a quantum, and issues what is due
// then. With a quantum finer than the default and no backlog, a VU that finishes its
// operation in between takes an arrival that is already due itself,
// before it goes back to the pool: it is running anyway, so the arrival
// goes out without a wake of its own. At 20,000/s against nginx that
// brought scheduler lag p50 to 40 µs at 21.8 µs of CPU per request (a
// 250 µs quantum), where the dispatcher alone needed a 50 µs quantum and
// 32 µs. At the default quantum it costs what a finer quantum does: it
// spreads out the requests that the quantum batches, and the batching is
// what keeps the CPU at oha's (BENCHMARKS.md).
func (r *run) runOpen(stop context.Context) Summary {
	p := newPool(r.w.VUsMax)
	d := &dispatcher{run: r, pool: p, stop: stop, dur: r.w.Rate.Duration(), timer: r.clk.NewTimer(time.Hour), sleeper: r.newSleeper()}
	if r.w.Backlog == 0 && r.w.Quantum < DefaultQuantum { // a backlog is served oldest first, by the dispatcher
		p.claim = d.claim
	}
	for i := 0; i < r.w.VUsMin; i++ {
		p.put(r.startVU(p))
	}
	d.timer.Stop()
	defer d.timer.Stop()
	defer d.sleeper.close()
	for !d.step() {
	}
	return d.end()
}

// dispatcher is the state of the open model's schedule.
type dispatcher struct {
	*run
	pool     *pool
	stop     context.Context
	dur      time.Duration // the schedule's
	timer    Timer
	sleeper  *sleeper
	backlog  []time.Time   // FIFO of intended starts waiting for a VU
	n        atomic.Uint64 // arrivals issued
	dropped  uint64        // of those, not served for want of a VU
	lastWake time.Time
	elapsed  time.Duration // when the schedule ended
}

// step waits for the next arrival and issues it, or takes a backlogged
// arrival to a freed VU; it returns true when the schedule is over.
func (d *dispatcher) step() (over bool) {
	d.backlog = handOut(d.pool, d.backlog)
	elapsed := d.clk.Now().Sub(d.start)
	if d.stop.Err() != nil || elapsed >= d.dur {
		d.elapsed = min(elapsed, d.dur)
		return true
	}
	wait, allIssued := d.w.Shard.pace(d.w.Rate, elapsed, d.n.Load())
	if allIssued {
		wait = d.dur - elapsed // the schedule lasts its whole duration
	} else if q := d.lastWake.Add(d.w.Quantum).Sub(d.start) - elapsed; wait > 0 && !d.lastWake.IsZero() && elapsed+q < d.dur {
		// Wake at most once a quantum: arrivals due closer together
		// than that go out together, each still timed from its own
		// intended start. Not past the end, where they would be left
		// unissued.
		wait = max(wait, q)
	}
	// Not equivalent, but untestable without timing (mutants wait >= Coarse,
	// len >= 0): they sleep the last Coarse on a Go timer instead of the
	// fine one, the same instant on any clock a test controls, up to 1 ms
	// later on the machine's.
	if wait > clock.Coarse || (wait > 0 && len(d.backlog) > 0) {
		if wait > clock.Coarse {
			wait -= clock.Coarse // wake early; the next step sleeps the rest finely
		}
		d.wait(wait)
		return false
	}
	// equivalent mutant: wait >= 0; a wait of 0 comes right after a wake at the
	// due time, and sleeping 0 there leaves lastWake at that wake.
	if wait > 0 {
		d.sleeper.sleep(wait) // close to the due time: a Go timer would wake up to 1 ms late
		d.lastWake = d.clk.Now()
		elapsed = d.lastWake.Sub(d.start)
	}
	// The arrival due by now, taken as a VU that comes back takes one:
	// none when VUs took it while the dispatcher slept, when the run was
	// stopped meanwhile, or when the schedule has issued everything.
	intended, ok := d.claim(d.start.Add(elapsed))
	if !ok {
		return false
	}
	d.rec.RecordLag(d.clk.Now().Sub(intended))
	if !d.dispatch(d.pool, &d.backlog, intended) {
		d.dropped++
		d.rec.AddDropped(1)
	}
	return false
}

// wait sleeps up to wait on a Go timer, waking when stopped or, while
// arrivals wait in the backlog, when a VU is freed.
func (d *dispatcher) wait(wait time.Duration) {
	var freed chan struct{} // only worth waking for while arrivals wait
	if len(d.backlog) > 0 {
		freed = d.pool.freed
	}
	d.timer.Reset(wait)
	select {
	case <-d.stop.Done():
	case <-freed:
		d.timer.Stop() // handOut gives the freed VU the oldest waiting arrival
	case <-d.timer.C():
	}
	d.lastWake = d.clk.Now()
}

// claim takes the next arrival if it is due at now, for the dispatcher
// and for the VUs that come back alike: they count issued arrivals with
// one compare-and-swap, so each arrival is issued once, none after a stop,
// and none after end closed the count.
func (d *dispatcher) claim(now time.Time) (time.Time, bool) {
	elapsed := now.Sub(d.start)
	for d.stop.Err() == nil && elapsed < d.dur {
		n := d.n.Load()
		wait, allIssued := d.w.Shard.pace(d.w.Rate, elapsed, n)
		if allIssued || wait > 0 {
			break
		}
		if d.n.CompareAndSwap(n, n+1) {
			return d.start.Add(elapsed + wait), true
		}
	}
	return time.Time{}, false
}

// ended is the count of issued arrivals once the schedule is over: no
// schedule has an arrival that far, nor a shard's (Shard.global wraps it
// to within Of of the top), so pace finds every arrival issued.
const ended = ^uint64(0)

// end closes the schedule: arrivals still waiting in the backlog were
// never served, and those due before the end that were not issued were
// not issued by the generator; both count as dropped.
func (d *dispatcher) end() Summary {
	d.rec.AddDropped(int64(len(d.backlog)))
	d.pool.close()
	due := d.w.Shard.due(d.w.Rate.Due(d.elapsed))
	n := d.n.Swap(ended) // VUs coming back from now on take nothing
	unissued := due - min(n, due)
	return Summary{LoadEnd: d.clk.Now(), Scheduled: n, Unissued: unissued,
		Dropped: d.dropped + uint64(len(d.backlog)) + unissued}
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
			for p.claim != nil {
				now := r.clk.Now()
				next, ok := p.claim(now)
				if !ok {
					break
				}
				r.rec.RecordLag(now.Sub(next))
				r.do(v.id, &v.res, next)
			}
			p.put(v)
		}
	}()
	return v
}
