package report

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/perflab/perflab/internal/analysis"
	"github.com/perflab/perflab/internal/observe"
	"github.com/perflab/perflab/internal/observe/observers"
)

// queueObserver is a new source as one would be added: the depth of a
// component's queue (a gauge), the jobs it has done (a counter) and the
// space its spool holds (a level). Nothing but its registration tells
// analysis and the renderers of it.
type queueObserver struct{}

func (queueObserver) Metrics() []observe.Metric {
	return []observe.Metric{
		{Name: "queue_depth", Kind: observe.Gauge, Unit: observe.Number, Title: "Queue depth", Column: "queue p99"},
		{Name: "queue_jobs", Kind: observe.Counter, Unit: observe.Number, Title: "Jobs done", Column: "jobs p99"},
		{Name: "queue_spool_bytes", Kind: observe.Level, Unit: observe.Bytes, Title: "Spool", Label: "Held"},
	}
}

func (queueObserver) Source(c observe.Component) observe.Source {
	if c.PID == 0 {
		return nil
	}
	return &queueSource{}
}

// queueSource's n-th sample is a depth of n, 10·n jobs done and n MiB held.
type queueSource struct{ n int }

func (s *queueSource) Name() string { return "queue" }

func (s *queueSource) Sample(context.Context, time.Time) ([]observe.Point, error) {
	s.n++
	n := float64(s.n)
	return []observe.Point{{Metric: "queue_depth", Value: n}, {Metric: "queue_jobs", Value: 10 * n},
		{Metric: "queue_spool_bytes", Value: n * mib}}, nil
}

// register adds o to observers.All for the test, as its line there would.
// Tests that do must not run in parallel.
func register(t *testing.T, o observe.Observer) {
	all := observers.All
	observers.All = append(slices.Clip(all), o)
	t.Cleanup(func() { observers.All = all })
}

// TestNewObserverRendered registers queueObserver, samples its source of
// the target of singleRun's first phase at the phase's 15 sample times, and
// finds its figures in the terminal table, Markdown, HTML and summary.json:
// depth 1…15 (P99 = Max = 15 of 15 samples, Avg 8), jobs at 10/s, and the
// spool at 15 MiB at the end.
func TestNewObserverRendered(t *testing.T) {
	register(t, queueObserver{})
	r := singleRun()
	p := r.Cells[0].Phases[0]
	comps := r.Cells[0].Components
	srcs := observers.Sources(observe.Component{Name: "target", PID: comps[0].PID})
	if len(srcs) != 1 {
		t.Fatalf("%d sources of the target, want 1 (the fake's)", len(srcs))
	}
	series := map[string][]analysis.Point{"cpu_cores": ticks(p.Window.End, 15, constant(0.5)),
		"rss_bytes": ticks(p.Window.End, 15, constant(100*mib))}
	for _, pt := range ticks(p.Window.End, 15, constant(0)) {
		points, err := srcs[0].Sample(context.Background(), pt.T)
		if err != nil {
			t.Fatal(err)
		}
		for _, x := range points {
			series[x.Metric] = append(series[x.Metric], analysis.Point{T: pt.T, V: x.Value})
		}
	}
	p.Resources = analysis.SummarizeResources(analysis.ResourceInput{Window: p.Window, Components: comps,
		Series: map[string]map[string][]analysis.Point{"target": series}})

	out := render(t, r)
	table := firstTable(out.term)
	for _, want := range []string{"component group cpu p99 memory p99 heap p99 gc/min avg queue p99 jobs p99",
		"target 0.50 100 MiB – – 15 10/s", "perflab (generator) – – – – – –"} {
		if !slices.Contains(table, want) {
			t.Errorf("terminal table lacks %q:\n%s", want, strings.Join(table, "\n"))
		}
	}
	for _, want := range []string{"#### Queue depth\n\n| Component | P99 | Max | Avg |\n|---|---:|---:|---:|\n| target | 15 | 15 | 8 |\n",
		"#### Jobs done\n\n| Component | P99 | Max | Avg |\n|---|---:|---:|---:|\n| target | 10/s | 10/s | 10/s |\n",
		"#### Spool\n\n| Component | Held at the end of the window | Max |\n|---|---:|---:|\n| target | 15 MiB | 15 MiB |\n"} {
		if !strings.Contains(out.md, want) {
			t.Errorf("Markdown lacks %q:\n%s", want, out.md)
		}
	}
	for _, want := range []string{"<h5>Queue depth</h5>", "<tr><td>target</td><td class=\"n\">15</td><td class=\"n\">15</td><td class=\"n\">8</td></tr>",
		"<h5>Jobs done</h5>", "<tr><td>target</td><td class=\"n\">10/s</td><td class=\"n\">10/s</td><td class=\"n\">10/s</td></tr>",
		"<h5>Spool</h5>", "<th class=\"n\">Held at the end of the window</th>",
		"<tr><td>target</td><td class=\"n\">15 MiB</td><td class=\"n\">15 MiB</td></tr>"} {
		if !strings.Contains(out.html, want) {
			t.Errorf("HTML lacks %q", want)
		}
	}
	checkJSONMetric(t, out.js, "queue_depth", 15, 8)
}

// firstTable is the lines of the terminal output's first resource table,
// each with its cells one space apart.
func firstTable(term string) []string {
	_, rest, _ := strings.Cut(term, "resources of ")
	var out []string
	for _, l := range strings.Split(rest, "\n")[1:] {
		if l == "" || strings.HasPrefix(l, "warning: ") {
			break
		}
		out = append(out, strings.Join(strings.Fields(l), " "))
	}
	return out
}

// checkJSONMetric checks the stat of metric m of the target in the first
// phase of summary.json.
func checkJSONMetric(t *testing.T, js, m string, p99, avg float64) {
	t.Helper()
	var s struct {
		Cells []struct {
			Phases []struct {
				Resources struct {
					Components []struct {
						Name    string `json:"name"`
						Metrics map[string]struct {
							Samples int      `json:"samples"`
							P99     *float64 `json:"p99"`
							Avg     float64  `json:"avg"`
						} `json:"metrics"`
					} `json:"components"`
				} `json:"resources"`
			} `json:"phases"`
		} `json:"cells"`
	}
	if err := json.Unmarshal([]byte(js), &s); err != nil {
		t.Fatal(err)
	}
	for _, c := range s.Cells[0].Phases[0].Resources.Components {
		if got, ok := c.Metrics[m]; c.Name == "target" && (!ok || got.P99 == nil || *got.P99 != p99 || got.Avg != avg) {
			t.Errorf("summary.json: %s of the target %+v, want P99 %g, Avg %g", m, got, p99, avg)
		}
	}
}

// A declared metric of plain numbers compares without a unit.
func TestFigureTextNumber(t *testing.T) {
	if got := figureText(12.5, observe.Number); got != "12.5" {
		t.Errorf("figureText(12.5, Number) = %q", got)
	}
}
