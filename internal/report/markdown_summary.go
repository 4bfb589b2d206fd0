package report

import (
	"time"

	"fmt"
	"strings"

	"github.com/perflab/perflab/internal/analysis"
)

// markdownCellSummary writes, after a cell's phases, the sections of a
// sizing report in its order: across the profiles (when there are two or
// more) the test configuration, the resource consumption summary, resource
// usage by component and the throughput achieved; then the suggested
// sizes, the scaling fits, the observations, and the comparisons of
// systems that ran side by side.
func markdownCellSummary(b *strings.Builder, c *Cell, level int) {
	var phases []*Phase
	for _, p := range c.Phases {
		if !p.Implicit {
			phases = append(phases, p)
		}
	}
	if len(phases) >= 2 {
		markdownTestConfiguration(b, phases, level)
		markdownConsumptionSummary(b, phases, level)
		markdownByComponent(b, phases, level)
		markdownThroughputAchieved(b, phases, level)
	}
	if c.Insights != nil {
		markdownSizes(b, c, level, true)
		markdownScaling(b, c.Insights, level)
		markdownObservations(b, c.Insights, level)
	}
	markdownSideBySide(b, c, level)
}

func markdownTestConfiguration(b *strings.Builder, phases []*Phase, level int) {
	heading(b, level, "Test configuration")
	b.WriteString("| Profile | Workload | Driver | Load model | Target | VUs (min/max) | Window |\n")
	b.WriteString("|---|---|---|---|---:|---:|---:|\n")
	for _, p := range phases {
		for _, s := range p.Workloads {
			w := s.Workload
			model, target, vus := "closed", fmt.Sprintf("%d VUs", w.VUsMax), "–"
			if w.Model == "open" {
				model, target, vus = "open", rateText(w.TargetRate), fmt.Sprintf("%d/%d", w.VUsMin, w.VUsMax)
			}
			if w.Model == "open" && w.TargetRate == 0 {
				target = "stages"
			}
			fmt.Fprintf(b, "| %s | %s | %s | %s | %s | %s | %.1f s |\n", p.Profile, w.DisplayName(), w.Driver, model, target, vus, s.Seconds)
		}
	}
}

// markdownConsumptionSummary writes the total memory and CPU of each
// profile: the figures of the components' summed series.
func markdownConsumptionSummary(b *strings.Builder, phases []*Phase, level int) {
	heading(b, level, "Resource consumption summary")
	b.WriteString("Total of the system under test per profile: P99, Max and Avg of the components' summed series over each profile's window (the generator is not in it).\n\n")
	b.WriteString("| Profile | Memory P99 | Memory Max | Memory Avg | CPU P99 | CPU Max | CPU Avg |\n")
	b.WriteString("|---|---:|---:|---:|---:|---:|---:|\n")
	for _, p := range phases {
		r := p.Resources
		if r == nil || r.Ticks == 0 || r.Memory.Components+r.CPU.Components == 0 {
			fmt.Fprintf(b, "| %s | – | – | – | – | – | – |\n", p.Profile)
			continue
		}
		m, c := r.Memory.Summed, r.CPU.Summed
		fmt.Fprintf(b, "| %s | %s | %s | %s | %s | %s | %s |\n", p.Profile,
			p99Text(m, sizeText), statText(m.N, m.Max, sizeText), statText(m.N, m.Avg, sizeText),
			p99Text(c, cores), statText(c.N, c.Max, cores), statText(c.N, c.Avg, cores))
	}
}

func cores(v float64) string { return num3(v) + " cores" }

func statText(n int, v float64, f func(float64) string) string {
	if n == 0 {
		return "–"
	}
	return f(v)
}

// markdownByComponent writes each component's memory and CPU P99 with a
// column per profile.
func markdownByComponent(b *strings.Builder, phases []*Phase, level int) {
	names := componentNames(phases)
	if len(names) == 0 {
		return
	}
	heading(b, level, "Resource usage by component (P99)")
	b.WriteString("Each component's P99 over each profile's window.\n")
	for _, rs := range []resource{memoryResource, cpuResource} {
		heading(b, level+1, "%s", rs.title)
		header := []string{"Component"}
		for _, p := range phases {
			header = append(header, p.Profile)
		}
		fmt.Fprintf(b, "| %s |\n|---|%s\n", strings.Join(header, " | "), strings.Repeat("---:|", len(phases)))
		for _, name := range names {
			row := []string{name}
			for _, p := range phases {
				row = append(row, componentP99(p.Resources, name, rs))
			}
			fmt.Fprintf(b, "| %s |\n", strings.Join(row, " | "))
		}
	}
}

// componentNames is every component of the system under test with
// samples in any of the phases, in the order they first appear.
func componentNames(phases []*Phase) []string {
	var names []string
	seen := map[string]bool{}
	for _, p := range phases {
		if p.Resources == nil {
			continue
		}
		for _, c := range p.Resources.Components {
			if c.Kind != analysis.KindGenerator && !seen[c.Name] && (c.MemoryMetric != "" || c.CPUMetric != "") {
				seen[c.Name] = true
				names = append(names, c.Name)
			}
		}
	}
	return names
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

// markdownThroughputAchieved writes each workload's achieved rate per
// profile against its target, with the bytes it moved and its latency
// (every operation together): the results table of the seeds.
func markdownThroughputAchieved(b *strings.Builder, phases []*Phase, level int) {
	heading(b, level, "Throughput achieved")
	b.WriteString("| Profile | Workload | Rate | Target | Success | Received/s | Sent/s | p50 | p99 | TTFB p50 | Requests in window |\n")
	b.WriteString("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n")
	for _, p := range phases {
		for _, s := range p.Workloads {
			var ok int64
			var sent, recv float64
			for _, op := range s.Ops {
				ok, sent, recv = ok+op.OK, sent+op.BytesSentPS, recv+op.BytesRecvPS
			}
			target := "–"
			if s.Workload.TargetRate > 0 {
				target = rateText(s.Workload.TargetRate)
			}
			fmt.Fprintf(b, "| %s | %s | %.1f/s | %s | %s | %s | %s | %s | %s | %s | %d |\n", p.Profile, s.Workload.DisplayName(), s.Rate, target,
				pct(float64(ok), float64(s.Requests)), bytesPS(recv), bytesPS(sent),
				quantileText(s.Latency, s.Latency.P50), quantileText(s.Latency, s.Latency.P99), quantileText(s.TTFB, s.TTFB.P50), s.Requests)
		}
	}
}

// quantileText is one figure of q, or "–" when q has no value.
func quantileText(q analysis.Quantiles, v time.Duration) string {
	if q.Count == 0 {
		return "–"
	}
	return dur(v)
}
