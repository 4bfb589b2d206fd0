package report

import (
	"strings"
	"testing"

	"github.com/perflab/perflab/internal/analysis"
	"github.com/perflab/perflab/internal/view"
)

// fitOf fits ys against xs, failing the test when it can't.
func fitOf(t *testing.T, xs, ys []float64) *analysis.Fit {
	t.Helper()
	f, err := analysis.FitLine(xs, ys)
	if err != nil {
		t.Fatal(err)
	}
	return &f
}

// TestScalingFiguresReadable: a slope of a fourth of a millicore per KiB/s
// shows its three digits, not "<0.001 cores", and a fit whose line starts
// below zero shows 0 and says why, in Markdown and on the terminal.
func TestScalingFiguresReadable(t *testing.T) {
	const kib = 1024.0
	loads := []float64{200 * kib, 400 * kib, 800 * kib}
	// CPU 0.05 + 0.000256 cores per KiB/s; memory −50 MiB + 2 KiB per KiB/s.
	cpu := fitOf(t, loads, []float64{0.05 + 0.000256*200, 0.05 + 0.000256*400, 0.05 + 0.000256*800})
	mem := fitOf(t, loads, []float64{-50*mib + 400*kib, -50*mib + 800*kib, -50*mib + 1600*kib})
	in := &analysis.Insights{Load: analysis.LoadBytes, LoadWorkload: "push", Loads: loads, Scaling: []analysis.Scaling{
		{Component: "app", Metric: analysis.MetricCPU, Fit: cpu},
		{Component: "app", Metric: analysis.MetricMemory, Fit: mem},
	}}
	d := &doc{}
	scalingSection(d, in, 2)
	var md strings.Builder
	d.markdown(&md)
	var term strings.Builder
	if err := terminalScaling(&term, in); err != nil {
		t.Fatal(err)
	}
	for name, out := range map[string]string{"markdown": md.String(), "terminal": term.String()} {
		for _, want := range []string{"0.256 millicores", "50 millicores", belowZero, "2 KiB"} {
			if !strings.Contains(out, want) {
				t.Errorf("%s lacks %q:\n%s", name, want, out)
			}
		}
		if strings.Contains(out, "<0.001") || strings.Contains(out, "-50") {
			t.Errorf("%s shows an unreadable or negative figure:\n%s", name, out)
		}
	}
}

// TestPredictionBelowZero: a prediction whose value or interval reaches
// below zero shows 0 and says why, never a negative CPU or memory figure.
func TestPredictionBelowZero(t *testing.T) {
	// CPU against 100…400/s with scatter: the line starts at −0.05 cores,
	// and its interval at 150/s reaches below zero.
	f := fitOf(t, []float64{100, 200, 300, 400}, []float64{0.05, 0.3, 0.2, 0.45})
	sc := analysis.Scaling{Component: "app", Metric: analysis.MetricCPU, Fit: f}
	c := &view.Cell{Name: "default", Insights: &analysis.Insights{Options: analysis.DefaultSizingOptions(), LoadWorkload: "get",
		Loads: []float64{100, 200, 300, 400}}}
	for _, load := range []float64{0.001, 150} {
		p := analysis.ScalingPrediction{Scaling: sc, Prediction: f.Predict(load)}
		if !(p.Prediction.Low < 0) {
			t.Fatalf("at %v/s the interval starts at %v: the test needs it below zero", load, p.Prediction.Low)
		}
		var b strings.Builder
		if err := PredictionMarkdown(&b, c, load, []analysis.ScalingPrediction{p}, ""); err != nil {
			t.Fatal(err)
		}
		row := tableRow(b.String(), "| app | CPU |")
		if !strings.Contains(row, "| "+belowZero+" – ") || strings.Contains(row, "-0") {
			t.Errorf("at %v/s: %s", load, row)
		}
		if load < 1 && !strings.Contains(row, "| app | CPU | "+belowZero+" |") {
			t.Errorf("at %v/s the predicted value is below zero but shown as %s", load, row)
		}
	}
}

// tableRow is the line of out that starts with prefix.
func tableRow(out, prefix string) string {
	for _, l := range strings.Split(out, "\n") {
		if strings.HasPrefix(l, prefix) {
			return l
		}
	}
	return ""
}
