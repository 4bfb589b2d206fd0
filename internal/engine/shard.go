package engine

import (
	"context"
	"fmt"
	"time"

	"github.com/perflab/perflab/internal/engine/pacer"
)

// Shard is one of Of parts of a workload, as one worker of a distributed
// run runs it. The open model's shard Index issues the arrivals n of the
// whole schedule with n mod Of == Index, each at the time the whole
// schedule has it, so the shards' arrivals together are exactly the whole
// schedule's, interleaved; its VUs (min, max) and backlog are each
// ceil(x/Of), at least one VU. The closed model's shard keeps
// floor(V/Of) + (Index < V mod Of) of the V VUs the schedule wants at
// every moment, so the shards' VUs add up to V, stages included. The zero
// Shard (or Of 1) is the whole workload.
type Shard struct {
	Index int
	Of    int
}

// equivalent mutant: Of < 1; with Of 1 every formula below gives the whole.
func (s Shard) whole() bool { return s.Of <= 1 }

func (s Shard) validate() []error {
	if s.Of < 0 || s.Of > 0 && (s.Index < 0 || s.Index >= s.Of) {
		return []error{fmt.Errorf("shard %d of %d: want an index from 0 to %d", s.Index, s.Of, max(s.Of-1, 0))}
	}
	if s.Of == 0 && s.Index != 0 {
		return []error{fmt.Errorf("shard %d of 0: set how many shards there are", s.Index)}
	}
	return nil
}

// global is the whole schedule's index of the shard's k-th arrival.
func (s Shard) global(k uint64) uint64 {
	if s.whole() {
		return k
	}
	return k*uint64(s.Of) + uint64(s.Index)
}

// pace is r.Pace for the shard's k-th arrival: how long from elapsed until
// it is due, and stop once the schedule ends before it.
func (s Shard) pace(r *pacer.Rate, elapsed time.Duration, k uint64) (time.Duration, bool) {
	return r.Pace(elapsed, s.global(k))
}

// due is how many of the first n arrivals of the whole schedule are the
// shard's: those whose index is Index mod Of.
func (s Shard) due(n uint64) uint64 {
	if s.whole() {
		return n
	}
	if n <= uint64(s.Index) {
		return 0
	}
	return (n-uint64(s.Index)-1)/uint64(s.Of) + 1
}

// ceil is the shard's part of a pool of x: ceil(x/Of).
func (s Shard) ceil(x int) int {
	if s.whole() || x <= 0 { // equivalent mutant: x < 0; ceil(0/Of) is 0
		return x
	}
	return (x + s.Of - 1) / s.Of
}

// part is the shard's part of v VUs: floor(v/Of), plus one for the first
// v mod Of shards.
func (s Shard) part(v int) int {
	if s.whole() || v <= 0 { // equivalent mutant: v < 0; the part of 0 is 0
		return v
	}
	n := v / s.Of
	if s.Index < v%s.Of {
		n++
	}
	return n
}

// sharded is w with the open model's pool and backlog split for its shard.
func (w Workload) sharded() Workload {
	if w.Shard.whole() || w.Model != Open {
		return w
	}
	w.VUsMin, w.Backlog = w.Shard.ceil(w.VUsMin), w.Shard.ceil(w.Backlog)
	w.VUsMax = max(w.Shard.ceil(w.VUsMax), 1)
	return w
}

// startAt waits until at unless stop ends first, and returns the
// workload's start: at itself, even when it is past, so that interval k
// of every shard started at the same at covers the same span (a late
// shard issues its overdue arrivals at once, each timed from its intended
// start). Without at, or stopped while waiting, the start is now.
func startAt(stop context.Context, clk Clock, at time.Time) time.Time {
	if at.IsZero() {
		return clk.Now()
	}
	if d := at.Sub(clk.Now()); d > 0 { // equivalent mutant: d >= 0; a timer of 0 fires at once
		t := clk.NewTimer(d)
		defer t.Stop()
		select {
		case <-t.C():
		case <-stop.Done():
			return clk.Now()
		}
	}
	return at
}
