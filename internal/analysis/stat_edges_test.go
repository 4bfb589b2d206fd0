package analysis

import (
	"testing"
	"time"

	"github.com/perflab/perflab/internal/observe"
)

// every is n points, the k-th (1-based) at t0 + first + (k−1)·step, of value v(k).
func every(first, step time.Duration, n int, v func(k int) float64) []Point {
	ps := make([]Point, n)
	for k := 1; k <= n; k++ {
		ps[k-1] = Point{T: t0.Add(first + time.Duration(k-1)*step), V: v(k)}
	}
	return ps
}

// twoTargets summarises the CPU of a target and an exporter over
// (t0, t0+end]: "target" is listed first.
func twoTargets(end time.Duration, target, exporter []Point) *Resources {
	return SummarizeResources(ResourceInput{
		Window:     Window{Start: t0, End: t0.Add(end)},
		Components: []Component{{Name: "target", Kind: "prometheus"}, {Name: "exporter", Kind: "run"}},
		Series: map[string]map[string][]Point{
			"target":   {observe.ProcessCPUCores: target},
			"exporter": {observe.CPUCores: exporter},
		},
	})
}

// TestSummedSeriesHalfAStepApart: two components scraped every 2 s, the
// target at the even seconds (10, 20, … 100 cores), the exporter at the
// odd ones (1, 2, … 10 cores), both 10 samples. The summed series is at the
// first listed's times, and each is summed with the other's value half a
// step away, the earlier of the two as near (the one at or before it, as a
// Prometheus lookback reads it): 11, 22, … 110 cores.
func TestSummedSeriesHalfAStepApart(t *testing.T) {
	target := every(2*time.Second, 2*time.Second, 10, func(k int) float64 { return float64(10 * k) })
	exporter := every(time.Second, 2*time.Second, 10, func(k int) float64 { return float64(k) })
	res := twoTargets(20*time.Second, target, exporter)
	if s := res.CPU.Summed; s.N != 10 || s.Max != 110 || s.Avg != 60.5 {
		t.Errorf("summed CPU series: %d samples, max %g, avg %g; want 10, 110, 60.5", s.N, s.Max, s.Avg)
	}
}

// TestSummedSeriesOfTheCoarserOfAsManySamples: a target scraped every 2 s
// over the whole window (2 … 20 s) and an exporter ticking every second in
// its second half only (10.3 … 19.3 s) have 10 samples each. The summed
// series is at the target's times, the coarser: 6 of them have an
// exporter tick within a second (its last step, at 20 s, the tick at
// 19.3 s), where the exporter's own times would have found 5.
func TestSummedSeriesOfTheCoarserOfAsManySamples(t *testing.T) {
	one := func(int) float64 { return 1 }
	target := every(2*time.Second, 2*time.Second, 10, one)
	exporter := every(10300*time.Millisecond, time.Second, 10, one)
	res := twoTargets(20*time.Second, target, exporter)
	if s := res.CPU.Summed; s.N != 6 || s.Max != 2 {
		t.Errorf("summed CPU series: %d samples, max %g; want 6, 2", s.N, s.Max)
	}
	const want = "the summed CPU series has 6 of the 10 sample times of its most sparsely sampled component"
	if !resourceWarned(res.Warnings, want) {
		t.Errorf("no warning %q in %q", want, res.Warnings)
	}
}

// TestWindowOfTwoSamples: a window with two samples of a target scraped
// every 10 s is sampled at 10s, and each is summed with the exporter's
// tick nearest to it (0.274 s past each second): 2 samples of 3 cores.
func TestWindowOfTwoSamples(t *testing.T) {
	target := every(10*time.Second, 10*time.Second, 2, func(int) float64 { return 2 })
	exporter := every(1274*time.Millisecond, time.Second, 19, func(int) float64 { return 1 })
	res := twoTargets(20*time.Second, target, nil)
	if res.Ticks != 2 || res.Step != 10*time.Second {
		t.Errorf("target alone: %d sample times at %v, want 2 at 10s", res.Ticks, res.Step)
	}
	res = twoTargets(20*time.Second, target, exporter)
	if s := res.CPU.Summed; s.N != 2 || s.Max != 3 {
		t.Errorf("summed CPU series: %d samples, max %g; want 2, 3", s.N, s.Max)
	}
}

// RateOver weighs each sample by the part of the window its span covers: a
// process that used 1 core for 3 s and 0.2 cores for 1 s, sampled late
// once (a 3 s span) and on time once, used 3.2 CPU seconds in 4 s, where
// the mean of the two values says 0.6 cores. Spans reaching outside the
// window count only inside it, and a window no span meets has no rate.
func TestRateOverWeighsSpans(t *testing.T) {
	at := func(s float64, v float64) Point {
		return Point{T: t0.Add(time.Duration(s * float64(time.Second))), V: v}
	}
	ps := []Point{at(0, 0), at(3, 1), at(4, 0.2)}
	if got, ok := RateOver(ps, Window{Start: t0, End: t0.Add(4 * time.Second)}); !ok || !near(got, 0.8) {
		t.Errorf("over the whole: %v (%v), want 3.2 CPU s over 4 s = 0.8 cores", got, ok)
	}
	if got := StatOf(values(ps[1:])).Avg; near(got, 0.8) {
		t.Errorf("the mean of the values is %v: the test does not tell the two apart", got)
	}
	// (2, 3.5]: 1 s at 1 core and 0.5 s at 0.2
	if got, ok := RateOver(ps, Window{Start: t0.Add(2 * time.Second), End: t0.Add(3500 * time.Millisecond)}); !ok || !near(got, 1.1/1.5) {
		t.Errorf("over (2 s, 3.5 s]: %v (%v), want 1.1 CPU s over 1.5 s", got, ok)
	}
	// past the last sample: only the covered part counts
	if got, ok := RateOver(ps, Window{Start: t0.Add(3 * time.Second), End: t0.Add(10 * time.Second)}); !ok || !near(got, 0.2) {
		t.Errorf("over (3 s, 10 s]: %v (%v), want 0.2 over the 1 s covered", got, ok)
	}
	if got, ok := RateOver(ps, Window{Start: t0.Add(5 * time.Second), End: t0.Add(6 * time.Second)}); ok {
		t.Errorf("a window after the samples has rate %v", got)
	}
	if _, ok := RateOver(ps[:1], Window{Start: t0, End: t0.Add(time.Second)}); ok {
		t.Error("one sample, which has no span, has a rate")
	}
}
