package report

import (
	"fmt"
	"strings"
	"time"

	"github.com/perflab/perflab/internal/analysis"
	"github.com/perflab/perflab/internal/stats"
	"github.com/perflab/perflab/internal/view"
)

// markdownCellSummary writes the sections of a sizing report that follow
// a cell's phases (cellSummary).
func markdownCellSummary(b *strings.Builder, c *view.Cell, level int) {
	cellSummary(c, level, true).markdown(b)
}

// cellSummary is, after a cell's phases, the sections of a sizing report
// in its order: across the profiles (when there are two or more) the test
// configuration, the resource consumption summary, resource usage by
// component and the throughput achieved; then the suggested sizes, the
// scaling fits, the observations, and the comparisons of systems that ran
// side by side. withFiles names the file of the run directory that holds
// each size.
func cellSummary(c *view.Cell, level int, withFiles bool) *doc {
	d := &doc{}
	var phases []*view.Phase
	for _, p := range c.Phases {
		if !p.Implicit {
			phases = append(phases, p)
		}
	}
	if len(phases) >= 2 {
		testConfiguration(d, phases, level)
		consumptionSummary(d, phases, level)
		byComponent(d, phases, level)
		throughputAchieved(d, phases, level)
	}
	if c.Insights != nil {
		sizesSection(d, c, level, withFiles)
		scalingSection(d, c.Insights, level)
		observationsSection(d, c.Insights, level)
	}
	sideBySideSection(d, c, level)
	return d
}

func testConfiguration(d *doc, phases []*view.Phase, level int) {
	d.heading(level, "Test configuration")
	t := &table{Head: []string{"Profile", "Workload", "Driver", "Load model", "Target", "VUs (min/max)", "Window"},
		Right: []bool{false, false, false, false, true, true, true}}
	for _, p := range phases {
		for _, s := range p.Workloads {
			w := s.Workload
			model, target, vus := "closed", fmt.Sprintf("%d VUs", w.VUsMax), "–"
			if w.Model == "open" {
				model, target, vus = "open", rateText(w.TargetRate), fmt.Sprintf("%d/%d", w.VUsMin, w.VUsMax)
			}
			if w.Schedule != nil {
				target = scheduleText(w)
			}
			t.Rows = append(t.Rows, []string{p.Profile, w.DisplayName(), w.Driver, model, target, vus, fmt.Sprintf("%.1f s", s.Seconds)})
		}
	}
	d.table(t)
}

// consumptionSummary is the total memory and CPU of each profile: the
// figures of the components' summed series.
func consumptionSummary(d *doc, phases []*view.Phase, level int) {
	d.heading(level, "Resource consumption summary")
	d.para("Total of the system under test per profile: P99, Max and Avg of the components' summed series over each profile's window (the generator is not in it).")
	t := &table{Head: []string{"Profile", "Memory P99", "Memory Max", "Memory Avg", "CPU P99", "CPU Max", "CPU Avg"},
		Right: []bool{false, true, true, true, true, true, true}}
	for _, p := range phases {
		r := p.Resources
		if r == nil || r.Ticks == 0 || r.Memory.Components+r.CPU.Components == 0 {
			t.Rows = append(t.Rows, []string{p.Profile, "–", "–", "–", "–", "–", "–"})
			continue
		}
		m, c := r.Memory.Summed, r.CPU.Summed
		t.Rows = append(t.Rows, []string{p.Profile,
			p99Text(m, sizeText), statText(m.N, m.Max, sizeText), statText(m.N, m.Avg, sizeText),
			p99Text(c, cores), statText(c.N, c.Max, cores), statText(c.N, c.Avg, cores)})
	}
	d.table(t)
}

func cores(v float64) string { return num3(v) + " cores" }

func statText(n int, v float64, f func(float64) string) string {
	if n == 0 {
		return "–"
	}
	return f(v)
}

// byComponent is each component's memory and CPU P99 with a column per
// profile.
func byComponent(d *doc, phases []*view.Phase, level int) {
	names := view.ComponentNames(phases)
	if len(names) == 0 {
		return
	}
	d.heading(level, "Resource usage by component (P99)")
	d.para("Each component's P99 over each profile's window.")
	for _, rs := range []resource{memoryResource, cpuResource} {
		d.heading(level+1, rs.title)
		t := &table{Head: []string{"Component"}, Right: []bool{false}}
		for _, p := range phases {
			t.Head, t.Right = append(t.Head, p.Profile), append(t.Right, true)
		}
		for _, name := range names {
			row := []string{name}
			for _, p := range phases {
				row = append(row, componentP99(p.Resources, name, rs))
			}
			t.Rows = append(t.Rows, row)
		}
		d.table(t)
	}
}

func componentP99(r *analysis.Resources, name string, rs resource) string {
	if r == nil {
		return "–"
	}
	for _, c := range r.Components {
		if c.Name == name {
			if m, s := rs.of(c); m != "" {
				return p99Text(s, rs.format)
			}
		}
	}
	return "–"
}

// throughputAchieved is each workload's achieved rate per profile against
// its target, with the bytes it moved and its latency (every operation
// together): the results table of the seeds. When a workload streamed
// tokens, a column gives its time to first token.
func throughputAchieved(d *doc, phases []*view.Phase, level int) {
	d.heading(level, "Throughput achieved")
	t := &table{Head: []string{"Profile", "Workload", "Rate", "Target", "Success", "Received/s", "Sent/s", "p50", "p99", "TTFB p50"},
		Right: []bool{false, false, true, true, true, true, true, true, true, true, true}}
	ttft := anyMeasure(phases, stats.TTFT)
	if ttft {
		t.Head, t.Right = append(t.Head, "TTFT p50"), append(t.Right, true)
	}
	t.Head = append(t.Head, "Requests in window")
	for _, p := range phases {
		for _, s := range p.Workloads {
			var ok int64
			var sent, recv float64
			for _, op := range s.Ops {
				ok, sent, recv = ok+op.OK, sent+op.BytesSentPS, recv+op.BytesRecvPS
			}
			row := []string{p.Profile, s.Workload.DisplayName(), fmt.Sprintf("%.1f/s", s.Rate), targetRateText(s.Workload),
				pct(float64(ok), float64(s.Requests)), bytesPS(recv), bytesPS(sent),
				quantileText(s.Latency, s.Latency.P50), quantileText(s.Latency, s.Latency.P99), quantileText(s.TTFB, s.TTFB.P50)}
			if q := s.Measures[stats.TTFT]; ttft {
				row = append(row, quantileText(q, q.P50))
			}
			t.Rows = append(t.Rows, append(row, fmt.Sprint(s.Requests)))
		}
	}
	d.table(t)
}

// anyMeasure reports whether a workload of the phases has values of m: a
// column for it is worth its width.
func anyMeasure(phases []*view.Phase, m stats.Measure) bool {
	for _, p := range phases {
		for _, s := range p.Workloads {
			if s.Measures[m].Count > 0 {
				return true
			}
		}
	}
	return false
}

// quantileText is one figure of q, or "–" when q has no value.
func quantileText(q analysis.Quantiles, v time.Duration) string {
	if q.Count == 0 {
		return "–"
	}
	return dur(v)
}
