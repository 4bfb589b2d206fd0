package analysis

import (
	"strings"
	"testing"
	"time"

	"github.com/perflab/perflab/internal/slo"
	"github.com/perflab/perflab/internal/stats"
)

// failingIntervals records n one-second intervals of 1000 requests each
// through the recorder: 60 % refused at once (50 µs, class connect), the
// others answered after 20 ms, one success in 80 after 100 ms.
func failingIntervals(t0 time.Time, n int) []*stats.Interval {
	r := stats.NewRecorder(4, t0)
	var out []*stats.Interval
	for i := range n {
		start := t0.Add(time.Duration(i) * time.Second)
		for j := range 1000 {
			s := &stats.Sample{Op: "GET /", Intended: start, Start: start, End: start.Add(20 * time.Millisecond)}
			switch {
			case j%5 < 3:
				s.End, s.Class, s.Message = start.Add(50*time.Microsecond), stats.Connect, "connection refused"
			case j%200 == 3:
				s.End = start.Add(100 * time.Millisecond)
			}
			r.Record(j, s)
		}
		out = append(out, r.Flush(start.Add(time.Second)))
	}
	return out
}

func failingSummary(t *testing.T) *Summary {
	t.Helper()
	t0 := time.Unix(1000, 0)
	w := Workload{Name: "get", Model: "open", Window: Window{Start: t0, End: t0.Add(4 * time.Second), Rule: "test"}}
	return Summarize(w, failingIntervals(t0, 4))
}

// TestLatencyIsOfSuccessfulRequests: fast refusals do not pull the
// headline latency down; the all-requests latency, with them, is kept
// beside it, and is the exact merge of successes and failures.
func TestLatencyIsOfSuccessfulRequests(t *testing.T) {
	s := failingSummary(t)
	op := s.Ops[0]
	near := func(got, want time.Duration) bool { return got >= want-want/1000 && got <= want+want/1000 }
	if op.Latency.Count != 1600 || !near(op.Latency.P50, 20*time.Millisecond) || !near(s.Latency.P50, 20*time.Millisecond) {
		t.Errorf("headline latency %+v (workload p50 %v): want the 1600 successes, p50 20ms", op.Latency, s.Latency.P50)
	}
	if op.Service.Count != 1600 {
		t.Errorf("service time over %d operations, want the 1600 successes", op.Service.Count)
	}
	if !op.HasFailedLatency() || op.FailedLatency.Count != 2400 || !near(op.FailedLatency.P99, 50*time.Microsecond) {
		t.Errorf("failed latency %+v: want the 2400 refusals at 50µs", op.FailedLatency)
	}
	if op.AllLatency.Count != 4000 || op.AllLatency.P50 >= time.Millisecond || s.AllLatency != op.AllLatency || !s.HasFailedLatency() {
		t.Errorf("all-requests latency %+v (workload %+v): want 4000 with the refusals' p50", op.AllLatency, s.AllLatency)
	}
	if op.LatencyOfAll || s.LatencyOfAll {
		t.Error("latency from the recorder marked as of all requests")
	}
}

// TestOldStoreLatencyIsOfAllRequests: figures read from a store that did
// not keep failures apart (stats.OpStats.Mixed) are said to be of every
// request, and so are the SLO verdicts on them.
func TestOldStoreLatencyIsOfAllRequests(t *testing.T) {
	t0 := time.Unix(1000, 0)
	ivs := failingIntervals(t0, 4)
	for _, iv := range ivs {
		st := iv.Ops["GET /"]
		st.Latency, st.Failed, st.Mixed = st.AllLatency(), nil, true // as version 2 stored it
	}
	s := Summarize(Workload{Name: "get", Window: Window{Start: t0, End: t0.Add(4 * time.Second)}}, ivs)
	op := s.Ops[0]
	if !op.LatencyOfAll || !s.LatencyOfAll || op.HasFailedLatency() || op.Latency != op.AllLatency || op.Latency.Count != 4000 {
		t.Errorf("old store: latency %+v, all %+v, of all %v", op.Latency, op.AllLatency, op.LatencyOfAll)
	}
	g, _ := slo.ParseGate("p50 < 10ms")
	vs, err := EvaluateGates([]slo.Gate{g}, []*Summary{s}, nil)
	if err != nil || len(vs) != 1 || !strings.Contains(vs[0].Note, "latency of all 4000 requests, 2400 of them failed") {
		t.Errorf("verdicts %+v, %v", vs, err)
	}
}

// TestSLOJudgesLatencyOnSuccesses: with 60 % of requests refused at once,
// p50 and p99 are judged on the successes (20 ms, and the 1.25 % at 100 ms
// in the tail), which the refusals would have hidden, and error_rate
// fails on its own.
func TestSLOJudgesLatencyOnSuccesses(t *testing.T) {
	s := failingSummary(t)
	for _, tt := range []struct {
		expr, measured string
		state          GateState
		note           string
	}{
		{"p50 < 10ms", "20ms", GateFail, "over the 1600 successful requests; 2400 of 4000 failed, see error_rate"},
		{"p99 < 50ms", "100ms", GateFail, "over the 1600 successful requests"},
		{"p99 < 200ms", "100ms", GatePass, "over the 1600 successful requests"},
		{"mean < 10ms", "21ms", GateFail, "over the 1600 successful requests"},
		{"error_rate < 1%", "60%", GateFail, ""},
	} {
		g, err := slo.ParseGate(tt.expr)
		if err != nil {
			t.Fatal(err)
		}
		vs, err := EvaluateGates([]slo.Gate{g}, []*Summary{s}, nil)
		if err != nil || len(vs) != 1 {
			t.Fatalf("%s: %+v, %v", tt.expr, vs, err)
		}
		if v := vs[0]; v.Measured != tt.measured || v.State != tt.state || !strings.HasPrefix(v.Note, tt.note) || tt.note == "" && v.Note != "" {
			t.Errorf("%s: measured %q %v %q, want %q %v %q", tt.expr, v.Measured, v.State, v.Note, tt.measured, tt.state, tt.note)
		}
	}
}

// TestSLOLatencyWithoutSuccessIsInsufficient: when every request failed
// there is no latency to judge, so a latency gate has insufficient data,
// never a pass on the failures' speed.
func TestSLOLatencyWithoutSuccessIsInsufficient(t *testing.T) {
	t0 := time.Unix(1000, 0)
	r := stats.NewRecorder(1, t0)
	for range 500 {
		r.Record(0, &stats.Sample{Op: "GET /", Intended: t0, Start: t0, End: t0.Add(50 * time.Microsecond), Class: stats.Connect, Message: "refused"})
	}
	s := Summarize(Workload{Name: "get", Window: Window{Start: t0, End: t0.Add(time.Second)}}, []*stats.Interval{r.Flush(t0.Add(time.Second))})
	for expr, note := range map[string]string{
		"p99 < 1s":             "p99 needs at least 100 latencies of successful requests; the window has 0",
		`p50{op="GET /"} < 1s`: "p50 needs at least 2 latencies of successful requests; the window has 0",
		"max < 1s":             "no successful requests in the window",
		"mean < 1s":            "no successful requests in the window",
	} {
		g, err := slo.ParseGate(expr)
		if err != nil {
			t.Fatal(err)
		}
		vs, err := EvaluateGates([]slo.Gate{g}, []*Summary{s}, nil)
		if err != nil || len(vs) != 1 || vs[0].State != GateInsufficient || vs[0].Note != note {
			t.Errorf("%s: %+v, %v; want insufficient data: %s", expr, vs, err, note)
		}
	}
}

// TestCompareErrorRate: each side's share of failed requests, with a ratio
// only when both have some; repeated runs give Fieller's interval.
func TestCompareErrorRate(t *testing.T) {
	t0 := time.Unix(1000, 0)
	ok := intervals(t0, 4) // 1 timeout in 101 requests an interval
	failing := failingIntervals(t0, 4)
	clean := failingIntervals(t0, 4)
	for _, iv := range clean {
		st := iv.Ops["GET /"]
		st.Classes = stats.Counts{stats.OK: st.Classes.Total()}
	}
	for _, tt := range []struct {
		name   string
		a, b   [][]*stats.Interval
		phrase string
		warn   bool
	}{
		{"one run each", [][]*stats.Interval{ok}, [][]*stats.Interval{failing}, "x61 higher error rate (no CI)", true},
		{"none in A", [][]*stats.Interval{clean}, [][]*stats.Interval{failing}, "errors, against none", true},
		{"none in B", [][]*stats.Interval{failing}, [][]*stats.Interval{clean}, "no errors, against some", true},
		{"none at all", [][]*stats.Interval{clean}, [][]*stats.Interval{clean}, "~", false},
		{"repeated runs", [][]*stats.Interval{ok, ok[:2]}, [][]*stats.Interval{failing, failing[:2]}, "x61 higher error rate", true},
	} {
		c := CompareErrorRate("workload get", tt.a, tt.b)
		if c.What != "error rate" || c.Unit != "fraction" || c.Phrase != tt.phrase || (len(c.Ratio.Warnings) > 0) != tt.warn {
			t.Errorf("%s: %+v", tt.name, c)
		}
	}
	c := CompareErrorRate("w", [][]*stats.Interval{clean}, [][]*stats.Interval{failing})
	if c.Ratio.A != 0 || c.Ratio.B != 0.6 || !strings.Contains(c.Ratio.Warnings[0], "0 % and 60 % of the requests failed") {
		t.Errorf("figures %v and %v, warnings %q", c.Ratio.A, c.Ratio.B, c.Ratio.Warnings)
	}
}
