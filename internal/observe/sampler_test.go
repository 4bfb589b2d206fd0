package observe

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// fakeSource answers Sample with fn and records the times it was asked for.
type fakeSource struct {
	name string
	fn   func(ctx context.Context, now time.Time) ([]Point, error)
	mu   sync.Mutex
	seen []time.Time
}

func (f *fakeSource) Name() string { return f.name }

func (f *fakeSource) Sample(ctx context.Context, now time.Time) ([]Point, error) {
	f.mu.Lock()
	f.seen = append(f.seen, now)
	f.mu.Unlock()
	return f.fn(ctx, now)
}

func (f *fakeSource) times() []time.Time {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]time.Time(nil), f.seen...)
}

func constant(name string, pts ...Point) *fakeSource {
	return &fakeSource{name: name, fn: func(context.Context, time.Time) ([]Point, error) { return pts, nil }}
}

// script answers with the i-th error of errs on the i-th call (nil: success).
func script(name string, errs ...error) *fakeSource {
	var n atomic.Int64
	return &fakeSource{name: name, fn: func(context.Context, time.Time) ([]Point, error) {
		i := int(n.Add(1)) - 1
		if i >= len(errs) {
			i = len(errs) - 1
		}
		return []Point{{Metric: "n", Value: float64(i)}}, errs[i]
	}}
}

func sameTimes(a, b []time.Time) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if !a[i].Equal(b[i]) {
			return false
		}
	}
	return true
}

type tick struct {
	t      time.Time
	points map[string][]Point
}

// harness runs a Sampler with injected ticks and clock, recording every
// callback; stop cancels it and waits for Run to return.
type harness struct {
	s      *Sampler
	ticks  chan time.Time
	sunk   chan tick
	now    atomic.Int64
	cancel context.CancelFunc
	done   chan error
	errs   []string // OnError and OnGone calls, read after stop
}

func newHarness(t *testing.T, s *Sampler, start time.Time, withOnGone bool) *harness {
	t.Helper()
	h := &harness{s: s, ticks: make(chan time.Time), sunk: make(chan tick, 16), done: make(chan error, 1)}
	h.now.Store(start.UnixNano())
	s.ticks, s.clock = h.ticks, func() time.Time { return time.Unix(0, h.now.Load()) }
	s.Sink = func(t time.Time, p map[string][]Point) { h.sunk <- tick{t, p} }
	s.OnError = func(c string, err error) { h.errs = append(h.errs, "error "+c+": "+err.Error()) }
	if withOnGone {
		s.OnGone = func(c string, err error) { h.errs = append(h.errs, "gone "+c+": "+err.Error()) }
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	h.cancel = cancel
	go func() { h.done <- s.Run(ctx) }()
	t.Cleanup(func() { cancel(); <-h.done })
	return h
}

// next waits for the sink's next call.
func (h *harness) next(t *testing.T) tick {
	t.Helper()
	select {
	case got := <-h.sunk:
		return got
	case <-time.After(10 * time.Second):
		t.Fatal("no sample delivered within 10 s")
	}
	return tick{}
}

func (h *harness) tick(t *testing.T, at time.Time) tick {
	t.Helper()
	h.now.Store(at.UnixNano())
	h.ticks <- at
	return h.next(t)
}

// stop cancels Run at the given clock time and waits for it to return.
func (h *harness) stop(t *testing.T, at time.Time) {
	t.Helper()
	h.now.Store(at.UnixNano())
	h.cancel()
	select {
	case err := <-h.done:
		if err != nil {
			t.Fatalf("Run: %v", err)
		}
		h.done <- nil // for the cleanup
	case <-time.After(10 * time.Second):
		t.Fatal("Run did not return within 10 s of cancel")
	}
}

func TestSamplerDeliversEveryTickWithOneTime(t *testing.T) {
	a1 := constant("a1", Point{CPUCores, 1})
	a2 := constant("a2", Point{RSSBytes, 2}, Point{Threads, 3})
	b := constant("b", Point{DiskBytes, 4})
	t0 := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	h := newHarness(t, &Sampler{Interval: time.Second, Components: map[string][]Source{"a": {a1, a2}, "b": {b}}}, t0, true)
	want := map[string][]Point{
		"a": {{CPUCores, 1}, {RSSBytes, 2}, {Threads, 3}},
		"b": {{DiskBytes, 4}},
	}
	t1, t2 := t0.Add(time.Second), t0.Add(2*time.Second)
	for i, got := range []tick{h.next(t), h.tick(t, t1)} {
		if wantT := []time.Time{t0, t1}[i]; !got.t.Equal(wantT) || !reflect.DeepEqual(got.points, want) {
			t.Errorf("sample %d = %v %v, want %v %v", i, got.t, got.points, wantT, want)
		}
	}
	h.stop(t, t2) // a whole interval after the last tick: final sample
	if got := h.next(t); !got.t.Equal(t2) || !reflect.DeepEqual(got.points, want) {
		t.Errorf("final sample = %v %v, want %v %v", got.t, got.points, t2, want)
	}
	for _, src := range []*fakeSource{a1, a2, b} {
		if got := src.times(); !sameTimes(got, []time.Time{t0, t1, t2}) {
			t.Errorf("%s sampled at %v, want %v", src.name, got, []time.Time{t0, t1, t2})
		}
	}
	if len(h.errs) != 0 {
		t.Errorf("unexpected errors %q", h.errs)
	}
}

func TestSamplerSkipsFinalSampleRightAfterATick(t *testing.T) {
	src := constant("a", Point{CPUCores, 1})
	t0 := time.Unix(1000, 0)
	h := newHarness(t, &Sampler{Interval: time.Second, Components: map[string][]Source{"a": {src}}}, t0, true)
	h.next(t)
	h.tick(t, t0.Add(time.Second))
	h.stop(t, t0.Add(time.Second+time.Second/finalFraction-time.Nanosecond))
	select {
	case got := <-h.sunk:
		t.Errorf("final sample %v taken %v after the last tick", got, time.Second/finalFraction)
	default:
	}
	if n := len(src.times()); n != 2 {
		t.Errorf("source sampled %d times, want 2", n)
	}
}

func TestSamplerRunsSourcesConcurrently(t *testing.T) {
	// Each source waits for the other to have started: sequential sampling
	// would time out both.
	var arrived atomic.Int64
	all := make(chan struct{})
	barrier := func(ctx context.Context, _ time.Time) ([]Point, error) {
		if arrived.Add(1) == 2 {
			close(all)
		}
		select {
		case <-all:
			return []Point{{Processes, 1}}, nil
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	x, y := &fakeSource{name: "x", fn: barrier}, &fakeSource{name: "y", fn: barrier}
	h := newHarness(t, &Sampler{Interval: 10 * time.Second, Components: map[string][]Source{"x": {x}, "y": {y}}}, time.Unix(0, 0), true)
	got := h.next(t)
	if len(got.points) != 2 || len(h.errs) != 0 {
		t.Errorf("got %v, errors %q; want both sources answered", got.points, h.errs)
	}
}

func TestSamplerReportsFirstErrorAndChangesOnly(t *testing.T) {
	e1, e2 := errors.New("cannot read x: e1"), errors.New("cannot read x: e2")
	// initial e1, then 6 ticks: e1 e1 e2 ok e2 e2
	src := script("x", e1, e1, e1, e2, nil, e2, e2)
	t0 := time.Unix(0, 0)
	h := newHarness(t, &Sampler{Interval: time.Second, Components: map[string][]Source{"c": {src}}}, t0, true)
	h.next(t)
	for i := 1; i <= 6; i++ {
		got := h.tick(t, t0.Add(time.Duration(i)*time.Second))
		if want := []Point{{"n", float64(i)}}; !reflect.DeepEqual(got.points["c"], want) {
			t.Errorf("tick %d: points %v, want the partial sample %v", i, got.points["c"], want)
		}
	}
	h.stop(t, t0.Add(6*time.Second))
	want := []string{"error c: " + e1.Error(), "error c: " + e2.Error(), "error c: " + e2.Error()}
	if !reflect.DeepEqual(h.errs, want) {
		t.Errorf("reported %q, want %q", h.errs, want)
	}
}

func TestSamplerReportsGoneOnce(t *testing.T) {
	gone := fmt.Errorf("cannot sample proc 42: %w", ErrGone)
	dead := script("proc 42", nil, gone, gone, gone)
	alive := constant("scrape", Point{GoGoroutines, 7})
	t0 := time.Unix(0, 0)
	h := newHarness(t, &Sampler{Interval: time.Second, Components: map[string][]Source{"db": {dead, alive}}}, t0, true)
	h.next(t)
	for i := 1; i <= 3; i++ {
		got := h.tick(t, t0.Add(time.Duration(i)*time.Second))
		if len(got.points["db"]) != 2 {
			t.Errorf("tick %d: points %v, want the other source's too", i, got.points["db"])
		}
	}
	h.stop(t, t0.Add(3*time.Second))
	if want := []string{"gone db: " + gone.Error()}; !reflect.DeepEqual(h.errs, want) {
		t.Errorf("reported %q, want %q", h.errs, want)
	}
}

func TestSamplerGoneFallsBackToOnError(t *testing.T) {
	gone := fmt.Errorf("x: %w", ErrGone)
	s := &Sampler{Interval: time.Second, Components: map[string][]Source{"db": {script("p", gone)}}}
	h := newHarness(t, s, time.Unix(0, 0), false)
	h.next(t)
	h.tick(t, time.Unix(1, 0)) // same text: not reported again
	h.stop(t, time.Unix(1, 0))
	if want := []string{"error db: " + gone.Error()}; !reflect.DeepEqual(h.errs, want) {
		t.Errorf("reported %q, want %q", h.errs, want)
	}
}

func TestSamplerTimesOutAndSkipsBusySource(t *testing.T) {
	release := make(chan struct{})
	var calls atomic.Int64
	slow := &fakeSource{name: "slow", fn: func(ctx context.Context, _ time.Time) ([]Point, error) {
		if calls.Add(1) == 1 {
			<-release // ignores ctx, like a stuck read
		}
		return []Point{{OpenFDs, 9}}, nil
	}}
	fast := constant("fast", Point{Threads, 1})
	t0 := time.Unix(0, 0)
	s := &Sampler{Interval: time.Hour, Timeout: 20 * time.Millisecond,
		Components: map[string][]Source{"c": {slow, fast}}}
	h := newHarness(t, s, t0, true)
	if got := h.next(t); !reflect.DeepEqual(got.points["c"], []Point{{Threads, 1}}) {
		t.Errorf("initial points %v, want only the fast source's", got.points["c"])
	}
	h.tick(t, t0.Add(time.Hour)) // slow is still in its first call
	close(release)
	// Once the stuck call has returned the source is sampled again.
	for i := 2; ; i++ {
		if got := h.tick(t, t0.Add(time.Duration(i)*time.Hour)); len(got.points["c"]) == 2 {
			break
		}
		if i > 10000 {
			t.Fatal("slow source never sampled again")
		}
	}
	h.stop(t, t0.Add(10001*time.Hour))
	if len(h.errs) != 2 || !strings.Contains(h.errs[0], "no answer within 20ms") ||
		!strings.Contains(h.errs[1], "previous sample still running") {
		t.Errorf("reported %q, want a timeout then a busy report", h.errs)
	}
}

func TestSamplerPassesTheTimeoutAsDeadline(t *testing.T) {
	var left time.Duration
	src := &fakeSource{name: "d", fn: func(ctx context.Context, _ time.Time) ([]Point, error) {
		if dl, ok := ctx.Deadline(); ok {
			left = time.Until(dl)
		}
		return nil, nil
	}}
	h := newHarness(t, &Sampler{Interval: 2 * time.Second, Timeout: 5 * time.Second,
		Components: map[string][]Source{"c": {src}}}, time.Unix(0, 0), true)
	h.next(t)
	h.stop(t, time.Unix(0, 0))
	if left <= 0 || left > 2*time.Second {
		t.Errorf("deadline %v ahead, want within the interval (timeout capped at it)", left)
	}
}

func TestSamplerWithRealTicker(t *testing.T) {
	sunk := make(chan time.Time, 64)
	s := &Sampler{
		Interval:   5 * time.Millisecond,
		Components: map[string][]Source{"c": {constant("c", Point{Threads, 1})}},
		Sink:       func(t time.Time, _ map[string][]Point) { sunk <- t },
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- s.Run(ctx) }()
	var prev time.Time
	for i := 0; i < 4; i++ {
		got := <-sunk
		if !got.After(prev) {
			t.Errorf("sample %d at %v, not after %v", i, got, prev)
		}
		prev = got
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatalf("Run: %v", err)
	}
}

func TestSamplerRejectsBadConfig(t *testing.T) {
	for _, s := range []*Sampler{{Interval: 0, Sink: func(time.Time, map[string][]Point) {}}, {Interval: time.Second}} {
		if err := s.Run(context.Background()); err == nil {
			t.Errorf("Run(%+v) = nil, want an error", s)
		}
	}
}
