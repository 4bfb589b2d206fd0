package engine

import (
	"sync/atomic"
	"time"

	"github.com/perflab/perflab/internal/driver"
)

// The open model through a driver's event loops (driver.Looper): the
// dispatcher, the pool, the backlog and the claims are the goroutine
// path's (open.go); a VU is a loop's VU instead of a goroutine. The
// dispatcher hands an arrival to an idle VU by storing it for the VU and
// making the VU Ready in its loop, which wakes once for all the arrivals
// of a dispatch; a VU whose operation ends asks Begin for its next, which
// takes a due arrival (pool.claim) or returns the VU to the pool.

// openLoops is the engine as the open model's loops see it: a
// driver.ReadyHost.
type openLoops struct {
	r        *run
	pool     *pool
	loops    []loopPart
	vus      []vu           // by id, VUsMax of them; vus[id] is started by startVU
	intended []atomic.Int64 // by id: the arrival handed to it, since the start, +1; 0: none
	took     []time.Time    // by id: the intended start of its operation in flight (its loop's alone)
	stopped  atomic.Bool
}

var _ driver.ReadyHost = (*openLoops)(nil)

// startOpenLoops runs loops for the open model's VUs, drawn from p.
func (r *run) startOpenLoops(loops []loopPart, p *pool) *openLoops {
	n := r.w.VUsMax
	h := &openLoops{r: r, pool: p, loops: loops, vus: make([]vu, n), intended: make([]atomic.Int64, n), took: make([]time.Time, n)}
	r.startLoops(loops, h, nil)
	return h
}

// startVU counts a new VU and returns it; its loop begins nothing until
// it is given an arrival.
func (h *openLoops) startVU() *vu {
	id := h.r.addVU()
	v := &h.vus[id]
	v.id = id
	return v
}

// give hands VU id the arrival intended, through its loop.
func (h *openLoops) give(id int, intended time.Time) {
	h.intended[id].Store(int64(intended.Sub(h.r.start)) + 1)
	h.loops[id%len(h.loops)].Ready(id)
}

// stop ends the loops once their operations in flight have ended.
func (h *openLoops) stop() {
	h.stopped.Store(true)
	for _, l := range h.loops {
		l.Wake()
	}
}

// Begin starts VU vu's operation on the arrival it was given, or, when
// its last operation has just ended, on an arrival already due (the
// claims of a fine quantum); else the VU goes back to the pool.
func (h *openLoops) Begin(vu int) (time.Time, bool) {
	if d := h.intended[vu].Swap(0); d != 0 {
		h.took[vu] = h.r.start.Add(time.Duration(d - 1))
		return h.r.clk.Now(), true
	}
	if h.pool.claim != nil {
		now := h.r.clk.Now()
		if next, ok := h.pool.claim(now); ok {
			h.r.rec.RecordLag(now.Sub(next))
			h.took[vu] = next
			return now, true
		}
	}
	h.pool.put(&h.vus[vu])
	return time.Time{}, false
}

// Done records an operation, timed from the arrival's intended start.
func (h *openLoops) Done(vu int, res *driver.Result, start, end time.Time) {
	h.r.record(vu, res, h.took[vu], start, end)
}

func (h *openLoops) Stopped() bool  { return h.stopped.Load() }
func (h *openLoops) Now() time.Time { return h.r.clk.Now() }
func (h *openLoops) ByReady()       {}
