package report

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/perflab/perflab/internal/analysis"
)

// A verified size and its limit curve show in every report: the Verified
// section and the curve's table in report.md, the curve's chart in
// report.html only, the verdict and the curve in summary.json, and the
// verdict as an annotation in the size's YAML.
func TestVerifiedAndCurveRender(t *testing.T) {
	r := sizesRun()
	in := r.Cells[0].Insights
	ts := &in.Sizes[0]
	ts.Verified = &analysis.Verified{Size: ts.Size, Load: ts.Load, Holds: false,
		Reasons:    []string{"component ingester was OOM-killed (1 kills) under its 2Gi memory limit"},
		Latency:    []analysis.VerifiedLatency{{Quantile: 0.5, ConfinedMs: 10, Ratio: 1}, {Quantile: 0.99, ConfinedMs: 41, Ratio: 1.05}},
		Components: []analysis.Confined{{Component: "ingester", Periods: 600, Throttled: 18, Stalled: 400 * time.Millisecond, MemoryPeak: 2 << 30, OOMKills: 1}}}
	ts.Curve = &analysis.LimitCurve{Size: ts.Size, Load: ts.Load, SizeCPU: 1, Smallest: 0.75, Points: []analysis.LimitPoint{
		{Scale: 1, CPU: 1, Holds: true, Achieved: 100, P99Ms: 40}, {Scale: 0.5, CPU: 0.5, Achieved: 70, P99Ms: 900, Throttled: 0.8},
		{Scale: 0.75, CPU: 0.75, Holds: true, Achieved: 100, P99Ms: 60, Throttled: 0.2}}}
	var md, page, js bytes.Buffer
	for _, w := range []struct {
		f   func(*bytes.Buffer) error
		out *bytes.Buffer
	}{{func(b *bytes.Buffer) error { return Markdown(b, r) }, &md}, {func(b *bytes.Buffer) error { return HTML(b, r) }, &page},
		{func(b *bytes.Buffer) error { return JSON(b, r) }, &js}} {
		if err := w.f(w.out); err != nil {
			t.Fatal(err)
		}
	}
	for _, want := range []string{"## Verified", "**does not hold**", "OOM-killed", "### Limit-response curve of size `" + ts.Size + "`",
		"the smallest CPU that holds is 0.75 cores (0.75 × the size's)", "| 0.5 | does not hold | 70/s | 900 ms | 80 % |"} {
		if !strings.Contains(md.String(), want) {
			t.Errorf("report.md lacks %q", want)
		}
	}
	if strings.Contains(md.String(), "<svg") || !strings.Contains(page.String(), `aria-label="p99 against the CPU limit — size `+ts.Size) {
		t.Errorf("the curve's chart belongs in report.html alone")
	}
	var s struct {
		Cells []struct {
			Insights struct {
				Sizes []struct {
					Verified *struct{ Holds bool } `json:"verified"`
					Curve    *struct {
						Points []struct{} `json:"points"`
					} `json:"limit_curve"`
					YAML string `json:"yaml"`
				} `json:"sizes"`
			} `json:"insights"`
		} `json:"cells"`
	}
	if err := json.Unmarshal(js.Bytes(), &s); err != nil {
		t.Fatal(err)
	}
	got := s.Cells[0].Insights.Sizes[0]
	if got.Verified == nil || got.Verified.Holds || got.Curve == nil || len(got.Curve.Points) != 3 ||
		!strings.Contains(got.YAML, "perflab.io/verified: 'does not hold at") {
		t.Errorf("summary.json: %+v", got)
	}
}
