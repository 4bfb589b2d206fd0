package observe

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"time"
)

// finalFraction decides whether Run takes a last sample when it is stopped:
// only when at least Interval/finalFraction has passed since the previous
// sample. A rate over a sliver of an interval is mostly quantisation noise
// (CPU time moves in 10 ms ticks), and it would show up as a spurious Max;
// anything longer is a valid, if shorter, interval and keeps the data of a
// run that ended between two ticks, or that was shorter than one interval.
const finalFraction = 4

// Sampler samples the sources of named components every Interval and hands
// each tick's points to Sink. Within a tick every source runs in its own
// goroutine, bounded by Timeout, and all points of the tick carry the tick's
// time so that totals across components line up.
//
// Run takes a first sample when it starts (the baseline of every rate; its
// gauges are delivered too), one per tick, and a last one when its context is
// cancelled (see finalFraction). Sink, OnError and OnGone are called from
// the goroutine that called Run, one at a time, never concurrently.
type Sampler struct {
	Interval time.Duration // time between samples; required
	// Timeout bounds each source's Sample call; zero or more than Interval
	// means Interval. A source still running at the next tick is skipped for
	// that tick (sources keep state and are not safe for concurrent use).
	Timeout    time.Duration
	Components map[string][]Source // component name → its sources
	// Sink receives one map per tick: component name → the points of all its
	// sources, in source order. A component with no points that tick is
	// absent. A source may return points together with an error (a partial
	// sample); those points are kept.
	Sink func(t time.Time, points map[string][]Point)
	// OnError is told of a source's first error and of every change of the
	// error text, not of every failing tick. After a successful sample the
	// next error counts as a first error again.
	OnError func(component string, err error)
	// OnGone is told, once per component, of the first error that wraps
	// ErrGone: the component's process has exited. Such errors do not go to
	// OnError; when OnGone is nil they do.
	OnGone func(component string, err error)

	ticks <-chan time.Time // replaces the ticker in tests
	clock func() time.Time // replaces time.Now in tests
}

// slot is one source of one component with what Run remembers about it.
type slot struct {
	component string
	src       Source
	busy      chan struct{} // holds a token while a Sample call runs
	lastErr   string        // text of the last reported error, "" after a success
}

type result struct {
	i      int
	points []Point
	err    error
}

// Run samples until ctx is cancelled, then takes the final sample and
// returns: cancelling ctx is how a Sampler is stopped. A tick in flight at
// that moment completes; a source stuck past its timeout is not waited for.
// Run returns an error only for an invalid configuration.
func (s *Sampler) Run(ctx context.Context) error {
	if err := s.validate(); err != nil {
		return err
	}
	slots := s.slots()
	gone := map[string]bool{}
	tickCtx := context.WithoutCancel(ctx) // a tick in flight finishes at stop
	last := s.now()
	s.sample(tickCtx, slots, last, gone)
	ticks := s.ticks
	if ticks == nil {
		ticker := time.NewTicker(s.Interval)
		defer ticker.Stop()
		ticks = ticker.C
	}
	for {
		select {
		case <-ctx.Done():
			if now := s.now(); now.Sub(last) >= s.Interval/finalFraction {
				s.sample(tickCtx, slots, now, gone)
			}
			return nil
		case t := <-ticks:
			s.sample(tickCtx, slots, t, gone)
			last = t
		}
	}
}

func (s *Sampler) validate() error {
	switch {
	case s.Interval <= 0:
		return fmt.Errorf("cannot run sampler: interval %v is not positive", s.Interval)
	case s.Sink == nil:
		return errors.New("cannot run sampler: no sink")
	}
	return nil
}

func (s *Sampler) now() time.Time {
	if s.clock != nil {
		return s.clock()
	}
	return time.Now()
}

func (s *Sampler) timeout() time.Duration {
	if s.Timeout <= 0 || s.Timeout > s.Interval {
		return s.Interval
	}
	return s.Timeout
}

// slots lists the sources ordered by component name, then source order.
func (s *Sampler) slots() []*slot {
	names := make([]string, 0, len(s.Components))
	for name := range s.Components {
		names = append(names, name)
	}
	sort.Strings(names)
	var slots []*slot
	for _, name := range names {
		for _, src := range s.Components[name] {
			slots = append(slots, &slot{component: name, src: src, busy: make(chan struct{}, 1)})
		}
	}
	return slots
}

// sample runs one tick: every free source concurrently, results collected
// until all have answered or the timeout expired, then errors reported and
// the points handed to the sink.
func (s *Sampler) sample(ctx context.Context, slots []*slot, t time.Time, gone map[string]bool) {
	ctx, cancel := context.WithTimeout(ctx, s.timeout())
	defer cancel()
	results := make(chan result, len(slots)) // late senders never block
	errs := make([]error, len(slots))
	points := make([][]Point, len(slots))
	running := 0
	for i, sl := range slots {
		select {
		case sl.busy <- struct{}{}:
		default:
			errs[i] = fmt.Errorf("cannot sample %s: previous sample still running", sl.src.Name())
			continue
		}
		running++
		go func() {
			p, err := sl.src.Sample(ctx, t)
			<-sl.busy // free before answering: the next tick may come at once
			results <- result{i: i, points: p, err: err}
		}()
		errs[i] = fmt.Errorf("cannot sample %s: no answer within %v", sl.src.Name(), s.timeout())
	}
collect:
	for ; running > 0; running-- {
		select {
		case r := <-results:
			points[r.i], errs[r.i] = r.points, r.err
		case <-ctx.Done():
			break collect // the rest keep their timeout error
		}
	}
	for drained := false; !drained; { // answers that raced the deadline
		select {
		case r := <-results:
			points[r.i], errs[r.i] = r.points, r.err
		default:
			drained = true
		}
	}
	s.report(slots, errs, gone)
	s.Sink(t, group(slots, points))
}

// group builds the sink's map: component → points of its sources in order.
func group(slots []*slot, points [][]Point) map[string][]Point {
	out := map[string][]Point{}
	for i, sl := range slots {
		if len(points[i]) > 0 {
			out[sl.component] = append(out[sl.component], points[i]...)
		}
	}
	return out
}

// report passes on first errors and changes of error text, and a gone
// component once.
func (s *Sampler) report(slots []*slot, errs []error, gone map[string]bool) {
	for i, sl := range slots {
		err := errs[i]
		if err == nil {
			sl.lastErr = ""
			continue
		}
		if errors.Is(err, ErrGone) && s.OnGone != nil {
			if !gone[sl.component] {
				gone[sl.component] = true
				s.OnGone(sl.component, err)
			}
			continue
		}
		if err.Error() == sl.lastErr {
			continue
		}
		sl.lastErr = err.Error()
		if s.OnError != nil {
			s.OnError(sl.component, err)
		}
	}
}
