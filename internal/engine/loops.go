package engine

import (
	"context"
	"runtime"
	"sync/atomic"
	"time"

	"github.com/perflab/perflab/internal/driver"
)

// The closed model through a driver's event loops (driver.Looper): the
// VUs are served by one loop per core the process may use rather than by
// a goroutine each, with the same schedule, recording and drain. VU id
// belongs to loop id % loops, so every loop has its share at any
// concurrency.

// loopPart is one loop and the VUs it serves.
type loopPart struct {
	driver.Loop
	vus []int
}

// newLoops asks the driver for its loops; nil when it has none for this
// workload (then the closed model runs a goroutine per VU).
func (r *run) newLoops(maxVUs int) ([]loopPart, error) {
	lp, ok := r.w.Driver.(driver.Looper)
	if !ok || maxVUs < 1 {
		return nil, nil
	}
	n := min(runtime.GOMAXPROCS(0), maxVUs)
	loops := make([]loopPart, 0, n)
	for i := range n {
		var vus []int
		for id := i; id < maxVUs; id += n {
			vus = append(vus, id)
		}
		l, err := lp.Loop(vus)
		if err != nil || l == nil {
			for _, made := range loops {
				_ = made.Close()
			}
			return nil, err
		}
		loops = append(loops, loopPart{l, vus})
	}
	return loops, nil
}

// startLoops runs each loop for host on a goroutine of its own, which
// calls after (if any) once the loop's Run has returned, then closes it.
func (r *run) startLoops(loops []loopPart, host driver.LoopHost, after func(loopPart)) {
	for _, l := range loops {
		r.wg.Add(1)
		go func() {
			defer r.wg.Done()
			defer func() { _ = l.Close() }()
			l.Run(r.opCtx, host)
			if after != nil {
				after(l)
			}
		}()
	}
}

// runLoops is runClosed through loops: it keeps the schedule's number of
// VUs, which the loops read at each operation's end, and wakes them when
// it changes.
func (r *run) runLoops(stop context.Context, loops []loopPart, maxVUs int) Summary {
	h := &loopHost{r: r, running: make([]bool, maxVUs)}
	r.startLoops(loops, h, func(l loopPart) { h.release(l.vus) })

	wake := func() {
		for _, l := range loops {
			l.Wake()
		}
	}
	r.followSchedule(stop, func(want int) {
		if n := int64(want); h.want.Swap(n) != n {
			wake()
		}
	})
	h.stopped.Store(true)
	wake()
	return Summary{LoadEnd: r.clk.Now()}
}

// loopHost is the engine as the loops see it.
type loopHost struct {
	r       *run
	want    atomic.Int64 // VUs [0, want) are to be busy; none before the schedule's first value
	stopped atomic.Bool
	running []bool // per VU; each VU's entry is its loop's alone
}

// Begin starts VU vu's next operation while the schedule wants it, and
// counts the VUs that join or leave.
func (h *loopHost) Begin(vu int) (time.Time, bool) {
	if h.stopped.Load() || int64(vu) >= h.want.Load() {
		if h.running[vu] {
			h.running[vu] = false
			h.r.dropVU()
		}
		return time.Time{}, false
	}
	if !h.running[vu] {
		h.running[vu] = true
		h.r.addVU()
	}
	return h.r.clk.Now(), true
}

// release counts as gone the VUs of a loop whose Run returned: one
// interrupted does not ask Begin again. It runs on the loop's goroutine,
// the only one that touches its VUs' entries.
func (h *loopHost) release(vus []int) {
	for _, vu := range vus {
		if h.running[vu] {
			h.running[vu] = false
			h.r.dropVU()
		}
	}
}

// Done records an operation, as run.do does for a VU's goroutine.
func (h *loopHost) Done(vu int, res *driver.Result, start, end time.Time) {
	h.r.record(vu, res, start, start, end)
	h.r.mark(vu, start, end)
}

func (h *loopHost) Stopped() bool  { return h.stopped.Load() }
func (h *loopHost) Now() time.Time { return h.r.clk.Now() }
