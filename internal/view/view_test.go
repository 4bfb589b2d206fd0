package view

import (
	"testing"

	"github.com/perflab/perflab/internal/analysis"
	"github.com/perflab/perflab/internal/driver"
	"github.com/perflab/perflab/internal/slo"
)

// TestChecksIn: LostChecks and ChecksIn name each workload with checks in
// the state, in the order of the cells and phases; a workload whose driver
// told nothing has none.
func TestChecksIn(t *testing.T) {
	write := &analysis.Summary{Workload: analysis.Workload{Name: "a/write"}}
	read := &analysis.Summary{Workload: analysis.Workload{Name: "a/read"}}
	notes := &DriverNotes{Checks: []driver.Check{
		{Name: "series", Expected: 10, Found: 10, State: driver.CheckLate, Late: 4},
		{Name: "exemplars", Expected: 10, State: driver.CheckUnverified, Reason: "HTTP 503"},
		{Name: "samples", Expected: 100, Found: 90, State: driver.CheckLost},
	}}
	r := &Run{Cells: []*Cell{{Phases: []*Phase{{Profile: "a", Workloads: []*analysis.Summary{write, read},
		Drivers: map[string]*DriverNotes{"a/write": notes}}}}}}
	if names, un := r.ChecksIn(driver.CheckUnverified); len(names) != 1 || len(un[0]) != 1 || un[0][0].Name != "exemplars" {
		t.Errorf("ChecksIn(unverified) = %v, %+v", names, un)
	}
	names, lost := r.LostChecks()
	if len(names) != 1 || names[0] != "a/write" || len(lost[0]) != 1 || lost[0][0].Shortfall() != 10 {
		t.Errorf("LostChecks() = %v, %+v", names, lost)
	}
	if names, ok := r.ChecksIn(driver.CheckOK); names != nil || ok != nil {
		t.Errorf("ChecksIn(ok) = %v, %+v", names, ok)
	}
}

// TestAllCells: a Run built without cells is one implicit cell with an
// implicit phase per workload.
func TestAllCells(t *testing.T) {
	a, b := &analysis.Summary{Workload: analysis.Workload{Name: "a"}}, &analysis.Summary{Workload: analysis.Workload{Name: "b"}}
	cs := (&Run{Workloads: []*analysis.Summary{a, b}}).AllCells()
	if len(cs) != 1 || !cs[0].Implicit || len(cs[0].Phases) != 2 || !cs[0].Phases[1].Implicit || cs[0].Phases[1].Workloads[0] != b {
		t.Errorf("AllCells() = %+v", cs)
	}
}

func TestSLOMet(t *testing.T) {
	gate := func(s analysis.GateState) Gate { return Gate{Verdict: analysis.Verdict{State: s}} }
	gates := []Gate{gate(analysis.GatePass), gate(analysis.GatePass), gate(analysis.GateInsufficient)}
	if SLOMet(gates) || !SLOMet(gates[:2]) || !SLOMet(nil) {
		t.Error("SLOMet")
	}
}

// TestTooFewToJudge: a step with insufficient data is too few to judge
// only when nothing else explains it: the generator at its limit, or a
// rate it did not achieve.
func TestTooFewToJudge(t *testing.T) {
	insufficient := Gate{Verdict: analysis.Verdict{Gate: slo.Gate{Expr: "p99 < 1s"}, State: analysis.GateInsufficient}}
	for _, tt := range []struct {
		name string
		step SearchStep
		few  bool
	}{
		{"only too few requests", SearchStep{Gates: []Gate{insufficient}, Why: "p99 < 1s: insufficient data"}, true},
		{"client-bound", SearchStep{Gates: []Gate{insufficient}, ClientBound: true, Why: "p99 < 1s: insufficient data; client-bound: cpu"}, false},
		{"rate not achieved", SearchStep{Rate: 100, Achieved: 50, Gates: []Gate{insufficient}, Why: "p99 < 1s: insufficient data; achieved 50.0/s, under 95 % of the rate"}, false},
		{"rate achieved to 95 %", SearchStep{Rate: 100, Achieved: 95, Gates: []Gate{insufficient}, Why: "p99 < 1s: insufficient data"}, true},
	} {
		if got := tt.step.TooFewToJudge(); got != tt.few {
			t.Errorf("%s: too few to judge %v, want %v", tt.name, got, tt.few)
		}
	}
}
