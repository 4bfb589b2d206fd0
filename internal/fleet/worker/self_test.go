package worker

import (
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/perflab/perflab/internal/engine"
	"github.com/perflab/perflab/internal/shard"
)

func TestSelfVerdict(t *testing.T) {
	for _, c := range []struct {
		me    shard.Self
		bound bool
		why   string
	}{
		{shard.Self{Samples: 12, CPUP99: 0.95, CoresAvailable: 1}, true, "generator CPU p99 0.95 of 1 cores"},
		// Lag alone, on a worker whose CPU was far from its limit, is the
		// machine's doing, not the worker's limit (issue 11).
		{shard.Self{Samples: 12, CPUP99: 0.2, CoresAvailable: 2, LagP99: 0.020}, false, ""},
		{shard.Self{Samples: 12, CPUP99: 0.5, CoresAvailable: 1, LagP99: 0.001}, false, ""},
		{shard.Self{CPUP99: 0, CoresAvailable: 0}, false, ""},
		// Fewer samples than a P99 needs: no CPU verdict, as a single
		// process's generator gets none (Resources.judgeGenerator), however
		// high the few samples were.
		{shard.Self{Samples: 5, CPUP99: 1, CPUMax: 1, CoresAvailable: 1}, false, ""},
	} {
		bound, why := selfVerdict(c.me)
		if bound != c.bound || !strings.Contains(why, c.why) {
			t.Errorf("%+v: %v %q, want %v %q", c.me, bound, why, c.bound, c.why)
		}
	}
}

// A worker reports every figure of how its engine ended a workload: the
// arrivals its dispatcher did not issue too, which the coordinator adds up
// for the client-bound rule.
func TestWorkloadEndCarriesTheEngines(t *testing.T) {
	at := time.Unix(1_800_000_000, 0)
	s := engine.Summary{Start: at, LoadEnd: at.Add(10 * time.Second), End: at.Add(11 * time.Second), Scheduled: 470,
		Dropped: 31, Unissued: 30, MaxVUs: 7, Interrupted: true,
		Window: engine.Window{Start: at.Add(time.Second), End: at.Add(10 * time.Second), Rule: "rule"}}
	want := shard.WorkloadEnd{Name: "p/w", Start: at, LoadEnd: at.Add(10 * time.Second), End: at.Add(11 * time.Second),
		Scheduled: 470, Dropped: 31, Unissued: 30, MaxVUs: 7, Interrupted: true,
		WindowStart: at.Add(time.Second), WindowEnd: at.Add(10 * time.Second), WindowRule: "rule"}
	if got := workloadEnd("p/w", s); !reflect.DeepEqual(got, want) {
		t.Errorf("%+v\nwant %+v", got, want)
	}
}
