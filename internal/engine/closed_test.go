package engine

import (
	"context"
	"testing"
	"time"

	"github.com/perflab/perflab/internal/driver"
	"github.com/perflab/perflab/internal/engine/pacer"
)

// sleepByVU is a driver whose operations take a time that depends on the VU.
func sleepByVU(d map[int]time.Duration) fake {
	return func(_ context.Context, vu int, r *driver.Result) {
		r.Op = "op"
		time.Sleep(d[vu])
	}
}

// TestClosedModelWindowIsWarpsRule (issue 18): with a fixed number of VUs
// the steady-state window runs from the moment every VU had finished one
// operation (the slowest VU's first end) to the moment the first VU started
// its last operation (the earliest last start), not the fallback.
func TestClosedModelWindowIsWarpsRule(t *testing.T) {
	// VU 0's operations take 7 ms: the first ends at 7 ms, the last starts
	// at 994 ms. VU 1's take 33 ms: the first ends at 33 ms, the last
	// starts at 990 ms.
	forEachClosedPath(t, func(t *testing.T, wrap func(fake) driver.Driver) {
		w := Workload{Name: "w", Model: Closed, Conc: pacer.FixedConcurrency(2, time.Second),
			Driver: wrap(sleepByVU(map[int]time.Duration{0: 7 * time.Millisecond, 1: 33 * time.Millisecond}))}
		sum, _ := runFake(t, w)
		start, end := sum.Window.Start.Sub(sum.Start), sum.Window.End.Sub(sum.Start)
		if start != 33*time.Millisecond || end != 990*time.Millisecond {
			t.Errorf("window %v → %v, want 33ms → 990ms", start, end)
		}
		if want := "every VU had finished one operation → first VU started its last"; sum.Window.Rule != want {
			t.Errorf("rule %q, want %q", sum.Window.Rule, want)
		}
	})
}

// TestClosedModelRampsVUsDownAndUp: the VUs alive at the end of each
// interval follow a ramping schedule down and up again, and its window is
// the schedule after its first interval.
func TestClosedModelRampsVUsDownAndUp(t *testing.T) {
	// 3 VUs for 1 s, down to 1 over 1 s (2 from 1.05 s, 1 from 1.55 s),
	// then up to 3 over 1 s (2 from 2.5 s, 3 at 3 s, the end).
	conc := &pacer.Concurrency{Start: 3, Stages: []pacer.Stage{
		{Duration: time.Second, Target: 3}, {Duration: time.Second, Target: 1}, {Duration: time.Second, Target: 3}}}
	forEachClosedPath(t, func(t *testing.T, wrap func(fake) driver.Driver) {
		w := Workload{Name: "w", Model: Closed, Conc: conc, Interval: 400 * time.Millisecond,
			Driver: wrap(sleepByVU(map[int]time.Duration{0: 7 * time.Millisecond, 1: 7 * time.Millisecond, 2: 7 * time.Millisecond}))}
		sum, c := runFake(t, w)
		var vus []int64
		for _, iv := range c.intervals {
			vus = append(vus, iv.VUs)
		}
		// Intervals end at 0.4, 0.8, 1.2, 1.6, 2.0, 2.4, 2.8 and 3.0 s (the
		// last, partial one after the VUs left).
		want := []int64{3, 3, 2, 1, 1, 1, 2, 0}
		if len(vus) != len(want) {
			t.Fatalf("VUs per interval %v, want %v", vus, want)
		}
		for i := range want {
			if vus[i] != want[i] {
				t.Fatalf("VUs per interval %v, want %v", vus, want)
			}
		}
		if sum.MaxVUs != 3 {
			t.Errorf("MaxVUs %d, want 3", sum.MaxVUs)
		}
		start, end := sum.Window.Start.Sub(sum.Start), sum.Window.End.Sub(sum.Start)
		if start != 400*time.Millisecond || end != 3*time.Second || sum.Window.Rule != "schedule after the first interval, to the end of load" {
			t.Errorf("window %v → %v (%s), want 400ms → 3s after the first interval", start, end, sum.Window.Rule)
		}
	})
}

// TestClosedModelDuration: a workload's length is its schedule's.
func TestClosedModelDuration(t *testing.T) {
	w := Workload{Model: Closed, Conc: pacer.FixedConcurrency(2, 3*time.Second)}
	if d := w.Duration(); d != 3*time.Second {
		t.Errorf("Duration() = %v, want 3s", d)
	}
	w = Workload{Model: Open, Rate: pacer.Constant(10, 2*time.Second)}
	if d := w.Duration(); d != 2*time.Second {
		t.Errorf("Duration() = %v, want 2s", d)
	}
}

// thinking is a fake driver whose VUs think between operations.
type thinking struct {
	fake
	think time.Duration
}

func (d thinking) ThinkTime(int) time.Duration { return d.think }

// TestClosedModelThinkTime: a VU pauses a driver's think time before each
// operation, and the pause is no part of the operation's latency.
func TestClosedModelThinkTime(t *testing.T) {
	d := thinking{fake: sleepByVU(map[int]time.Duration{0: 10 * time.Millisecond}), think: 90 * time.Millisecond}
	w := Workload{Name: "w", Model: Closed, Conc: pacer.FixedConcurrency(1, time.Second), Driver: d}
	_, c := runFake(t, w)
	all, _ := c.total()
	if n := all.Classes.Total(); n != 10 {
		t.Errorf("%d operations in 1 s of 10 ms each after 90 ms of thought, want 10", n)
	}
	if max := all.Latency.Max(); max < 10*time.Millisecond || max > 11*time.Millisecond {
		t.Errorf("latency max %v, want 10ms (to the histogram's precision): thinking is not waiting for the system", max)
	}
}
