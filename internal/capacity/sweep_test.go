package capacity

import (
	"testing"

	"github.com/perflab/perflab/internal/analysis"
	"github.com/perflab/perflab/internal/readback"
	"github.com/perflab/perflab/internal/results"
	"github.com/perflab/perflab/internal/view"
)

// TestSweepInsufficientDataFailsNothing: a sweep whose steps had too few
// requests to judge a p99 gate (and none failed it) completes with exit
// 0; its lowest failed rate leaves them out; one gate that failed, with no
// step passing, fails the run.
func TestSweepInsufficientDataFailsNothing(t *testing.T) {
	short := view.Gate{Verdict: analysis.Verdict{Expr: "p99 < 2s", State: analysis.GateInsufficient, Note: "p99 needs at least 100"}}
	failed := view.Gate{Verdict: analysis.Verdict{Expr: "p99 < 2s", State: analysis.GateFail, Measured: "2.5s"}}
	step := func(kind string, rate float64, g view.Gate, why string) view.SearchStep {
		st := view.SearchStep{Kind: kind, Rate: rate, Achieved: rate, Gates: []view.Gate{g}, Why: why}
		st.Insufficient = st.TooFewToJudge()
		return st
	}
	oversaturated := func(rate, achieved float64, g view.Gate, why string) view.SearchStep {
		st := view.SearchStep{Kind: analysis.SweepConstant, Rate: rate, Achieved: achieved, Gates: []view.Gate{g}, Why: why}
		st.Insufficient = st.TooFewToJudge()
		return st
	}
	for _, c := range []struct {
		name     string
		steps    []view.SearchStep
		fail     bool
		wantFail float64 // the lowest failed rate
	}{
		{"every step too short", []view.SearchStep{
			step(analysis.SweepSynchronous, 0, short, "p99 < 2s: insufficient data"),
			step(analysis.SweepThroughput, 0, short, "p99 < 2s: insufficient data"),
			step(analysis.SweepConstant, 20, short, "p99 < 2s: insufficient data"),
			oversaturated(30, 25, short, "p99 < 2s: insufficient data; over-saturated: achieved 25.0/s"),
		}, false, 30},
		{"a gate failed", []view.SearchStep{
			step(analysis.SweepSynchronous, 0, short, "p99 < 2s: insufficient data"),
			step(analysis.SweepConstant, 20, short, "p99 < 2s: insufficient data"),
			step(analysis.SweepConstant, 30, failed, "p99 < 2s failed: 2.5s"),
		}, true, 30},
	} {
		t.Run(c.name, func(t *testing.T) {
			s := &Search{cfg: SearchConfig{Gates: []readback.GateSpec{{Expr: "p99 < 2s"}}}, sw: &analysis.Sweep{Size: 4, Sync: 5}, steps: c.steps}
			res := &view.Search{Steps: c.steps}
			s.sweepResult(res)
			if res.Failed != c.wantFail || res.Sustained != 0 {
				t.Errorf("failed rate %v, sustained %v: want %v and 0", res.Failed, res.Sustained, c.wantFail)
			}
			status, err := s.judgeSweep(res, results.Status{State: results.StateCompleted}, nil)
			if got := err != nil || status.ExitCode != 0; got != c.fail {
				t.Errorf("failed %v (%v, exit %d), want %v", got, err, status.ExitCode, c.fail)
			}
		})
	}
	if v := step(analysis.SweepConstant, 20, short, "p99 < 2s: insufficient data").Verdict(); v != "insufficient data" {
		t.Errorf("verdict %q, want insufficient data", v)
	}
}
