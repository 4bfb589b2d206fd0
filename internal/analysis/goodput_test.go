package analysis

import (
	"strings"
	"testing"
	"time"

	"github.com/perflab/perflab/internal/slo"
	"github.com/perflab/perflab/internal/stats"
)

// goodputFixture is workload "llm" over 10 s: chat judged 200 requests
// (4 failed), 190 good; complete judged 100, 100 good; embed none.
func goodputFixture() []*Summary {
	op := func(name string, judged, good, failed int64) Op {
		st := stats.NewOpStats()
		for range judged - failed {
			st.Latency.Record(time.Second)
		}
		st.Classes[stats.OK], st.Classes[stats.Status5xx] = judged-failed, failed
		st.Counters[stats.GoodputJudged], st.Counters[stats.Goodput] = judged, good
		return summarizeOp(name, st, 10)
	}
	return []*Summary{{Workload: Workload{Name: "llm"}, Intervals: 10, Seconds: 10,
		Ops: []Op{op("chat", 200, 190, 4), op("complete", 100, 100, 0), opSummary("embed", 0, 10, [2]int64{50, 5})}}}
}

// Goodput is the share of judged requests that were good and their rate
// over the window, per operation and for the workload; gates read it.
func TestGoodputAndItsGates(t *testing.T) {
	sums := goodputFixture()
	g, ok := sums[0].Goodput()
	if !ok || g != (Goodput{Good: 290, Judged: 300, Share: 290.0 / 300, Rate: 29}) {
		t.Errorf("workload goodput %+v %v", g, ok)
	}
	if g, ok := sums[0].Ops[0].Goodput(); !ok || g != (Goodput{Good: 190, Judged: 200, Share: 0.95, Rate: 19}) {
		t.Errorf("chat goodput %+v %v", g, ok)
	}
	if _, ok := sums[0].Ops[2].Goodput(); ok {
		t.Error("embed was not judged, yet has goodput")
	}
	for _, tt := range []struct {
		expr, measured string
		state          GateState
	}{
		{`goodput >= 95%`, "96.7%", GatePass},
		{`goodput{op="chat"} >= 95%`, "95%", GatePass},
		{`goodput{op="chat"} > 95%`, "95%", GateFail},
		{`goodput{op="complete"} >= 99.9%`, "", GateInsufficient}, // 100 requests can't show 0.1 %
		{`goodput_rate >= 25/s`, "29/s", GatePass},
		{`goodput_rate{op="chat"} >= 20/s`, "19/s", GateFail},
		{`goodput{op="embed"} >= 50%`, "", GateInsufficient},
		{`goodput_rate{op="embed"} > 0`, "", GateInsufficient},
	} {
		g, err := slo.ParseGate(tt.expr)
		if err != nil {
			t.Fatal(err)
		}
		vs, err := EvaluateGates([]slo.Gate{g}, sums, nil)
		if err != nil || len(vs) != 1 {
			t.Fatalf("%s: %v %v", tt.expr, vs, err)
		}
		if v := vs[0]; v.State != tt.state || v.State != GateInsufficient && v.Measured != tt.measured {
			t.Errorf("%s: %s %q (%s), want %s %q", tt.expr, v.State, v.Measured, v.Note, tt.state, tt.measured)
		}
	}
}

// Lengths read a length measure's quantiles back in tokens.
func TestLengthsOf(t *testing.T) {
	h := stats.NewHist()
	for n := int64(1); n <= 1000; n++ {
		h.Record(stats.LengthTiming(stats.OutputLength, n).D)
	}
	l := LengthsOf(QuantilesOf(h))
	if l != (Lengths{Count: 1000, P50: 500, P90: 900, P99: 990, Max: 1000, Mean: 501}) {
		t.Errorf("lengths %+v", l)
	}
}

// TestRateGatesOfAnEmptyWindow (issue 18): a rate over a window of no
// seconds is no figure: its gates are insufficient, and say why.
func TestRateGatesOfAnEmptyWindow(t *testing.T) {
	sums := goodputFixture()
	sums[0].Seconds = 0
	for _, expr := range []string{`goodput_rate >= 25/s`, `output_tokens_rate >= 1/s`, `rate >= 1/s`} {
		g, err := slo.ParseGate(expr)
		if err != nil {
			t.Fatal(err)
		}
		vs, err := EvaluateGates([]slo.Gate{g}, sums, nil)
		if err != nil || len(vs) != 1 || vs[0].State != GateInsufficient || !strings.Contains(vs[0].Note, "the window is empty") {
			t.Errorf("%s: %+v, %v", expr, vs, err)
		}
	}
}

// TestGoodputOfAnEmptyWindow: over a window of no seconds the share of
// good requests stands, and the rate is 0, not infinite.
func TestGoodputOfAnEmptyWindow(t *testing.T) {
	sums := goodputFixture()
	sums[0].Seconds = 0
	if g, ok := sums[0].Goodput(); !ok || g != (Goodput{Good: 290, Judged: 300, Share: 290.0 / 300, Rate: 0}) {
		t.Errorf("goodput over no seconds %+v %v", g, ok)
	}
}
