package analysis

import (
	"slices"
	"strings"

	"github.com/perflab/perflab/internal/observe"
	"github.com/perflab/perflab/internal/observe/observers"
)

// NamedMetric is a metric the plan listed for a component (metric_names),
// over a window: a gauge as sampled, a counter as its rate per second.
type NamedMetric struct {
	Name    string // as the plan named it, e.g. "http_requests_total"
	Counter bool   // Stat is of the counter's rate per second
	Stat    Stat
}

// namedMetric reads a stored metric name as a metric the plan listed: its
// name, and whether it is a counter (stored as one, or named like one,
// "_total", as runs written before counters were told apart stored them).
func namedMetric(stored string) (name string, counter, ok bool) {
	if name, ok := strings.CutPrefix(stored, observe.CounterPrefix); ok {
		return name, true, true
	}
	if name, ok := strings.CutPrefix(stored, observe.MetricPrefix); ok {
		return name, strings.HasSuffix(name, "_total"), true
	}
	return "", false, false
}

// counterRates is, for every series of a counter the plan listed or an
// observer declares, the series of its rate per second: at each sample
// from the second on, the growth since the sample before over the time
// between them (so a rate at t covers the interval that ends at t, like
// cpu_cores). A sample where the counter went down (the component
// restarted) has no rate. Keys are the stored metric names.
func counterRates(series map[string][]Point) map[string][]Point {
	out := map[string][]Point{}
	for m, ps := range series {
		if !isCounter(m) {
			continue
		}
		var rates []Point
		for i := 1; i < len(ps); i++ {
			dt := ps[i].T.Sub(ps[i-1].T).Seconds()
			if dt > 0 && ps[i].V >= ps[i-1].V {
				rates = append(rates, Point{T: ps[i].T, V: (ps[i].V - ps[i-1].V) / dt})
			}
		}
		out[m] = rates
	}
	return out
}

// isCounter says whether the stored metric m is a counter: one the plan
// listed, or one an observer declares so.
func isCounter(m string) bool {
	if _, counter, ok := namedMetric(m); ok {
		return counter
	}
	for _, d := range observers.Metrics() {
		if d.Name == m {
			return d.Kind == observe.Counter
		}
	}
	return false
}

// namedMetrics are the component's metrics the plan listed, by name, over
// the window: windowed are its series in the window, rates its counters'
// rate series in the window (counterRates).
func namedMetrics(windowed, rates map[string][]Point) []NamedMetric {
	var out []NamedMetric
	for m, ps := range windowed {
		name, counter, ok := namedMetric(m)
		if !ok {
			continue
		}
		if counter {
			ps = rates[m]
		}
		out = append(out, NamedMetric{Name: name, Counter: counter, Stat: StatOf(values(ps))})
	}
	slices.SortFunc(out, func(a, b NamedMetric) int { return strings.Compare(a.Name, b.Name) })
	return out
}
