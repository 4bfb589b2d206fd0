package cli

import (
	"testing"

	"github.com/perflab/perflab/internal/analysis"
	"github.com/perflab/perflab/internal/results"
)

// TestGatesOnCheckFigures: lost_<check> is expected − found of a
// workload's read-back check, judged on each workload that has the check.
func TestGatesOnCheckFigures(t *testing.T) {
	sums := []*analysis.Summary{
		{Workload: analysis.Workload{Name: "c/p/push", Short: "push", Profile: "p"}},
		{Workload: analysis.Workload{Name: "c/p/query", Short: "query", Profile: "p"}},
	}
	figures := checkFigures(map[string][]results.Check{
		"c/p/push": {{Name: "samples", Expected: 1000, Found: 997}, {Name: "series", Expected: 10, Found: 10}},
	})
	specs := []gateSpec{{Expr: "lost_samples == 0", Profile: "p"}, {Expr: "lost_series == 0"}, {Expr: "lost_spans < 1", Profile: "p", Workload: "query"}}
	got := judgeGates(specs, sums, figures)
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

func TestShellJoin(t *testing.T) {
	got := shellJoin([]string{"perflab", "run", "plan.yaml", "--slo", "p99 < 200ms", "-H", "Authorization: Bearer ${T}", "", "it's"})
	want := `perflab run plan.yaml --slo 'p99 < 200ms' -H 'Authorization: Bearer ${T}' '' 'it'\''s'`
	if got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
}
