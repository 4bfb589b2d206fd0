package engine

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/perflab/perflab/internal/driver"
	"github.com/perflab/perflab/internal/engine/pacer"
	"github.com/perflab/perflab/internal/stats"
)

// fake is a driver whose behaviour each test sets.
type fake func(ctx context.Context, vu int, r *driver.Result)

func (f fake) Do(ctx context.Context, vu int, r *driver.Result) { f(ctx, vu, r) }

func instant(_ context.Context, _ int, r *driver.Result) { r.Op = "op" }

// blockUntilDone holds every operation until ctx ends, then reports it
// interrupted, as a real driver must.
func blockUntilDone(ctx context.Context, _ int, r *driver.Result) {
	r.Op = "op"
	<-ctx.Done()
	r.Class = stats.Interrupted
	r.Message = ctx.Err().Error()
}

// collect gathers intervals and merges them into totals.
type collect struct {
	mu        sync.Mutex
	intervals []*stats.Interval
}

func (c *collect) Interval(_ string, iv *stats.Interval) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.intervals = append(c.intervals, iv)
}

func (c *collect) total() (*stats.OpStats, int64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	all := stats.NewOpStats()
	var dropped int64
	for _, iv := range c.intervals {
		for _, st := range iv.Ops {
			all.Merge(st)
		}
		dropped += iv.Dropped
	}
	return all, dropped
}

func runW(t *testing.T, w Workload) (Summary, *collect) {
	t.Helper()
	c := &collect{}
	sum, err := Run(context.Background(), context.Background(), w, c)
	if err != nil {
		t.Fatal(err)
	}
	return sum, c
}

// bubbleClock is the time package's clock without the fine timer, for
// tests in a synctest bubble, where that time is fake and moves only when
// every goroutine of the test waits: what a run records is then exact.
// Reading it takes cost: a generator slow at everything.
type bubbleClock struct{ cost time.Duration }

func (c bubbleClock) Now() time.Time {
	if c.cost > 0 {
		time.Sleep(c.cost)
	}
	return time.Now()
}

func (bubbleClock) NewTimer(d time.Duration) Timer { return realTimer{time.NewTimer(d)} }

// runFake runs w in a synctest bubble on its fake clock.
func runFake(t *testing.T, w Workload) (sum Summary, c *collect) {
	t.Helper()
	synctest.Test(t, func(t *testing.T) {
		if w.Clock == nil {
			w.Clock = bubbleClock{}
		}
		sum, c = runW(t, w)
	})
	return sum, c
}

func TestOpenModelIssuesEveryArrival(t *testing.T) {
	w := Workload{Name: "w", Model: Open, Rate: pacer.Constant(400, 500*time.Millisecond),
		VUsMin: 2, VUsMax: 50, Interval: 100 * time.Millisecond, Driver: fake(instant)}
	sum, c := runFake(t, w)
	all, dropped := c.total()
	if sum.Scheduled != 200 || all.Classes.Total() != 200 || all.Classes[stats.OK] != 200 {
		t.Errorf("scheduled %d, recorded %d (%d ok); want 200", sum.Scheduled, all.Classes.Total(), all.Classes[stats.OK])
	}
	if dropped != 0 || sum.Dropped != 0 {
		t.Errorf("dropped %d/%d, want 0", dropped, sum.Dropped)
	}
	for i, iv := range c.intervals {
		if iv.Index != i {
			t.Fatalf("interval %d has index %d", i, iv.Index)
		}
		if i > 0 && !iv.Start.Equal(c.intervals[i-1].End) {
			t.Fatalf("interval %d starts at %v, the previous ended at %v", i, iv.Start, c.intervals[i-1].End)
		}
	}
	if n := len(c.intervals); n != 5 || !sum.LoadEnd.Equal(sum.Start.Add(500*time.Millisecond)) {
		t.Errorf("got %d intervals of 100ms for a 500ms run that ended at +%v", n, sum.LoadEnd.Sub(sum.Start))
	}
}

func TestOpenModelCountsDroppedArrivalsAtTheCap(t *testing.T) {
	// Two VUs held for the whole run: of 50 arrivals, 2 are served (and
	// interrupted after the grace period), 48 must be counted as dropped.
	w := Workload{Name: "w", Model: Open, Rate: pacer.Constant(100, 500*time.Millisecond),
		VUsMax: 2, Grace: 10 * time.Millisecond, Driver: fake(blockUntilDone)}
	sum, c := runFake(t, w)
	all, dropped := c.total()
	if sum.Dropped != 48 || dropped != 48 {
		t.Errorf("dropped: summary %d, intervals %d; want 48", sum.Dropped, dropped)
	}
	if got := all.Classes[stats.Interrupted]; got != 2 || all.Classes.Total() != 2 {
		t.Errorf("interrupted %d of %d operations, want 2 of 2", got, all.Classes.Total())
	}
	if sum.MaxVUs != 2 {
		t.Errorf("MaxVUs = %d, want 2", sum.MaxVUs)
	}
}

func TestOpenModelMeasuresFromIntendedStart(t *testing.T) {
	// The first operation stalls 300ms with one VU; the arrivals due during
	// the stall wait in the backlog. Their latency must include the wait
	// (coordinated omission), their service time must not.
	var calls atomic.Int64
	stall := fake(func(ctx context.Context, _ int, r *driver.Result) {
		r.Op = "op"
		if calls.Add(1) == 1 {
			select {
			case <-time.After(300 * time.Millisecond):
			case <-ctx.Done():
			}
		}
	})
	w := Workload{Name: "w", Model: Open, Rate: pacer.Constant(100, 500*time.Millisecond),
		VUsMax: 1, Backlog: 1000, Driver: stall}
	sum, c := runFake(t, w)
	all, _ := c.total()
	if sum.Dropped != 0 || all.Classes[stats.OK] != 50 {
		t.Fatalf("dropped %d, ok %d; want 0 and 50", sum.Dropped, all.Classes[stats.OK])
	}
	// Arrivals due at 0, 10, …, 90 ms all end after 300 ms: ≥ 10 of 50
	// waited ≥ 200 ms from their intended start.
	if p80 := all.Latency.Quantile(0.80); p80 < 200*time.Millisecond {
		t.Errorf("latency p80 = %v, want >= 200ms: the stall was hidden", p80)
	}
	if p80 := all.Service.Quantile(0.80); p80 > 50*time.Millisecond {
		t.Errorf("service p80 = %v, want the short service time", p80)
	}
	if all.Service.Max() < 290*time.Millisecond {
		t.Errorf("service max = %v, want the stalled call itself (>= 300ms)", all.Service.Max())
	}
}

func TestOpenModelStartsVUsUpToTheCapOnly(t *testing.T) {
	var inFlight, peak atomic.Int64
	slow := fake(func(ctx context.Context, _ int, r *driver.Result) {
		r.Op = "op"
		n := inFlight.Add(1)
		for p := peak.Load(); n > p && !peak.CompareAndSwap(p, n); p = peak.Load() {
		}
		time.Sleep(20 * time.Millisecond)
		inFlight.Add(-1)
	})
	w := Workload{Name: "w", Model: Open, Rate: pacer.Constant(500, 400*time.Millisecond),
		VUsMin: 1, VUsMax: 5, Driver: slow}
	sum, _ := runFake(t, w)
	if peak.Load() > 5 || sum.MaxVUs > 5 {
		t.Errorf("%d operations in flight, %d VUs; the cap is 5", peak.Load(), sum.MaxVUs)
	}
	if sum.Dropped == 0 {
		t.Errorf("5 VUs of 20ms cannot serve 500/s; no arrival was dropped")
	}
}

func TestClosedModelHoldsConcurrency(t *testing.T) {
	forEachClosedPath(t, func(t *testing.T, wrap func(fake) driver.Driver) {
		var inFlight, peak, ops atomic.Int64
		op := fake(func(ctx context.Context, _ int, r *driver.Result) {
			r.Op = "op"
			ops.Add(1)
			n := inFlight.Add(1)
			for p := peak.Load(); n > p && !peak.CompareAndSwap(p, n); p = peak.Load() {
			}
			time.Sleep(2 * time.Millisecond)
			inFlight.Add(-1)
		})
		w := Workload{Name: "w", Model: Closed, Conc: pacer.FixedConcurrency(4, 300*time.Millisecond), Driver: wrap(op)}
		sum, c := runFake(t, w)
		all, _ := c.total()
		if peak.Load() != 4 || sum.MaxVUs != 4 {
			t.Errorf("peak in flight %d, MaxVUs %d; want 4", peak.Load(), sum.MaxVUs)
		}
		if all.Classes.Total() != ops.Load() {
			t.Errorf("recorded %d operations, the driver saw %d", all.Classes.Total(), ops.Load())
		}
		if !sum.Window.End.After(sum.Window.Start) || sum.Window.Start.Before(sum.Start) || sum.Window.End.After(sum.LoadEnd) {
			t.Errorf("window %v..%v not inside the run %v..%v", sum.Window.Start, sum.Window.End, sum.Start, sum.LoadEnd)
		}
	})
}

// A driver's measures and counters reach the intervals, and each
// operation starts with an empty Result that keeps its measures' storage.
func TestDriverMeasuresAndCountersAreRecorded(t *testing.T) {
	forEachClosedPath(t, func(t *testing.T, wrap func(fake) driver.Driver) {
		var ops, leftovers, grown atomic.Int64
		op := fake(func(_ context.Context, _ int, r *driver.Result) {
			ops.Add(1)
			if len(r.Measures) != 0 || r.Counters != [stats.NumCounters]int64{} {
				leftovers.Add(1)
			}
			before := cap(r.Measures)
			r.Op = "chat"
			for i := range 3 {
				r.Measures = append(r.Measures, stats.Timing{Measure: stats.ITL, D: time.Duration(i+1) * time.Millisecond})
			}
			r.Measures = append(r.Measures, stats.Timing{Measure: stats.TTFT, D: 50 * time.Millisecond})
			if cap(r.Measures) != before {
				grown.Add(1)
			}
			r.Counters[stats.OutputTokens] = 4
		})
		w := Workload{Name: "w", Model: Closed, Conc: pacer.FixedConcurrency(2, 100*time.Millisecond), Driver: wrap(op)}
		_, c := runW(t, w)
		all, _ := c.total()
		n := all.Classes.Total()
		if n == 0 || n != ops.Load() || leftovers.Load() != 0 {
			t.Fatalf("%d operations recorded of %d; %d began with the last one's measures", n, ops.Load(), leftovers.Load())
		}
		if all.Measures[stats.ITL].Count() != 3*n || all.Measures[stats.TTFT].Count() != n || all.Measures[stats.TPOT] != nil {
			t.Errorf("measures %v for %d operations", all.Measures, n)
		}
		if all.Counters[stats.OutputTokens] != 4*n {
			t.Errorf("output tokens %d, want %d", all.Counters[stats.OutputTokens], 4*n)
		}
		if g := grown.Load(); g > 2 {
			t.Errorf("the measures' storage grew in %d operations, want only each VU's first", g)
		}
	})
}

func TestStopGivesGraceThenInterrupts(t *testing.T) {
	stop, cancel := context.WithCancel(context.Background())
	defer cancel()
	started := make(chan struct{})
	var once sync.Once
	d := fake(func(ctx context.Context, _ int, r *driver.Result) {
		once.Do(func() { close(started) })
		blockUntilDone(ctx, 0, r)
	})
	w := Workload{Name: "w", Model: Open, Rate: pacer.Constant(10, time.Hour),
		VUsMax: 1, Grace: 20 * time.Millisecond, Driver: d}
	go func() { <-started; cancel() }()
	c := &collect{}
	sum, err := Run(stop, context.Background(), w, c)
	if err != nil {
		t.Fatal(err)
	}
	all, _ := c.total()
	if !sum.Interrupted || sum.LoadEnd.Sub(sum.Start) > time.Minute {
		t.Errorf("Interrupted = %v after %v; want a prompt stop", sum.Interrupted, sum.LoadEnd.Sub(sum.Start))
	}
	if all.Classes[stats.Interrupted] != 1 {
		t.Errorf("interrupted %d, want the one in-flight operation", all.Classes[stats.Interrupted])
	}
}

func TestKillCancelsAtOnce(t *testing.T) {
	forEachClosedPath(t, func(t *testing.T, wrap func(fake) driver.Driver) {
		stop, cancelStop := context.WithCancel(context.Background())
		kill, cancelKill := context.WithCancel(context.Background())
		defer cancelStop()
		started := make(chan struct{})
		var once sync.Once
		d := fake(func(ctx context.Context, _ int, r *driver.Result) {
			once.Do(func() { close(started) })
			blockUntilDone(ctx, 0, r)
		})
		w := Workload{Name: "w", Model: Closed, Conc: pacer.FixedConcurrency(3, time.Hour), Grace: time.Hour, Driver: wrap(d)}
		go func() { <-started; cancelStop(); cancelKill() }()
		c := &collect{}
		sum, err := Run(stop, kill, w, c)
		if err != nil {
			t.Fatal(err)
		}
		all, _ := c.total()
		if !sum.Interrupted || all.Classes[stats.Interrupted] == 0 {
			t.Errorf("Interrupted = %v with %d interrupted operations", sum.Interrupted, all.Classes[stats.Interrupted])
		}
	})
}

func TestRampingRateIssuesTheSchedule(t *testing.T) {
	rate := pacer.NewRate(0, []pacer.Stage{{Duration: 300 * time.Millisecond, Target: 400}, {Duration: 200 * time.Millisecond, Target: 400}})
	w := Workload{Name: "w", Model: Open, Rate: rate, VUsMax: 20, Driver: fake(instant)}
	sum, c := runFake(t, w)
	all, _ := c.total()
	if want := rate.Total(); sum.Scheduled != want || uint64(all.Classes.Total()) != want {
		t.Errorf("scheduled %d, recorded %d; want %d", sum.Scheduled, all.Classes.Total(), want)
	}
}

func TestValidateListsEveryProblem(t *testing.T) {
	w := Workload{Name: "w", Model: Open, Rate: pacer.NewRate(-1, nil), VUsMin: 5, VUsMax: 0, Backlog: -1, Grace: -1}
	// no driver, bad start rate, no stages, vus.max, vus.min, backlog, grace
	if errs := w.Validate(); len(errs) != 7 {
		t.Errorf("Validate() = %d problems, want 7: %v", len(errs), errs)
	}
	if _, err := Run(context.Background(), context.Background(), w, nil); err == nil {
		t.Error("Run accepted an invalid workload")
	}
}

func TestOpenModelDispatchesWithinAQuantumTogetherAndMeasuresTheDelay(t *testing.T) {
	// 2000 arrivals/s are 0.5 ms apart; a 25 ms quantum sends them in
	// batches. Each is still timed from its own intended start: the delay
	// shows in latency and scheduler lag, not in service time.
	w := Workload{Name: "w", Model: Open, Rate: pacer.Constant(2000, 500*time.Millisecond),
		VUsMin: 100, VUsMax: 200, Quantum: 25 * time.Millisecond, Driver: fake(instant)}
	sum, c := runFake(t, w)
	all, dropped := c.total()
	if sum.Scheduled != 1000 || dropped != 0 || all.Classes[stats.OK] != 1000 {
		t.Fatalf("scheduled %d, dropped %d, ok %d; want 1000, 0, 1000", sum.Scheduled, dropped, all.Classes[stats.OK])
	}
	lag := stats.NewHist()
	for _, iv := range c.intervals {
		lag.Merge(iv.Lag)
	}
	if p50 := all.Latency.Quantile(0.5); p50 < 5*time.Millisecond {
		t.Errorf("latency p50 = %v, want >= 5ms: batched arrivals must count their wait", p50)
	}
	if p50 := lag.Quantile(0.5); p50 < 5*time.Millisecond {
		t.Errorf("scheduler lag p50 = %v, want >= 5ms", p50)
	}
	if p50, lat := all.Service.Quantile(0.5), all.Latency.Quantile(0.5); p50 >= lat {
		t.Errorf("service p50 %v >= latency p50 %v: the dispatch delay leaked into service time", p50, lat)
	}
}

func TestPoolHandsOutTheMostRecentlyIdleVU(t *testing.T) {
	p := newPool(3)
	vs := []*vu{{id: 0, work: make(chan time.Time, 1)}, {id: 1, work: make(chan time.Time, 1)}, {id: 2, work: make(chan time.Time, 1)}}
	for _, v := range vs {
		p.put(v)
	}
	for want := 2; want >= 0; want-- {
		if v := p.get(); v == nil || v.id != want {
			t.Fatalf("get() = %v, want VU %d", v, want)
		}
	}
	if v := p.get(); v != nil {
		t.Fatalf("get() on an empty pool = VU %d", v.id)
	}
	p.put(vs[0])
	p.close()
	if _, open := <-vs[0].work; open {
		t.Error("close left an idle VU running")
	}
	p.put(vs[1]) // a busy VU finishing after close is ended, not pooled
	if _, open := <-vs[1].work; open || p.get() != nil {
		t.Error("a VU returned to a closed pool was kept")
	}
}
