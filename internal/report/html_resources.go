package report

import (
	"fmt"
	"math"
	"strings"

	"github.com/perflab/perflab/internal/analysis"
	"github.com/perflab/perflab/internal/units"
)

// htmlResourcesOf is a phase's resource section: the memory and CPU
// tables with both totals, the Go runtime and disk use, as in Markdown.
func htmlResourcesOf(res *analysis.Resources) *htmlResources {
	if res == nil {
		return nil
	}
	if res.Ticks == 0 {
		return &htmlResources{Heading: "Resources", Empty: true}
	}
	hr := &htmlResources{Heading: "Resources (window " + windowText(res) + ")", Warnings: res.Warnings}
	for _, rs := range []resource{memoryResource, cpuResource} {
		hr.Tables = append(hr.Tables, resourceTable(res, rs, func(s string) string { return s }))
	}
	if t := goRuntimeTable(res); t != nil {
		hr.Tables = append(hr.Tables, t)
	}
	if t := diskTable(res); t != nil {
		hr.Tables = append(hr.Tables, t)
	}
	if t := namedMetricsTable(res); t != nil {
		hr.Tables = append(hr.Tables, t)
	}
	return hr
}

// resourceTable is Component | (Group) | P99 | Max | Avg: the components
// of the system under test, the two totals, labelled with total("Total"),
// then the generator. Markdown and HTML show the same table.
func resourceTable(res *analysis.Resources, rs resource, total func(string) string) *table {
	groups := hasGroups(res)
	t := &table{Title: rs.title, Head: []string{"Component"}, Right: []bool{false},
		Note: "P99 is the nearest-rank 99th percentile of the samples; the generator is not in the totals."}
	if groups {
		t.Head, t.Right = append(t.Head, "Group"), append(t.Right, false)
	}
	t.Head, t.Right = append(t.Head, "P99", "Max", "Avg"), append(t.Right, true, true, true)
	row := func(name, group string, s analysis.Stat) {
		r := []string{name}
		if groups {
			r = append(r, dash(group))
		}
		t.Rows = append(t.Rows, append(r, p99Text(s, rs.format), rs.format(s.Max), rs.format(s.Avg)))
	}
	var gens []analysis.ComponentResources
	for _, c := range res.Components {
		m, s := rs.of(c)
		switch {
		case m == "":
		case c.Kind == analysis.KindGenerator:
			gens = append(gens, c)
		default:
			row(c.Name, c.Group, s)
		}
	}
	if tot := rs.total(res); tot.Components > 1 {
		row(fmt.Sprintf("%s — sum of the %d components' P99 / Max / Avg", total("Total"), tot.Components), "", tot.Sum)
		row(total("Total")+" — P99 / Max / Avg of the summed series", "", tot.Summed)
	}
	for _, c := range gens {
		_, s := rs.of(c)
		row(c.Name+" (generator)", c.Group, s)
	}
	return t
}

// goRuntimeTable is the Go heap and GC rate of the components that expose
// them, or nil when none does.
func goRuntimeTable(res *analysis.Resources) *table {
	t := &table{Title: "Go runtime", Head: []string{"Component", "Heap in use P99", "Heap Max", "Heap Avg", "GC/min Avg", "GC/min Max"},
		Right: []bool{false, true, true, true, true, true}}
	for _, c := range res.Components {
		if c.Heap.N == 0 && c.GC.N == 0 {
			continue
		}
		row := []string{c.Name, "–", "–", "–", "–", "–"}
		if c.Heap.N > 0 {
			row[1], row[2], row[3] = p99Text(c.Heap, sizeText), sizeText(c.Heap.Max), sizeText(c.Heap.Avg)
		}
		if c.GC.N > 0 {
			row[4], row[5] = num3(c.GC.Avg), num3(c.GC.Max)
		}
		t.Rows = append(t.Rows, row)
	}
	if len(t.Rows) == 0 {
		return nil
	}
	return t
}

// diskTable is the space used under each component's data directories, or
// nil when none was measured.
func diskTable(res *analysis.Resources) *table {
	t := &table{Title: "Disk", Head: []string{"Component", "Used at the end of the window", "Max"}, Right: []bool{false, true, true}}
	for _, c := range res.Components {
		if c.Disk.N > 0 {
			t.Rows = append(t.Rows, []string{c.Name, sizeText(c.Disk.End), sizeText(c.Disk.Max)})
		}
	}
	if len(t.Rows) == 0 {
		return nil
	}
	return t
}

// namedMetricsTable is the metrics the plan listed for each component
// (metric_names), or nil when none was sampled.
func namedMetricsTable(res *analysis.Resources) *table {
	t := &table{Title: "Listed metrics", Head: []string{"Component", "Metric", "P99", "Max", "Avg"}, Right: []bool{false, false, true, true, true},
		Note: "The metrics each component's " + code("metric_names") + " lists, summed over their series; a counter as its rate per second."}
	for _, c := range res.Components {
		for _, m := range c.Named {
			f, name := metricValue(m), code(m.Name)
			if m.Counter {
				name += " (rate)"
			}
			if m.Stat.N == 0 {
				t.Rows = append(t.Rows, []string{c.Name, name, "–", "–", "–"})
				continue
			}
			t.Rows = append(t.Rows, []string{c.Name, name, p99Text(m.Stat, f), f(m.Stat.Max), f(m.Stat.Avg)})
		}
	}
	if len(t.Rows) == 0 {
		return nil
	}
	return t
}

// metricValue writes a value of a listed metric: bytes as sizes, other
// values with three significant digits and k, M or G from 10,000 up; a
// counter's rate per second with "/s".
func metricValue(m analysis.NamedMetric) func(float64) string {
	per := ""
	if m.Counter {
		per = "/s"
	}
	if strings.Contains(m.Name, "_bytes") {
		return func(v float64) string { return sizeText(v) + per }
	}
	return func(v float64) string {
		for _, u := range []struct {
			size float64
			name string
		}{{1e9, "G"}, {1e6, "M"}, {1e4, "k"}} {
			if math.Abs(v) >= u.size {
				return units.Sig3(v/u.size) + u.name + per
			}
		}
		return units.Sig3(v) + per
	}
}
