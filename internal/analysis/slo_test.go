package analysis

import (
	"math"
	"strings"
	"testing"
	"time"

	"github.com/perflab/perflab/internal/slo"
	"github.com/perflab/perflab/internal/stats"
)

// opSummary is an operation that took each of lats, with failed of its
// requests timing out.
func opSummary(name string, failed int64, seconds float64, lats ...[2]int64) Op {
	st := stats.NewOpStats()
	var n int64
	for _, l := range lats { // {count, milliseconds}
		for range l[0] {
			st.Latency.Record(time.Duration(l[1]) * time.Millisecond)
		}
		n += l[0]
	}
	st.Classes[stats.OK], st.Classes[stats.Timeout] = n-failed, failed
	return summarizeOp(name, st, seconds)
}

// gateFixture is workload "ingest" over 10 s: GET / 990 × 10 ms and
// 10 × 500 ms with one timeout, POST / 50 × 20 ms; 3 arrivals dropped.
// Workload "query" ran 200 × 5 ms with nothing dropped.
func gateFixture() []*Summary {
	ingest := &Summary{Workload: Workload{Name: "ingest"}, Intervals: 10, Seconds: 10, Dropped: 3,
		Ops: []Op{opSummary("GET /", 1, 10, [2]int64{990, 10}, [2]int64{10, 500}), opSummary("POST /", 0, 10, [2]int64{50, 20})}}
	query := &Summary{Workload: Workload{Name: "p1/query", Short: "query"}, Intervals: 10, Seconds: 10,
		Ops: []Op{opSummary("instant", 0, 10, [2]int64{200, 5})}}
	return []*Summary{ingest, query}
}

// The gates on a driver's measures and counters: over 10 s, chat streamed
// 200 answers, TTFT 50 ms (and 2 of 200 at 400 ms), 20 gaps each of 10 ms,
// TPOT 10 ms, 4200 output tokens; embed measured none.
func TestMeasureGates(t *testing.T) {
	st := stats.NewOpStats()
	for i := range 200 {
		st.Latency.Record(300 * time.Millisecond)
		st.Classes[stats.OK]++
		ttft := 50 * time.Millisecond
		if i < 2 {
			ttft = 400 * time.Millisecond
		}
		st.Measures[stats.TTFT] = fillHist(st.Measures[stats.TTFT], ttft, 1)
		st.Measures[stats.ITL] = fillHist(st.Measures[stats.ITL], 10*time.Millisecond, 20)
		st.Measures[stats.TPOT] = fillHist(st.Measures[stats.TPOT], 10*time.Millisecond, 1)
	}
	st.Counters[stats.OutputTokens] = 4200
	sum := &Summary{Workload: Workload{Name: "llm"}, Intervals: 10, Seconds: 10,
		Ops: []Op{summarizeOp("chat", st, 10), opSummary("embed", 0, 10, [2]int64{200, 5})}}
	for _, tt := range []struct {
		expr, measured string
		state          GateState
		note           string
	}{
		// 200 values: rank ⌈0.99 × 200⌉ = 198 is a 50 ms one; merged with embed's none.
		{`ttft_p99 < 100ms`, "50ms", GatePass, ""},
		{`ttft_p50{op="chat"} < 40ms`, "50ms", GateFail, ""},
		{`itl_p99 < 11ms`, "10ms", GatePass, ""},
		{`tpot_p50 < 20ms`, "10ms", GatePass, ""},
		{`tpot_p99{op="embed"} < 20ms`, "", GateInsufficient, "p99 needs at least 100 tpot values; the window has 0"},
		{`output_tokens_rate >= 400/s`, "420/s", GatePass, ""},
		{`output_tokens_rate{op="embed"} > 0`, "", GateInsufficient, "no output tokens were counted in the window"},
	} {
		g, err := slo.ParseGate(tt.expr)
		if err != nil {
			t.Fatal(err)
		}
		vs, err := EvaluateGates([]slo.Gate{g}, []*Summary{sum}, nil)
		if err != nil || len(vs) != 1 {
			t.Fatalf("%s: %+v, %v", tt.expr, vs, err)
		}
		if v := vs[0]; v.Measured != tt.measured || v.State != tt.state || v.Note != tt.note {
			t.Errorf("%s: measured %q %v %q, want %q %v %q", tt.expr, v.Measured, v.State, v.Note, tt.measured, tt.state, tt.note)
		}
	}
}

// fillHist records d n times into h, made when nil.
func fillHist(h *stats.Hist, d time.Duration, n int) *stats.Hist {
	if h == nil {
		h = stats.NewHist()
	}
	for range n {
		h.Record(d)
	}
	return h
}

func TestEvaluateGates(t *testing.T) {
	type want struct {
		workload, measured string
		state              GateState
		note               string
	}
	tests := []struct {
		expr string
		want []want
	}{
		// 1050 latencies: rank ⌊0.99 × 1050 + 0.5⌋ = 1040 falls among the 20 ms.
		{`p99{workload="ingest"} < 200ms`, []want{{"ingest", "20ms", GatePass, ""}}},
		{`p99{op="GET /"} < 200ms`, []want{{"ingest", "10ms", GatePass, ""}}},
		// rank 999 of 1000 is a 500 ms latency (500.2 ms at the histogram's precision).
		{`p999{op="GET /"} < 200ms`, []want{{"ingest", "500ms", GateFail, ""}}},
		{`p99{op="POST /"} < 200ms`, []want{{"ingest", "", GateInsufficient, "p99 needs at least 100 latencies of successful requests; the window has 50"}}},
		{`p50{op="POST /"} < 30ms`, []want{{"ingest", "20ms", GatePass, ""}}},
		// 1 failure in 1050 requests = 0.0952 %; 1050 ≥ 1/0.001.
		{`error_rate{workload="ingest"} < 0.1%`, []want{{"ingest", "0.0952%", GatePass, ""}}},
		{`error_rate{op="POST /"} < 0.1%`, []want{{"ingest", "0%", GateInsufficient, "error_rate 0% passes, but 50 requests can't show a rate that small: it needs at least 1000"}}},
		{`success_rate{workload="query"} >= 99%`, []want{{"p1/query", "100%", GatePass, ""}}},
		{`rate{workload="ingest"} >= 100/s`, []want{{"ingest", "105/s", GatePass, ""}}},
		{`dropped == 0`, []want{{"ingest", "3", GateFail, ""}, {"p1/query", "0", GatePass, ""}}},
		{`errors{workload="query"} == 0`, []want{{"p1/query", "0", GatePass, ""}}},
		{`lost_samples == 0`, []want{{"", "0", GatePass, ""}}},
		{`p99{workload="nope"} < 1s`, []want{{"", "", GateInsufficient, `no workload "nope" in the run (workloads: ingest, p1/query)`}}},
		{`p99{op="DELETE /"} < 1s`, []want{{"", "", GateInsufficient, `no operation "DELETE /" in any workload (operations: GET /, POST /, instant)`}}},
		{`p99{workload="query",op="GET /"} < 1s`, []want{{"", "", GateInsufficient, `no operation "GET /" in workload "query" (operations: instant)`}}},
		{`ttfb_p50 < 1s`, []want{{"ingest", "", GateInsufficient, "p50 needs at least 2 TTFB samples; the window has 0"}, {"p1/query", "", GateInsufficient, ""}}},
	}
	for _, tt := range tests {
		g, err := slo.ParseGate(tt.expr)
		if err != nil {
			t.Fatal(err)
		}
		vs, err := EvaluateGates([]slo.Gate{g}, gateFixture(), map[string]Supplied{"lost_samples": {}})
		if err != nil {
			t.Fatalf("%s: %v", tt.expr, err)
		}
		if len(vs) != len(tt.want) {
			t.Errorf("%s: %d verdicts %+v, want %d", tt.expr, len(vs), vs, len(tt.want))
			continue
		}
		for i, w := range tt.want {
			v := vs[i]
			if v.Workload != w.workload || v.Measured != w.measured || v.State != w.state || v.Pass != (w.state == GatePass) ||
				!strings.Contains(v.Note, w.note) || v.Expr != tt.expr {
				t.Errorf("%s: verdict %+v, want %+v", tt.expr, v, w)
			}
			if w.measured == "" && !math.IsNaN(v.Value) {
				t.Errorf("%s: value %v without a figure", tt.expr, v.Value)
			}
		}
	}
}

func TestEvaluateGatesUnknownMetric(t *testing.T) {
	g, _ := slo.ParseGate("lost_sample == 0")
	_, err := EvaluateGates([]slo.Gate{g}, gateFixture(), map[string]Supplied{"lost_samples": {}, "acked": {Value: 5}})
	if err == nil || !strings.Contains(err.Error(), `cannot evaluate SLO gate "lost_sample == 0": unknown metric "lost_sample": known metrics are dropped, error_rate`) ||
		!strings.HasSuffix(err.Error(), "; the run supplies acked, lost_samples") {
		t.Errorf("error %v", err)
	}
}

func TestEvaluateGatesClientBound(t *testing.T) {
	sums := gateFixture()
	MarkClientBound(&Resources{ClientBound: true, GeneratorCPU: 1.9, CoresAvailable: 2}, sums[1:])
	g, _ := slo.ParseGate(`p50{workload="query"} < 10ms`)
	vs, err := EvaluateGates([]slo.Gate{g}, sums, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(vs) != 1 || !vs[0].Pass || vs[0].Note != "client-bound (generator CPU P99 1.9 of 2 cores (≥ 90 %)): the figure may show the generator's limit" {
		t.Errorf("verdicts %+v", vs)
	}
}

// TestGateVerdictsAtTheirEdges: each gate state next to the figures that
// would make it another. A figure exactly at the threshold fails a strict
// comparison and passes an inclusive one, a percentage too (0.7 % is not
// 0.7 / 100 = 0.006999…, and 93 successes of 100 are not 1 − 0.07 =
// 0.92999…: either made "error_rate <= 0.7%" fail at 0.7 %); a quantile gets a figure from
// MinCountFor values, not one fewer; a rate held under t passes from ⌈1/t⌉
// requests, not one fewer; a figure the run could not supply is never a
// pass, even when its value would be.
func TestGateVerdictsAtTheirEdges(t *testing.T) {
	// 1000 requests over 10 s, one of them failed; 3 arrivals dropped.
	one := &Summary{Workload: Workload{Name: "one"}, Intervals: 10, Seconds: 10, Dropped: 3,
		Ops: []Op{opSummary("GET /", 1, 10, [2]int64{1000, 10})}}
	// 999 requests with no failure; 99 and 100 latencies.
	clean := &Summary{Workload: Workload{Name: "clean"}, Intervals: 10, Seconds: 10, Ops: []Op{opSummary("GET /", 0, 10, [2]int64{999, 10})}}
	// 1000 requests, 7 of them failed: 0.7 %, a percentage that is no
	// exact binary fraction.
	seven := &Summary{Workload: Workload{Name: "seven"}, Intervals: 10, Seconds: 10, Ops: []Op{opSummary("GET /", 7, 10, [2]int64{1000, 10})}}
	// 100 requests, 7 of them failed: 1 − 0.07 is 0.9299999999999999.
	hundred := &Summary{Workload: Workload{Name: "hundred"}, Intervals: 10, Seconds: 10, Ops: []Op{opSummary("GET /", 7, 10, [2]int64{100, 10})}}
	p99of99 := &Summary{Workload: Workload{Name: "99"}, Intervals: 1, Seconds: 1, Ops: []Op{opSummary("GET /", 0, 1, [2]int64{99, 10})}}
	p99of100 := &Summary{Workload: Workload{Name: "100"}, Intervals: 1, Seconds: 1, Ops: []Op{opSummary("GET /", 0, 1, [2]int64{100, 10})}}
	extra := map[string]Supplied{"lost_traces": {Value: 0, Why: "the read-back of traces is unverified: HTTP 503"}, "lost_spans": {Value: 0}}
	for _, tt := range []struct {
		expr  string
		sum   *Summary
		state GateState
	}{
		{"dropped < 3", one, GateFail},
		{"dropped <= 3", one, GatePass},
		{"dropped == 3", one, GatePass},
		{"dropped != 3", one, GateFail},
		{"rate >= 100/s", one, GatePass},
		{"rate > 100/s", one, GateFail},
		{"errors > 1", one, GateFail},
		{"errors >= 1", one, GatePass},
		{"error_rate < 0.1%", one, GateFail},  // 1 of 1000 is 0.1 %
		{"error_rate <= 0.1%", one, GatePass}, // and rests on 1000 requests
		{"success_rate >= 99.9%", one, GatePass},
		{"error_rate <= 0.7%", seven, GatePass},
		{"error_rate < 0.7%", seven, GateFail},
		{"error_rate <= 0.007", seven, GatePass},
		{"success_rate >= 99.3%", seven, GatePass},
		{"success_rate > 99.3%", seven, GateFail},
		{"success_rate >= 93%", hundred, GatePass},
		{"success_rate > 93%", hundred, GateFail},
		{"error_rate < 0.1%", clean, GateInsufficient}, // 0 of 999: one failure more would not have crossed it
		{"success_rate > 99.9%", clean, GateInsufficient},
		{"error_rate < 0.2%", clean, GatePass}, // 999 ≥ ⌈1/0.002⌉ = 500
		{"error_rate > 0.1%", clean, GateFail}, // a failing rate needs no count

		// no failure at all holds a rate of 0 from either side, on any count
		{"error_rate <= 0", clean, GatePass},
		{"success_rate >= 100%", clean, GatePass},
		{"p99 < 1s", p99of99, GateInsufficient},
		{"p99 < 1s", p99of100, GatePass},
		{"p99 > 1s", p99of100, GateFail},
		{"lost_traces == 0", one, GateInsufficient},
		{"lost_spans == 0", one, GatePass},
	} {
		g, err := slo.ParseGate(tt.expr)
		if err != nil {
			t.Fatal(err)
		}
		vs, err := EvaluateGates([]slo.Gate{g}, []*Summary{tt.sum}, extra)
		if err != nil || len(vs) != 1 {
			t.Fatalf("%s on %s: %+v, %v", tt.expr, tt.sum.Workload.Name, vs, err)
		}
		if v := vs[0]; v.State != tt.state || v.Pass != (tt.state == GatePass) {
			t.Errorf("%s on %s: %v (measured %q, %s), want %v", tt.expr, tt.sum.Workload.Name, v.State, v.Measured, v.Note, tt.state)
		}
	}
}

// TestEveryMetricIsMeasured: the grammar's built-in metrics and the
// measures here name the same metrics.
func TestEveryMetricIsMeasured(t *testing.T) {
	names := slo.Metrics()
	for _, m := range names {
		if gateMeasures[m] == nil {
			t.Errorf("built-in metric %s has no measure", m)
		}
	}
	if len(gateMeasures) != len(names) {
		t.Errorf("%d measures for %d built-in metrics %v", len(gateMeasures), len(names), names)
	}
}

// TestEvaluateGatesUnknownMetricNothingSupplied (issue 18): with nothing
// supplied by the run, the error says so.
func TestEvaluateGatesUnknownMetricNothingSupplied(t *testing.T) {
	g, _ := slo.ParseGate("lost_sample == 0")
	_, err := EvaluateGates([]slo.Gate{g}, gateFixture(), nil)
	if err == nil || !strings.HasSuffix(err.Error(), "; the run supplies no other figures") {
		t.Errorf("error %v", err)
	}
}

// TestEvaluateGatesNoWorkloads: a gate on a run without workloads has no
// figure, and says so.
func TestEvaluateGatesNoWorkloads(t *testing.T) {
	g, _ := slo.ParseGate("p99 < 1s")
	vs, err := EvaluateGates([]slo.Gate{g}, nil, nil)
	if err != nil || len(vs) != 1 || vs[0].State != GateInsufficient || vs[0].Note != "no workloads in the run" {
		t.Errorf("verdicts %+v, %v", vs, err)
	}
}
