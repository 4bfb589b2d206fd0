package fleet

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/perflab/perflab/internal/driver"
	"github.com/perflab/perflab/internal/results"
	"github.com/perflab/perflab/internal/run"
	"github.com/perflab/perflab/internal/shard"
)

func endOfWorker(t *testing.T, w int, d shard.Detail, errText string) *shard.End {
	t.Helper()
	b, err := json.Marshal(d)
	if err != nil {
		t.Fatal(err)
	}
	return &shard.End{Worker: w, Error: errText, Detail: b}
}

// TestPhaseShardsAddUp: the workers' ends make one workload end (arrivals
// and VUs added up, the last load end, the window all were in), facts
// once or per worker where they differ, checks added up, and a row per
// worker naming the one that was lost.
func TestPhaseShardsAddUp(t *testing.T) {
	at := time.Unix(1_800_000_000, 0)
	sw := func(sched uint64, loadEnd, ws, we time.Duration, acked string) shard.WorkloadEnd {
		return shard.WorkloadEnd{Name: "p/w", Start: at, LoadEnd: at.Add(loadEnd), End: at.Add(loadEnd + time.Second),
			Scheduled: sched, Dropped: 1, MaxVUs: 3, WindowStart: at.Add(ws), WindowEnd: at.Add(we), WindowRule: "rule",
			Facts:  []driver.Fact{{Name: "series per target", Value: "400"}, {Name: "samples acknowledged", Value: acked}},
			Checks: []driver.Check{{Name: "samples", Expected: 100, Found: 100, Unit: "samples"}}}
	}
	ps := newPhaseShards(3, at, map[int]shard.Hello{2: {Host: "c"}})
	ps.count(0, nil)
	ps.end(0, endOfWorker(t, 0, shard.Detail{Host: "a", Workloads: []shard.WorkloadEnd{sw(334, 10*time.Second, time.Second, 10*time.Second, "5")}},
		""))
	w1 := sw(333, 11*time.Second, 2*time.Second, 9*time.Second, "6")
	w1.Checks[0].Found, w1.Checks[0].State, w1.Checks[0].Note = 90, driver.CheckLost, "10 samples missing"
	ps.end(1, endOfWorker(t, 1, shard.Detail{Host: "b", Workloads: []shard.WorkloadEnd{w1},
		Self: shard.Self{Samples: 12, CPUP99: 1.9, CPUMax: 2, CoresAvailable: 2, ClientBound: true, ClientWhy: "cpu"}}, ""))
	ps.fail(2, results.ShardLost, "never wrote its end")
	ps.fail(0, results.ShardFailed, "too late: it ended") // ended already: kept completed

	s, ok := ps.summary("p/w", true)
	if !ok || s.Scheduled != 667 || s.Dropped != 2 || s.MaxVUs != 6 || !s.LoadEnd.Equal(at.Add(11*time.Second)) ||
		!s.Window.Start.Equal(at.Add(2*time.Second)) || !s.Window.End.Equal(at.Add(9*time.Second)) {
		t.Errorf("closed-model summary %+v", s)
	}
	if s, _ := ps.summary("p/w", false); !s.Window.Start.Equal(at.Add(2*time.Second)) || !s.Window.End.Equal(at.Add(10*time.Second)) {
		t.Errorf("open-model window %+v, want from the latest start to the latest end", s.Window)
	}
	facts := ps.facts("p/w")
	var names []string
	for _, f := range facts {
		names = append(names, f.Name+"="+f.Value)
	}
	if got := strings.Join(names, ", "); got != "series per target=400, samples acknowledged (worker 0)=5, samples acknowledged (worker 1)=6" {
		t.Errorf("facts: %s", got)
	}
	checks, _ := ps.checks("p/w")
	if len(checks) != 1 || checks[0].Expected != 200 || checks[0].Found != 190 || checks[0].State != driver.CheckLost ||
		!strings.Contains(checks[0].Note, "worker 1: 10 samples missing") {
		t.Errorf("checks %+v", checks)
	}
	rows := ps.rows(0, "p")
	if rows[0].State != results.ShardCompleted || rows[1].Host != "b" || !rows[1].ClientBound || rows[1].CPUP99 != 1.9 ||
		rows[2].State != results.ShardLost || rows[2].Host != "c" || rows[2].HasCPU {
		t.Errorf("rows %+v", rows)
	}
	if failed := ps.failed(); len(failed) != 1 || failed[0] != "worker 2 (c): never wrote its end" {
		t.Errorf("failed %q", failed)
	}
}

// TestPhaseShardsAddUpUnissued: the arrivals each worker's dispatcher did
// not issue travel in its end and add up, so that the merged workload
// end records them and the one client-bound rule sees them.
func TestPhaseShardsAddUpUnissued(t *testing.T) {
	at := time.Unix(1_800_000_000, 0)
	ps := newPhaseShards(2, at, nil)
	for w, unissued := range []uint64{300, 200} {
		end := shard.WorkloadEnd{Name: "p/w", Start: at, LoadEnd: at.Add(time.Second), End: at.Add(time.Second),
			Scheduled: 500, Unissued: unissued, Dropped: unissued}
		ps.end(w, endOfWorker(t, w, shard.Detail{Workloads: []shard.WorkloadEnd{end}}, ""))
	}
	if s, ok := ps.summary("p/w", false); !ok || s.Scheduled != 1000 || s.Unissued != 500 || s.Dropped != 500 {
		t.Errorf("scheduled %d, unissued %d, dropped %d; want 1000, 500, 500", s.Scheduled, s.Unissued, s.Dropped)
	}
}

// TestShardChecksTakeTheWorstState: a check late on one worker and
// unverified on another is unverified, naming the worker and its reason,
// with the late data and the longest delay kept; one that was fine on
// every worker stays ok.
func TestShardChecksTakeTheWorstState(t *testing.T) {
	at := time.Unix(1_800_000_000, 0)
	ps := newPhaseShards(2, at, nil)
	checks := [][]driver.Check{
		{{Name: "traces", Expected: 50, Found: 50, State: driver.CheckLate, Late: 4, LateBy: 3 * time.Second},
			{Name: "spans", Expected: 500, Found: 500, State: driver.CheckOK}},
		{{Name: "traces", Expected: 50, Found: 20, State: driver.CheckUnverified, Reason: "status 503"},
			{Name: "spans", Expected: 500, Found: 500, State: driver.CheckOK}},
	}
	for w, cs := range checks {
		ps.count(w, nil)
		ps.end(w, endOfWorker(t, w, shard.Detail{Workloads: []shard.WorkloadEnd{{Name: "p/w", Start: at, Checks: cs}}}, ""))
	}
	got, _ := ps.checks("p/w")
	if len(got) != 2 {
		t.Fatalf("checks %+v", got)
	}
	tr, sp := got[0], got[1]
	if tr.State != driver.CheckUnverified || tr.Expected != 100 || tr.Found != 70 || tr.Late != 4 || tr.LateBy != 3*time.Second ||
		!strings.Contains(tr.Reason, "worker 1: unverified: status 503") {
		t.Errorf("traces: %+v", tr)
	}
	if sp.State != driver.CheckOK || sp.Expected != 1000 || sp.Found != 1000 {
		t.Errorf("spans: %+v", sp)
	}
}

// TestShardEndsCarryUnissued: the arrivals a worker's dispatcher did not
// issue reach the merged workload, added up over the workers, as a single
// process records them: the client-bound rule's schedule signal must see
// them in a distributed run too.
func TestShardEndsCarryUnissued(t *testing.T) {
	at := time.Unix(1_800_000_000, 0)
	ps := newPhaseShards(2, at, nil)
	for w, unissued := range []uint64{30, 12} {
		end := shard.WorkloadEnd{Name: "p/w", Start: at, LoadEnd: at.Add(10 * time.Second), End: at.Add(11 * time.Second), Scheduled: 470,
			Unissued: unissued, WindowStart: at.Add(time.Second), WindowEnd: at.Add(10 * time.Second), WindowRule: "rule"}
		ps.count(w, nil)
		ps.end(w, endOfWorker(t, w, shard.Detail{Workloads: []shard.WorkloadEnd{end}}, ""))
	}
	s, ok := ps.summary("p/w", false)
	if !ok || s.Scheduled != 940 || s.Unissued != 42 {
		t.Errorf("summary %+v, want 940 scheduled and 42 unissued", s)
	}
	if end := run.EndOf(s, 0, "the plan"); end.Unissued != 42 {
		t.Errorf("the workload's end holds %d unissued, want 42", end.Unissued)
	}
}

// TestShardChecksKeepEachWorkersLoss: a worker's loss is not made up by
// another worker's read-back that found more than it acknowledged (a
// timed-out request stored all the same): the merged check is lost by
// what the losing worker missed, not "LOST 0"; and the states do not
// get worse than the worst worker's: late and ok are late, lost and
// unverified lost.
func TestShardChecksKeepEachWorkersLoss(t *testing.T) {
	at := time.Unix(1_800_000_000, 0)
	ps := newPhaseShards(2, at, nil)
	checks := [][]driver.Check{
		{{Name: "samples", Expected: 100, Found: 90, State: driver.CheckLost, Note: "10 samples missing"},
			{Name: "series", Expected: 10, Found: 10, State: driver.CheckLate, Late: 2},
			{Name: "exemplars", Expected: 10, Found: 5, State: driver.CheckLost}},
		{{Name: "samples", Expected: 100, Found: 110, State: driver.CheckOK},
			{Name: "series", Expected: 10, Found: 10, State: driver.CheckOK},
			{Name: "exemplars", Expected: 10, State: driver.CheckUnverified, Reason: "HTTP 503"}},
	}
	for w, cs := range checks {
		ps.count(w, nil)
		ps.end(w, endOfWorker(t, w, shard.Detail{Workloads: []shard.WorkloadEnd{{Name: "p/w", Start: at, Checks: cs}}}, ""))
	}
	got, _ := ps.checks("p/w")
	if len(got) != 3 {
		t.Fatalf("checks %+v", got)
	}
	if s := got[0]; s.State != driver.CheckLost || s.Expected != 200 || s.Expected-s.Found != 10 {
		t.Errorf("samples: %+v, want lost, 10 of 200 missing", s)
	}
	if s := got[1]; s.State != driver.CheckLate || s.Late != 2 {
		t.Errorf("series: %+v, want late", s)
	}
	// 5 known lost on worker 0; worker 1's 10 are unknown, not lost.
	if s := got[2]; s.State != driver.CheckLost || s.Expected-s.Found != 5 || !strings.Contains(s.Note, "worker 1: unverified: HTTP 503") {
		t.Errorf("exemplars: %+v, want lost, 5 of 20 missing, worker 1 named unverified", s)
	}
}
