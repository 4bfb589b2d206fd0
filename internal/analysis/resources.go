package analysis

import (
	"slices"
	"sort"
	"time"

	"github.com/perflab/perflab/internal/observe"
	"github.com/perflab/perflab/internal/observe/observers"
)

// KindGenerator is the kind of the component that is perflab itself.
const KindGenerator = "generator"

// Component is one process whose resources were sampled: a component of the
// system under test, or the generator.
type Component struct {
	Name       string
	Group      string // e.g. "ingester"; "" when none
	Kind       string // "run", "attach" or KindGenerator
	PID        int
	MetricsURL string
	DataDirs   []string
	Exited     time.Time // when it exited during the run; zero if it did not
	ExitText   string
	Stop       *Stop // how perflab stopped it at the end of its cell; nil when it did not
}

// Stop is how perflab stopped a component it started: SIGTERM, then
// SIGKILL if it was still running when its stop grace ended.
type Stop struct {
	Time   time.Time // when its processes were gone
	Grace  time.Duration
	Killed bool   // perflab had to SIGKILL it
	How    string // in words
}

// The metrics a component's memory and CPU are read from, most preferred
// first: the process tree perflab watches, then what the component says of
// itself, then its cgroup (which counts page cache too); then, for
// components read from Prometheus, a container's working set and a host's
// used memory.
var (
	memoryMetrics = []string{observe.RSSBytes, observe.ProcessRSSBytes, observe.CgroupMemoryBytes,
		observe.WorkingSetBytes, observe.MemoryUsedBytes}
	cpuMetrics = []string{observe.CPUCores, observe.ProcessCPUCores, observe.CgroupCPUCores}
)

// ComponentResources is one component's figures over a window.
type ComponentResources struct {
	Component
	Memory       Stat   // bytes
	MemoryMetric string // the metric Memory is from; "" when the component has none
	CPU          Stat   // cores
	CPUMetric    string
	Heap         Stat            // go_heap_inuse_bytes
	GC           Stat            // gc_per_min
	Metrics      map[string]Stat // every metric sampled in the window
	// Observed are the figures of the metrics the observers declare
	// (package observers) that it has in the window, by name.
	Observed map[string]Observed
	Named    []NamedMetric // the metrics the plan listed for it (metric_names), by name
	// Serving are its own figures as an LLM serving engine
	// (metrics_preset); nil when it has none.
	Serving *Serving
}

// Observed is a component's figures of a metric an observer declares
// (observe.Metric) over the window.
type Observed struct {
	Stat Stat    // of its values; of its rate per second for a Counter
	End  float64 // its last value in the window
}

// Total is the system under test's total of one resource, both ways: the
// sum of the components' figures (what sizing each component separately
// needs) and the figures of the summed series (what the components used
// together at the same moments; its P99 is at most the sum of P99s). The
// summed series only has the sample times at which every component in the
// total has a value. The generator is not in the total.
type Total struct {
	Components int
	Sum        Stat // sums of the components' P99, Max and Avg; N is the smallest N
	Summed     Stat // of the series summed per sample time
	grid       int  // when the components were sampled at different times: the sample times of the sparsest
}

// Resources is a phase's resource figures over its window.
type Resources struct {
	Window         Window
	Ticks          int           // sample times in the window of the most often sampled series
	Step           time.Duration // median time between its sample times
	Components     []ComponentResources
	Declared       []observe.Metric // the observers' metrics some component has in the window, in their order
	Memory         Total
	CPU            Total
	CoresAvailable float64 // cores the generator could use; 0 when unknown
	ClientBound    bool    // the generator's CPU was near its cores (see clientbound.go)
	GeneratorCPU   float64 // the generator's CPU P99 that made it so
	// MachineBound says the generator and the components perflab started
	// together filled the machine's cores or memory (see machinebound.go);
	// MachineWhy names the figures.
	MachineBound bool
	MachineWhy   string
	// MachineBusy says other work than perflab's and its components' kept
	// the machine full (see machinebusy.go); BusyWhy names the figures.
	MachineBusy bool
	BusyWhy     string
	Warnings    []string
}

// ResourceInput is what SummarizeResources needs: the components, their
// series (component name → metric name → points in time order) and the
// window.
type ResourceInput struct {
	Window     Window
	Components []Component
	Series     map[string]map[string][]Point
	// CoresAvailable is used when the generator has no cores_available
	// samples (e.g. GOMAXPROCS from the run's meta); 0 when unknown.
	CoresAvailable float64
}

// SummarizeResources computes the figures of every component over in.Window,
// the totals of the system under test, and the warnings a reader needs. A
// series in in.Series for a component not in in.Components is reported as
// a component of unknown kind.
func SummarizeResources(in ResourceInput) *Resources {
	res := &Resources{Window: in.Window}
	windowed, rates := map[string]map[string][]Point{}, map[string]map[string][]Point{}
	for comp, metrics := range in.Series {
		windowed[comp], rates[comp] = map[string][]Point{}, map[string][]Point{}
		for m, ps := range metrics {
			if w := pointsIn(ps, in.Window); len(w) > 0 {
				windowed[comp][m] = w
			}
		}
		for m, ps := range counterRates(metrics) {
			rates[comp][m] = pointsIn(ps, in.Window)
		}
	}
	res.Ticks, res.Step = ticks(windowed)
	for _, c := range allComponents(in) {
		res.Components = append(res.Components, componentResources(c, windowed[c.Name], rates[c.Name]))
	}
	res.Declared = declared(res.Components)
	res.Memory = total(res.Components, windowed, func(c ComponentResources) (string, Stat) { return c.MemoryMetric, c.Memory })
	res.CPU = total(res.Components, windowed, func(c ComponentResources) (string, Stat) { return c.CPUMetric, c.CPU })
	res.CoresAvailable = in.CoresAvailable
	res.judge()
	res.judgeMachine(windowed)
	return res
}

// allComponents is in.Components followed by any other component that has
// series, by name.
func allComponents(in ResourceInput) []Component {
	out := slices.Clone(in.Components)
	known := map[string]bool{}
	for _, c := range in.Components {
		known[c.Name] = true
	}
	var extra []string
	for name := range in.Series {
		if !known[name] {
			extra = append(extra, name)
		}
	}
	sort.Strings(extra)
	for _, name := range extra {
		out = append(out, Component{Name: name})
	}
	return out
}

// ticks counts the sample times of the series with the most and gives
// their median spacing: the sampling of the window, also when components
// are sampled on different grids (local ticks and a Prometheus step),
// whose times are not shared.
func ticks(windowed map[string]map[string][]Point) (int, time.Duration) {
	var densest []Point
	for _, metrics := range windowed {
		for _, ps := range metrics {
			// equivalent mutant: >=; of series alike in length either
			// is the first in a map's random order
			if len(ps) > len(densest) {
				densest = ps
			}
		}
	}
	return len(densest), medianGap(densest)
}

// componentResources are a component's figures from its series in the
// window and its counters' rates in the window.
func componentResources(c Component, series, rates map[string][]Point) ComponentResources {
	cr := ComponentResources{Component: c, Metrics: map[string]Stat{}, Named: namedMetrics(series, rates), Serving: servingOf(series)}
	for m, ps := range series {
		if isBucket(m) {
			continue
		}
		cr.Metrics[m] = StatOf(values(ps))
	}
	cr.MemoryMetric, cr.Memory = pick(cr.Metrics, memoryMetrics)
	cr.CPUMetric, cr.CPU = pick(cr.Metrics, cpuMetrics)
	cr.Heap, cr.GC = cr.Metrics[observe.GoHeapInuseBytes], cr.Metrics[observe.GCPerMin]
	cr.Observed = observed(series, rates)
	return cr
}

// observed are the figures of the declared metrics a component has in the
// window: series are its series in the window, rates its counters' rate
// series in the window (counterRates).
func observed(series, rates map[string][]Point) map[string]Observed {
	out := map[string]Observed{}
	for _, m := range observers.Metrics() {
		ps := series[m.Name]
		if len(ps) == 0 {
			continue
		}
		o := Observed{Stat: StatOf(values(ps)), End: ps[len(ps)-1].V}
		if m.Kind == observe.Counter {
			o.Stat = StatOf(values(rates[m.Name]))
		}
		out[m.Name] = o
	}
	return out
}

// declared are the declared metrics that some component has, in the
// observers' order.
func declared(rs []ComponentResources) []observe.Metric {
	var out []observe.Metric
	for _, m := range observers.Metrics() {
		for _, c := range rs {
			if _, ok := c.Observed[m.Name]; ok {
				out = append(out, m)
				break
			}
		}
	}
	return out
}

// pick returns the first of prefs the component has samples of.
func pick(stats map[string]Stat, prefs []string) (string, Stat) {
	for _, m := range prefs {
		if s, ok := stats[m]; ok && s.N > 0 { // equivalent mutant: N >= 0; a metric without samples in the window is never among them
			return m, s
		}
	}
	return "", Stat{}
}

// total adds up one resource over the components of the system under test
// that have it; of picks the resource's metric and Stat.
func total(rs []ComponentResources, windowed map[string]map[string][]Point, of func(ComponentResources) (string, Stat)) Total {
	var stats []Stat
	var series [][]Point
	for _, c := range rs {
		m, s := of(c)
		if c.Kind == KindGenerator || m == "" {
			continue
		}
		stats = append(stats, s)
		series = append(series, windowed[c.Name][m])
	}
	sum := sumSeries(series)
	return Total{Components: len(stats), Sum: sumStats(stats), Summed: StatOf(sum.values), grid: sum.grid}
}
