package analysis

import (
	"math"
	"slices"
	"testing"
	"time"
)

// TestSpreadOf: mean, lowest, highest and Student's t interval of the mean;
// one run has no interval, none has no figures.
func TestSpreadOf(t *testing.T) {
	s := SpreadOf([]float64{13, 11, 12})
	// mean 12, sample sd 1, t(0.975, 2) = 4.3027: 12 ± 4.3027/√3 = 12 ± 2.4841.
	if s.N() != 3 || !slices.Equal(s.Values, []float64{13, 11, 12}) || s.Mean != 12 || s.Min != 11 || s.Max != 13 ||
		math.Abs(s.Low-(12-2.4841)) > 1e-3 || math.Abs(s.High-(12+2.4841)) > 1e-3 {
		t.Errorf("SpreadOf(13, 11, 12) = %+v", s)
	}
	if one := SpreadOf([]float64{5}); one.Mean != 5 || one.Min != 5 || one.Max != 5 || !math.IsNaN(one.Low) || !math.IsNaN(one.High) {
		t.Errorf("one run: %+v, want mean 5 and no interval", one)
	}
	if none := SpreadOf(nil); none.N() != 0 || !math.IsNaN(none.Mean) {
		t.Errorf("no run: %+v", none)
	}
	if same := SpreadOf([]float64{4, 4}); same.Low != 4 || same.High != 4 {
		t.Errorf("equal runs: %+v, want the interval a point", same)
	}
	if wide := SpreadOf([]float64{0.01, 0.07}); wide.Low != 0 || wide.High < 0.2 {
		t.Errorf("latencies 10 and 70 ms: %+v, want the interval from 0", wide)
	}
	// A run with none (0 errors, 0 dropped) is still a figure that cannot
	// be negative.
	if zero := SpreadOf([]float64{0, 3, 6}); zero.Low != 0 || zero.High <= 6 {
		t.Errorf("0, 3 and 6 errors: %+v, want the interval from 0", zero)
	}
	if neg := SpreadOf([]float64{-1, 1}); neg.Low >= -1 {
		t.Errorf("figures that may be negative: %+v, want the interval below 0", neg)
	}
}

// TestPoolSizingInputs: each component's samples of every repetition, in
// order, the windows added up, an exit in any repetition kept.
func TestPoolSizingInputs(t *testing.T) {
	got := PoolSizingInputs([][]SizingInput{
		{{Component: "a", CPU: []float64{1, 2}, Memory: []float64{10}, Window: time.Minute, Restarts: 1},
			{Component: "b", CPU: []float64{5}, Window: time.Minute}},
		{{Component: "b", CPU: []float64{6}, Window: time.Minute, Exited: true},
			{Component: "a", CPU: []float64{3}, Memory: []float64{11, 12}, Window: 2 * time.Minute, WarmUp: time.Second}},
	})
	if len(got) != 2 || got[0].Component != "a" || got[1].Component != "b" {
		t.Fatalf("components %+v, want a then b", got)
	}
	a, b := got[0], got[1]
	if !slices.Equal(a.CPU, []float64{1, 2, 3}) || !slices.Equal(a.Memory, []float64{10, 11, 12}) || a.Window != 3*time.Minute ||
		a.Restarts != 1 || a.WarmUp != time.Second || a.Exited {
		t.Errorf("a = %+v", a)
	}
	if !slices.Equal(b.CPU, []float64{5, 6}) || b.Window != 2*time.Minute || !b.Exited {
		t.Errorf("b = %+v", b)
	}
}

// TestPoolRepetitions: three repetitions of a profile, 20 s apart, each a
// 10 s window of CPU samples at 1 s with one sample outside the window. The
// pooled resources hold the 30 samples inside the windows and no other, so
// the P99 is that of all of them; the sizing samples are the same; the
// workloads' rates are over the three windows together; a repetition that
// did not complete makes the pooled phase's state.
func TestPoolRepetitions(t *testing.T) {
	var reps []Repetition
	for r := range 3 {
		start := t0.Add(time.Duration(20*r) * time.Second)
		w := Window{Start: start, End: start.Add(10 * time.Second), Rule: "test"}
		var cpu []Point
		for i := 1; i <= 11; i++ { // the 11th is after the window
			cpu = append(cpu, Point{T: start.Add(time.Duration(i) * time.Second), V: float64(10*r + i)})
		}
		cpu[10].V = 1000
		ivs := intervals(start, 10)
		s := Summarize(Workload{Name: "w", Short: "get", Model: "closed", Window: w}, ivs)
		state := "completed"
		if r == 1 {
			state = "interrupted"
		}
		reps = append(reps, Repetition{State: state, Summaries: []*Summary{s}, Input: ResourceInput{Window: w,
			Components: []Component{{Name: "db", Kind: "run"}}, Series: map[string]map[string][]Point{"db": {"cpu_cores": cpu}}}})
	}
	pd := PoolRepetitions("small", reps)
	if pd.Profile != "small" || pd.State != "interrupted" {
		t.Errorf("profile %q state %q", pd.Profile, pd.State)
	}
	res := pd.Resources
	if res == nil || res.Ticks != 30 || len(res.Components) != 1 {
		t.Fatalf("resources %+v, want 30 sample times of one component", res)
	}
	// Samples 1…10, 11…20, 21…30: P99 (rank 30 of 30) is 30, the mean 15.5; the 1000s are outside the windows.
	if cpu := res.Components[0].CPU; cpu.N != 30 || cpu.P99 != 30 || cpu.Max != 30 || cpu.Avg != 15.5 {
		t.Errorf("pooled CPU %+v", cpu)
	}
	if len(pd.Sizing) != 1 || len(pd.Sizing[0].CPU) != 30 || pd.Sizing[0].Window != 30*time.Second {
		t.Errorf("sizing %+v", pd.Sizing)
	}
	if len(pd.Summaries) != 1 {
		t.Fatalf("summaries %+v", pd.Summaries)
	}
	s := pd.Summaries[0]
	// Each repetition: 10 intervals of 101 operations over 10 s.
	if s.Workload.DisplayName() != "get" || s.Seconds != 30 || s.Requests != 3030 || s.Rate != 101 || s.Ops[0].Requests != 3030 ||
		s.Latency.Count != 3000 || s.Latency != s.Ops[0].Latency {
		t.Errorf("pooled summary: %s %v s, %d requests, %v/s, latency %+v", s.Workload.DisplayName(), s.Seconds, s.Requests, s.Rate, s.Latency)
	}
	in, err := CellInsights([]PhaseData{pd}, DefaultInsightOptions())
	if err != nil || in == nil || len(in.Sizes) != 1 {
		t.Fatalf("insights of the pooled phase: %+v, %v", in, err)
	}
}

// A pooled workload is client-bound when any repetition was, and names
// each reason once, in the order the repetitions gave them.
func TestPoolSummariesJoinClientBoundReasons(t *testing.T) {
	rep := func(whys ...string) []*Summary {
		s := &Summary{Workload: Workload{Name: "w"}}
		for _, why := range whys {
			s.markClientBound(why)
		}
		return []*Summary{s}
	}
	pooled := PoolSummaries([][]*Summary{rep(), rep("cpu"), rep("cpu", "unissued"), rep("unissued")})
	if len(pooled) != 1 || !pooled[0].ClientBound || pooled[0].ClientWhy != "cpu; unissued" {
		t.Errorf("pooled %+v, want client-bound by \"cpu; unissued\"", pooled)
	}
	if pooled := PoolSummaries([][]*Summary{rep(), rep()}); pooled[0].ClientBound || pooled[0].ClientWhy != "" {
		t.Errorf("pooled %+v, want not client-bound", pooled[0])
	}
}

// A pooled workload shows the scheduler lag of its worst repetition (by
// p99; the first of two alike), and no rate over no seconds.
func TestPoolSummariesLagAndRate(t *testing.T) {
	rep := func(p50, p99 time.Duration, secs float64) []*Summary {
		return []*Summary{{Workload: Workload{Name: "w"}, Seconds: secs, Lag: Quantiles{Count: 100, P50: p50, P99: p99}}}
	}
	ms := time.Millisecond
	for _, tt := range []struct {
		name     string
		reps     [][]*Summary
		p50, p99 time.Duration
	}{
		{"the worst last", [][]*Summary{rep(ms, 2*ms, 1), rep(3*ms, 9*ms, 1)}, 3 * ms, 9 * ms},
		{"the worst first", [][]*Summary{rep(3*ms, 9*ms, 1), rep(ms, 2*ms, 1)}, 3 * ms, 9 * ms},
		{"two alike", [][]*Summary{rep(3*ms, 9*ms, 1), rep(ms, 9*ms, 1)}, 3 * ms, 9 * ms},
	} {
		p := PoolSummaries(tt.reps)
		if len(p) != 1 || p[0].Lag.P50 != tt.p50 || p[0].Lag.P99 != tt.p99 {
			t.Errorf("%s: pooled lag %+v, want p50 %v p99 %v", tt.name, p[0].Lag, tt.p50, tt.p99)
		}
	}
	if p := PoolSummaries([][]*Summary{rep(ms, ms, 0), rep(ms, ms, 0)}); p[0].Rate != 0 {
		t.Errorf("a rate of %v over no seconds", p[0].Rate)
	}
}
