package pacer

import (
	"math"
	"strings"
	"testing"
	"time"
)

func near(a, b time.Duration) bool {
	d := a - b
	return d > -time.Microsecond && d < time.Microsecond
}

func TestRateAt(t *testing.T) {
	sec := func(f float64) time.Duration { return time.Duration(f * float64(time.Second)) }
	tests := []struct {
		name  string
		r     *Rate
		n     uint64
		want  time.Duration
		ok    bool
		total uint64
	}{
		{"constant first", Constant(10, time.Second), 0, 0, true, 10},
		{"constant second", Constant(10, time.Second), 1, 100 * time.Millisecond, true, 10},
		{"constant last", Constant(10, time.Second), 9, 900 * time.Millisecond, true, 10},
		{"constant past end", Constant(10, time.Second), 10, 0, false, 10},
		{"fractional rate", Constant(0.5, 10*time.Second), 4, 8 * time.Second, true, 5},
		// 0→10/s over 10 s: N(τ) = τ²/2, so arrival n is due at √(2n) s.
		{"ramp up n=2", NewRate(0, []Stage{{10 * time.Second, 10}}), 2, 2 * time.Second, true, 50},
		{"ramp up n=8", NewRate(0, []Stage{{10 * time.Second, 10}}), 8, 4 * time.Second, true, 50},
		{"ramp up n=49", NewRate(0, []Stage{{10 * time.Second, 10}}), 49, sec(math.Sqrt(98)), true, 50},
		{"ramp up end", NewRate(0, []Stage{{10 * time.Second, 10}}), 50, 0, false, 50},
		// 10→0/s over 10 s: N(τ) = 10τ − τ²/2; N(4) = 32.
		{"ramp down", NewRate(10, []Stage{{10 * time.Second, 0}}), 32, 4 * time.Second, true, 50},
		// 10/s for 1 s, then 10→20/s over 1 s: N(1+τ) = 10 + 10τ + 5τ²; N(1.5) = 16.25.
		{"second stage start", NewRate(10, []Stage{{time.Second, 10}, {time.Second, 20}}), 10, time.Second, true, 25},
		{"second stage", NewRate(10, []Stage{{time.Second, 10}, {time.Second, 20}}), 15, sec(1 + (-10+math.Sqrt(100+100))/10), true, 25},
		// A pause: 0/s for 5 s between two constant stages.
		{"after pause", NewRate(2, []Stage{{time.Second, 2}, {0, 0}, {5 * time.Second, 0}, {0, 2}, {time.Second, 2}}), 2, 6 * time.Second, true, 4},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := tt.r.At(tt.n)
			if ok != tt.ok || (ok && !near(got, tt.want)) {
				t.Errorf("At(%d) = %v, %v; want %v, %v", tt.n, got, ok, tt.want, tt.ok)
			}
			if tot := tt.r.Total(); tot != tt.total {
				t.Errorf("Total() = %d, want %d", tot, tt.total)
			}
		})
	}
}

func TestRateArrivalsAreOrderedAndCountMatchesTotal(t *testing.T) {
	r := NewRate(3, []Stage{{7 * time.Second, 40}, {3 * time.Second, 40}, {5 * time.Second, 1}})
	var prev time.Duration
	var n uint64
	for ; ; n++ {
		due, ok := r.At(n)
		if !ok {
			break
		}
		if due < prev {
			t.Fatalf("arrival %d due at %v before arrival %d at %v", n, due, n-1, prev)
		}
		if due >= r.Duration() {
			t.Fatalf("arrival %d due at %v after the schedule's end %v", n, due, r.Duration())
		}
		prev = due
	}
	if n != r.Total() {
		t.Errorf("counted %d arrivals, Total() = %d", n, r.Total())
	}
	// 3→40 over 7 s = 150.5, 40 for 3 s = 120, 40→1 over 5 s = 102.5.
	if n != 373 {
		t.Errorf("counted %d arrivals, want 373", n)
	}
}

func TestPace(t *testing.T) {
	r := Constant(100, time.Second)
	tests := []struct {
		elapsed time.Duration
		done    uint64
		wait    time.Duration
		stop    bool
	}{
		{0, 0, 0, false},
		{0, 1, 10 * time.Millisecond, false},
		{25 * time.Millisecond, 1, -15 * time.Millisecond, false}, // overdue
		{5 * time.Millisecond, 3, 25 * time.Millisecond, false},
		{time.Second, 100, 0, true},
	}
	for _, tt := range tests {
		wait, stop := r.Pace(tt.elapsed, tt.done)
		if stop != tt.stop || !near(wait, tt.wait) {
			t.Errorf("Pace(%v, %d) = %v, %v; want %v, %v", tt.elapsed, tt.done, wait, stop, tt.wait, tt.stop)
		}
	}
}

func TestRateAtInstant(t *testing.T) {
	r := NewRate(0, []Stage{{10 * time.Second, 100}, {10 * time.Second, 100}})
	for _, tt := range []struct {
		at   time.Duration
		want float64
	}{{0, 0}, {5 * time.Second, 50}, {15 * time.Second, 100}, {25 * time.Second, 0}} {
		if got := r.RateAt(tt.at); math.Abs(got-tt.want) > 1e-9 {
			t.Errorf("RateAt(%v) = %v, want %v", tt.at, got, tt.want)
		}
	}
}

func TestRateValidate(t *testing.T) {
	r := NewRate(-1, []Stage{{0, 5}, {time.Second, math.NaN()}})
	if errs := r.Validate(); len(errs) != 3 {
		t.Errorf("Validate() = %v, want 3 problems", errs)
	}
	if errs := Constant(10, time.Second).Validate(); len(errs) != 0 {
		t.Errorf("Validate() of a good schedule = %v", errs)
	}
}

func TestConcurrencyAt(t *testing.T) {
	c := &Concurrency{Start: 0, Stages: []Stage{{10 * time.Second, 10}, {5 * time.Second, 10}, {5 * time.Second, 0}}}
	tests := []struct {
		at   time.Duration
		vus  int
		stop bool
	}{
		{0, 0, false},
		{999 * time.Millisecond, 0, false},
		{time.Second, 1, false},
		{5 * time.Second, 5, false},
		{12 * time.Second, 10, false},
		{16 * time.Second, 8, false},
		{20 * time.Second, 0, true},
	}
	for _, tt := range tests {
		vus, stop := c.At(tt.at)
		if vus != tt.vus || stop != tt.stop {
			t.Errorf("At(%v) = %d, %v; want %d, %v", tt.at, vus, stop, tt.vus, tt.stop)
		}
	}
	if c.Max() != 10 || c.Duration() != 20*time.Second {
		t.Errorf("Max() = %d, Duration() = %v", c.Max(), c.Duration())
	}
	if errs := (&Concurrency{Start: -1, Stages: []Stage{{time.Second, 1.5}}}).Validate(); len(errs) != 2 {
		t.Errorf("Validate() = %v, want 2 problems", errs)
	}
}

func TestRateDueCountsArrivalsBeforeElapsed(t *testing.T) {
	ramp := NewRate(0, []Stage{{10 * time.Second, 10}}) // arrival n due at √(2n) s
	tests := []struct {
		r       *Rate
		elapsed time.Duration
		want    uint64
	}{
		{Constant(10, time.Second), 0, 0},
		{Constant(10, time.Second), time.Nanosecond, 1},
		{Constant(10, time.Second), 100 * time.Millisecond, 1}, // the second is due at, not before, 100 ms
		{Constant(10, time.Second), 100*time.Millisecond + 1, 2},
		{Constant(10, time.Second), time.Second, 10},
		{Constant(10, time.Second), time.Hour, 10},
		{Constant(2_000_000, time.Second), time.Second, 2_000_000},
		{Constant(2_000_000, time.Second), 500 * time.Millisecond, 1_000_000},
		{ramp, 4*time.Second + 1, 9}, // arrivals 0…8, the 8th due at 4 s
		{ramp, 10 * time.Second, 50},
	}
	for _, tt := range tests {
		if got := tt.r.Due(tt.elapsed); got != tt.want {
			t.Errorf("Due(%v) of %v/s = %d, want %d", tt.elapsed, tt.r.Start, got, tt.want)
		}
	}
}

// TestRateAboveAnyGenerator (issue 16, item 11): a rate no generator
// issues is refused when the schedule is checked, once, naming it; the
// highest one allowed is not.
func TestRateAboveAnyGenerator(t *testing.T) {
	errs := Constant(1e12, time.Second).Validate()
	if len(errs) != 1 || !strings.Contains(errs[0].Error(), "rate 1000000000000/s is above 100000000/s") {
		t.Errorf("errors %v", errs)
	}
	if errs := NewRate(10, []Stage{{Duration: time.Second, Target: 2e8}}).Validate(); len(errs) != 1 {
		t.Errorf("a stage above the bound: errors %v", errs)
	}
	if errs := Constant(MaxRate, time.Second).Validate(); len(errs) != 0 {
		t.Errorf("the bound itself: errors %v", errs)
	}
}

// TestRampFromZeroFirstArrivalAtZero (issue 18): a ramp that starts at 0/s
// issues its first arrival at the schedule's start, not at the 292-year
// minimum of a Duration, which would record it at the latency clamp.
func TestRampFromZeroFirstArrivalAtZero(t *testing.T) {
	r := NewRate(0, []Stage{{10 * time.Second, 10}})
	if due, ok := r.At(0); !ok || due != 0 {
		t.Errorf("At(0) = %v, %v; want 0, true", due, ok)
	}
	if wait, stop := r.Pace(0, 0); wait != 0 || stop {
		t.Errorf("Pace(0, 0) = %v, %v; want 0, false", wait, stop)
	}
}

// TestRateHoldsTotalArrivals: a stage whose length is a whole number of
// arrivals plus a nanosecond holds that whole number, no more: At answers
// for Total arrivals and not for the next.
func TestRateHoldsTotalArrivals(t *testing.T) {
	r := Constant(1, 10*time.Second+1)
	if r.Total() != 10 {
		t.Fatalf("Total() = %d, want 10", r.Total())
	}
	if due, ok := r.At(9); !ok || !near(due, 9*time.Second) {
		t.Errorf("At(9) = %v, %v; want 9s, true", due, ok)
	}
	if due, ok := r.At(10); ok {
		t.Errorf("At(10) = %v, true; the schedule holds 10 arrivals", due)
	}
}

func TestRateIsZeroAtItsEnd(t *testing.T) {
	r := Constant(100, 10*time.Second)
	if got := r.RateAt(10 * time.Second); got != 0 {
		t.Errorf("RateAt(end) = %v, want 0: the schedule is over", got)
	}
	if got := r.RateAt(10*time.Second - time.Millisecond); got != 100 {
		t.Errorf("RateAt(end-1ms) = %v, want 100", got)
	}
}

// TestValidateAcceptsZero: a schedule may start at, pause at and ramp down
// to zero, arrivals or VUs.
func TestValidateAcceptsZero(t *testing.T) {
	if errs := NewRate(0, []Stage{{10 * time.Second, 100}, {10 * time.Second, 0}}).Validate(); len(errs) != 0 {
		t.Errorf("rate 0→100→0: %v", errs)
	}
	c := &Concurrency{Start: 0, Stages: []Stage{{10 * time.Second, 10}, {10 * time.Second, 0}}}
	if errs := c.Validate(); len(errs) != 0 {
		t.Errorf("concurrency 0→10→0: %v", errs)
	}
}

// TestValidateNamesTheStage: each problem names the stage it is in,
// counting from 1 as a plan lists them.
func TestValidateNamesTheStage(t *testing.T) {
	r := NewRate(1, []Stage{{time.Second, 1}, {0, 1}, {time.Second, -2}})
	var got []string
	for _, err := range r.Validate() {
		got = append(got, err.Error())
	}
	want := []string{"stage 2: duration 0s must be > 0", "stage 3: target rate -2 must be a finite number >= 0"}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("Validate() = %q, want %q", got, want)
	}
}

// A replayed trace's arrivals are due when it says, those past the end
// left out; Due counts those before an instant.
func TestArrivals(t *testing.T) {
	ms := func(v int) time.Duration { return time.Duration(v) * time.Millisecond }
	r := Arrivals([]time.Duration{0, ms(10), ms(10), ms(250), ms(1000), ms(2000)}, time.Second)
	if errs := r.Validate(); errs != nil {
		t.Fatal(errs)
	}
	if r.Total() != 4 || r.Duration() != time.Second {
		t.Errorf("total %d over %v, want 4 over 1s (1000 ms is the end)", r.Total(), r.Duration())
	}
	for n, want := range []time.Duration{0, ms(10), ms(10), ms(250)} {
		if got, ok := r.At(uint64(n)); !ok || got != want {
			t.Errorf("At(%d) = %v %v, want %v", n, got, ok, want)
		}
	}
	if _, ok := r.At(4); ok {
		t.Error("At(4) is past the schedule")
	}
	for _, tc := range []struct {
		at   time.Duration
		want uint64
	}{{0, 0}, {ms(1), 1}, {ms(11), 3}, {ms(250), 3}, {ms(251), 4}, {time.Second, 4}} {
		if got := r.Due(tc.at); got != tc.want {
			t.Errorf("Due(%v) = %d, want %d", tc.at, got, tc.want)
		}
	}
	if wait, stop := r.Pace(ms(5), 1); stop || wait != ms(5) {
		t.Errorf("Pace(5ms, 1) = %v %v, want 5ms", wait, stop)
	}
	if errs := Arrivals([]time.Duration{ms(5), ms(1)}, time.Second).Validate(); len(errs) != 1 {
		t.Errorf("arrivals out of order: %v", errs)
	}
	// one out of order past the duration, and one due within it after it:
	// refused, not cut away unseen
	if errs := Arrivals([]time.Duration{0, 2 * time.Second, ms(500)}, time.Second).Validate(); len(errs) != 1 {
		t.Errorf("an arrival after one past the end: %v", errs)
	}
}
