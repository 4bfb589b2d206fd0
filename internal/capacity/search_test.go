package capacity

import (
	"testing"

	"github.com/perflab/perflab/internal/analysis"
	"github.com/perflab/perflab/internal/plan"
	"github.com/perflab/perflab/internal/view"
)

// A search's steps are the plan's workload at each step's rate, open; a
// sweep's synchronous and throughput steps are closed at 1 and SweepVUs
// VUs, its constant steps open with their VUs capped at SweepVUs; no step
// keeps the workload's own gates (the search judges its own).
func TestStepWorkloads(t *testing.T) {
	w := plan.Workload{Name: "get", Model: plan.Closed, Concurrency: 8, VUs: plan.VUs{Min: 2, Max: 500}, SLO: []string{"p99 < 1s"}}
	s := NewSearch(SearchConfig{Start: 100, Max: 1000, Factor: 2, Bisect: 2})
	sh, done := s.next()
	got := s.stepWorkload(w, sh)
	if done || got.Model != plan.Open || got.Rate.PerSecond != 100 || got.Concurrency != 0 || got.VUs != w.VUs || got.SLO != nil {
		t.Errorf("search's first step %+v (done %v), want open at 100/s with the plan's VUs and no gates", got, done)
	}

	sw := NewSearch(SearchConfig{Sweep: 4, SweepVUs: 16})
	var kinds []string
	for i, achieved := range []float64{50, 400, 100} {
		sh, done := sw.next()
		if done {
			t.Fatalf("the sweep ended after %q", kinds)
		}
		got := sw.stepWorkload(w, sh)
		kinds = append(kinds, sh.kind)
		switch sh.kind {
		case analysis.SweepSynchronous, analysis.SweepThroughput:
			if got.Model != plan.Closed || got.Concurrency != sh.vus || got.Rate.PerSecond != 0 {
				t.Errorf("%s step %+v, want closed at %d VUs", sh.kind, got, sh.vus)
			}
		default:
			if got.Model != plan.Open || got.Rate.PerSecond != sh.rate || got.VUs != (plan.VUs{Min: 2, Max: 16}) {
				t.Errorf("%s step %+v, want open at %v/s with VUs 2–16", sh.kind, got, sh.rate)
			}
		}
		sw.record(sh, view.SearchStep{N: i + 1, Achieved: achieved})
	}
	if kinds[0] != analysis.SweepSynchronous || kinds[1] != analysis.SweepThroughput {
		t.Errorf("sweep steps %q, want synchronous then throughput first", kinds)
	}
}
