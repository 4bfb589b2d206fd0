package report

import (
	"slices"

	"github.com/perflab/perflab/internal/view"
)

// paretoChart is a sweep's output tokens per second in total against
// per user (one stream's own rate, 1 / its TPOT p50), a point per step
// that has both, joined in order of the per-user rate: vLLM's benchmark
// view of the trade between serving many users and serving each fast.
// Nil when fewer than two steps have both.
func paretoChart(s *view.Search) []byte {
	var pts []xy
	for _, st := range s.Steps {
		if l := st.LLM; l != nil && l.PerUserTokensPS > 0 && l.OutputTokensPS > 0 {
			pts = append(pts, xy{l.PerUserTokensPS, l.OutputTokensPS})
		}
	}
	if len(pts) < 2 {
		return nil
	}
	slices.SortFunc(pts, func(a, b xy) int { return cmpFloat(a.X, b.X) })
	c := &lineChart{title: "Output tokens/s, total against per user (a point per step)",
		xLabel: "output tokens/s per user (1 / TPOT p50)", yLabel: "output tokens/s, total", markers: true}
	c.add("steps", pts, colour(0), nil)
	return c.svg()
}

func cmpFloat(a, b float64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}
