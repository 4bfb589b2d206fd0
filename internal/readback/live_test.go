package readback

import (
	"testing"

	"github.com/perflab/perflab/internal/analysis"
	"github.com/perflab/perflab/internal/view"
)

// TestFinalIsNeitherKilledNorInProgress (issue 16, item 15): read back by
// the process that made it, at its end, a run whose workloads did not end
// (their workers failed) is not "in progress" and was not "killed": their
// load failed.
func TestFinalIsNeitherKilledNorInProgress(t *testing.T) {
	s := &analysis.Summary{Workload: analysis.Workload{Name: "p/get"}, Window: analysis.Window{Rule: killedRule}}
	p := &view.Phase{Profile: "p", State: "failed", Window: analysis.Window{Rule: phaseKilledRule}, Workloads: []*analysis.Summary{s}}
	r := &view.Run{State: "running", Workloads: []*analysis.Summary{s}, Cells: []*view.Cell{{Phases: []*view.Phase{p}}}}
	markInProgress(r)
	Final(r)
	if r.InProgress || r.Cells[0].InProgress || p.InProgress {
		t.Error("still in progress")
	}
	if s.Window.Rule != endedRule || p.Window.Rule != phaseEndedRule {
		t.Errorf("rules %q, %q", s.Window.Rule, p.Window.Rule)
	}
}
