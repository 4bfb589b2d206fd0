package analysis

import (
	"fmt"
	"math"
	"sort"
	"time"
)

// CapacitySearch chooses the rates of a capacity search: it raises the
// rate from Start by Factor while every step passes, up to Max; then it
// bisects Bisect times between the highest rate that passed and the lowest
// that failed. It is a pure state machine: Next says which rate to run,
// Record what the step showed. A step on which the generator was the limit
// (client-bound, by GeneratorLimited) is run again once, since a busy
// machine may stall the generator for a moment; client-bound again, it
// ends the search: rates above it say nothing of the target.
type CapacitySearch struct {
	Start, Max float64 // operations per second
	Factor     float64 // > 1
	Bisect     int

	Passed  float64 // the highest rate that passed; 0 when none did
	Failed  float64 // the lowest rate that failed; 0 when none did
	bisects int
	client  float64 // the rate at which the generator was the limit; 0 if never
	retry   float64 // a rate to run again: its step was client-bound once
	retried float64 // the last rate run again
	steps   int
}

// Next is the rate of the next step, or done.
func (s *CapacitySearch) Next() (rate float64, done bool) {
	switch {
	case s.client > 0:
		return 0, true
	case s.retry > 0:
		return s.retry, false
	case s.steps == 0:
		return s.Start, false
	case s.Failed == 0 && s.Passed >= s.Max:
		return 0, true // the capacity is above Max
	case s.Failed == 0:
		return min(roundRate(s.Passed*s.Factor), s.Max), false
	case s.Passed == 0 || s.bisects >= s.Bisect:
		return 0, true
	}
	mid := roundRate((s.Passed + s.Failed) / 2)
	if mid <= s.Passed || mid >= s.Failed {
		return 0, true // nothing left between them at this resolution
	}
	return mid, false
}

// Record takes the outcome of the step at rate: whether every gate passed,
// and whether the generator was the limit.
func (s *CapacitySearch) Record(rate float64, pass, clientBound bool) {
	s.steps++ // equivalent mutant: steps-- too is never 0 again, all Next asks
	// equivalent mutant: Passed >= 0; with nothing passed and a rate
	// failed, Next ends the search whatever bisects is.
	if s.retry == 0 && s.Failed > 0 && s.Passed > 0 {
		s.bisects++
	}
	s.retry = 0
	switch {
	case clientBound && s.retried != rate:
		s.retry, s.retried = rate, rate
	case clientBound:
		s.client = rate
	case pass && rate > s.Passed:
		s.Passed = rate
	case !pass && (s.Failed == 0 || rate < s.Failed):
		s.Failed = rate
	}
}

// Limit says what ended the search: "target" (a rate failed its gates),
// "generator" (perflab was the limit), "max" (every rate up to Max
// passed) or "start" (the start rate already failed).
func (s *CapacitySearch) Limit() string {
	switch {
	case s.client > 0:
		return "generator"
	case s.Failed > 0 && s.Passed == 0:
		return "start"
	case s.Failed > 0:
		return "target"
	}
	return "max"
}

// ClientBoundAt is the rate at which the generator was the limit; 0 if it
// never was.
func (s *CapacitySearch) ClientBoundAt() float64 { return s.client }

// roundRate keeps three significant digits of a rate: 1234.5 → 1230,
// 87.25 → 87.3.
func roundRate(r float64) float64 {
	if r <= 0 { // equivalent mutant: r < 0; no caller rounds a 0 (Next and SweepRates start from a rate above it)
		return r
	}
	scale := math.Pow(10, math.Floor(math.Log10(r))-2)
	return math.Round(r/scale) * scale
}

// RateLatency is one step of a search: its rate and its latency p99, with
// the number of latencies the p99 rests on.
type RateLatency struct {
	Rate  float64
	P99   time.Duration
	Count int64
}

// KneeFactor and KneeMinRise define the knee: the lowest rate whose p99 is
// more than KneeFactor times the p99 at the lowest rate, and by at least
// KneeMinRise (so that sub-millisecond noise of a fast target is no knee).
const (
	KneeFactor  = 2
	KneeMinRise = time.Millisecond
)

// Knee is where latency starts to rise with the load.
type Knee struct {
	Rate     float64       // the lowest rate past the knee
	Below    float64       // the highest rate under Rate that is not past it; 0 when none
	P99      time.Duration // p99 at Rate
	Baseline time.Duration // p99 at the lowest rate
	BaseRate float64
}

func (k Knee) String() string {
	return fmt.Sprintf("p99 %v at %.4g/s, over %d× the %v at %.4g/s", k.P99, k.Rate, KneeFactor, k.Baseline, k.BaseRate)
}

// FindKnee finds the knee among steps; ok is false when there are fewer
// than two steps whose p99 rests on at least 100 latencies, or when no
// rate is past the knee.
func FindKnee(steps []RateLatency) (Knee, bool) {
	var pts []RateLatency
	for _, s := range steps {
		if s.Count >= MinCountFor(0.99) {
			pts = append(pts, s)
		}
	}
	if len(pts) < 2 {
		return Knee{}, false
	}
	sort.SliceStable(pts, func(i, j int) bool { return pts[i].Rate < pts[j].Rate })
	base := pts[0]
	k := Knee{Baseline: base.P99, BaseRate: base.Rate}
	for _, p := range pts[1:] {
		if p.P99 > KneeFactor*base.P99 && p.P99-base.P99 >= KneeMinRise {
			k.Rate, k.P99 = p.Rate, p.P99
			return k, true
		}
		k.Below = p.Rate
	}
	return Knee{}, false
}
