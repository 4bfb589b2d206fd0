package cli

import (
	"testing"

	"github.com/perflab/perflab/internal/analysis"
)

// A step's CPU used sums its components'; one that was not sampled makes
// the sum unknown ("–"), not a smaller figure that would pull the fitted
// knee down; a step whose CPU is unknown is not fitted on.
func TestLimitPointCPUUsedOfEveryComponent(t *testing.T) {
	c := analysis.LimitCurve{Resource: analysis.LimitCPU, SizeCPU: 1, Target: 100}
	v := func(cpu ...float64) analysis.Verified {
		out := analysis.Verified{Holds: true, Achieved: 100}
		for _, x := range cpu {
			out.Components = append(out.Components, analysis.Confined{CPUUsed: x})
		}
		return out
	}
	if p := pointOf(limitScale{analysis.LimitCPU, 0.5}, c, v(0.2, 0.3)); p.CPUUsed != 0.5 || p.CPUUsedText() != "0.5" || p.CPU != 0.5 {
		t.Errorf("two sampled: %+v", p)
	}
	unknown := pointOf(limitScale{analysis.LimitCPU, 0.5}, c, v(0.2, 0))
	if unknown.CPUUsed != -1 || unknown.CPUUsedText() != "–" {
		t.Errorf("one not sampled: %+v", unknown)
	}
	c.Points = []analysis.LimitPoint{unknown}
	if k := c.FitKnee(); k != nil && k.Fitted != 0 {
		t.Errorf("a knee fitted on an unknown CPU: %+v", k)
	}
}
