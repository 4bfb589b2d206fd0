// Package engine runs a workload: it schedules operations (open model: an
// arrival-rate schedule served by a VU pool; closed model: a number of VUs
// each looping), calls the driver, and records every outcome into one-second
// intervals handed to a Sink as they close.
package engine

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"sync"
	"time"

	"github.com/perflab/perflab/internal/driver"
	"github.com/perflab/perflab/internal/engine/pacer"
	"github.com/perflab/perflab/internal/stats"
)

// Model names how load is applied.
type Model string

// The two models.
const (
	Open   Model = "open"   // arrivals on a schedule, whatever the target does
	Closed Model = "closed" // a set number of VUs, each starting its next operation when the last ends
)

// DefaultQuantum is how often, at most, the open model's dispatcher wakes.
// Arrivals due closer together than this go out together when it wakes,
// each still measured from its own intended start, so the figures stay
// honest and the lateness shows as scheduler lag. Waking once per arrival
// costs the generator (and the target) a wake-up each: at 20,000 arrivals/s
// on one core that tripled perflab's CPU per request (BENCHMARKS.md). Go
// timers and k6's or vegeta's pacing resolve about 1 ms anyway. With a
// finer Quantum and no Backlog, VUs that finish between wakes also take
// the arrivals due (runOpen); a Quantum of 1ns wakes for every arrival.
const DefaultQuantum = time.Millisecond

// Workload is one stream of load against one driver.
type Workload struct {
	Name     string
	Model    Model
	Rate     *pacer.Rate        // open model
	VUsMin   int                // open model: VUs started before the first arrival
	VUsMax   int                // open model: the pool's cap
	Backlog  int                // open model: arrivals that may wait for a VU at the cap (0: drop at once)
	Quantum  time.Duration      // open model: the dispatcher wakes at most this often; 0: DefaultQuantum
	Conc     *pacer.Concurrency // closed model
	Grace    time.Duration      // how long in-flight operations may finish after the schedule ends
	Interval time.Duration      // recording interval, default 1 s
	Driver   driver.Driver
	Clock    Clock     // nil: the machine's clock
	StartAt  time.Time // when set, the load starts then (Run waits) and interval k covers [StartAt+k·Interval, …)
	Shard    Shard     // one shard of a distributed run; the zero Shard is the whole workload
}

// MaxVUs is the most VUs w runs at once: its vus.max (open model), its
// highest concurrency (closed model).
func (w *Workload) MaxVUs() int {
	if w.Model == Closed {
		return w.Conc.Max()
	}
	return w.VUsMax
}

// Sink receives each interval as it closes. It is called from one goroutine
// per workload, in interval order.
type Sink interface {
	Interval(workload string, iv *stats.Interval)
}

// SinkFunc adapts a function to Sink.
type SinkFunc func(workload string, iv *stats.Interval)

// Interval calls f.
func (f SinkFunc) Interval(workload string, iv *stats.Interval) { f(workload, iv) }

// Summary is what the engine knows of a finished workload beyond its intervals.
type Summary struct {
	Start     time.Time
	End       time.Time
	LoadEnd   time.Time // when the schedule stopped issuing operations
	Scheduled uint64    // arrivals the schedule issued (open model; a shard's own)
	// Dropped counts the arrivals that were not served: those that found
	// no free VU at VUsMax, or were still waiting in the backlog when the
	// schedule ended, and those the dispatcher never issued (Unissued).
	Dropped uint64
	// Unissued counts the arrivals that were due before the schedule
	// ended (or was stopped) but that the dispatcher had not issued by
	// then: the generator could not keep up with the schedule.
	Unissued    uint64
	Interrupted bool // stopped early by the caller
	MaxVUs      int
	Window      Window // the steady-state window the engine proposes
}

// Window is a span of the run, with the rule that chose it.
type Window struct {
	Start time.Time
	End   time.Time
	Rule  string
}

// Validate lists every problem with w.
func (w *Workload) Validate() []error {
	var errs []error
	add := func(format string, a ...any) { errs = append(errs, fmt.Errorf(format, a...)) }
	if w.Driver == nil {
		add("workload %q has no driver", w.Name)
	}
	switch w.Model {
	case Open:
		if w.Rate == nil {
			add("open-model workload %q needs a rate", w.Name)
		} else {
			errs = append(errs, w.Rate.Validate()...)
		}
		if w.VUsMax < 1 {
			add("vus.max %d must be >= 1", w.VUsMax)
		}
		if w.VUsMin < 0 || w.VUsMin > w.VUsMax {
			add("vus.min %d must be between 0 and vus.max %d", w.VUsMin, w.VUsMax)
		}
		if w.Backlog < 0 {
			add("backlog %d must be >= 0", w.Backlog)
		}
		if w.Quantum < 0 {
			add("dispatch quantum %v must be >= 0", w.Quantum)
		}
	case Closed:
		if w.Conc == nil {
			add("closed-model workload %q needs a concurrency", w.Name)
		} else {
			errs = append(errs, w.Conc.Validate()...)
		}
	default:
		add("model %q must be %q or %q", w.Model, Open, Closed)
	}
	if w.Grace < 0 {
		add("grace %v must be >= 0", w.Grace)
	}
	if w.Interval < 0 {
		add("interval %v must be >= 0", w.Interval)
	}
	return append(errs, w.Shard.validate()...)
}

// Duration is the length of w's schedule.
func (w *Workload) Duration() time.Duration {
	if w.Model == Open {
		return w.Rate.Duration()
	}
	return w.Conc.Duration()
}

// Run drives w until its schedule ends or stop is done, then gives in-flight
// operations w.Grace to finish before cancelling them; kill cancels them at
// once (a second Ctrl-C). Every interval, including the last partial one,
// reaches sink before Run returns.
func Run(stop, kill context.Context, w Workload, sink Sink) (Summary, error) {
	if errs := w.Validate(); len(errs) > 0 {
		return Summary{}, fmt.Errorf("cannot run workload %q: %w", w.Name, errors.Join(errs...))
	}
	if w.Interval == 0 {
		w.Interval = time.Second
	}
	if w.Quantum == 0 {
		w.Quantum = DefaultQuantum
	}
	clk := w.Clock
	if clk == nil {
		clk = realClock{}
	}
	w = w.sharded()
	start := startAt(stop, clk, w.StartAt)
	r := &run{
		w:     w,
		clk:   clk,
		start: start,
		rec:   stats.NewRecorder(shardsFor(w), start),
	}
	opCtx, cancelOps := context.WithCancel(kill)
	defer cancelOps()
	r.opCtx = opCtx

	flushed := make(chan struct{})
	cutFlush, stopFlush := make(chan cut), make(chan time.Time)
	go r.flushLoop(sink, cutFlush, stopFlush, flushed)

	var sum Summary
	switch {
	case stop.Err() != nil: // stopped before the load began
		sum.LoadEnd = clk.Now()
	case w.Model == Open:
		sum = r.runOpen(stop)
	default:
		sum = r.runClosed(stop)
	}
	sum.Start = start
	sum.Interrupted = stop.Err() != nil
	// Close the intervals of the load before the drain cancels what is
	// still in flight: those operations, failed as interrupted, belong
	// to the drain, not to the window's last interval. A run stopped
	// early also closes the interval it stopped in, as a schedule's end
	// falls on a boundary: else the window, which ends with the load,
	// holds none of it.
	c := cut{at: sum.LoadEnd, partial: sum.Interrupted, done: make(chan struct{})}
	cutFlush <- c
	<-c.done
	r.drain(kill, cancelOps)
	sum.End = clk.Now()
	stopFlush <- sum.End
	<-flushed
	sum.MaxVUs = r.maxVUs
	sum.Window = r.window(sum)
	return sum, nil
}

// run is the state shared by a workload's goroutines.
type run struct {
	w     Workload
	clk   Clock
	start time.Time
	rec   *stats.Recorder
	opCtx context.Context

	wg     sync.WaitGroup // one per live VU
	mu     sync.Mutex
	vus    int
	maxVUs int
	first  []time.Time // per VU: when its first operation ended (closed model window)
	last   []time.Time // per VU: when its last operation started
}

func shardsFor(w Workload) int {
	n := w.VUsMax
	if w.Model == Closed {
		n = w.Conc.Max()
	}
	// One shard per core: VUs running at the same time rarely share a
	// lock, which is held for a few hundred nanoseconds, and the histograms
	// (four per operation per shard, and one per measure: seconds-long LLM
	// latencies widen each to 100 KiB) stay few. Four per core held 4 MiB
	// of histograms in examples/gateway-overhead.yaml. (Equivalent
	// mutants, 4*GOMAXPROCS and the like: the shard count changes lock
	// contention and memory, never a figure; shards merge exactly.)
	return min(max(n, 1), runtime.GOMAXPROCS(0))
}

// cut tells flushLoop that the load ended at at: it closes the whole
// intervals up to it, and with partial (the run was stopped early) the
// one that at ends, before it closes done.
type cut struct {
	at      time.Time
	partial bool
	done    chan struct{}
}

// flushLoop closes an interval at every multiple of w.Interval from the
// start, and the last one, partial, when told the run ended. Told late,
// or at the moment its timer fires, it still closes every whole interval
// that ended before the run did at its own boundary, so that the
// intervals of a run do not depend on which of the two came first. Told
// of the load's end (cut), it closes the intervals up to it the same way;
// after a partial cut, one last interval, the drain, closes at the end.
func (r *run) flushLoop(sink Sink, cuts <-chan cut, stop <-chan time.Time, done chan<- struct{}) {
	defer close(done)
	next := r.start.Add(r.w.Interval)
	t := r.clk.NewTimer(next.Sub(r.clk.Now()))
	defer t.Stop()
	for {
		select {
		case <-t.C():
			r.emit(sink, next)
			next = next.Add(r.w.Interval)
			t.Reset(next.Sub(r.clk.Now()))
		case c := <-cuts:
			if !c.partial {
				for ; !next.After(c.at); next = next.Add(r.w.Interval) {
					r.emit(sink, next)
				}
				t.Reset(next.Sub(r.clk.Now()))
				close(c.done)
				continue
			}
			t.Stop()
			r.closeUpTo(sink, next, c.at)
			close(c.done)
			if end := <-stop; end.After(c.at) {
				r.emit(sink, end) // the drain
			}
			return
		case end := <-stop:
			r.closeUpTo(sink, next, end)
			return
		}
	}
}

// closeUpTo closes the whole intervals from the boundary next up to end,
// then the partial one ending at end.
func (r *run) closeUpTo(sink Sink, next, end time.Time) {
	for ; !next.After(end); next = next.Add(r.w.Interval) {
		r.emit(sink, next)
	}
	if last := next.Add(-r.w.Interval); end.After(last) || last.Equal(r.start) || r.rec.Pending() {
		r.emit(sink, end) // the partial one; the only one of a run stopped at its start; never lose a sample
	}
}

func (r *run) emit(sink Sink, end time.Time) {
	r.mu.Lock()
	r.rec.SetVUs(int64(r.vus))
	r.mu.Unlock()
	if sink != nil {
		sink.Interval(r.w.Name, r.rec.Flush(end))
		return
	}
	r.rec.Flush(end)
}

// do performs one operation as VU id, intended to start at intended, and
// returns when it ended.
func (r *run) do(id int, res *driver.Result, intended time.Time) time.Time {
	res.Reset("")
	start := r.clk.Now()
	r.w.Driver.Do(r.opCtx, id, res)
	end := r.clk.Now()
	r.record(id, res, intended, start, end)
	return end
}

// record records the outcome res of VU id's operation: a goroutine's
// (do) or a driver loop's (loopHost.Done).
func (r *run) record(id int, res *driver.Result, intended, start, end time.Time) {
	r.rec.Record(id, &stats.Sample{
		Op: res.Op, Intended: intended, Start: start, End: end,
		TTFB: res.TTFB, Connect: res.Connect,
		BytesSent: res.BytesSent, BytesRecv: res.BytesRecv,
		Class: res.Class, Message: res.Message,
		Measures: res.Measures, Counters: res.Counters,
	})
}

// addVU counts a new live VU and returns the count before it (the open
// model uses it as the VU's id).
func (r *run) addVU() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	n := r.vus
	r.vus++
	r.maxVUs = max(r.maxVUs, r.vus)
	return n
}

// dropVU counts a live VU gone.
func (r *run) dropVU() {
	r.mu.Lock()
	r.vus--
	r.mu.Unlock()
}

// drain waits for live VUs: up to w.Grace, then cancels their operations
// (counted as interrupted); kill cancels at once.
func (r *run) drain(kill context.Context, cancelOps context.CancelFunc) {
	done := make(chan struct{})
	go func() { r.wg.Wait(); close(done) }()
	grace := r.clk.NewTimer(r.w.Grace)
	defer grace.Stop()
	select {
	case <-done:
		return
	case <-grace.C():
	case <-kill.Done():
	}
	cancelOps()
	<-done
}

// window proposes the steady-state window. Closed model with a fixed number
// of VUs: warp's rule, from the moment every VU had finished one operation to
// the moment the first VU started its last. Otherwise: the schedule without
// its first interval (connection set-up), up to the end of the load.
func (r *run) window(sum Summary) Window {
	if r.first != nil {
		var ws, we time.Time
		for i := range r.first {
			if r.first[i].IsZero() {
				continue
			}
			if r.first[i].After(ws) {
				ws = r.first[i]
			}
			if we.IsZero() || r.last[i].Before(we) {
				we = r.last[i]
			}
		}
		if !ws.IsZero() && we.After(ws) {
			return Window{Start: ws, End: we, Rule: "every VU had finished one operation → first VU started its last"}
		}
	}
	ws := r.start.Add(r.w.Interval)
	if !sum.LoadEnd.After(ws) {
		return Window{Start: r.start, End: sum.LoadEnd, Rule: "whole run (too short to trim a warm-up interval)"}
	}
	return Window{Start: ws, End: sum.LoadEnd, Rule: "schedule after the first interval, to the end of load"}
}
