package report

import (
	"bytes"
	"encoding/json"
	"regexp"
	"strings"
	"testing"

	"github.com/perflab/perflab/internal/analysis"
	"github.com/perflab/perflab/internal/view"
)

// TestGoldenSizes renders the sizing fixture: the cross-profile tables,
// suggested sizes with their YAML, scaling fits and observations.
func TestGoldenSizes(t *testing.T) {
	r := sizesRun()
	md, _, _ := goldenRun(t, "sizes", r)
	// The sections come in the order of the seed reports.
	last := -1
	for _, h := range []string{"## Test configuration", "## Resource consumption summary", "## Resource usage by component (P99)",
		"## Throughput achieved", "## Suggested sizes", "## Scaling", "## Observations"} {
		i := strings.Index(md.String(), "\n"+h+"\n")
		if i < last {
			t.Errorf("%q is missing or out of order", h)
		}
		last = i
	}
}

// vpaRun is one profile "s" of 100 samples sized with the vpa strategy:
// app's CPU is 0.01 i cores (P50 0.5, P90 0.9, P95 0.95) and its memory
// 100 MiB for i ≤ 50, 200 MiB to 90, 400 MiB above (P50 100, P90 200,
// P95 400 MiB). Each × 1.15, rounded up: CPU lower 0.575 → 580m, target
// 1.035 → 1050m, upper 1.0925 → 1100m, limit 1050 × 1.5 → 1600m; memory
// lower 115 → 128Mi, target 230 → 256Mi, upper 460 → 512Mi, limit 384Mi.
func vpaRun(t *testing.T) *view.Run {
	t.Helper()
	start := t0
	sum := workload("s/get", "get", "s", 0, start, 101)
	win := sum.Window
	comps := []analysis.Component{{Name: "app", Kind: "run"}}
	mem := func(i int) float64 {
		switch {
		case i <= 50:
			return 100 * mib
		case i <= 90:
			return 200 * mib
		}
		return 400 * mib
	}
	series := map[string]map[string][]analysis.Point{"app": {
		"cpu_cores": ticks(win.End, 100, func(i int) float64 { return 0.01 * float64(i) }), "rss_bytes": ticks(win.End, 100, mem)}}
	in := analysis.ResourceInput{Window: win, Components: comps, Series: series}
	phase := &view.Phase{Profile: "s", State: "completed", Start: start, LoadEnd: win.End, Window: win,
		Workloads: []*analysis.Summary{sum}, Resources: analysis.SummarizeResources(in)}
	o := analysis.DefaultInsightOptions()
	var err error
	if o.Strategy, err = analysis.ParseStrategy("vpa"); err != nil {
		t.Fatal(err)
	}
	ins, err := analysis.CellInsights([]analysis.PhaseData{{Profile: "s", State: "completed", Resources: phase.Resources,
		Summaries: phase.Workloads, Sizing: analysis.SizingInputs(in, 0)}}, o)
	if err != nil {
		t.Fatal(err)
	}
	cell := &view.Cell{Name: "default", State: "completed", Components: comps, Phases: []*view.Phase{phase}, Insights: ins}
	return &view.Run{Name: "vpa", Started: t0, State: "completed", Workloads: []*analysis.Summary{sum}, Cells: []*view.Cell{cell}}
}

// TestVPABounds: the bounds the vpa strategy reports are in every format:
// Markdown (and so perflab size), HTML, summary.json, the terminal and
// the size's file; the p99 strategy has none.
func TestVPABounds(t *testing.T) {
	r := vpaRun(t)
	var md, page, js, term, sizes bytes.Buffer
	for _, f := range []func() error{func() error { return Markdown(&md, r) }, func() error { return HTML(&page, r) },
		func() error { return JSON(&js, r) }, func() error { return Terminal(&term, r) }, func() error { return SizesMarkdown(&sizes, r) }} {
		if err := f(); err != nil {
			t.Fatal(err)
		}
	}
	row := "| s | app | 128Mi | 256Mi | 512Mi | 580m | 1.05 | 1.1 |"
	for name, out := range map[string]string{"report.md": md.String(), "perflab size": sizes.String()} {
		for _, want := range []string{"Strategy `vpa`", "| Size | Component | Memory lower bound | Memory target | Memory upper bound |", row,
			"| s | get 100/s | app | 256Mi | 384Mi | 1.05 | 1.6 |"} {
			if !strings.Contains(out, want) {
				t.Errorf("%s lacks %q:\n%s", name, want, out)
			}
		}
	}
	if !strings.Contains(page.String(), `<tr><td>s</td><td>app</td><td class="n">128Mi</td><td class="n">256Mi</td><td class="n">512Mi</td><td class="n">580m</td><td class="n">1.05</td><td class="n">1.1</td></tr>`) {
		t.Errorf("the page lacks the bounds")
	}
	if !strings.Contains(term.String(), "vpa bounds (lower P50 × 1.15, upper P95 × 1.15; reported, not applied):") ||
		!regexp.MustCompile(`(?m)^\s+s\s+app\s+128Mi\s+512Mi\s+580m\s+1.1\s*$`).MatchString(term.String()) {
		t.Errorf("terminal:\n%s", term.String())
	}
	var out struct {
		Cells []struct {
			Insights struct {
				Sizes []struct {
					Components []map[string]any `json:"components"`
				} `json:"sizes"`
			} `json:"insights"`
		} `json:"cells"`
	}
	if err := json.Unmarshal(js.Bytes(), &out); err != nil {
		t.Fatal(err)
	}
	c := out.Cells[0].Insights.Sizes[0].Components[0]
	if c["cpu_lower_bound"] != "580m" || c["cpu_upper_bound_cores"] != 1.1 || c["memory_lower_bound"] != "128Mi" ||
		c["memory_upper_bound_bytes"] != float64(512*mib) {
		t.Errorf("summary.json size row %v", c)
	}
	files, err := SizeFiles(r)
	if err != nil || len(files) != 1 || !strings.Contains(string(files[0].Data), "# vpa bounds of app: memory 128Mi to 512Mi, cpu 580m to 1.1 (reported, not applied)\n") {
		t.Errorf("size file: %v\n%s", err, files[0].Data)
	}
	// The p99 strategy has no bounds anywhere.
	md.Reset()
	js.Reset()
	if err := Markdown(&md, sizesRun()); err != nil {
		t.Fatal(err)
	}
	if err := JSON(&js, sizesRun()); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(md.String(), "lower bound") || strings.Contains(js.String(), "lower_bound") {
		t.Error("the p99 strategy shows bounds")
	}
}
