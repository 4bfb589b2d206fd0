package analysis

import (
	"strings"
	"testing"
	"time"

	"github.com/perflab/perflab/internal/stats"
)

// intervals makes n one-second intervals from t0; interval i holds 100
// operations of latency (i+1) ms, one timeout, and i dropped arrivals.
func intervals(t0 time.Time, n int) []*stats.Interval {
	var out []*stats.Interval
	for i := 0; i < n; i++ {
		st := stats.NewOpStats()
		for j := 0; j < 100; j++ {
			st.Latency.Record(time.Duration(i+1) * time.Millisecond)
			st.Service.Record(time.Duration(i+1) * time.Millisecond)
		}
		st.Classes[stats.OK] = 100
		st.Classes[stats.Timeout] = 1
		st.Samples[stats.Timeout] = "deadline"
		st.BytesRecv = 1000
		out = append(out, &stats.Interval{Index: i, Start: t0.Add(time.Duration(i) * time.Second),
			End: t0.Add(time.Duration(i+1) * time.Second), Ops: map[string]*stats.OpStats{"get": st},
			Dropped: int64(i), Lag: stats.NewHist()})
	}
	return out
}

// The driver's measures and counters are summarised over the window like
// latency: quantiles of the merged histograms, counts as rates; a measure
// no interval has stays empty.
func TestSummarizeMeasuresAndCounters(t *testing.T) {
	t0 := time.Unix(1000, 0)
	ivs := intervals(t0, 6)
	for i, iv := range ivs {
		st := iv.Ops["get"]
		st.Measures[stats.TTFT], st.Measures[stats.TPOT] = stats.NewHist(), stats.NewHist()
		for range 10 {
			st.Measures[stats.TTFT].Record(time.Duration(50+i) * time.Millisecond)
			st.Measures[stats.TPOT].Record(10 * time.Millisecond)
		}
		st.Measures[stats.TPOT].Record(20 * time.Millisecond) // one slow stream of 11
		st.Counters[stats.OutputTokens] = 500
	}
	w := Workload{Name: "w", Model: "closed", Window: Window{Start: t0.Add(time.Second), End: t0.Add(5 * time.Second), Rule: "test"}}
	sum := Summarize(w, ivs)
	op := sum.Ops[0]
	if sum.Measures != op.Measures {
		t.Errorf("the workload's measures %+v, want its one operation's %+v", sum.Measures, op.Measures)
	}
	near := func(got, want time.Duration) bool { return got >= want-want/1000 && got <= want+want/1000 } // HDR's 0.1 %
	ttft := op.Measures[stats.TTFT]
	if ttft.Count != 40 || !near(ttft.Min, 51*time.Millisecond) || !near(ttft.Max, 54*time.Millisecond) {
		t.Errorf("TTFT %+v: want 40 values from 51 to 54 ms (intervals 1 to 4)", ttft)
	}
	if op.Measures[stats.ITL].Count != 0 {
		t.Errorf("ITL %+v: no interval has any", op.Measures[stats.ITL])
	}
	if op.Counters[stats.OutputTokens] != 2000 || op.CountersPS[stats.OutputTokens] != 500 || !op.HasCounters() {
		t.Errorf("output tokens %d, %v/s; want 2000 over 4 s", op.Counters[stats.OutputTokens], op.CountersPS[stats.OutputTokens])
	}
	// TPOT p50 10 ms, p90 10 ms (the slow stream is 1 of 11 per interval)
	if p50, p10 := op.StreamTokensPerSecond(); p50 < 99.8 || p50 > 100 || p10 != p50 {
		t.Errorf("stream tokens/s p50 %v p10 %v, want 100 (within the histogram's 0.1 %%)", p50, p10)
	}
	if p50, p10 := (&Op{}).StreamTokensPerSecond(); p50 != 0 || p10 != 0 {
		t.Errorf("without TPOT: %v %v", p50, p10)
	}
}

func TestSummarizeUsesOnlyTheWindow(t *testing.T) {
	t0 := time.Unix(1000, 0)
	w := Workload{Name: "w", Model: "open", TargetRate: 101, VUsMax: 10,
		Window: Window{Start: t0.Add(time.Second), End: t0.Add(4*time.Second + 500*time.Millisecond), Rule: "test"}}
	s := Summarize(w, intervals(t0, 6))
	// Intervals 1, 2, 3 lie wholly inside [1 s, 4.5 s].
	if s.Intervals != 3 || s.Seconds != 3 {
		t.Fatalf("%d intervals over %v s, want 3 over 3", s.Intervals, s.Seconds)
	}
	op := s.Ops[0]
	if op.Requests != 303 || op.OK != 300 || s.Dropped != 1+2+3 || s.DroppedTotal != 15 || s.RequestsTotal != 606 {
		t.Errorf("requests %d ok %d dropped %d/%d total %d", op.Requests, op.OK, s.Dropped, s.DroppedTotal, s.RequestsTotal)
	}
	// HDR reports a bucket's highest equivalent value: within 0.1 %.
	within := func(got, want time.Duration) bool { return got >= want && got <= want+want/1000 }
	if !within(op.Latency.P50, 3*time.Millisecond) || !within(op.Latency.Max, 4*time.Millisecond) || !within(op.Latency.Min, 2*time.Millisecond) {
		t.Errorf("latency p50 %v max %v min %v: the window's intervals are 2, 3, 4 ms", op.Latency.P50, op.Latency.Max, op.Latency.Min)
	}
	if op.Rate != 101 || op.BytesRecvPS != 1000 {
		t.Errorf("rate %v, bytes/s %v", op.Rate, op.BytesRecvPS)
	}
	if len(op.Errors) != 1 || op.Errors[0].Class != "timeout" || op.Errors[0].Count != 3 || op.Errors[0].Sample != "deadline" {
		t.Errorf("errors %+v", op.Errors)
	}
	if !hasWarning(s, "arrivals dropped") {
		t.Errorf("no warning about dropped arrivals: %q", s.Warnings)
	}
}

func TestSummarizeFallsBackToTheWholeRun(t *testing.T) {
	t0 := time.Unix(1000, 0)
	w := Workload{Name: "w", Model: "closed", Window: Window{Start: t0.Add(100 * time.Millisecond), End: t0.Add(900 * time.Millisecond)}}
	s := Summarize(w, intervals(t0, 2))
	if s.Intervals != 2 || !hasWarning(s, "too short") {
		t.Errorf("%d intervals, warnings %q", s.Intervals, s.Warnings)
	}
}

// Scheduler lag is shown, but alone it is no verdict; dropped arrivals
// at the VU cap are the target's.
func TestSchedulerLagAndPoolDropsAreNotClientBound(t *testing.T) {
	t0 := time.Unix(1000, 0)
	ivs := intervals(t0, 3) // with dropped arrivals
	for _, iv := range ivs {
		for i := 0; i < 100; i++ {
			iv.Lag.Record(20 * time.Millisecond)
		}
	}
	s := Summarize(Workload{Model: "open", Scheduled: 306, Window: Window{Start: t0, End: t0.Add(3 * time.Second)}}, ivs)
	if s.ClientBound || hasWarning(s, "client-bound:") || !hasWarning(s, "scheduler lag p99 20.015ms") || !hasWarning(s, "pool limit: 3 arrivals dropped") {
		t.Errorf("lag p99 %v: client-bound %v, warnings %q", s.Lag.P99, s.ClientBound, s.Warnings)
	}
}

func TestClientBoundWhenArrivalsWereNotIssued(t *testing.T) {
	t0 := time.Unix(1000, 0)
	for _, tt := range []struct {
		scheduled, unissued uint64
		model               string
		bound               bool
	}{
		{990, 10, "open", true}, // 1 %
		{991, 9, "open", false},
		{1000, 0, "open", false},
		{0, 0, "closed", false},
	} {
		w := Workload{Model: tt.model, Scheduled: tt.scheduled, Unissued: tt.unissued, Window: Window{Start: t0, End: t0.Add(3 * time.Second)}}
		s := Summarize(w, intervals(t0, 3))
		if s.ClientBound != tt.bound || hasWarning(s, "client-bound: the generator issued") != tt.bound {
			t.Errorf("%d issued, %d not: client-bound %v, warnings %q", tt.scheduled, tt.unissued, s.ClientBound, s.Warnings)
		}
	}
}

func hasWarning(s *Summary, part string) bool {
	for _, w := range s.Warnings {
		if strings.Contains(w, part) {
			return true
		}
	}
	return false
}

// Arrivals dropped at vus.max in a phase whose generator was at the limit
// of its cores are not put down to a slow target: the pool-limit warning
// must not contradict the client-bound verdict beside it.
func TestPoolDropsOfAClientBoundPhaseAreNotTheTargets(t *testing.T) {
	t0 := time.Unix(1000, 0)
	s := Summarize(Workload{Model: "open", Scheduled: 306, VUsMax: 7, Window: Window{Start: t0, End: t0.Add(3 * time.Second)}}, intervals(t0, 3))
	if !hasWarning(s, "target was slow") {
		t.Fatalf("no pool limit put down to the target before the verdict: %q", s.Warnings)
	}
	MarkClientBound(&Resources{ClientBound: true, GeneratorCPU: 1, CoresAvailable: 1}, []*Summary{s})
	if !s.ClientBound || hasWarning(s, "not client-bound") || hasWarning(s, "target was slow") || !hasWarning(s, "pool limit: 3 arrivals dropped") {
		t.Errorf("client-bound %v, warnings %q", s.ClientBound, s.Warnings)
	}
}

// Arrivals dropped at vus.max in a machine-busy phase (issue 31: the
// verdict was "the target was slow" while the sink answered in 1.6 ms and
// perflab was starved by other work on its core) say the generator was
// starved, naming who used what, and the verdict is not client-bound.
func TestPoolDropsOfAMachineBusyPhaseNameTheStarvedGenerator(t *testing.T) {
	t0 := time.Unix(1000, 0)
	s := Summarize(Workload{Model: "open", Scheduled: 306, VUsMax: 7, Window: Window{Start: t0, End: t0.Add(3 * time.Second)}}, intervals(t0, 3))
	why := "others than perflab and its components used 1.08 of 2 cores while the machine was 2.00 busy (medians over 14 samples)"
	MarkClientBound(&Resources{MachineBusy: true, BusyWhy: why}, []*Summary{s})
	if s.ClientBound || hasWarning(s, "target was slow") ||
		!hasWarning(s, "pool limit: 3 arrivals dropped in the window: every VU was busy at vus.max 7 while the machine was busy: the generator was starved: others used 1.08 of 2 cores") ||
		!hasWarning(s, "the target need not have been slow") {
		t.Errorf("client-bound %v, warnings %q", s.ClientBound, s.Warnings)
	}
}

// At a high rate against a fast target the dispatcher's delay (up to one
// dispatch quantum) is most of the latency p50: the report says so and
// gives the service time; at a latency well above it, it says nothing.
func TestDispatchDelayThatIsMostOfTheLatency(t *testing.T) {
	t0 := time.Unix(1000, 0)
	for _, tt := range []struct {
		latency time.Duration
		warn    bool
	}{{800 * time.Microsecond, true}, {10 * time.Millisecond, false}} {
		st := stats.NewOpStats()
		lag := stats.NewHist()
		for range 1000 {
			st.Latency.Record(tt.latency)
			st.Service.Record(tt.latency - 600*time.Microsecond)
			lag.Record(500 * time.Microsecond)
		}
		st.Classes[stats.OK] = 1000
		ivs := []*stats.Interval{{Start: t0, End: t0.Add(time.Second), Ops: map[string]*stats.OpStats{"GET /": st}, Lag: lag}}
		s := Summarize(Workload{Model: "open", Scheduled: 1000, Window: Window{Start: t0, End: t0.Add(time.Second)}}, ivs)
		got := hasWarning(s, "of the latency p50") && hasWarning(s, "the service time from the actual start, p50 ")
		if got != tt.warn {
			t.Errorf("latency %v, lag 500µs: warned %v, want %v: %q", tt.latency, got, tt.warn, s.Warnings)
		}
	}
}

// The pool-limit warning says how many VUs the rate keeps busy at the
// operations' service time (Little's law), so a vus.max too small for a
// fast target is told from a target that slowed down.
func TestPoolLimitSaysHowManyVUsTheRateNeeds(t *testing.T) {
	t0 := time.Unix(1000, 0)
	st := stats.NewOpStats()
	for range 80 {
		st.Latency.Record(50 * time.Millisecond)
		st.Service.Record(50 * time.Millisecond)
	}
	st.Classes[stats.OK] = 80
	ivs := []*stats.Interval{{Start: t0, End: t0.Add(2 * time.Second), Ops: map[string]*stats.OpStats{"GET /": st}, Dropped: 120, Lag: stats.NewHist()}}
	s := Summarize(Workload{Model: "open", TargetRate: 100, VUsMax: 2, Scheduled: 200, Window: Window{Start: t0, End: t0.Add(2 * time.Second)}}, ivs)
	if !hasWarning(s, "every VU was busy at vus.max 2 while the target was slow (not client-bound): at 100/s, operations of 50ms on average keep about 5 VUs busy") {
		t.Errorf("warnings %q", s.Warnings)
	}
}

// Drops at a vus.max that the operations' mean keeps a hundredth busy
// came from a stall, not from a slow target: a CPU-throttled worker at
// 6000/s, operations of 160 µs, dropped 55 arrivals at vus.max 200, and
// the warning said the target was slow. A pool of 4 VUs kept busy by the
// same rate (at the tenth, the edge) stays the target's.
func TestPoolLimitOfAStallIsNotPutDownToTheTarget(t *testing.T) {
	t0 := time.Unix(1000, 0)
	for _, tt := range []struct {
		vusMax int
		stall  bool
	}{{200, true}, {10, true}, {9, false}} {
		st := stats.NewOpStats()
		lag := stats.NewHist()
		for range 100 {
			st.Latency.Record(20 * time.Millisecond)
			st.Service.Record(160 * time.Microsecond)
			lag.Record(20 * time.Millisecond)
		}
		st.Classes[stats.OK] = 100
		ivs := []*stats.Interval{{Start: t0, End: t0.Add(time.Second), Ops: map[string]*stats.OpStats{"GET /": st}, Dropped: 55, Lag: lag}}
		s := Summarize(Workload{Model: "open", TargetRate: 6000, VUsMax: tt.vusMax, Scheduled: 155, Window: Window{Start: t0, End: t0.Add(time.Second)}}, ivs)
		stall := hasWarning(s, "though at 6000/s, operations of 160µs on average keep about 1 VUs busy: a stall filled the pool, the target's or the generator's own (scheduler lag p99 20.")
		if stall != tt.stall || hasWarning(s, "target was slow") == tt.stall {
			t.Errorf("vus.max %d: stall %v, want %v: %q", tt.vusMax, stall, tt.stall, s.Warnings)
		}
	}
}

// Arrivals dropped at vus.max are a pool limit of the steady state only
// when some fell in the window: drops while the pool grew during the
// warm-up count in the run's total but make no verdict on the window.
func TestPoolLimitOnlyForDropsInTheWindow(t *testing.T) {
	t0 := time.Unix(1000, 0)
	for _, tt := range []struct {
		name  string
		start time.Duration // the window's start; it ends at 4 s
		warn  bool
	}{
		{"drops in the window", 0, true},
		{"drops only in the warm-up", time.Second, false},
	} {
		ivs := intervals(t0, 4)
		for i, iv := range ivs {
			iv.Dropped = map[bool]int64{true: 40}[i == 0]
		}
		s := Summarize(Workload{Model: "open", VUsMax: 5, Scheduled: 444, Window: Window{Start: t0.Add(tt.start), End: t0.Add(4 * time.Second)}}, ivs)
		if got := hasWarning(s, "pool limit: "); got != tt.warn || s.DroppedTotal != 40 {
			t.Errorf("%s: pool limit %v, want %v (%d dropped in the window, %d in all): %q", tt.name, got, tt.warn, s.Dropped, s.DroppedTotal, s.Warnings)
		}
		if s.ClientBound {
			t.Errorf("%s: drops at vus.max made the workload client-bound", tt.name)
		}
	}
}

// oneInterval is one second of n successful requests of 1 ms each.
func oneInterval(t0 time.Time, n int64) []*stats.Interval {
	st := stats.NewOpStats()
	for range n {
		st.Latency.Record(time.Millisecond)
	}
	st.Classes[stats.OK] = n
	return []*stats.Interval{{Start: t0, End: t0.Add(time.Second), Ops: map[string]*stats.OpStats{"GET /": st}, Lag: stats.NewHist()}}
}

// The summary's other judgements, each next to the figures that would
// make it wrong: too few requests for a p99 (fewer than 100), a rate
// below the target (under 95 % of it), and a window too short for the
// steady state (no whole interval in it).
func TestSummaryWarningsBothWays(t *testing.T) {
	t0 := time.Unix(1000, 0)
	one := Window{Start: t0, End: t0.Add(time.Second)}
	for _, tt := range []struct {
		name     string
		w        Workload
		requests int64
		warning  string
		warn     bool
	}{
		{"99 requests", Workload{Model: "closed", Window: one}, 99, "only 99 requests in the window: p99 and above rest on fewer than 100 samples", true},
		{"100 requests", Workload{Model: "closed", Window: one}, 100, "requests in the window: p99", false},
		{"achieved 100 of 110/s", Workload{Model: "open", TargetRate: 110, Scheduled: 100, Window: one}, 100,
			"achieved 100.0 ops/s, below the target 110.0 ops/s", true},
		{"achieved 100 of 105/s", Workload{Model: "open", TargetRate: 105, Scheduled: 100, Window: one}, 100, "below the target", false},
		{"achieved 950 of 1000/s (95 %, the edge)", Workload{Model: "open", TargetRate: 1000, Scheduled: 950, Window: one}, 950, "below the target", false},
		{"achieved 949 of 1000/s", Workload{Model: "open", TargetRate: 1000, Scheduled: 949, Window: one}, 949,
			"achieved 949.0 ops/s, below the target 1000.0 ops/s", true},
		{"no requests", Workload{Model: "closed", Window: one}, 0, "requests in the window: p99", false},
		{"closed model, no target", Workload{Model: "closed", Window: one}, 100, "below the target", false},
		{"no whole interval in the window", Workload{Model: "closed", Window: Window{Start: t0.Add(100 * time.Millisecond), End: t0.Add(time.Second)}}, 100,
			"the run is too short for a steady-state window", true},
		{"a whole interval in the window", Workload{Model: "closed", Window: one}, 100, "too short", false},
	} {
		s := Summarize(tt.w, oneInterval(t0, tt.requests))
		if got := hasWarning(s, tt.warning); got != tt.warn {
			t.Errorf("%s: warned %v, want %v: %q", tt.name, got, tt.warn, s.Warnings)
		}
	}
}

// TestOpOfNothingOverNoTime (issue 18): an operation with no requests over
// a window of no seconds reads 0 everywhere, never NaN or Inf.
func TestOpOfNothingOverNoTime(t *testing.T) {
	st := stats.NewOpStats()
	st.BytesSent, st.BytesRecv = 10, 20
	op := summarizeOp("x", st, 0)
	if op.SuccessRate != 0 || op.Rate != 0 || op.BytesSentPS != 0 || op.BytesRecvPS != 0 {
		t.Errorf("success rate %v, rate %v, bytes/s %v and %v; want 0", op.SuccessRate, op.Rate, op.BytesSentPS, op.BytesRecvPS)
	}
}
