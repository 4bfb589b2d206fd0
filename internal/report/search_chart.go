package report

import (
	"cmp"
	"slices"
	"time"

	"github.com/perflab/perflab/internal/analysis"
	"github.com/perflab/perflab/internal/view"
)

// rateChart is the latency-against-rate curve of a search or sweep: each
// step's p50 and p99 (and an LLM step's TTFT p50 and p99) at the rate it
// achieved, the knee's rate marked by a shaded band; nil with fewer than
// two steps to draw. A sweep's throughput step is left out: it queues as
// many requests as it has VUs, so its latency is no point of the curve
// (as for the knee).
func rateChart(s *view.Search) []byte {
	var steps []view.SearchStep
	for _, st := range s.Steps {
		if st.Kind != analysis.SweepThroughput && st.P50 > 0 {
			steps = append(steps, st)
		}
	}
	if len(steps) < 2 {
		return nil
	}
	slices.SortStableFunc(steps, func(a, b view.SearchStep) int { return cmp.Compare(a.Achieved, b.Achieved) })
	c := &lineChart{title: "Latency against the rate achieved, per step", xLabel: "operations/s achieved", yLabel: "latency (ms)"}
	if k := s.Knee; k != nil {
		lo := k.Below
		if lo == 0 {
			lo = k.Rate
		}
		c.band = &[2]float64{lo, k.Rate}
	}
	lines := []struct {
		name string
		of   func(view.SearchStep) (time.Duration, bool)
	}{
		{"p50", func(st view.SearchStep) (time.Duration, bool) { return st.P50, true }},
		{"p99", func(st view.SearchStep) (time.Duration, bool) { return st.P99, true }},
		{"TTFT p50", func(st view.SearchStep) (time.Duration, bool) { return llmOf(st).TTFTP50, st.LLM != nil }},
		{"TTFT p99", func(st view.SearchStep) (time.Duration, bool) { return llmOf(st).TTFTP99, st.LLM != nil }},
	}
	for i, l := range lines {
		var pts []xy
		for _, st := range steps {
			if d, ok := l.of(st); ok {
				pts = append(pts, xy{X: st.Achieved, Y: ms(d)})
			}
		}
		c.add(l.name, pts, colour(i), dashes[i/2])
	}
	return c.svg()
}

// llmOf is a step's LLM figures, empty when it has none.
func llmOf(st view.SearchStep) view.StepLLM {
	if st.LLM == nil {
		return view.StepLLM{}
	}
	return *st.LLM
}
