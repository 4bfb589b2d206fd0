package engine

import (
	"context"
	"os"
	"runtime/debug"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/perflab/perflab/internal/driver"
	"github.com/perflab/perflab/internal/engine/pacer"
	"github.com/perflab/perflab/internal/stats"
)

// TestOpenModelWithoutBacklogNoArrivalWaits (issue 18): with the default
// backlog of 0 an arrival that finds the only VU busy is dropped at once;
// none waits for it, so latency is the service time.
func TestOpenModelWithoutBacklogNoArrivalWaits(t *testing.T) {
	// Arrivals every 10 ms, operations of 25 ms on one VU: those at 0, 30,
	// 60, …, 480 ms are served (17), the two after each are dropped (33).
	w := Workload{Name: "w", Model: Open, Rate: pacer.Constant(100, 500*time.Millisecond),
		VUsMax: 1, Driver: sleepByVU(map[int]time.Duration{0: 25 * time.Millisecond})}
	sum, c := runFake(t, w)
	all, dropped := c.total()
	if all.Classes.Total() != 17 || sum.Dropped != 33 || dropped != 33 {
		t.Errorf("served %d, dropped %d (%d in intervals); want 17 and 33", all.Classes.Total(), sum.Dropped, dropped)
	}
	if lat, svc := all.Latency.Max(), all.Service.Max(); lat != svc || svc > 26*time.Millisecond {
		t.Errorf("latency max %v, want the 25ms service time %v: an arrival waited", lat, svc)
	}
}

// TestOpenModelStartsVUsMinBeforehand: VUsMin VUs are started before the
// first arrival, and a rate one VU keeps up with needs no other.
func TestOpenModelStartsVUsMinBeforehand(t *testing.T) {
	for _, min := range []int{0, 1, 3} {
		w := Workload{Name: "w", Model: Open, Rate: pacer.Constant(100, 200*time.Millisecond),
			VUsMin: min, VUsMax: 10, Driver: fake(instant)}
		sum, c := runFake(t, w)
		all, _ := c.total()
		if want := max(min, 1); sum.MaxVUs != want || all.Classes.Total() != 20 {
			t.Errorf("VUsMin %d: MaxVUs %d, %d operations; want %d and 20", min, sum.MaxVUs, all.Classes.Total(), want)
		}
	}
}

func TestValidateBounds(t *testing.T) {
	ok := Workload{Name: "w", Model: Open, Rate: pacer.Constant(10, time.Second), VUsMin: 5, VUsMax: 5, Driver: fake(instant)}
	if errs := ok.Validate(); len(errs) != 0 {
		t.Errorf("vus.min = vus.max: %v", errs)
	}
	for _, c := range []struct {
		s    Shard
		want string
	}{
		{Shard{Index: 3, Of: 3}, "shard 3 of 3: want an index from 0 to 2"},
		{Shard{Index: -1, Of: 2}, "shard -1 of 2: want an index from 0 to 1"},
		{Shard{Index: 0, Of: -1}, "shard 0 of -1: want an index from 0 to 0"},
		{Shard{Index: 1}, "shard 1 of 0: set how many shards there are"},
	} {
		errs := c.s.validate()
		if len(errs) != 1 || errs[0].Error() != c.want {
			t.Errorf("%+v: %v, want %q", c.s, errs, c.want)
		}
	}
	if errs := (Shard{Index: 2, Of: 3}).validate(); errs != nil {
		t.Errorf("shard 2 of 3: %v", errs)
	}
}

// TestStoppedBeforeTheLoadBegan: a run stopped before its start issues
// nothing and reads as interrupted.
func TestStoppedBeforeTheLoadBegan(t *testing.T) {
	stop, cancel := context.WithCancel(context.Background())
	cancel()
	w := Workload{Name: "w", Model: Open, Rate: pacer.Constant(100, time.Second), VUsMax: 1, Driver: fake(instant)}
	sum, err := Run(stop, context.Background(), w, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !sum.Interrupted || sum.Scheduled != 0 || sum.MaxVUs != 0 {
		t.Errorf("interrupted %v, scheduled %d, MaxVUs %d; want true, 0, 0", sum.Interrupted, sum.Scheduled, sum.MaxVUs)
	}
}

// TestOpenModelVUsComingBackTakeDueArrivals: the dispatcher wakes once a
// quantum, and with a quantum finer than the default a VU that comes back
// in between takes an arrival that is due itself. Arrivals every 100 µs,
// VUs coming back all the time: the median arrival goes out within 200 µs
// (90 µs here; 400 µs without the VUs).
// With a backlog allowed VUs go back to the pool (the backlog is served
// oldest first by the dispatcher), and at the default quantum the
// dispatcher batches alone: arrivals go out half a quantum late in the
// median. Either way none is later than the quantum.
func TestOpenModelVUsComingBackTakeDueArrivals(t *testing.T) {
	for _, c := range []struct {
		backlog        int
		quantum        time.Duration
		minP50, maxP50 time.Duration
	}{
		{0, 900 * time.Microsecond, 0, 200 * time.Microsecond},
		{10, 900 * time.Microsecond, 300 * time.Microsecond, 900 * time.Microsecond},
		{0, DefaultQuantum, 300 * time.Microsecond, DefaultQuantum},
	} {
		var n atomic.Int64
		w := Workload{Name: "w", Model: Open, Rate: pacer.Constant(10000, 100*time.Millisecond), Backlog: c.backlog,
			VUsMin: 50, VUsMax: 100, Quantum: c.quantum, Driver: fake(func(_ context.Context, _ int, r *driver.Result) {
				r.Op = "op"
				// VUs come back all the time, between the dispatcher's wakes
				time.Sleep(time.Duration(1+n.Add(1)%5)*time.Millisecond + 130*time.Microsecond)
			})}
		sum, col := runFake(t, w)
		lag := stats.NewHist()
		for _, iv := range col.intervals {
			lag.Merge(iv.Lag)
		}
		if sum.Scheduled != 1000 || sum.Dropped != 0 || lag.Count() != 1000 {
			t.Errorf("backlog %d, quantum %v: scheduled %d, dropped %d, %d lags; want 1000, 0, 1000",
				c.backlog, c.quantum, sum.Scheduled, sum.Dropped, lag.Count())
		}
		if p50, max := lag.Quantile(0.5), lag.Max(); p50 < c.minP50 || p50 > c.maxP50 || max > c.quantum+c.quantum/100 {
			t.Errorf("backlog %d, quantum %v: scheduler lag p50 %v, max %v; want a p50 from %v to %v and at most the quantum",
				c.backlog, c.quantum, p50, max, c.minP50, c.maxP50)
		}
	}
}

// TestOpenModelServesTheBacklogInOrder: arrivals that wait for the only VU
// are issued when due, served oldest first as it comes back, each timed
// from its own intended start, and those beyond the backlog are dropped.
func TestOpenModelServesTheBacklogInOrder(t *testing.T) {
	// Arrivals every 10 ms, operations of 29 ms, one VU: it comes back 1 ms
	// before an arrival is due, with arrivals waiting.
	w := Workload{Name: "w", Model: Open, Rate: pacer.Constant(100, 200*time.Millisecond), VUsMax: 1, Backlog: 10,
		Driver: sleepByVU(map[int]time.Duration{0: 29 * time.Millisecond})}
	sum, c := runFake(t, w)
	all, _ := c.total()
	// Served: the arrivals of 0, 10, …, 60 ms, starting at 0, 29, …, 174
	// ms; the other 13 wait until the end or find the backlog full.
	if all.Classes.Total() != 7 || sum.Dropped != 13 {
		t.Errorf("served %d, dropped %d; want 7 and 13", all.Classes.Total(), sum.Dropped)
	}
	// Each arrival is issued when due, queued or not: scheduler lag 0 (the
	// histogram's 1 µs).
	lag := stats.NewHist()
	for _, iv := range c.intervals {
		lag.Merge(iv.Lag)
	}
	if lag.Count() != 20 || lag.Max() > time.Microsecond {
		t.Errorf("scheduler lag: %d values, max %v; want 20 arrivals issued when due", lag.Count(), lag.Max())
	}
	// Latencies 29, 48, 67, 86, 105, 124 and 143 ms.
	near := func(got, want time.Duration) bool { return got >= want && got <= want+want/1000 }
	if p50, max := all.Latency.Quantile(0.5), all.Latency.Max(); !near(p50, 86*time.Millisecond) || !near(max, 143*time.Millisecond) {
		t.Errorf("latency p50 %v, max %v; want 86ms and 143ms", p50, max)
	}
}

// earlyClock's timers fire a quarter early, as a coarse timer may.
type earlyClock struct{ bubbleClock }

func (earlyClock) NewTimer(d time.Duration) Timer { return earlyTimer{time.NewTimer(early(d))} }

type earlyTimer struct{ t *time.Timer }

func early(d time.Duration) time.Duration {
	if d <= 4 {
		return d
	}
	return d - d/4
}

func (t earlyTimer) C() <-chan time.Time   { return t.t.C }
func (t earlyTimer) Reset(d time.Duration) { t.t.Reset(early(d)) }
func (t earlyTimer) Stop()                 { t.t.Stop() }

// TestOpenModelNeverIssuesAnArrivalEarly: a timer that fires before the
// arrival is due does not start it: no operation starts before its
// intended start, so none has a latency below its service time.
func TestOpenModelNeverIssuesAnArrivalEarly(t *testing.T) {
	w := Workload{Name: "w", Model: Open, Rate: pacer.Constant(100, 200*time.Millisecond), VUsMax: 5,
		Clock: earlyClock{}, Driver: sleepByVU(map[int]time.Duration{0: 5 * time.Millisecond})}
	sum, c := runFake(t, w)
	all, _ := c.total()
	if sum.Scheduled != 20 || all.Classes.Total() != 20 {
		t.Errorf("scheduled %d, served %d; want 20", sum.Scheduled, all.Classes.Total())
	}
	if lat, svc := all.Latency.Min(), all.Service.Min(); lat < svc {
		t.Errorf("latency min %v below the service time %v: an arrival was issued early", lat, svc)
	}
}

// TestRunOnTheMachinesClockLeavesNoFileOpen: the fine timer of a run on
// the machine's clock is closed when it ends; a capacity search runs many
// phases in one process.
func TestRunOnTheMachinesClockLeavesNoFileOpen(t *testing.T) {
	w := Workload{Name: "w", Model: Open, Rate: pacer.Constant(1000, 20*time.Millisecond), VUsMax: 5, Driver: fake(instant)}
	runW(t, w) // the first run opens what the runtime keeps (the poller's own files)
	// No collection meanwhile: a file left open would be closed by its
	// finalizer, hiding the leak.
	defer debug.SetGCPercent(debug.SetGCPercent(-1))
	before := openFiles(t)
	for range 3 {
		runW(t, w)
	}
	if after := openFiles(t); after != before {
		t.Errorf("%d files open after three runs, %d before", after, before)
	}
}

func openFiles(t *testing.T) int {
	t.Helper()
	fds, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Skipf("cannot count open files: %v", err)
	}
	return len(fds)
}

// TestOpenModelQuantumEndingAtTheEndIsNotApplied: a quantum that would
// end exactly when the schedule does is not waited for; the arrivals due
// before it go out at their own instants. 1000/s for 5 ms with a 2 ms
// quantum, on the fake clock: the arrival at 2 ms waits for the quantum
// that ends at 3 ms (lag 1 ms); the one at 4 ms would wait for the
// quantum ending at 5 ms, the schedule's end, and does not (lag 0).
func TestOpenModelQuantumEndingAtTheEndIsNotApplied(t *testing.T) {
	w := Workload{Name: "w", Model: Open, Rate: pacer.Constant(1000, 5*time.Millisecond),
		VUsMax: 5, Quantum: 2 * time.Millisecond, Driver: fake(instant)}
	sum, c := runFake(t, w)
	lag := stats.NewHist()
	for _, iv := range c.intervals {
		lag.Merge(iv.Lag)
	}
	if sum.Scheduled != 5 || sum.Dropped != 0 || lag.Count() != 5 {
		t.Fatalf("scheduled %d, dropped %d, %d lags; want 5, 0, 5", sum.Scheduled, sum.Dropped, lag.Count())
	}
	// One lag of 1 ms in five is a mean of 200 µs (to the histogram's
	// three digits); two would be 400 µs.
	if mean, max := lag.Mean(), lag.Max(); mean < 199*time.Microsecond || mean > 202*time.Microsecond || max > 1002*time.Microsecond {
		t.Errorf("scheduler lag mean %v, max %v; want 200µs (one arrival of five 1 ms late) and 1ms", mean, max)
	}
}

// TestOpenModelStoppedVUsTakeNoArrival: once the run is stopped, neither
// VUs that come back nor the dispatcher issue another arrival, though
// arrivals are due all the time: 1000/s stopped at 100.5 ms runs the 101
// due by then (0 to 100 ms), and counts each as scheduled.
func TestOpenModelStoppedVUsTakeNoArrival(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var ran atomic.Uint64
		stop, cancel := context.WithCancel(context.Background())
		defer cancel()
		w := Workload{Name: "w", Model: Open, Rate: pacer.Constant(1000, time.Hour), VUsMin: 20, VUsMax: 20,
			Quantum: 500 * time.Microsecond, Grace: time.Second, Clock: bubbleClock{},
			Driver: fake(func(_ context.Context, _ int, r *driver.Result) {
				r.Op = "op"
				ran.Add(1)
				time.Sleep(5 * time.Millisecond)
			})}
		// Between two arrivals: the dispatcher is in its fine sleep until
		// the one at 101 ms, and must not issue it when it wakes.
		go func() { time.Sleep(100*time.Millisecond + 500*time.Microsecond); cancel() }()
		sum, err := Run(stop, context.Background(), w, &collect{})
		if err != nil {
			t.Fatal(err)
		}
		if !sum.Interrupted || sum.Scheduled != 101 || ran.Load() != sum.Scheduled {
			t.Errorf("interrupted %v, scheduled %d, %d run; want the about 100 due before the stop, each run",
				sum.Interrupted, sum.Scheduled, ran.Load())
		}
	})
}

// TestClaimTakesNothingOnceStoppedOrEnded: a VU coming back takes an
// arrival that is due, but none once the schedule has ended (a VU that
// read the clock just before the end, and whose arrival would not be in
// the summary), on a shard too, and none once the run is stopped.
func TestClaimTakesNothingOnceStoppedOrEnded(t *testing.T) {
	t0 := time.Unix(1000, 0)
	for _, shard := range []Shard{{}, {Index: 1, Of: 3}} {
		stop, cancel := context.WithCancel(context.Background())
		d := &dispatcher{run: &run{w: Workload{Rate: pacer.Constant(1000, time.Second), Shard: shard}, start: t0,
			clk: realClock{}, rec: stats.NewRecorder(1, t0)}, pool: newPool(1), stop: stop, dur: time.Second}
		at := t0.Add(500 * time.Millisecond) // hundreds of arrivals due
		if intended, ok := d.claim(at); !ok || intended.After(at) || d.n.Load() != 1 {
			t.Fatalf("shard %+v: claim at 500 ms: %v %v, %d issued; want an arrival due by then", shard, intended, ok, d.n.Load())
		}
		d.elapsed = at.Sub(t0) // the schedule ends here, as when the dispatcher was stopped
		if sum := d.end(); sum.Scheduled != 1 {
			t.Errorf("shard %+v: %d scheduled, want the 1 claimed", shard, sum.Scheduled)
		}
		if _, ok := d.claim(at); ok {
			t.Errorf("shard %+v: an arrival taken after the schedule ended", shard)
		}
		d.n.Store(1)
		cancel()
		if _, ok := d.claim(at); ok || d.n.Load() != 1 {
			t.Errorf("shard %+v: an arrival taken after the stop", shard)
		}
	}
}

// TestClaimIssuesEachArrivalOnce: VUs coming back at once take the due
// arrivals between them, each once and none skipped: 4 claimers and
// 200,000 arrivals due.
func TestClaimIssuesEachArrivalOnce(t *testing.T) {
	t0 := time.Unix(1000, 0)
	d := &dispatcher{run: &run{w: Workload{Rate: pacer.Constant(200_000, time.Second)}, start: t0},
		stop: context.Background(), dur: 2 * time.Second}
	now := t0.Add(1500 * time.Millisecond) // every arrival due
	taken := make([][]time.Time, 4)
	var wg sync.WaitGroup
	for i := range taken {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				intended, ok := d.claim(now)
				if !ok {
					return
				}
				taken[i] = append(taken[i], intended)
			}
		}()
	}
	wg.Wait()
	all := slices.SortedFunc(slices.Values(slices.Concat(taken...)), time.Time.Compare)
	if len(all) != 200_000 || d.n.Load() != 200_000 {
		t.Fatalf("%d arrivals taken, count %d; want 200000", len(all), d.n.Load())
	}
	for i := 1; i < len(all); i++ {
		if !all[i].After(all[i-1]) {
			t.Fatalf("arrival at %v taken twice", all[i].Sub(t0))
		}
	}
}
