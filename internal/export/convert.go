package export

import (
	"maps"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/perflab/perflab/internal/analysis"
	"github.com/perflab/perflab/internal/observe"
	"github.com/perflab/perflab/internal/stats"
)

// Workload names a workload's series: its cell (empty without a matrix),
// profile and name.
type Workload struct {
	Cell, Profile, Name string
}

// Sample is one figure of a component at a sample time.
type Sample struct {
	Metric string
	Value  float64
}

// quantiles are those a latency summary carries; 1 is the maximum.
var quantiles = []float64{0.5, 0.9, 0.99, 1}

// converter turns what a run measures into series, keeping the running
// totals of counters; scrub takes secrets out of every label value.
type converter struct {
	run    string
	scrub  func(string) string
	native bool // make native histograms of the latency too
	mu     sync.Mutex
	tt     totals
	nn     natives
}

func newConverter(run string, scrub func(string) string) *converter {
	if scrub == nil {
		scrub = func(s string) string { return s }
	}
	return &converter{run: run, scrub: scrub, tt: totals{}, nn: natives{}}
}

// base is the labels of every series of w.
func (c *converter) base(w Workload) labels {
	return labels{}.with("run", c.scrub(c.run), "cell", c.scrub(w.Cell), "profile", c.scrub(w.Profile),
		"workload", c.scrub(w.Name))
}

// interval is the series of one workload's interval.
func (c *converter) interval(w Workload, iv *stats.Interval) []Series {
	c.mu.Lock()
	defer c.mu.Unlock()
	base := c.base(w)
	start, end := iv.Start, iv.End
	var out []Series
	for _, name := range iv.OpNames() {
		op := iv.Ops[name]
		ls := base.with("operation", c.scrub(name))
		requests := counterOf("perflab_requests_total", ls, end)
		out = c.tt.add(out, requests, start, float64(op.Classes.Total()), 0, 0)
		// A series that starts later than the operation's (an error class
		// first seen in its tenth second) was 0 since the operation's first
		// interval: its zero is there, so that rate() and increase() over
		// the run see every one of its values, not a rate over its seconds.
		first := c.tt[requests.key()].start
		for cl := stats.OK + 1; cl < stats.NumClasses; cl++ {
			s := counterOf("perflab_errors_total", ls.with("class", cl.String()), end)
			if n := op.Classes[cl]; n > 0 || c.tt.has(s) { // a class seen once goes on, at its total
				out = c.tt.add(out, s, first, float64(n), 0, 0)
			}
		}
		out = c.tt.add(out, summaryOf("perflab_latency_seconds", ls, end, op.Latency), start, 0, uint64(op.Latency.Count()),
			op.Latency.Mean().Seconds()*float64(op.Latency.Count()))
		if c.native {
			out = c.nn.add(out, Series{Name: nativeName, kind: nativeHist, Labels: ls.sorted(), Time: end}, start, op.Latency)
		}
		out = c.tt.add(out, counterOf("perflab_bytes_sent_total", ls, end), start, float64(op.BytesSent), 0, 0)
		out = c.tt.add(out, counterOf("perflab_bytes_received_total", ls, end), start, float64(op.BytesRecv), 0, 0)
		out = c.connections(out, ls, first, end, &op.Counters)
		out = c.measures(out, ls, first, iv, op)
	}
	out = c.tt.add(out, counterOf("perflab_dropped_total", base, end), start, float64(iv.Dropped), 0, 0)
	out = append(out, gaugeOf("perflab_vus", base, end, float64(iv.VUs)))
	if iv.Lag != nil && iv.Lag.Count() > 0 {
		out = append(out, gaugeOf("perflab_scheduler_lag_p99_seconds", base, end, iv.Lag.Quantile(0.99).Seconds()))
	}
	return out
}

// connectionSeries name the HTTP driver's connection counters.
var connectionSeries = map[stats.Counter]string{
	stats.BodyBytes:    "perflab_body_bytes_received_total",
	stats.Retries:      "perflab_retries_total",
	stats.IdleCloses:   "perflab_idle_closes_total",
	stats.StrayAnswers: "perflab_stray_answers_total",
}

// connections adds the series of the HTTP driver's connection counters
// to out: each from its first value (its zero at first, the operation's
// start), then at its total (as error classes).
func (c *converter) connections(out []Series, ls labels, first, end time.Time, counters *[stats.NumCounters]int64) []Series {
	for k := stats.BodyBytes; k < stats.NumCounters; k++ {
		s := counterOf(connectionSeries[k], ls, end)
		if n := counters[k]; n > 0 || c.tt.has(s) {
			out = c.tt.add(out, s, first, float64(n), 0, 0)
		}
	}
	return out
}

// workloadEnd is the series of a workload's end: the arrivals it did not
// issue, from start (its load's start) to at.
func (c *converter) workloadEnd(w Workload, start, at time.Time, unissued uint64) []Series {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.tt.add(nil, counterOf("perflab_unissued_total", c.base(w), at), start, float64(unissued), 0, 0)
}

// samples is the series of the components' samples taken at t.
func (c *converter) samples(cell string, t time.Time, byComponent map[string][]Sample) []Series {
	base := labels{}.with("run", c.scrub(c.run), "cell", c.scrub(cell))
	var out []Series
	for _, comp := range slices.Sorted(maps.Keys(byComponent)) {
		ls := base.with("component", c.scrub(comp))
		for _, s := range byComponent[comp] {
			name, extra := componentMetric(s.Metric)
			out = append(out, gaugeOf(name, ls.with("name", c.scrub(extra)), t, s.Value))
		}
	}
	return out
}

// componentMetric is the series name of a component's metric, and the
// name label of a metric the plan lists by name.
func componentMetric(m string) (string, string) {
	if rest, ok := strings.CutPrefix(m, observe.MetricPrefix); ok {
		return "perflab_component_metric", rest
	}
	if rest, ok := strings.CutPrefix(m, observe.CounterPrefix); ok {
		return "perflab_component_counter", rest
	}
	if rest, ok := strings.CutPrefix(m, observe.BucketPrefix); ok {
		return "perflab_component_bucket", rest
	}
	return "perflab_component_" + sanitize(m), ""
}

func counterOf(name string, ls labels, t time.Time) Series {
	return Series{Name: name, kind: counter, Labels: ls.sorted(), Time: t}
}

func gaugeOf(name string, ls labels, t time.Time, v float64) Series {
	return Series{Name: name, kind: gauge, Labels: ls.sorted(), Time: t, Start: t, Value: v}
}

// summaryOf is the summary named name of an interval's histogram h: its
// quantiles, none when h has no value (or is nil).
func summaryOf(name string, ls labels, t time.Time, h *stats.Hist) Series {
	s := Series{Name: name, kind: summary, Labels: ls.sorted(), Time: t}
	if h == nil || h.Count() == 0 {
		return s
	}
	for _, q := range quantiles {
		v := h.Max()
		if q < 1 {
			if h.Count() < analysis.MinCountFor(q) {
				continue // of fewer values it would be their top, not q
			}
			v = h.Quantile(q)
		}
		s.Quantiles = append(s.Quantiles, Quantile{Q: q, V: v.Seconds()})
	}
	return s
}
