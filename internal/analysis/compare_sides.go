package analysis

import (
	"fmt"

	"github.com/perflab/perflab/internal/observe"
	"github.com/perflab/perflab/internal/observe/observers"
	"github.com/perflab/perflab/internal/stats"
)

// MinRunEffect is the smallest difference a comparison of one run per
// side calls significant: from per-interval samples, a 95 % interval
// measures the variation within each run, not between runs, and two runs
// of the same system on the same load commonly differ by a few percent (a
// process's memory layout, the machine's other work). A ratio within
// 1 ± MinRunEffect (1/1.05 to 1.05) is shown as "~" unless repeated runs
// (CompareRuns) support it.
const MinRunEffect = 0.05

// The resources a comparison can be made of besides those the observers
// declare (observe.Metric's Compare, such as "disk").
const (
	CompareCPU    = "CPU"
	CompareMemory = "memory"
)

// CompareResources are the resources comparisons are made of: CPU, memory,
// then those the observers declare, in their order.
func CompareResources() []string {
	out := []string{CompareCPU, CompareMemory}
	for _, m := range observers.Metrics() {
		if m.Compare != "" {
			out = append(out, m.Compare)
		}
	}
	return out
}

// compareMetrics are the metrics a resource is read from, most preferred
// first, and its unit.
func compareMetrics(resource string) ([]string, string) {
	switch resource {
	case CompareCPU:
		return cpuMetrics, observe.Cores
	case CompareMemory:
		return memoryMetrics, observe.Bytes
	}
	for _, m := range observers.Metrics() {
		if m.Compare == resource {
			return []string{m.Name}, m.Unit
		}
	}
	return nil, ""
}

// ResourceSamples is the series of one resource of the named components
// over w, summed per sample time when there are several (only the times at
// which every one has a sample count), each component's metric chosen as
// SummarizeResources chooses it. It is nil when a component has no sample
// of the resource.
func ResourceSamples(series map[string]map[string][]Point, w Window, names []string, resource string) []float64 {
	var all [][]Point
	metrics, _ := compareMetrics(resource)
	for _, n := range names {
		ps := pickSeries(series[n], w, metrics)
		if len(ps) == 0 {
			return nil
		}
		all = append(all, ps)
	}
	if len(all) == 1 {
		return values(all[0])
	}
	return summedSeries(all)
}

// Comparison is one figure of B against A: "B uses x1.7 less CPU".
type Comparison struct {
	Subject string // e.g. "ingester", "group ingest", "all components", "workload get"
	What    string // CPU, memory, disk, request rate, error rate, p50 latency, p99 latency
	Unit    string // "cores", "bytes", "requests/s", "fraction", "seconds"
	Ratio   Ratio  // B / A
	Phrase  string // "x1.7 less CPU", "~"
}

// CompareResource compares a resource of a subject: with one run per side
// the means of the per-interval samples (CompareSeries, with the
// MinRunEffect rule), with more the means of each run's mean (CompareRuns).
func CompareResource(subject, resource string, a, b [][]float64, o BootstrapOptions) Comparison {
	_, unit := compareMetrics(resource)
	c := Comparison{Subject: subject, What: resource, Unit: unit, Ratio: compareSamples(a, b, o)}
	c.Phrase = c.Ratio.Phrase(resource)
	return c
}

// CompareRate compares per-interval rates (requests per second) as
// CompareResource compares samples.
func CompareRate(subject string, a, b [][]float64, o BootstrapOptions) Comparison {
	c := Comparison{Subject: subject, What: "request rate", Unit: "requests/s", Ratio: compareSamples(a, b, o)}
	c.Phrase = c.Ratio.PhraseWith("lower", "higher", "request rate")
	return c
}

func compareSamples(a, b [][]float64, o BootstrapOptions) Ratio {
	if len(a) == 1 && len(b) == 1 {
		return OneRunGuard(CompareSeries(a[0], b[0], o))
	}
	return CompareRuns(runMeans(a), runMeans(b))
}

func runMeans(runs [][]float64) []float64 {
	var out []float64
	for _, vs := range runs {
		if len(vs) > 0 {
			out = append(out, mean(vs))
		}
	}
	return out
}

// CompareQuantile compares latency quantile q of a subject from each
// run's interval histograms: with one run per side CompareLatency (with
// the MinRunEffect rule), with more CompareRuns of each run's quantile.
func CompareQuantile(subject string, q float64, a, b [][]*stats.Hist, o BootstrapOptions) Comparison {
	what := "p" + quantileName(q) + " latency"
	c := Comparison{Subject: subject, What: what, Unit: "seconds"}
	if len(a) == 1 && len(b) == 1 {
		lc := CompareLatency(LatencySide{Intervals: a[0]}, LatencySide{Intervals: b[0]}, q, o)
		c.Ratio = OneRunGuard(lc.Ratio)
	} else {
		c.Ratio = CompareRuns(runQuantiles(a, q), runQuantiles(b, q))
	}
	c.Phrase = c.Ratio.PhraseWith("lower", "higher", what)
	return c
}

func runQuantiles(runs [][]*stats.Hist, q float64) []float64 {
	var out []float64
	for _, hs := range runs {
		m := LatencySide{Intervals: hs}.merged()
		if m.Count() >= MinCountFor(q) {
			out = append(out, m.Quantile(q).Seconds())
		}
	}
	return out
}

// withinRunEffect says whether ratio v is within 1 ± MinRunEffect: above
// 1/(1+MinRunEffect) and below 1+MinRunEffect, alike in both directions.
func withinRunEffect(v float64) bool { return v < 1+MinRunEffect && v > 1/(1+MinRunEffect) }

// OneRunGuard applies the MinRunEffect rule to a ratio from one run per
// side: a significant ratio within 1 ± MinRunEffect becomes "~", with a
// warning that says why.
func OneRunGuard(r Ratio) Ratio {
	if r.Significance == Significant && withinRunEffect(r.Value) {
		r.Significance = NotSignificant
		r.Warnings = append(r.Warnings, fmt.Sprintf("the interval %.3g–%.3g excludes 1, but with one run per side a difference under %.0f %% is within what two runs of the same system differ by; repeat the runs to support it",
			r.Low, r.High, 100*MinRunEffect))
	}
	return r
}

// OneInvocationGuard is the MinRunEffect rule for a comparison whose side
// holds several runs that are all the repetitions of one invocation
// (perflab run --repeat N): repetitions interleaved with each other share
// that invocation's time and machine, so their spread measures the
// variation within it, not between it and a run made at another time. A
// significant ratio within 1 ± MinRunEffect becomes "~", with a warning
// that names the side.
func OneInvocationGuard(c Comparison, side string) Comparison {
	return minEffectGuard(c, side+"'s runs are the repetitions of one run: "+
		"they vary less among themselves than two runs made at different times, which commonly differ by a few percent; "+
		"a difference under %.0f %% is shown as ~ unless each side has runs of several invocations")
}

// SideBySideGuard is the MinRunEffect rule for two systems compared side
// by side over the repetitions of one run: the repetitions see how each
// one's figure varies, not what sets the two apart whatever their work —
// their place on the machine, the order in which the generator reaches
// them, how the kernel accounts their CPU. Two built-in targets doing the
// same work differed by 2.4 % in every one of three repetitions. A
// significant ratio within 1 ± MinRunEffect becomes "~", with a warning.
func SideBySideGuard(c Comparison) Comparison {
	return minEffectGuard(c, "two systems side by side differ by a few percent whatever their work "+
		"(their place on the machine, the order the generator reaches them), which repetitions of one run do not see; "+
		"a difference under %.0f %% is shown as ~")
}

// minEffectGuard makes a significant ratio within 1 ± MinRunEffect "~"
// and adds a warning: the interval, then why (a format with one %.0f
// verb, for MinRunEffect in percent).
func minEffectGuard(c Comparison, why string) Comparison {
	r := c.Ratio
	if r.Significance != Significant || !withinRunEffect(r.Value) {
		return c
	}
	c.Ratio.Significance = NotSignificant
	c.Ratio.Warnings = append(c.Ratio.Warnings, fmt.Sprintf("the interval %.3g–%.3g excludes 1, but ", r.Low, r.High)+fmt.Sprintf(why, 100*MinRunEffect))
	c.Phrase = "~"
	return c
}

// CompareErrorRate compares the share of a subject's requests that failed,
// each side one list of intervals (its window) per run, so that a reader
// sees beside the latency, which is of successful requests only, how many
// requests it leaves out. With one run per side the ratio has no interval:
// a share of requests has no per-interval series whose spread would
// measure how two runs differ, and a difference under MinRunEffect (none
// included) is "~", as OneRunGuard makes it of a ratio with an interval.
// With more, Fieller's interval of the runs'
// rates (CompareRuns). When either side has no errors the ratio says
// nothing, and the phrase says which side had none.
func CompareErrorRate(subject string, a, b [][]*stats.Interval) Comparison {
	const what = "error rate"
	ra, rb := runErrorRates(a), runErrorRates(b)
	c := Comparison{Subject: subject, What: what, Unit: "fraction"}
	if len(ra) > 1 && len(rb) > 1 {
		c.Ratio = CompareRuns(ra, rb)
	} else {
		c.Ratio = newRatio(meanOr0(ra), meanOr0(rb), len(ra), len(rb), "failed / all requests over each window; one run per side gives no interval")
		c.Ratio.Significance = NoInterval
		if withinRunEffect(c.Ratio.Value) {
			c.Ratio.Significance = NotSignificant
			c.Ratio.Warnings = append(c.Ratio.Warnings, fmt.Sprintf("with one run per side, error rates within %.0f %% of each other are within what two runs of the same system differ by",
				100*MinRunEffect))
		}
	}
	ea, eb := c.Ratio.A, c.Ratio.B
	switch {
	case ea == 0 && eb == 0:
		c.Phrase = "~"
	case ea == 0:
		c.Phrase = "errors, against none"
	case eb == 0:
		c.Phrase = "no errors, against some"
	default:
		c.Phrase = c.Ratio.PhraseWith("lower", "higher", what)
	}
	if ea > 0 || eb > 0 {
		c.Ratio.Warnings = append(c.Ratio.Warnings, fmt.Sprintf("%.3g %% and %.3g %% of the requests failed: the latency figures are of successful requests only", 100*ea, 100*eb))
	}
	return c
}

// runErrorRates is each run's failed / all requests over its intervals;
// a run without requests has none.
func runErrorRates(runs [][]*stats.Interval) []float64 {
	var out []float64
	for _, ivs := range runs {
		var c stats.Counts
		for _, iv := range ivs {
			for _, st := range iv.Ops {
				c.Add(&st.Classes)
			}
		}
		if c.Total() > 0 {
			out = append(out, float64(c.Errors())/float64(c.Total()))
		}
	}
	return out
}

// IntervalRates is each interval's rate of operations (all of them) per
// second.
func IntervalRates(ivs []*stats.Interval) []float64 {
	out := make([]float64, 0, len(ivs))
	for _, iv := range ivs {
		secs := iv.End.Sub(iv.Start).Seconds()
		if secs <= 0 {
			continue
		}
		var n int64
		for _, st := range iv.Ops {
			n += st.Classes.Total()
		}
		out = append(out, float64(n)/secs)
	}
	return out
}

// IntervalLatencies is each interval's latency histogram of successful
// requests, all operations merged.
func IntervalLatencies(ivs []*stats.Interval) []*stats.Hist {
	out := make([]*stats.Hist, 0, len(ivs))
	for _, iv := range ivs {
		h := stats.NewHist()
		for _, st := range iv.Ops {
			h.Merge(st.Latency)
		}
		out = append(out, h)
	}
	return out
}

// InWindow is the intervals that lie wholly inside w.
func InWindow(ivs []*stats.Interval, w Window) []*stats.Interval { return inWindow(ivs, w) }
