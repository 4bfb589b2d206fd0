package report

import (
	"bytes"
	"encoding/json"
	"math"
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
	cpu := &analysis.LimitCurve{Size: ts.Size, Load: ts.Load, Resource: analysis.LimitCPU, SizeCPU: 1, Target: 100, Smallest: 0.75, Points: []analysis.LimitPoint{
		{Scale: 1, CPU: 1, Holds: true, Achieved: 100, P99Ms: 40, CPUUsed: 0.6}, {Scale: 0.5, CPU: 0.5, Achieved: 70, P99Ms: 900, Throttled: 0.8, CPUUsed: 0.45},
		{Scale: 0.75, CPU: 0.75, Holds: true, Achieved: 100, P99Ms: 60, Throttled: 0.2, CPUUsed: 0.62}}}
	cpu.Knee = cpu.FitKnee()
	mem := &analysis.LimitCurve{Size: ts.Size, Load: ts.Load, Resource: analysis.LimitMemory, SizeMemory: 256 << 20, Target: 100, Smallest: 0.75, Points: []analysis.LimitPoint{
		{Scale: 1, Memory: 256 << 20, Holds: true, Achieved: 100, P99Ms: 40, Peak: 150 << 20, GCPerMin: 10},
		{Scale: 0.5, Memory: 128 << 20, Achieved: 0, OOMKills: 1, Peak: 128 << 20},
		{Scale: 0.75, Memory: 192 << 20, Holds: true, Achieved: 100, P99Ms: 45, Peak: 170 << 20, GCPerMin: 30}}}
	mem.Knee = mem.FitKnee()
	ts.Curves = []*analysis.LimitCurve{cpu, mem}
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
	for _, want := range []string{"## Verified", "**does not hold**", "OOM-killed", "### Limit-response curve of size `" + ts.Size + "`: cpu",
		"the smallest cpu that holds is 0.75 cores (0.75 × the size's)", "| 0.5 cores | does not hold | 70/s | 900 ms | 80 % | 0.45 |",
		// 0.6 cores over 100/s, 0.45 over 70/s, 0.62 over 100/s: a median 6.2 ms of CPU per request, 0.62 cores at 100/s
		"The knee: 0.6 cores, where the CPU limit meets the load's need, 6ms of CPU per request at 100/s (fitted on 2 steps); the bisection put it between 0.5 cores, which did not hold, and 0.75 cores, which held.",
		"### Limit-response curve of size `" + ts.Size + "`: memory", "| 128Mi | does not hold | 0/s | – |",
		"The knee: between 128Mi, which did not hold, and 192Mi, which held; the least peak of a step that held: 150Mi."} {
		if !strings.Contains(md.String(), want) {
			t.Errorf("report.md lacks %q", want)
		}
	}
	if strings.Contains(md.String(), "<svg") || !strings.Contains(page.String(), `aria-label="p99 against the cpu limit — size `+ts.Size) ||
		!strings.Contains(page.String(), `aria-label="GC against the memory limit — size `+ts.Size) {
		t.Errorf("the curve's chart belongs in report.html alone")
	}
	var s struct {
		Cells []struct {
			Insights struct {
				Sizes []struct {
					Verified *struct{ Holds bool } `json:"verified"`
					Curves   []struct {
						Resource string     `json:"resource"`
						Points   []struct{} `json:"points"`
						Knee     *struct {
							Fitted float64 `json:"fitted"`
						} `json:"knee"`
					} `json:"limit_curves"`
					YAML string `json:"yaml"`
				} `json:"sizes"`
			} `json:"insights"`
		} `json:"cells"`
	}
	if err := json.Unmarshal(js.Bytes(), &s); err != nil {
		t.Fatal(err)
	}
	got := s.Cells[0].Insights.Sizes[0]
	if got.Verified == nil || got.Verified.Holds || len(got.Curves) != 2 || len(got.Curves[0].Points) != 3 || got.Curves[1].Resource != "memory" ||
		got.Curves[0].Knee == nil || math.Abs(got.Curves[0].Knee.Fitted-0.6) > 1e-9 ||
		!strings.Contains(got.YAML, "perflab.io/verified: 'does not hold at") {
		t.Errorf("summary.json: %+v", got)
	}
}
