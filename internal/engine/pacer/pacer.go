// Package pacer computes load schedules as pure functions of elapsed time:
// when the n-th arrival of an open-model schedule is due, and how many VUs a
// closed-model schedule wants. Nothing here reads a clock.
package pacer

import (
	"fmt"
	"math"
	"strconv"
	"time"
)

// Stage is one leg of a schedule: over Duration the value moves linearly
// from where the previous stage ended to Target.
type Stage struct {
	Duration time.Duration `json:"duration"`
	Target   float64       `json:"target"`
}

// Rate is an arrival-rate schedule in arrivals per second: it starts at
// Start and follows Stages. A constant rate is one stage whose Target equals
// Start.
type Rate struct {
	Start  float64
	Stages []Stage

	cum   []float64       // arrivals due before each stage begins; len(Stages)+1
	times []time.Duration // a replayed trace's arrivals (Arrivals); nil for a rate
}

// Arrivals returns the schedule of a replayed trace: arrival n at
// times[n] (ascending offsets from the start), for d; the arrivals at or
// after d are left out (from the end: times out of order stay, for
// Validate to refuse). As a rate it reads as its mean over d, one stage.
func Arrivals(times []time.Duration, d time.Duration) *Rate {
	n := len(times)
	for n > 0 && times[n-1] >= d {
		n--
	}
	mean := 0.0
	if d > 0 {
		mean = float64(n) / d.Seconds()
	}
	r := NewRate(mean, []Stage{{Duration: d, Target: mean}})
	r.times = times[:n:n]
	return r
}

// Constant returns a schedule of rate arrivals per second for d.
func Constant(rate float64, d time.Duration) *Rate {
	return NewRate(rate, []Stage{{Duration: d, Target: rate}})
}

// NewRate returns a ramping schedule. Call Validate before using a schedule
// built from user input.
func NewRate(start float64, stages []Stage) *Rate {
	r := &Rate{Start: start, Stages: stages, cum: make([]float64, len(stages)+1)}
	from := start
	for i, s := range stages {
		r.cum[i+1] = r.cum[i] + (from+s.Target)/2*s.Duration.Seconds()
		from = s.Target
	}
	return r
}

// MaxRate is the highest arrival rate a schedule may ask, in arrivals per
// second: more than any generator issues (one process manages a few
// hundred thousand, and a distributed run splits its rate among its
// workers), so a higher one is a mistake, refused before any request.
const MaxRate = 100_000_000

// Validate lists every problem with the schedule.
func (r *Rate) Validate() []error {
	var errs []error
	for i, t := range r.times {
		if t < 0 || i > 0 && t < r.times[i-1] {
			errs = append(errs, fmt.Errorf("arrival %d at %v: arrivals must be >= 0 and in order", i+1, t))
			break
		}
	}
	if r.Start < 0 || math.IsNaN(r.Start) || math.IsInf(r.Start, 0) {
		errs = append(errs, fmt.Errorf("start rate %v must be a finite number >= 0", r.Start))
	}
	finite := func(v float64) bool { return v >= 0 && !math.IsNaN(v) && !math.IsInf(v, 0) }
	errs = append(errs, validateStages("rate", r.Stages, finite, "a finite number >= 0")...)
	seen := map[float64]bool{}
	for _, v := range append([]float64{r.Start}, targets(r.Stages)...) {
		if v > MaxRate && !math.IsInf(v, 0) && !seen[v] {
			seen[v] = true
			errs = append(errs, fmt.Errorf("rate %s/s is above %d/s, more than any generator issues",
				strconv.FormatFloat(v, 'f', -1, 64), MaxRate))
		}
	}
	return errs
}

// targets are the stages' targets.
func targets(stages []Stage) []float64 {
	out := make([]float64, len(stages))
	for i, s := range stages {
		out[i] = s.Target
	}
	return out
}

// validateStages checks that there is a stage, that every stage lasts, and
// that every target passes ok (described by want).
func validateStages(kind string, stages []Stage, ok func(float64) bool, want string) []error {
	var errs []error
	if len(stages) == 0 {
		errs = append(errs, fmt.Errorf("a %s schedule needs at least one stage", kind))
	}
	for i, s := range stages {
		if s.Duration <= 0 {
			errs = append(errs, fmt.Errorf("stage %d: duration %v must be > 0", i+1, s.Duration))
		}
		if !ok(s.Target) {
			errs = append(errs, fmt.Errorf("stage %d: target %s %v must be %s", i+1, kind, s.Target, want))
		}
	}
	return errs
}

// stagesDuration is the length of a schedule.
func stagesDuration(stages []Stage) time.Duration {
	var d time.Duration
	for _, s := range stages {
		d += s.Duration
	}
	return d
}

// Duration is the length of the whole schedule.
func (r *Rate) Duration() time.Duration { return stagesDuration(r.Stages) }

// Total is the number of arrivals the schedule holds.
func (r *Rate) Total() uint64 {
	if r.times != nil {
		return uint64(len(r.times))
	}
	return uint64(math.Ceil(r.cum[len(r.Stages)] - 1e-9))
}

// At returns when arrival n (counting from 0) is due, from the schedule's
// start; ok is false when the schedule ends before it.
func (r *Rate) At(n uint64) (due time.Duration, ok bool) {
	if r.times != nil {
		if n >= uint64(len(r.times)) {
			return 0, false
		}
		return r.times[n], true
	}
	m := float64(n)
	var base time.Duration
	from := r.Start
	for i, s := range r.Stages {
		if m < r.cum[i+1]-1e-9 {
			tau := solve(from, s.Target, s.Duration.Seconds(), m-r.cum[i])
			return base + time.Duration(tau*float64(time.Second)), true
		}
		base += s.Duration
		from = s.Target
	}
	return 0, false
}

// Due is the number of arrivals due before elapsed: those a dispatcher
// that kept up had issued by then. At the end of the schedule and after it,
// that is Total.
func (r *Rate) Due(elapsed time.Duration) uint64 {
	lo, hi := uint64(0), r.Total() // At(lo-1) < elapsed; At(hi) >= elapsed or hi == Total
	for lo < hi {
		mid := lo + (hi-lo)/2
		if due, ok := r.At(mid); ok && due < elapsed {
			lo = mid + 1
		} else {
			hi = mid
		}
	}
	return lo
}

// solve returns τ in seconds such that a·τ + (b−a)·τ²/(2D) = m: when, inside
// a stage ramping from a to b over D seconds, the m-th arrival is due.
func solve(a, b, d, m float64) float64 {
	if m <= 0 {
		return 0
	}
	k := (b - a) / (2 * d)
	if k == 0 {
		return m / a
	}
	disc := a*a + 4*k*m
	if disc < 0 { // equivalent mutant: <= 0 sets a zero disc to zero
		disc = 0
	}
	// The form 2m/(a+√disc) avoids cancellation when k is small.
	return 2 * m / (a + math.Sqrt(disc))
}

// Pace says how long to wait from elapsed until arrival done is due. A
// negative wait means the arrival is overdue: dispatch it now, keeping its
// due time as its intended start. stop is true when the schedule is over.
func (r *Rate) Pace(elapsed time.Duration, done uint64) (wait time.Duration, stop bool) {
	due, ok := r.At(done)
	if !ok {
		return 0, true
	}
	return due - elapsed, false
}

// RateAt is the instantaneous rate at elapsed, in arrivals per second.
func (r *Rate) RateAt(elapsed time.Duration) float64 {
	from := r.Start
	for _, s := range r.Stages {
		if elapsed < s.Duration {
			return from + (s.Target-from)*elapsed.Seconds()/s.Duration.Seconds()
		}
		elapsed -= s.Duration
		from = s.Target
	}
	return 0
}

// Concurrency is a closed-model schedule: the number of VUs starts at Start
// and follows Stages, each moving linearly to its Target.
type Concurrency struct {
	Start  int
	Stages []Stage
}

// FixedConcurrency returns n VUs for d.
func FixedConcurrency(n int, d time.Duration) *Concurrency {
	return &Concurrency{Start: n, Stages: []Stage{{Duration: d, Target: float64(n)}}}
}

// Validate lists every problem with the schedule.
func (c *Concurrency) Validate() []error {
	var errs []error
	if c.Start < 0 {
		errs = append(errs, fmt.Errorf("start concurrency %d must be >= 0", c.Start))
	}
	whole := func(v float64) bool { return v >= 0 && v == math.Trunc(v) }
	return append(errs, validateStages("concurrency", c.Stages, whole, "a whole number >= 0")...)
}

// Duration is the length of the whole schedule.
func (c *Concurrency) Duration() time.Duration { return stagesDuration(c.Stages) }

// Max is the largest number of VUs the schedule asks for.
func (c *Concurrency) Max() int {
	m := c.Start
	for _, s := range c.Stages {
		m = max(m, int(s.Target))
	}
	return m
}

// At returns the number of VUs wanted at elapsed (rounded down while
// ramping), and stop once the schedule is over.
func (c *Concurrency) At(elapsed time.Duration) (vus int, stop bool) {
	from := float64(c.Start)
	for _, s := range c.Stages {
		if elapsed < s.Duration {
			v := from + (s.Target-from)*elapsed.Seconds()/s.Duration.Seconds()
			return int(math.Floor(v + 1e-9)), false
		}
		elapsed -= s.Duration
		from = s.Target
	}
	return 0, true
}
