package report

import (
	"fmt"
	"math"
	"strings"

	"github.com/perflab/perflab/internal/analysis"
	"github.com/perflab/perflab/internal/observe"
	"github.com/perflab/perflab/internal/units"
)

// htmlResourcesOf is a phase's resource section: the memory and CPU
// tables with both totals, the Go runtime, the observers' metrics (disk
// use, …) and the listed metrics, as in Markdown.
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
	hr.Tables = append(hr.Tables, observedTables(res)...)
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
		Note: p99Note(res)}
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

// observedTables are a table per metric the observers declare (disk use,
// …) that some component has, in their order.
func observedTables(res *analysis.Resources) []*table {
	var out []*table
	for _, m := range res.Declared {
		out = append(out, observedTable(res, m))
	}
	return out
}

// observedTable is Component | P99 | Max | Avg of a declared metric, of
// its rate for a Counter, or Component | <Label> at the end of the window |
// Max of a Level; a row per component that has it.
func observedTable(res *analysis.Resources, m observe.Metric) *table {
	f := observedValue(m)
	t := &table{Title: m.Title, Head: []string{"Component", "P99", "Max", "Avg"}, Right: []bool{false, true, true, true}}
	if m.Kind == observe.Level {
		t.Head, t.Right = []string{"Component", m.Label + " at the end of the window", "Max"}, []bool{false, true, true}
	}
	for _, c := range res.Components {
		o, ok := c.Observed[m.Name]
		switch {
		case !ok:
		case m.Kind == observe.Level:
			t.Rows = append(t.Rows, []string{c.Name, f(o.End), f(o.Stat.Max)})
		case o.Stat.N == 0: // a counter sampled once in the window has no rate
			t.Rows = append(t.Rows, []string{c.Name, "–", "–", "–"})
		default:
			t.Rows = append(t.Rows, []string{c.Name, p99Text(o.Stat, f), f(o.Stat.Max), f(o.Stat.Avg)})
		}
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

// observedValue writes a value of a declared metric in its unit; a
// Counter's rate per second with "/s".
func observedValue(m observe.Metric) func(float64) string {
	if m.Kind == observe.Counter {
		return valueText(m.Unit, "/s")
	}
	return valueText(m.Unit, "")
}

// metricValue writes a value of a listed metric: bytes (a name with
// "_bytes") as sizes, other values as numbers; a counter's rate per second
// with "/s".
func metricValue(m analysis.NamedMetric) func(float64) string {
	per, unit := "", observe.Number
	if m.Counter {
		per = "/s"
	}
	if strings.Contains(m.Name, "_bytes") {
		unit = observe.Bytes
	}
	return valueText(unit, per)
}

// noLimitBytes is the byte figure from which a level means no limit: Go's
// GOMEMLIMIT (go_gc_gomemlimit_bytes) is math.MaxInt64 when off, and
// cgroup v1's memory.limit_in_bytes nearly so (a page short); no machine
// holds 4 EiB.
const noLimitBytes = 1 << 62

// valueText writes a value of unit followed by per: bytes as sizes, cores
// as CPU figures, other values with three significant digits and k, M or G
// from 10,000 up.
func valueText(unit, per string) func(float64) string {
	switch unit {
	case observe.Bytes:
		return func(v float64) string {
			if per == "" && v >= noLimitBytes {
				return "off" // GOMEMLIMIT and its kin say "no limit" with the largest int64
			}
			return sizeText(v) + per
		}
	case observe.Cores:
		return func(v float64) string { return num3(v) + per }
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
