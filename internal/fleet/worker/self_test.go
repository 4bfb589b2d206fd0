package worker

import (
	"strings"
	"testing"

	"github.com/perflab/perflab/internal/fleet"
)

func TestSelfVerdict(t *testing.T) {
	for _, c := range []struct {
		me    fleet.Self
		bound bool
		why   string
	}{
		{fleet.Self{Samples: 12, CPUP99: 0.95, CoresAvailable: 1}, true, "generator CPU p99 0.95 of 1 cores"},
		// Lag alone, on a worker whose CPU was far from its limit, is the
		// machine's doing, not the worker's limit (issue 11).
		{fleet.Self{Samples: 12, CPUP99: 0.2, CoresAvailable: 2, LagP99: 0.020}, false, ""},
		{fleet.Self{Samples: 12, CPUP99: 0.5, CoresAvailable: 1, LagP99: 0.001}, false, ""},
		{fleet.Self{CPUP99: 0, CoresAvailable: 0}, false, ""},
		// Fewer samples than a P99 needs: no CPU verdict, as a single
		// process's generator gets none (Resources.judgeGenerator), however
		// high the few samples were.
		{fleet.Self{Samples: 5, CPUP99: 1, CPUMax: 1, CoresAvailable: 1}, false, ""},
	} {
		bound, why := selfVerdict(c.me)
		if bound != c.bound || !strings.Contains(why, c.why) {
			t.Errorf("%+v: %v %q, want %v %q", c.me, bound, why, c.bound, c.why)
		}
	}
}
