package engine

import (
	"context"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/perflab/perflab/internal/driver"
	"github.com/perflab/perflab/internal/engine/pacer"
	"github.com/perflab/perflab/internal/stats"
)

// fakeLooper serves the closed model through loops (driver.Looper) that
// run its operations: each loop talks to the engine from its own
// goroutine, as an event loop does, while the operations it started run
// elsewhere and report their end to it. The closed model's tests run on
// both paths (closedPaths).
type fakeLooper struct {
	fake
	mu    sync.Mutex
	parts [][]int // the VUs of each loop made
	none  bool    // Loop returns no loop: the driver's configuration has none
	dos   atomic.Int64
}

func (f *fakeLooper) Do(ctx context.Context, vu int, r *driver.Result) {
	f.dos.Add(1)
	f.fake(ctx, vu, r)
}

func (f *fakeLooper) Loop(vus []int) (driver.Loop, error) {
	if f.none {
		return nil, nil
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.parts = append(f.parts, vus)
	return &fakeLoop{op: f.fake, vus: vus, wake: make(chan struct{}, 1)}, nil
}

type fakeLoop struct {
	op   fake
	vus  []int
	wake chan struct{}
}

type fakeEnd struct {
	vu         int
	start, end time.Time
}

func (l *fakeLoop) Run(ctx context.Context, host driver.LoopHost) {
	ended := make(chan fakeEnd)
	res := map[int]*driver.Result{}
	busy := map[int]bool{}
	begin := func(vu int) {
		start, ok := host.Begin(vu)
		if !ok {
			return
		}
		busy[vu] = true
		if res[vu] == nil {
			res[vu] = &driver.Result{}
		}
		r := res[vu]
		r.Reset("")
		go func() {
			l.op(ctx, vu, r)
			ended <- fakeEnd{vu, start, host.Now()}
		}()
	}
	for _, vu := range l.vus {
		begin(vu)
	}
	for len(busy) > 0 || !host.Stopped() {
		select {
		case e := <-ended:
			delete(busy, e.vu)
			host.Done(e.vu, res[e.vu], e.start, e.end)
			begin(e.vu)
		case <-l.wake:
			for _, vu := range l.vus {
				if !busy[vu] {
					begin(vu)
				}
			}
		}
	}
}

func (l *fakeLoop) Wake() {
	select {
	case l.wake <- struct{}{}:
	default:
	}
}

func (l *fakeLoop) Close() error { return nil }

// closedPaths are the two ways the closed model serves its VUs.
var closedPaths = []struct {
	name string
	wrap func(fake) driver.Driver
}{
	{"goroutines", func(f fake) driver.Driver { return f }},
	{"loops", func(f fake) driver.Driver { return &fakeLooper{fake: f} }},
}

// forEachClosedPath runs f as a subtest for each path.
func forEachClosedPath(t *testing.T, f func(t *testing.T, wrap func(fake) driver.Driver)) {
	for _, p := range closedPaths {
		t.Run(p.name, func(t *testing.T) { f(t, p.wrap) })
	}
}

// TestClosedLoopsShareTheVUs: one loop per core the process may use, each
// VU in exactly one, every loop with a share at any concurrency (id %
// loops); the driver's Do is never called.
func TestClosedLoopsShareTheVUs(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(3))
	var ops sync.Map
	d := &fakeLooper{fake: func(_ context.Context, vu int, r *driver.Result) {
		r.Op = "op"
		ops.Store(vu, true)
		time.Sleep(time.Millisecond) // the bubble's time moves when every goroutine waits
	}}
	w := Workload{Name: "w", Model: Closed, Conc: pacer.FixedConcurrency(7, 50*time.Millisecond), Driver: d}
	sum, c := runFake(t, w)
	all, _ := c.total()
	if len(d.parts) != 3 {
		t.Fatalf("%d loops for 7 VUs on 3 cores, want 3", len(d.parts))
	}
	want := [][]int{{0, 3, 6}, {1, 4}, {2, 5}}
	for i := range want {
		if !slices.Equal(d.parts[i], want[i]) {
			t.Errorf("loop %d serves %v, want %v", i, d.parts[i], want[i])
		}
	}
	for vu := range 7 {
		if _, ok := ops.Load(vu); !ok {
			t.Errorf("VU %d ran no operation", vu)
		}
	}
	if n := d.dos.Load(); n != 0 {
		t.Errorf("Do called %d times", n)
	}
	if sum.MaxVUs != 7 || all.Classes.Total() == 0 {
		t.Errorf("MaxVUs %d, %d operations recorded", sum.MaxVUs, all.Classes.Total())
	}
	if c.intervals[len(c.intervals)-1].VUs != 0 {
		t.Errorf("%d VUs live after the run", c.intervals[len(c.intervals)-1].VUs)
	}
}

// TestClosedModelWithoutLoopsRunsGoroutines: a Looper that has no loop for
// its configuration is served a goroutine per VU, through Do.
func TestClosedModelWithoutLoopsRunsGoroutines(t *testing.T) {
	var ops sync.Map
	d := &fakeLooper{none: true, fake: func(_ context.Context, vu int, r *driver.Result) {
		r.Op = "op"
		ops.Store(vu, true)
		time.Sleep(time.Millisecond) // the bubble's time moves when every goroutine waits
	}}
	w := Workload{Name: "w", Model: Closed, Conc: pacer.FixedConcurrency(2, 50*time.Millisecond), Driver: d}
	runFake(t, w)
	if d.dos.Load() == 0 {
		t.Error("Do never called")
	}
	for vu := range 2 {
		if _, ok := ops.Load(vu); !ok {
			t.Errorf("VU %d ran no operation", vu)
		}
	}
}

// TestClosedLoopsStopGivesGraceThenInterrupts: the schedule's end lets the
// operations in flight run for the grace, then ends them interrupted, and
// the loops let the run end.
func TestClosedLoopsStopGivesGraceThenInterrupts(t *testing.T) {
	d := &fakeLooper{fake: blockUntilDone}
	w := Workload{Name: "w", Model: Closed, Conc: pacer.FixedConcurrency(2, 100*time.Millisecond),
		Grace: 30 * time.Millisecond, Driver: d}
	sum, c := runFake(t, w)
	all, _ := c.total()
	if all.Classes[stats.Interrupted] != 2 || all.Classes.Total() != 2 {
		t.Errorf("classes %v, want the 2 operations in flight interrupted", all.Classes)
	}
	if took := sum.End.Sub(sum.LoadEnd); took != 30*time.Millisecond {
		t.Errorf("the drain took %v, want the grace, 30ms", took)
	}
}
