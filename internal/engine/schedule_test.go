package engine

import (
	"context"
	"testing"
	"testing/synctest"
	"time"

	"github.com/perflab/perflab/internal/driver"
	"github.com/perflab/perflab/internal/engine/pacer"
	"github.com/perflab/perflab/internal/stats"
)

// At a rate the dispatcher cannot reach, the schedule still ends at its
// duration; the arrivals it had not issued by then are counted as such.
func TestOpenModelEndsAtItsDurationAtAnUnreachableRate(t *testing.T) {
	// Every reading of the clock takes 50 µs: the dispatcher issues a few
	// thousand arrivals a second, not the 2,000,000 asked for.
	w := Workload{Name: "w", Model: Open, Rate: pacer.Constant(2_000_000, time.Second), VUsMax: 100,
		Driver: fake(instant), Clock: bubbleClock{cost: 50 * time.Microsecond}}
	sum, c := runFake(t, w)
	all, noVU := c.total()
	if sum.Scheduled+sum.Unissued != 2_000_000 || sum.Unissued == 0 {
		t.Errorf("issued %d + not issued %d, want 2,000,000 with some not issued", sum.Scheduled, sum.Unissued)
	}
	if got := uint64(all.Classes.Total() + noVU); got != sum.Scheduled {
		t.Errorf("%d arrivals recorded or dropped for want of a VU, %d issued", got, sum.Scheduled)
	}
	if sum.Dropped != sum.Unissued+uint64(noVU) {
		t.Errorf("dropped %d, want the %d not issued and the %d without a VU", sum.Dropped, sum.Unissued, noVU)
	}
	if over := sum.LoadEnd.Sub(sum.Start) - time.Second; over < 0 || over > time.Millisecond {
		t.Errorf("the load ended %v after its 1 s duration", over)
	}
}

// On the machine's clock the counts add up the same way, however fast the
// machine.
func TestOpenModelCountsWhatItDidNotIssue(t *testing.T) {
	w := Workload{Name: "w", Model: Open, Rate: pacer.Constant(2_000_000, 200*time.Millisecond), VUsMax: 100, Driver: fake(instant)}
	sum, c := runW(t, w)
	all, noVU := c.total()
	if sum.Scheduled+sum.Unissued != 400_000 {
		t.Errorf("issued %d + not issued %d, want 400,000", sum.Scheduled, sum.Unissued)
	}
	if got := uint64(all.Classes.Total() + noVU); got != sum.Scheduled || sum.Dropped != sum.Unissued+uint64(noVU) {
		t.Errorf("%d recorded or dropped for want of a VU of %d issued; dropped %d", got, sum.Scheduled, sum.Dropped)
	}
}

// Arrivals still waiting for a VU when the schedule ends are dropped, not
// served after it.
func TestOpenModelDropsTheBacklogAtTheEnd(t *testing.T) {
	w := Workload{Name: "w", Model: Open, Rate: pacer.Constant(100, 500*time.Millisecond),
		VUsMax: 1, Backlog: 1000, Grace: time.Hour, Driver: fake(func(_ context.Context, _ int, r *driver.Result) {
			r.Op = "op"
			time.Sleep(30 * time.Millisecond)
		})}
	sum, c := runFake(t, w)
	all, noVU := c.total()
	// One VU of 30 ms starts 17 of the 50 arrivals within 500 ms, the
	// last at 480 ms, which ends in the grace period; 33 still wait.
	if sum.Scheduled != 50 || sum.Unissued != 0 || all.Classes.Total() != 17 || noVU != 33 || sum.Dropped != 33 {
		t.Errorf("issued %d, not issued %d, served %d, dropped %d (%d in intervals); want 50, 0, 17, 33",
			sum.Scheduled, sum.Unissued, all.Classes.Total(), sum.Dropped, noVU)
	}
	if !sum.LoadEnd.Equal(sum.Start.Add(500 * time.Millisecond)) {
		t.Errorf("the load ended at +%v, want its duration", sum.LoadEnd.Sub(sum.Start))
	}
}

// The intervals of a run are the same whichever of the flush timer and the
// end of the run reaches flushLoop first: the whole intervals that ended
// before the run did close at their boundaries, then the partial one.
func TestFlushLoopClosesWholeIntervalsBeforeTheLastOne(t *testing.T) {
	for range 20 { // either order is as likely: 20 tries catch a random choice
		synctest.Test(t, func(t *testing.T) {
			start := time.Now()
			r := &run{w: Workload{Name: "w", Interval: time.Second}, clk: bubbleClock{}, start: start, rec: stats.NewRecorder(1, start)}
			release := make(chan struct{})
			var ends []time.Duration
			sink := SinkFunc(func(_ string, iv *stats.Interval) {
				ends = append(ends, iv.End.Sub(start))
				if iv.Index == 1 {
					<-release // busy while the next boundary passes
				}
			})
			stop, done := make(chan time.Time), make(chan struct{})
			go r.flushLoop(sink, nil, stop, done)
			time.Sleep(3*time.Second + 200*time.Microsecond) // the run ends just after the third boundary
			go func() { stop <- time.Now() }()
			synctest.Wait() // the end waits to be taken, and the timer has fired
			close(release)
			<-done
			want := []time.Duration{time.Second, 2 * time.Second, 3 * time.Second, 3*time.Second + 200*time.Microsecond}
			if len(ends) != len(want) {
				t.Fatalf("intervals end at %v, want %v", ends, want)
			}
			for i := range want {
				if ends[i] != want[i] {
					t.Fatalf("intervals end at %v, want %v", ends, want)
				}
			}
		})
	}
}

// A run that ends on an interval boundary has no empty last interval: its
// three whole intervals, and the drain only for the operation cancelled
// at the end (it belongs to no interval of the load).
func TestFlushLoopAddsNoEmptyInterval(t *testing.T) {
	w := Workload{Name: "w", Model: Closed, Conc: pacer.FixedConcurrency(1, 3*time.Second), Driver: fake(func(ctx context.Context, _ int, r *driver.Result) {
		r.Op = "op"
		select { // the operation in flight at the end is cancelled then
		case <-time.After(70 * time.Millisecond):
		case <-ctx.Done():
		}
	})}
	sum, c := runFake(t, w)
	for i, iv := range c.intervals {
		n := int64(0)
		for _, st := range iv.Ops {
			n += st.Classes.Total()
		}
		if n == 0 || i < 3 && iv.End.Sub(sum.Start) != time.Duration(i+1)*time.Second || i >= 4 {
			t.Errorf("interval %d of %d: %v → %v, %d operations", i, len(c.intervals), iv.Start.Sub(sum.Start), iv.End.Sub(sum.Start), n)
		}
	}
}

// A run stopped mid-interval (Ctrl-C, a crashed component) closes the
// interval it stopped in at the end of its load, as a schedule's end falls
// on a boundary: the window, which ends with the load, then holds it, and
// the operations still in flight land in the drain after it.
func TestStoppedRunClosesTheIntervalAtTheEndOfItsLoad(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		stop, cancel := context.WithCancel(context.Background())
		defer cancel()
		w := Workload{Name: "w", Model: Open, Rate: pacer.Constant(100, time.Hour), VUsMax: 10, Grace: time.Second,
			Clock: bubbleClock{}, Driver: fake(func(_ context.Context, _ int, r *driver.Result) {
				r.Op = "op"
				time.Sleep(5 * time.Millisecond)
			})}
		go func() { time.Sleep(2500 * time.Millisecond); cancel() }()
		c := &collect{}
		sum, err := Run(stop, context.Background(), w, c)
		if err != nil {
			t.Fatal(err)
		}
		var in int64 // operations in the intervals inside the window
		for _, iv := range c.intervals {
			if !iv.Start.Before(sum.Window.Start) && !iv.End.After(sum.Window.End) {
				for _, st := range iv.Ops {
					in += st.Classes.Total()
				}
			}
		}
		// Window 1 s → 2.5 s: the operations intended from 0.995 s to
		// 2.495 s end in it, 150 of them; without the cut, only the 100
		// of 1 s → 2 s.
		if !sum.Interrupted || !sum.Window.End.Equal(sum.LoadEnd) || in != 150 {
			t.Errorf("window %v → %v (load end +%v): %d operations in it, want 150",
				sum.Window.Start.Sub(sum.Start), sum.Window.End.Sub(sum.Start), sum.LoadEnd.Sub(sum.Start), in)
		}
	})
}

// With no grace, the operations in flight when the schedule ends are
// cancelled at once: they fail as interrupted in the drain, after the
// load's last interval, never in it, however late the flush of that
// interval runs (the window ends with the load, and a run with --grace 0
// had 4 interrupted errors in its steady state).
func TestOperationsCancelledAtTheEndLandInTheDrain(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		w := Workload{Name: "w", Model: Open, Rate: pacer.Constant(100, 3*time.Second), VUsMax: 10, Grace: 0,
			Clock: bubbleClock{}, Driver: fake(func(ctx context.Context, vu int, r *driver.Result) {
				r.Op = "op"
				select {
				case <-time.After(50 * time.Millisecond):
				case <-ctx.Done():
					r.Class, r.Message = stats.Interrupted, ctx.Err().Error()
				}
			})}
		c := &collect{}
		sink := SinkFunc(func(name string, iv *stats.Interval) {
			c.Interval(name, iv)
			if iv.Index == 1 {
				time.Sleep(1002 * time.Millisecond) // busy when the load ends: its last interval closes late
			}
		})
		sum, err := Run(context.Background(), context.Background(), w, sink)
		if err != nil {
			t.Fatal(err)
		}
		var inWindow, after int64
		for _, iv := range c.intervals {
			for _, st := range iv.Ops {
				if iv.End.After(sum.Window.End) {
					after += st.Classes[stats.Interrupted]
				} else {
					inWindow += st.Classes[stats.Interrupted]
				}
			}
		}
		if inWindow != 0 || after == 0 {
			t.Errorf("interrupted: %d in the window, %d after it; want 0 and the ones in flight", inWindow, after)
		}
	})
}
