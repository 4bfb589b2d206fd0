package report

import (
	"testing"
	"time"

	"github.com/perflab/perflab/internal/analysis"
)

// TestLatencyChartQuantilesNeedTheirCounts: an interval draws a quantile
// only with the latencies that quantile needs (a p90 10, a p99 100): at
// 50 an interval its p99 would be its max. Intervals of 250 ms are drawn
// whole, and the stub that ends a load (under half an interval) is not.
func TestLatencyChartQuantilesNeedTheirCounts(t *testing.T) {
	t0 := time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)
	const iv = 250 * time.Millisecond
	figures := func(latencies int64) []analysis.IntervalFigures {
		var out []analysis.IntervalFigures
		for k := range 8 {
			start := t0.Add(time.Duration(k) * iv)
			out = append(out, analysis.IntervalFigures{Start: start, End: start.Add(iv), Latencies: latencies,
				P50: time.Millisecond, P90: 2 * time.Millisecond, P99: 3 * time.Millisecond})
		}
		stub := t0.Add(8 * iv)
		return append(out, analysis.IntervalFigures{Start: stub, End: stub.Add(iv / 4), Latencies: latencies,
			P50: time.Millisecond, P90: 2 * time.Millisecond, P99: 3 * time.Millisecond})
	}
	sp := chartSpan{start: t0, end: t0.Add(8 * iv)}
	c := latencyChart([]workloadTimeline{{name: "slow", figures: figures(50)}, {name: "fast", figures: figures(200)}}, sp)
	points := map[string]int{}
	for _, l := range c.lines {
		points[l.name] = len(l.pts)
	}
	want := map[string]int{"p50 slow": 8, "p90 slow": 8, "p50 fast": 8, "p90 fast": 8, "p99 fast": 8}
	if len(points) != len(want) {
		t.Errorf("lines %v, want %v", points, want)
	}
	for name, n := range want {
		if points[name] != n {
			t.Errorf("line %q: %d points, want %d (lines %v)", name, points[name], n, points)
		}
	}
}
