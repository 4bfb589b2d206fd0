package report

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/perflab/perflab/internal/analysis"
	"github.com/perflab/perflab/internal/observe"
)

// TestNamedMetricsReported: the metrics a component's metric_names lists
// are in report.md, report.html and summary.json, per component with P99,
// Max and Avg over the window; a counter as its rate per second, never its
// cumulative value.
func TestNamedMetricsReported(t *testing.T) {
	r := singleRun()
	p := r.Cells[0].Phases[0] // "low": 15 samples in its window
	end := p.Window.End
	series := map[string]map[string][]analysis.Point{"target": {
		// 1,000,000 requests before the window, then 250/s: a cumulative value in the millions.
		observe.CounterPrefix + "http_requests_total": ticks(end, 16, func(i int) float64 { return 1e6 + 250*float64(i) }),
		observe.MetricPrefix + "go_goroutines":        ticks(end, 16, func(i int) float64 { return float64(10 + i) }),
		observe.MetricPrefix + "cache_bytes":          ticks(end, 16, constant(3*mib)),
	}}
	p.Resources = analysis.SummarizeResources(analysis.ResourceInput{Window: p.Window, Components: r.Cells[0].Components, Series: series})
	out := render(t, r)
	for _, want := range []string{
		"#### Listed metrics\n\nThe metrics each component's `metric_names` lists, summed over their series; a counter as its rate per second.\n",
		"| Component | Metric | P99 | Max | Avg |",
		"| target | `cache_bytes` | 3 MiB | 3 MiB | 3 MiB |",
		"| target | `go_goroutines` | 26 | 26 | 19 |", // 12…26 over the 15 samples of the window
		"| target | `http_requests_total` (rate) | 250/s | 250/s | 250/s |",
	} {
		if !strings.Contains(out.md, want) {
			t.Errorf("report.md lacks %q", want)
		}
	}
	if strings.Contains(out.md, "1M") {
		t.Errorf("report.md shows the counter's cumulative value:\n%s", out.md)
	}
	if !strings.Contains(out.html, `<tr><td>target</td><td><code>http_requests_total</code> (rate)</td><td class="n">250/s</td>`) {
		t.Error("report.html lacks the counter's rate")
	}
	var got struct {
		Cells []struct {
			Phases []struct {
				Resources *struct {
					Components []struct {
						Name  string `json:"name"`
						Named map[string]struct {
							Counter bool    `json:"counter"`
							Samples int     `json:"samples"`
							Max     float64 `json:"max"`
						} `json:"named_metrics"`
					} `json:"components"`
				} `json:"resources"`
			} `json:"phases"`
		} `json:"cells"`
	}
	if err := json.Unmarshal([]byte(out.js), &got); err != nil {
		t.Fatal(err)
	}
	c := got.Cells[0].Phases[0].Resources.Components[0]
	if n := c.Named["http_requests_total"]; c.Name != "target" || !n.Counter || n.Max != 250 || n.Samples != 15 || c.Named["go_goroutines"].Counter {
		t.Errorf("summary.json %+v", c)
	}
}
