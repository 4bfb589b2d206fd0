package readback

import (
	"testing"

	"github.com/perflab/perflab/internal/analysis"
	"github.com/perflab/perflab/internal/driver"
)

// TestGatesOnCheckFigures: lost_<check> is expected − found of a
// workload's read-back check, judged on each workload that has the check.
func TestGatesOnCheckFigures(t *testing.T) {
	sums := []*analysis.Summary{
		{Workload: analysis.Workload{Name: "c/p/push", Short: "push", Profile: "p"}},
		{Workload: analysis.Workload{Name: "c/p/query", Short: "query", Profile: "p"}},
	}
	figures := CheckFigures(map[string][]driver.Check{
		"c/p/push": {{Name: "samples", Expected: 1000, Found: 997}, {Name: "series", Expected: 10, Found: 10}},
	})
	specs := []GateSpec{{Expr: "lost_samples == 0", Profile: "p"}, {Expr: "lost_series == 0"}, {Expr: "lost_spans < 1", Profile: "p", Workload: "query"}}
	got := JudgeGates(specs, sums, figures)
	if len(got) != 3 {
		t.Fatalf("%d verdicts: %+v", len(got), got)
	}
	for i, want := range []struct {
		workload string
		state    analysis.GateState
		measured string
	}{{"c/p/push", analysis.GateFail, "3"}, {"c/p/push", analysis.GatePass, "0"}, {"", analysis.GateInsufficient, ""}} {
		g := got[i]
		if g.Workload != want.workload || g.State != want.state || g.Measured != want.measured {
			t.Errorf("%s: workload %q, %v, measured %q; want %q, %v, %q", g.Expr, g.Workload, g.State, g.Measured, want.workload, want.state, want.measured)
		}
	}
	if got[2].Source != "plan: workload p/query" || got[1].Source != "command line" {
		t.Errorf("sources %q, %q", got[2].Source, got[1].Source)
	}
}

// TestGatesOnUnverifiedChecks: a gate on the loss of a check that got no
// answer has insufficient data, saying why, and is no pass; a late check
// that found everything passes lost_<check> == 0.
func TestGatesOnUnverifiedChecks(t *testing.T) {
	sums := []*analysis.Summary{{Workload: analysis.Workload{Name: "p/ingest", Short: "ingest", Profile: "p"}}}
	figures := CheckFigures(map[string][]driver.Check{"p/ingest": {
		{Name: "traces", Expected: 100, Found: 0, State: driver.CheckUnverified, Reason: "HTTP 503 Service Unavailable"},
		{Name: "spans", Expected: 900, Found: 900, State: driver.CheckLate, Late: 300},
	}})
	got := JudgeGates([]GateSpec{{Expr: "lost_traces == 0"}, {Expr: "lost_spans == 0"}}, sums, figures)
	if len(got) != 2 {
		t.Fatalf("%d verdicts: %+v", len(got), got)
	}
	if g := got[0]; g.State != analysis.GateInsufficient || g.Pass || g.Measured != "" ||
		g.Note != "the read-back of traces is unverified: HTTP 503 Service Unavailable" {
		t.Errorf("lost_traces on an unverified check: %v, measured %q, note %q", g.State, g.Measured, g.Note)
	}
	if g := got[1]; g.State != analysis.GatePass || g.Measured != "0" {
		t.Errorf("lost_spans on a late check: %v, measured %q", g.State, g.Measured)
	}
}

// TestLostFigureOfACheckThatFoundMore: a read-back that found more than
// was acknowledged (a request that timed out was stored all the same)
// lost nothing: lost_<check> is 0, as the report's shortfall is, and
// "lost_samples == 0" passes; one that found less still fails it.
func TestLostFigureOfACheckThatFoundMore(t *testing.T) {
	sums := []*analysis.Summary{{Workload: analysis.Workload{Name: "p/push", Short: "push", Profile: "p"}}}
	figures := CheckFigures(map[string][]driver.Check{"p/push": {
		{Name: "samples", Expected: 1000, Found: 1025, State: driver.CheckOK},
		{Name: "series", Expected: 10, Found: 9, State: driver.CheckLost},
	}})
	got := JudgeGates([]GateSpec{{Expr: "lost_samples == 0"}, {Expr: "lost_series == 0"}}, sums, figures)
	if len(got) != 2 {
		t.Fatalf("%d verdicts: %+v", len(got), got)
	}
	if g := got[0]; g.State != analysis.GatePass || g.Measured != "0" {
		t.Errorf("lost_samples with 25 more found than acknowledged: %v, measured %q", g.State, g.Measured)
	}
	if g := got[1]; g.State != analysis.GateFail || g.Measured != "1" {
		t.Errorf("lost_series with 1 of 10 missing: %v, measured %q", g.State, g.Measured)
	}
}
