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
// tables with both totals, the Go runtime table and disk use. Nothing when
// res is nil (nothing was sampled).
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
	b.WriteString("P99 is the nearest-rank 99th percentile of the samples; the generator is not in the totals.\n")
	for _, rs := range []resource{memoryResource, cpuResource} {
		markdownResourceTable(b, res, rs, level+1)
	}
	markdownGoRuntime(b, res, level+1)
	markdownDisk(b, res, level+1)
}

func hasGroups(res *analysis.Resources) bool {
	for _, c := range res.Components {
		if c.Group != "" {
			return true
		}
	}
	return false
}

// markdownResourceTable writes Component | (Group) | P99 | Max | Avg: the
// components of the system under test, the two labelled totals, then the
// generator.
func markdownResourceTable(b *strings.Builder, res *analysis.Resources, rs resource, level int) {
	heading(b, level, "%s", rs.title)
	groups := hasGroups(res)
	row := func(name, group string, s analysis.Stat) {
		g := ""
		if groups {
			g = " " + dash(group) + " |"
		}
		fmt.Fprintf(b, "| %s |%s %s | %s | %s |\n", name, g, p99Text(s, rs.format), rs.format(s.Max), rs.format(s.Avg))
	}
	if groups {
		b.WriteString("| Component | Group | P99 | Max | Avg |\n|---|---|---:|---:|---:|\n")
	} else {
		b.WriteString("| Component | P99 | Max | Avg |\n|---|---:|---:|---:|\n")
	}
	var gens []analysis.ComponentResources
	var other []string
	for _, c := range res.Components {
		m, s := rs.of(c)
		switch {
		case m == "":
			continue
		case c.Kind == analysis.KindGenerator:
			gens = append(gens, c)
			continue
		case m != rs.def:
			other = append(other, fmt.Sprintf("%s from `%s`", c.Name, m))
		}
		row(c.Name, c.Group, s)
	}
	if t := rs.total(res); t.Components > 1 {
		row(fmt.Sprintf("**Total** — sum of the %d components' P99 / Max / Avg", t.Components), "", t.Sum)
		row("**Total** — P99 / Max / Avg of the summed series", "", t.Summed)
	}
	for _, c := range gens {
		_, s := rs.of(c)
		row(c.Name+" (generator)", c.Group, s)
	}
	if len(other) > 0 {
		fmt.Fprintf(b, "\nNot from `%s`: %s.\n", rs.def, strings.Join(other, ", "))
	}
}

// markdownGoRuntime writes the Go heap and GC rate of the components that
// expose them.
func markdownGoRuntime(b *strings.Builder, res *analysis.Resources, level int) {
	var rows []string
	for _, c := range res.Components {
		if c.Heap.N == 0 && c.GC.N == 0 {
			continue
		}
		heap := []string{"–", "–", "–"}
		if c.Heap.N > 0 {
			heap = []string{p99Text(c.Heap, sizeText), sizeText(c.Heap.Max), sizeText(c.Heap.Avg)}
		}
		gc := []string{"–", "–"}
		if c.GC.N > 0 {
			gc = []string{num3(c.GC.Avg), num3(c.GC.Max)}
		}
		rows = append(rows, fmt.Sprintf("| %s | %s | %s |", c.Name, strings.Join(heap, " | "), strings.Join(gc, " | ")))
	}
	if len(rows) == 0 {
		return
	}
	heading(b, level, "Go runtime")
	b.WriteString("| Component | Heap in use P99 | Heap Max | Heap Avg | GC/min Avg | GC/min Max |\n")
	b.WriteString("|---|---:|---:|---:|---:|---:|\n")
	b.WriteString(strings.Join(rows, "\n") + "\n")
}

// markdownDisk writes the space used under each component's data
// directories.
func markdownDisk(b *strings.Builder, res *analysis.Resources, level int) {
	var rows []string
	for _, c := range res.Components {
		if c.Disk.N > 0 {
			rows = append(rows, fmt.Sprintf("| %s | %s | %s |", c.Name, sizeText(c.Disk.End), sizeText(c.Disk.Max)))
		}
	}
	if len(rows) == 0 {
		return
	}
	heading(b, level, "Disk")
	b.WriteString("| Component | Used at the end of the window | Max |\n|---|---:|---:|\n")
	b.WriteString(strings.Join(rows, "\n") + "\n")
}
