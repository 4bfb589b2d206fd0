package analysis

import (
	"math"
	"strings"
	"testing"
	"time"

	"github.com/perflab/perflab/internal/stats"
)

// perSecond is k one-second intervals from t0, each of n successful
// requests of 1 ms (service time 400 µs) that sent 500 bytes.
func perSecond(t0 time.Time, k int, n int64) []*stats.Interval {
	var out []*stats.Interval
	for i := range k {
		st := stats.NewOpStats()
		for range n {
			st.Latency.Record(time.Millisecond)
			st.Service.Record(400 * time.Microsecond)
		}
		st.Classes[stats.OK] = n
		st.BytesSent = 500
		start := t0.Add(time.Duration(i) * time.Second)
		out = append(out, &stats.Interval{Index: i, Start: start, End: start.Add(time.Second),
			Ops: map[string]*stats.OpStats{"GET /": st}, Lag: stats.NewHist()})
	}
	return out
}

// Rates are per second of the window: 300 requests and 1000 bytes sent
// over 2 s are 150/s and 500 B/s, below a target of 200/s.
func TestRatesPerSecondOfAWindowOfTwoSeconds(t *testing.T) {
	t0 := time.Unix(1000, 0)
	w := Workload{Model: "open", TargetRate: 200, Scheduled: 400, Window: Window{Start: t0, End: t0.Add(2 * time.Second)}}
	s := Summarize(w, perSecond(t0, 2, 150))
	if s.Rate != 150 || s.Ops[0].Rate != 150 || s.Ops[0].BytesSentPS != 500 {
		t.Errorf("rate %v (operation %v), bytes sent %v/s; want 150/s and 500 B/s", s.Rate, s.Ops[0].Rate, s.Ops[0].BytesSentPS)
	}
	if !hasWarning(s, "achieved 150.0 ops/s, below the target 200.0 ops/s") {
		t.Errorf("warnings %q", s.Warnings)
	}
}

// A workload that recorded no interval, and has no window, has a rate of
// 0 (not NaN) over its 0 seconds, and is said to be below its target.
func TestSummaryOfNoIntervals(t *testing.T) {
	s := Summarize(Workload{Model: "open", TargetRate: 100}, nil)
	if s.Seconds != 0 || s.Rate != 0 || math.IsNaN(s.Rate) {
		t.Errorf("%v ops/s over %v s, want 0", s.Rate, s.Seconds)
	}
	if !hasWarning(s, "achieved 0.0 ops/s, below the target 100.0 ops/s") {
		t.Errorf("warnings %q", s.Warnings)
	}
}

// A ramping open-model schedule's target over the window is its mean
// there, not over the run: 0 → 100/s over 10 s asks 50/s between 4 and
// 6 s. A closed model's schedule is of VUs, never a rate target.
func TestTargetRateOfARampIsItsMeanOverTheWindow(t *testing.T) {
	t0 := time.Unix(1000, 0)
	ramp := &Schedule{Stages: []Stage{{Duration: 10 * time.Second, Target: 100}}}
	ivs := perSecond(t0.Add(4*time.Second), 2, 40)
	window := Window{Start: t0.Add(4 * time.Second), End: t0.Add(6 * time.Second)}
	for _, tt := range []struct {
		model   string
		target  float64
		warning string
	}{
		{"open", 50, "achieved 40.0 ops/s, below the target 50.0 ops/s"},
		{"closed", 0, ""},
	} {
		w := Workload{Model: tt.model, Schedule: ramp, Start: t0, Scheduled: 80, Window: window}
		s := Summarize(w, ivs)
		below := hasWarning(s, "below the target")
		if s.Workload.TargetRate != tt.target || below != (tt.warning != "") || below && !hasWarning(s, tt.warning) {
			t.Errorf("%s model: target %v/s, want %v; warnings %q", tt.model, s.Workload.TargetRate, tt.target, s.Warnings)
		}
	}
}

// Failed latency is the workload's own only when something failed: with
// every request successful, the reports show one latency.
func TestSummaryHasFailedLatencyOnlyWhenSomethingFailed(t *testing.T) {
	t0 := time.Unix(1000, 0)
	window := Window{Start: t0, End: t0.Add(time.Second)}
	ivs := perSecond(t0, 1, 100)
	if s := Summarize(Workload{Model: "closed", Window: window}, ivs); s.HasFailedLatency() {
		t.Errorf("nothing failed, but failed latency: all %d, successful %d", s.AllLatency.Count, s.Latency.Count)
	}
	st := ivs[0].Ops["GET /"]
	st.Failed = stats.NewHist()
	st.Failed.Record(3 * time.Millisecond)
	st.Classes[stats.Timeout] = 1
	if s := Summarize(Workload{Model: "closed", Window: window}, ivs); !s.HasFailedLatency() {
		t.Errorf("one timeout, but no failed latency: all %d, successful %d", s.AllLatency.Count, s.Latency.Count)
	}
}

// The dispatch delay is pointed out from a lag p50 of a quarter of the
// latency p50 (250 µs of 1 ms), not below it, with its share; the service
// time is given beside it only when there is one (a store's service_hist
// may be empty).
func TestDispatchDelayFromAQuarterOfTheLatency(t *testing.T) {
	t0 := time.Unix(1000, 0)
	for _, tt := range []struct {
		lag     time.Duration
		service bool
		want    string // the warning; "" for none
	}{
		{250 * time.Microsecond, true, "scheduler lag p50 250µs is 25 % of the latency p50 1ms: the latency, counted from each intended start, shows the generator's dispatch as much as the target; the service time from the actual start, p50 400µs, is the target's alone (arrivals due"},
		{250 * time.Microsecond, false, "scheduler lag p50 250µs is 25 % of the latency p50 1ms: the latency, counted from each intended start, shows the generator's dispatch as much as the target (arrivals due"},
		{249 * time.Microsecond, true, ""},
	} {
		ivs := perSecond(t0, 1, 100)
		for range 100 {
			ivs[0].Lag.Record(tt.lag)
		}
		if !tt.service {
			ivs[0].Ops["GET /"].Service = stats.NewHist()
		}
		s := Summarize(Workload{Model: "open", Scheduled: 100, Window: Window{Start: t0, End: t0.Add(time.Second)}}, ivs)
		got := ""
		for _, w := range s.Warnings {
			if strings.Contains(w, "of the latency p50") {
				got = w
			}
		}
		if !strings.HasPrefix(got, tt.want) || (tt.want == "") != (got == "") {
			t.Errorf("lag %v, service %v: warning %q, want %q…", tt.lag, tt.service, got, tt.want)
		}
	}
}

// The pool-limit warning gives the operations' mean service time to
// 10 µs, and without a target rate (so no VUs the rate keeps busy) puts
// the drops down to the target, never to a stall.
func TestPoolLimitWithAndWithoutATargetRate(t *testing.T) {
	t0 := time.Unix(1000, 0)
	for _, tt := range []struct {
		name   string
		target float64
		want   string
	}{
		{"a target of 100/s", 100, "pool limit: 30 arrivals dropped in the window: every VU was busy at vus.max 5 while the target was slow (not client-bound): at 100/s, operations of 1.23ms on average keep about 1 VUs busy; raise vus.max"},
		{"no target rate", 0, "pool limit: 30 arrivals dropped in the window: every VU was busy at vus.max 5 while the target was slow (not client-bound); raise vus.max"},
	} {
		st := stats.NewOpStats()
		for range 100 {
			st.Latency.Record(1234 * time.Microsecond)
			st.Service.Record(1234 * time.Microsecond)
		}
		st.Classes[stats.OK] = 100
		ivs := []*stats.Interval{{Start: t0, End: t0.Add(time.Second), Ops: map[string]*stats.OpStats{"GET /": st}, Dropped: 30, Lag: stats.NewHist()}}
		s := Summarize(Workload{Model: "open", TargetRate: tt.target, VUsMax: 5, Scheduled: 130, Window: Window{Start: t0, End: t0.Add(time.Second)}}, ivs)
		if !hasWarning(s, tt.want) {
			t.Errorf("%s: warnings %q, want %q", tt.name, s.Warnings, tt.want)
		}
	}
}

// A run all of whose requests failed is one whose target was unreachable;
// one success, or no request at all, is not.
func TestAllFailedOnlyWhenEveryRequestFailed(t *testing.T) {
	t0 := time.Unix(1000, 0)
	for _, tt := range []struct {
		ok, connect int64
		all         bool
	}{{0, 5, true}, {1, 5, false}, {0, 0, false}} {
		st := stats.NewOpStats()
		st.Classes[stats.OK], st.Classes[stats.Connect] = tt.ok, tt.connect
		ivs := []*stats.Interval{{Start: t0, End: t0.Add(time.Second), Ops: map[string]*stats.OpStats{"GET /": st}, Lag: stats.NewHist()}}
		s := Summarize(Workload{Model: "closed", Window: Window{Start: t0, End: t0.Add(time.Second)}}, ivs)
		if s.AllFailed() != tt.all {
			t.Errorf("%d ok, %d connect: all failed %v, want %v", tt.ok, tt.connect, s.AllFailed(), tt.all)
		}
	}
}

// TestAllFailedInTheWindow (issue 27, rule 11): successes before the
// window make no figure: a run whose every request in the window failed
// has failed, whatever came first; one success in the window, and it has
// not.
func TestAllFailedInTheWindow(t *testing.T) {
	t0 := time.Unix(1000, 0)
	interval := func(at time.Time, ok, connect int64) *stats.Interval {
		st := stats.NewOpStats()
		st.Classes[stats.OK], st.Classes[stats.Connect] = ok, connect
		return &stats.Interval{Start: at, End: at.Add(time.Second), Ops: map[string]*stats.OpStats{"GET /": st}, Lag: stats.NewHist()}
	}
	window := Window{Start: t0.Add(time.Second), End: t0.Add(3 * time.Second)}
	for _, tt := range []struct {
		inWindow int64 // successes in the window
		all      bool
	}{{0, true}, {1, false}} {
		ivs := []*stats.Interval{interval(t0, 20, 0), interval(t0.Add(time.Second), tt.inWindow, 500), interval(t0.Add(2*time.Second), 0, 500)}
		s := Summarize(Workload{Model: "closed", Window: window}, ivs)
		if s.AllFailed() != tt.all || s.RequestsTotal-s.ErrorsTotal < 20 {
			t.Errorf("20 ok before the window, %d in it: all failed %v, want %v (%d of %d failed in the run)",
				tt.inWindow, s.AllFailed(), tt.all, s.ErrorsTotal, s.RequestsTotal)
		}
	}
}
