package report

import (
	"cmp"
	"slices"

	"github.com/perflab/perflab/internal/analysis"
	"github.com/perflab/perflab/internal/stats"
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
	slices.SortFunc(pts, func(a, b xy) int { return cmp.Compare(a.X, b.X) })
	c := &lineChart{title: "Output tokens/s, total against per user (a point per step)",
		xLabel: "output tokens/s per user (1 / TPOT p50)", yLabel: "output tokens/s, total", markers: true}
	c.add("steps", pts, colour(0), nil)
	return c.svg()
}

// profileParetoChart is paretoChart for a plan's profiles: each
// workload's output tokens/s in total against per user, a point per
// profile it ran in (a concurrency or rate sweep written as profiles),
// a line per workload and cell. Nil when no workload has two such points.
func profileParetoChart(r *view.Run) []byte {
	c := &lineChart{title: "Output tokens/s, total against per user (a point per profile)",
		xLabel: "output tokens/s per user (1 / TPOT p50)", yLabel: "output tokens/s, total", markers: true}
	i := 0
	cells := r.AllCells()
	for _, cell := range cells {
		byWorkload := map[string][]xy{}
		var names []string
		for _, p := range cell.Phases {
			for _, s := range p.Workloads {
				pt, ok := tokenRates(s)
				if !ok {
					continue
				}
				name := s.Workload.Short
				if name == "" {
					name = s.Workload.Name
				}
				if byWorkload[name] == nil {
					names = append(names, name)
				}
				byWorkload[name] = append(byWorkload[name], pt)
			}
		}
		for _, name := range names {
			pts := byWorkload[name]
			if len(pts) < 2 {
				continue
			}
			slices.SortFunc(pts, func(a, b xy) int { return cmp.Compare(a.X, b.X) })
			if len(cells) > 1 {
				name = cell.Name + " " + name
			}
			c.add(name, pts, colour(i), nil)
			i++
		}
	}
	if len(c.lines) == 0 {
		return nil
	}
	return c.svg()
}

// tokenRates is a workload's point of the Pareto chart: one stream's
// rate (1 / TPOT p50) and the output tokens per second of all of them
// over the window.
func tokenRates(s *analysis.Summary) (xy, bool) {
	tpot := s.Measures[stats.TPOT]
	if tpot.Count == 0 || tpot.P50 <= 0 || s.Seconds <= 0 {
		return xy{}, false
	}
	var out int64
	for _, op := range s.Ops {
		out += op.Counters[stats.OutputTokens]
	}
	if out == 0 {
		return xy{}, false
	}
	return xy{1 / tpot.P50.Seconds(), float64(out) / s.Seconds}, true
}
