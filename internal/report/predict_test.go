package report

import (
	"strings"
	"testing"

	"github.com/perflab/perflab/internal/analysis"
	"github.com/perflab/perflab/internal/view"
)

// TestPredictionExtrapolatedFit: a load inside the loads measured but
// outside the loads one component's fit covers keeps that fit's
// extrapolation warning; a load outside every load says so once.
func TestPredictionExtrapolatedFit(t *testing.T) {
	f, err := analysis.FitLine([]float64{100, 200}, []float64{100 * mib, 200 * mib})
	if err != nil {
		t.Fatal(err)
	}
	sc := analysis.Scaling{Component: "app", Metric: analysis.MetricMemory, Fit: &f}
	c := &view.Cell{Name: "default", Insights: &analysis.Insights{Options: analysis.DefaultSizingOptions(), LoadWorkload: "get",
		Loads: []float64{100, 200, 300}}}
	for _, tt := range []struct {
		load              float64
		header, fitWarned bool
	}{{250, false, true}, {400, true, false}} {
		p := analysis.ScalingPrediction{Scaling: sc, Prediction: f.Predict(tt.load)}
		var b strings.Builder
		if err := PredictionMarkdown(&b, c, tt.load, []analysis.ScalingPrediction{p}, ""); err != nil {
			t.Fatal(err)
		}
		out := b.String()
		if got := strings.Contains(out, "**Extrapolation:**"); got != tt.header {
			t.Errorf("at %v: the extrapolation note is there: %v, want %v:\n%s", tt.load, got, tt.header, out)
		}
		if got := strings.Contains(out, "app memory: load"); got != tt.fitWarned {
			t.Errorf("at %v: the fit's extrapolation warning is there: %v, want %v:\n%s", tt.load, got, tt.fitWarned, out)
		}
		if !strings.Contains(out, "app memory: no prediction interval") {
			t.Errorf("at %v: the fit's other warning is missing:\n%s", tt.load, out)
		}
	}
}
