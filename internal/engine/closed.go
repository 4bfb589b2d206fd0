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
	tick := r.clk.NewTimer(controlTick)
	defer tick.Stop()
	for {
		want, over := r.w.Conc.At(r.clk.Now().Sub(r.start))
		if over {
			break
		}
		want = r.w.Shard.part(want)
		for len(quit) < want {
			q := make(chan struct{})
			quit = append(quit, q)
			r.startLooper(len(quit)-1, q)
		}
		for len(quit) > want {
			close(quit[len(quit)-1])
			quit = quit[:len(quit)-1]
		}
		select {
		case <-stop.Done():
		case <-tick.C():
			tick.Reset(controlTick)
			continue
		}
		break
	}
	for _, q := range quit {
		close(q)
	}
	return Summary{LoadEnd: r.clk.Now()}
}

// startLooper starts closed-model VU id, which loops until quit is closed.
// VU ids are reused when the schedule shrinks and grows again.
func (r *run) startLooper(id int, quit <-chan struct{}) {
	r.addVU()
	r.wg.Add(1)
	go func() {
		defer r.wg.Done()
		defer func() { r.mu.Lock(); r.vus--; r.mu.Unlock() }()
		var res driver.Result
		track := r.first != nil // ids are unique only under a fixed concurrency
		for {
			select {
			case <-quit:
				return
			default:
			}
			started := r.clk.Now()
			r.do(id, &res, started)
			if !track {
				continue
			}
			if r.first[id].IsZero() {
				r.first[id] = r.clk.Now()
			}
			r.last[id] = started
		}
	}()
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
