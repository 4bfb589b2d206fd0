//go:build linux

package e2e

import (
	"fmt"
	"math"
	"slices"
)

// panelCheck is how a panel's figures are checked: by is the labels, run
// aside, a figure is per; check compares the series of one key with the
// summary's figure and says what is wrong.
type panelCheck struct {
	by    []string
	check func(f figure, ss []panelSample) string
	// of, when set, is which figures the panel has a series of (a
	// workload of some driver); a run with none of them shows no series.
	of func(f figure) bool
}

var (
	byOperation = []string{"cell", "profile", "workload", "operation"}
	byWorkload  = []string{"cell", "profile", "workload"}
	byCell      = []string{"cell"}
	byComponent = []string{"cell", "component"}
)

// panelChecks are the checks of the dashboard's panels, by title. Rates
// at the run's end over rateInterval cover each cell's whole load: the
// counts they are set against are summary.json's totals over it.
var panelChecks = map[string]panelCheck{
	"Request rate": {by: byOperation, check: func(f figure, ss []panelSample) string {
		return one(ss, f.requests/f.seconds, 0.03, 0, "requests/s")
	}},
	"Errors by class": {by: byOperation, check: func(f figure, ss []panelSample) string {
		n := 0.0
		for _, s := range ss {
			// A cell without errors shows a 0, of no class the load had.
			if n += s.v * f.seconds; !slices.Contains(f.whole.classes, s.labels["class"]) && (s.v != 0 || f.errors != 0) {
				return fmt.Sprintf("%s: %g errors/s of class %q, the load had %v", s.legend, s.v, s.labels["class"], f.whole.classes)
			}
		}
		return within(n, f.errors, 0.03, 0.5, fmt.Sprintf("%d series of errors/s × %.2f s", len(ss), f.seconds))
	}},
	"Error ratio": {by: byWorkload, check: func(f figure, ss []panelSample) string {
		return one(ss, f.errors/f.requests, 0.03, 0.002, "error ratio")
	}},
	"Latency quantiles (successful requests, per interval)": {by: byOperation, check: func(f figure, ss []panelSample) string {
		return lastQuantiles(ss, f.whole.hists)
	}},
	// The mean of the whole load, the first interval too, as exported:
	// the ratio of two rates over the same samples, exact but for rounding.
	"Mean latency (successful requests)": {by: byOperation, check: func(f figure, ss []panelSample) string {
		return one(ss, f.whole.latencySum/f.whole.count, 1e-6, 0, "mean latency (s)")
	}},
	"Dropped and unissued arrivals": {by: byWorkload, check: func(f figure, ss []panelSample) string {
		return twoRates(ss, f.seconds, f.dropped, "dropped/s", f.unissued, "unissued/s", 0.03, 0.01)
	}},
	"VUs in use":        {by: byWorkload, check: bounded(1, func(f figure) float64 { return f.vusMax })},
	"Scheduler lag p99": {by: byWorkload, check: bounded(0, func(f figure) float64 { return f.lagMax/1000*1.001 + 1e-6 })},
	"Generator CPU": {by: byCell, check: func(f figure, ss []panelSample) string {
		for _, s := range ss {
			if s.ref == "B" && s.v != f.cores || s.ref == "A" && (s.v < 0 || s.v > f.cores) {
				return fmt.Sprintf("%s %g, the summary's cores available %g", s.legend, s.v, f.cores)
			}
		}
		return count(ss, 2)
	}},
	"Generator memory":        {by: byCell, check: positive},
	"Component CPU":           {by: byComponent, check: bounded(0, func(figure) float64 { return math.Inf(1) })},
	"Component memory":        {by: byComponent, check: positive},
	"Component Go heap":       {by: byComponent, check: positive},
	"Component GC per minute": {by: byComponent, check: bounded(0, func(figure) float64 { return math.Inf(1) })},
}

// one checks that ss is one series whose value is near want.
func one(ss []panelSample, want, rel, abs float64, what string) string {
	if msg := count(ss, 1); msg != "" {
		return msg
	}
	return within(ss[0].v, want, rel, abs, what)
}

func count(ss []panelSample, n int) string {
	if len(ss) != n {
		return fmt.Sprintf("%d series, want %d", len(ss), n)
	}
	return ""
}

// within says how got differs from want by more than rel of it and abs.
func within(got, want, rel, abs float64, what string) string {
	if math.IsNaN(want) || math.Abs(got-want) > rel*math.Abs(want)+abs {
		return fmt.Sprintf("%s %g, the run's %g", what, got, want)
	}
	return ""
}

// bounded checks one series between lo and hi(f).
func bounded(lo float64, hi func(figure) float64) func(figure, []panelSample) string {
	return func(f figure, ss []panelSample) string {
		if msg := count(ss, 1); msg != "" {
			return msg
		}
		if v := ss[0].v; v < lo || v > hi(f) {
			return fmt.Sprintf("%g, want %g to %g", v, lo, hi(f))
		}
		return ""
	}
}

func positive(_ figure, ss []panelSample) string {
	if msg := count(ss, 1); msg != "" {
		return msg
	}
	if ss[0].v <= 0 {
		return fmt.Sprintf("%g, want more than 0", ss[0].v)
	}
	return ""
}

// twoRates checks a panel of two series, A and B, against a and b (what
// the summary counted over its window of seconds) per second: each
// within tol of its figure, or abs.
func twoRates(ss []panelSample, seconds, a float64, whatA string, b float64, whatB string, tol, abs float64) string {
	for _, s := range ss {
		want, what := a, whatA
		if s.ref == "B" {
			want, what = b, whatB
		}
		if msg := within(s.v, want/seconds, tol, abs, what); msg != "" {
			return msg
		}
	}
	return count(ss, 2)
}
