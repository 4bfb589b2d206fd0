package report

import (
	"fmt"
	"strings"

	"github.com/perflab/perflab/internal/analysis"
	"github.com/perflab/perflab/internal/observe"
)

// resource is one of the two resources with totals: memory or CPU.
type resource struct {
	title  string
	format func(float64) string
	def    string // the metric most components are read from
	of     func(analysis.ComponentResources) (string, analysis.Stat)
	total  func(*analysis.Resources) analysis.Total
}

var (
	memoryResource = resource{title: "Memory", format: sizeText, def: observe.RSSBytes,
		of:    func(c analysis.ComponentResources) (string, analysis.Stat) { return c.MemoryMetric, c.Memory },
		total: func(r *analysis.Resources) analysis.Total { return r.Memory }}
	cpuResource = resource{title: "CPU (cores)", format: num3, def: observe.CPUCores,
		of:    func(c analysis.ComponentResources) (string, analysis.Stat) { return c.CPUMetric, c.CPU },
		total: func(r *analysis.Resources) analysis.Total { return r.CPU }}
)

// markdownResources writes a phase's resource section: memory and CPU
// tables with both totals, the Go runtime table, the observers' metrics
// (disk use, …) and the listed metrics. Nothing when res is nil (nothing
// was sampled).
func markdownResources(b *strings.Builder, res *analysis.Resources, level int) {
	if res == nil {
		return
	}
	if res.Ticks == 0 {
		heading(b, level, "Resources")
		b.WriteString("No resource samples in the window.\n")
		return
	}
	heading(b, level, "Resources (window %s)", windowText(res))
	for _, w := range res.Warnings {
		fmt.Fprintf(b, "- **Warning:** %s\n", w)
	}
	if len(res.Warnings) > 0 {
		b.WriteString("\n")
	}
	b.WriteString(p99Note(res) + "\n")
	for _, rs := range []resource{memoryResource, cpuResource} {
		heading(b, level+1, "%s", rs.title)
		resourceTable(res, rs, strong).markdown(b)
		if other := notFromDefault(res, rs); len(other) > 0 {
			fmt.Fprintf(b, "\nNot from `%s`: %s.\n", rs.def, strings.Join(other, ", "))
		}
	}
	tables := append([]*table{goRuntimeTable(res)}, observedTables(res)...)
	for _, t := range append(tables, namedMetricsTable(res)) {
		if t != nil {
			heading(b, level+1, "%s", t.Title)
			if t.Note != "" {
				b.WriteString(mdText(t.Note) + "\n\n")
			}
			t.markdown(b)
		}
	}
}

func hasGroups(res *analysis.Resources) bool {
	for _, c := range res.Components {
		if c.Group != "" {
			return true
		}
	}
	return false
}

// notFromDefault names the components of the system under test whose
// figure for rs is read from another metric than rs.def: "db from `x`".
func notFromDefault(res *analysis.Resources, rs resource) []string {
	var other []string
	for _, c := range res.Components {
		if m, _ := rs.of(c); m != "" && m != rs.def && c.Kind != analysis.KindGenerator {
			other = append(other, fmt.Sprintf("%s from `%s`", c.Name, m))
		}
	}
	return other
}
