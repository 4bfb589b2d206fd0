package engine

import (
	"context"
	"slices"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/perflab/perflab/internal/driver"
	"github.com/perflab/perflab/internal/engine/pacer"
)

// arrivals is every due time of shard s of schedule r, in the order the
// open model issues them.
func arrivals(r *pacer.Rate, s Shard) []time.Duration {
	var out []time.Duration
	for k := uint64(0); ; k++ {
		due, stop := s.pace(r, 0, k)
		if stop {
			return out
		}
		out = append(out, due)
	}
}

func TestShardsTogetherIssueTheWholeSchedule(t *testing.T) {
	schedules := map[string]*pacer.Rate{
		"constant": pacer.Constant(997, 3*time.Second),
		"ramping": pacer.NewRate(0, []pacer.Stage{{Duration: 2 * time.Second, Target: 500},
			{Duration: time.Second, Target: 500}, {Duration: 1500 * time.Millisecond, Target: 40}}),
	}
	for name, r := range schedules {
		whole := arrivals(r, Shard{})
		if uint64(len(whole)) != r.Total() {
			t.Fatalf("%s: the whole schedule has %d arrivals, want %d", name, len(whole), r.Total())
		}
		for _, n := range []int{1, 2, 3, 4, 7} {
			var union []time.Duration
			for i := range n {
				got := arrivals(r, Shard{Index: i, Of: n})
				if !slices.IsSorted(got) {
					t.Errorf("%s, shard %d of %d: arrivals out of order", name, i, n)
				}
				if d := len(got) - len(whole)/n; d < 0 || d > 1 {
					t.Errorf("%s, shard %d of %d: %d arrivals of %d, want %d or one more", name, i, n, len(got), len(whole), len(whole)/n)
				}
				union = append(union, got...)
			}
			slices.Sort(union)
			if !slices.Equal(union, whole) {
				t.Errorf("%s: the %d shards' arrivals (%d) are not the whole schedule's (%d)", name, n, len(union), len(whole))
			}
		}
	}
}

func TestShardSplitsVUs(t *testing.T) {
	for v := range 30 {
		for n := 1; n <= 6; n++ {
			sum, lo, hi := 0, v, 0
			for i := range n {
				p := Shard{Index: i, Of: n}.part(v)
				sum, lo, hi = sum+p, min(lo, p), max(hi, p)
			}
			if sum != v || hi-lo > 1 {
				t.Errorf("%d VUs over %d shards: parts add up to %d, spread %d..%d", v, n, sum, lo, hi)
			}
		}
	}
	w := Workload{Model: Open, VUsMin: 5, VUsMax: 10, Backlog: 0, Shard: Shard{Index: 2, Of: 3}}.sharded()
	if w.VUsMin != 2 || w.VUsMax != 4 || w.Backlog != 0 {
		t.Errorf("vus 5..10, backlog 0 over 3 shards: %d..%d, backlog %d; want 2..4, 0", w.VUsMin, w.VUsMax, w.Backlog)
	}
	w = Workload{Model: Open, VUsMax: 2, Backlog: 7, Shard: Shard{Index: 4, Of: 5}}.sharded()
	if w.VUsMax != 1 || w.Backlog != 2 {
		t.Errorf("vus.max 2, backlog 7 over 5 shards: %d, %d; want 1 (at least one VU), 2", w.VUsMax, w.Backlog)
	}
}

func TestValidateRefusesABadShard(t *testing.T) {
	for _, s := range []Shard{{Index: 3, Of: 3}, {Index: -1, Of: 2}, {Index: 1}, {Of: -1}} {
		w := Workload{Name: "w", Model: Open, Rate: pacer.Constant(1, time.Second), VUsMax: 1, Driver: fake(instant), Shard: s}
		if len(w.Validate()) != 1 {
			t.Errorf("shard %+v: %v, want one problem", s, w.Validate())
		}
	}
}

// TestShardedOpenRunsAddUpToTheWholeRun runs three shards of one schedule
// from one start: together they issue every arrival once, and their
// intervals cover the same spans. They run on the fake clock of a synctest
// bubble: on the machine's, a slow machine (the race detector, a busy CI
// host) left arrivals of the wall-clock schedule unissued.
func TestShardedOpenRunsAddUpToTheWholeRun(t *testing.T) {
	const n = 3
	rate := pacer.NewRate(100, []pacer.Stage{{Duration: 300 * time.Millisecond, Target: 900}, {Duration: 200 * time.Millisecond, Target: 900}})
	sums := make([]Summary, n)
	cs := make([]*collect, n)
	var at time.Time
	synctest.Test(t, func(t *testing.T) {
		at = time.Now().Add(50 * time.Millisecond)
		var wg sync.WaitGroup
		for i := range n {
			w := Workload{Name: "w", Model: Open, Rate: rate, VUsMin: 1, VUsMax: 50, Interval: 100 * time.Millisecond,
				Driver: fake(instant), StartAt: at, Shard: Shard{Index: i, Of: n}, Clock: bubbleClock{}}
			wg.Go(func() { sums[i], cs[i] = runW(t, w) })
		}
		wg.Wait()
	})
	var scheduled uint64
	var recorded int64
	for i := range n {
		scheduled += sums[i].Scheduled
		all, _ := cs[i].total()
		recorded += all.Classes.Total()
		if !sums[i].Start.Equal(at) {
			t.Errorf("shard %d started at %v, want %v", i, sums[i].Start, at)
		}
		for k, iv := range cs[i].intervals[:len(cs[i].intervals)-1] { // the last one ends when the shard did
			if want := at.Add(time.Duration(k) * 100 * time.Millisecond); !iv.Start.Equal(want) || !iv.End.Equal(want.Add(100*time.Millisecond)) {
				t.Errorf("shard %d interval %d spans %v..%v, want from %v", i, k, iv.Start, iv.End, want)
			}
		}
	}
	if scheduled != rate.Total() || recorded != int64(rate.Total()) {
		t.Errorf("the shards scheduled %d and recorded %d arrivals, want the schedule's %d", scheduled, recorded, rate.Total())
	}
}

// TestStartAtWaitsForItsInstant runs on the fake clock of a synctest
// bubble, where the set-up takes no time: on the machine's, a busy machine
// could spend the whole lead before the run began.
func TestStartAtWaitsForItsInstant(t *testing.T) {
	var mu sync.Mutex
	var at, first time.Time
	op := fake(func(_ context.Context, _ int, r *driver.Result) {
		mu.Lock()
		if first.IsZero() {
			first = time.Now()
		}
		mu.Unlock()
		time.Sleep(time.Millisecond) // on the fake clock, a closed loop of instant operations would never let time pass
		r.Op = "op"
	})
	var sum Summary
	var c *collect
	synctest.Test(t, func(t *testing.T) {
		at = time.Now().Add(80 * time.Millisecond)
		w := Workload{Name: "w", Model: Closed, Conc: pacer.FixedConcurrency(1, 50*time.Millisecond), Driver: op, StartAt: at,
			Clock: bubbleClock{}}
		sum, c = runW(t, w)
	})
	if len(c.intervals) == 0 {
		t.Fatalf("no interval recorded: %+v", sum)
	}
	if first.Before(at) || !sum.Start.Equal(at) || !c.intervals[0].Start.Equal(at) {
		t.Errorf("first operation at %v, start %v, first interval from %v; want all at or after %v", first, sum.Start, c.intervals[0].Start, at)
	}
}

func TestStopWhileWaitingForTheStartRunsNothing(t *testing.T) {
	stop, cancel := context.WithCancel(context.Background())
	cancel()
	w := Workload{Name: "w", Model: Closed, Conc: pacer.FixedConcurrency(2, time.Second), Driver: fake(instant),
		StartAt: time.Now().Add(time.Hour)}
	sum, err := Run(stop, context.Background(), w, nil)
	if err != nil || sum.Scheduled != 0 || sum.MaxVUs != 0 || !sum.Interrupted {
		t.Errorf("Run = %+v, %v; want nothing run, interrupted", sum, err)
	}
}

func TestClosedShardKeepsItsPartOfTheVUs(t *testing.T) {
	for i, want := range []int{2, 2, 1} {
		w := Workload{Name: "w", Model: Closed, Conc: pacer.FixedConcurrency(5, 100*time.Millisecond),
			Driver: fake(blockUntilDone), Shard: Shard{Index: i, Of: 3}}
		sum, _ := runW(t, w)
		if sum.MaxVUs != want {
			t.Errorf("shard %d of 3 of 5 VUs ran %d, want %d", i, sum.MaxVUs, want)
		}
	}
}

func TestShardsDueAddUpToTheWhole(t *testing.T) {
	for _, of := range []int{1, 2, 3, 7} {
		for n := uint64(0); n < 50; n++ {
			var sum uint64
			for i := range of {
				sum += Shard{Index: i, Of: of}.due(n)
			}
			if sum != n {
				t.Fatalf("%d shards: their arrivals due among the first %d add up to %d", of, n, sum)
			}
		}
	}
	if got := (Shard{Index: 2, Of: 3}).due(3); got != 1 {
		t.Errorf("shard 2 of 3 has %d of the first 3 arrivals, want 1 (the arrival 2)", got)
	}
}

// stoppedClock is a clock far from the machine's that never moves.
type stoppedClock struct{ at time.Time }

func (c stoppedClock) Now() time.Time               { return c.at }
func (stoppedClock) NewTimer(d time.Duration) Timer { return realTimer{time.NewTimer(d)} }

// A run stopped before its load began reads every time it reports off the
// workload's clock, as a run that went ahead does: its load ends when it
// starts and ends, not at the machine's now.
func TestStopBeforeTheStartKeepsToTheWorkloadsClock(t *testing.T) {
	stop, cancel := context.WithCancel(context.Background())
	cancel()
	at := time.Date(2001, 1, 1, 0, 0, 0, 0, time.UTC)
	w := Workload{Name: "w", Model: Open, Rate: pacer.Constant(10, time.Second), VUsMax: 1, Driver: fake(instant),
		Clock: stoppedClock{at}}
	sum, err := Run(stop, context.Background(), w, nil)
	if err != nil || !sum.Start.Equal(at) || !sum.LoadEnd.Equal(at) || !sum.End.Equal(at) {
		t.Errorf("start %v, load end %v, end %v, %v; want all at %v", sum.Start, sum.LoadEnd, sum.End, err, at)
	}
}

// At a rate no shard can reach, each shard counts as not issued only its
// own arrivals: the shards' issued and not-issued arrivals together are
// the whole schedule's, each counted once.
func TestShardsCountTheirOwnUnissuedArrivals(t *testing.T) {
	const n = 3
	rate := pacer.Constant(1_000_000, 200*time.Millisecond)
	sums := make([]Summary, n)
	synctest.Test(t, func(t *testing.T) {
		at := time.Now().Add(time.Millisecond)
		var wg sync.WaitGroup
		for i := range n {
			w := Workload{Name: "w", Model: Open, Rate: rate, VUsMax: 10, Driver: fake(instant),
				Clock: bubbleClock{cost: 50 * time.Microsecond}, StartAt: at, Shard: Shard{Index: i, Of: n}}
			wg.Go(func() { sums[i], _ = runW(t, w) })
		}
		wg.Wait()
	})
	var due uint64
	for i, s := range sums {
		if s.Unissued == 0 || s.Scheduled == 0 {
			t.Errorf("shard %d issued %d, left %d; want some of each", i, s.Scheduled, s.Unissued)
		}
		due += s.Scheduled + s.Unissued
	}
	if due != rate.Total() {
		t.Errorf("the shards' arrivals issued and not issued add up to %d, want the schedule's %d", due, rate.Total())
	}
}
