package engine

import (
	"context"
	"time"

	"github.com/perflab/perflab/internal/driver"
)

// controlTick is how often the closed model checks its concurrency schedule.
const controlTick = 50 * time.Millisecond

// runClosed keeps the number of VUs the schedule asks for, each starting its
// next operation as soon as the last one ended (latency = service time, as in
// wrk or warp). VUs beyond the schedule's current value finish their
// operation and leave.
func (r *run) runClosed(stop context.Context) Summary {
	maxVUs := r.w.Shard.part(r.w.Conc.Max())
	if r.fixedConcurrency() {
		r.first = make([]time.Time, maxVUs)
		r.last = make([]time.Time, maxVUs)
	}
	// A driver that cannot make its loops (no epoll here, no descriptor
	// left) is served by goroutines, as one that has none: slower, as right.
	if loops, _ := r.newLoops(maxVUs); loops != nil {
		return r.runLoops(stop, loops, maxVUs)
	}
	quit := make([]chan struct{}, 0, maxVUs)
	r.followSchedule(stop, func(want int) {
		for len(quit) < want {
			q := make(chan struct{})
			quit = append(quit, q)
			r.startLooper(len(quit)-1, q)
		}
		for len(quit) > want {
			close(quit[len(quit)-1])
			quit = quit[:len(quit)-1]
		}
	})
	for _, q := range quit {
		close(q)
	}
	return Summary{LoadEnd: r.clk.Now()}
}

// followSchedule hands apply the closed-model schedule's number of VUs
// (this shard's part) every controlTick until the schedule is over or
// stop is done.
func (r *run) followSchedule(stop context.Context, apply func(want int)) {
	tick := r.clk.NewTimer(controlTick)
	defer tick.Stop()
	for {
		want, over := r.w.Conc.At(r.clk.Now().Sub(r.start))
		if over {
			return
		}
		apply(r.w.Shard.part(want))
		select {
		case <-stop.Done():
			return
		case <-tick.C():
			tick.Reset(controlTick)
		}
	}
}

// startLooper starts closed-model VU id, which loops until quit is closed.
// VU ids are reused when the schedule shrinks and grows again.
func (r *run) startLooper(id int, quit <-chan struct{}) {
	r.addVU()
	r.wg.Add(1)
	go func() {
		defer r.wg.Done()
		defer r.dropVU()
		var res driver.Result
		thinker, _ := r.w.Driver.(driver.Thinker)
		for {
			select {
			case <-quit:
				return
			default:
			}
			if thinker != nil && !r.think(thinker.ThinkTime(id), quit) {
				return
			}
			started := r.clk.Now()
			r.mark(id, started, r.do(id, &res, started))
		}
	}()
}

// think waits d before a VU's next operation, as a user thinks between
// turns; false when quit came first.
func (r *run) think(d time.Duration, quit <-chan struct{}) bool {
	if d <= 0 {
		return true
	}
	t := r.clk.NewTimer(d)
	defer t.Stop()
	select {
	case <-quit:
		return false
	case <-t.C():
		return true
	}
}

// mark notes, for warp's window, when VU id's first operation ended and
// when its last one started; only under a fixed concurrency, where ids
// are unique.
func (r *run) mark(id int, start, end time.Time) {
	if r.first == nil {
		return
	}
	if r.first[id].IsZero() {
		r.first[id] = end
	}
	r.last[id] = start
}

// fixedConcurrency reports whether the closed-model schedule holds one
// number of VUs throughout.
func (r *run) fixedConcurrency() bool {
	c := r.w.Conc
	for _, s := range c.Stages {
		if s.Target != float64(c.Start) {
			return false
		}
	}
	return true
}
