package fleet

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/perflab/perflab/internal/driver"
	"github.com/perflab/perflab/internal/engine"
	"github.com/perflab/perflab/internal/results"
	"github.com/perflab/perflab/internal/run"
	"github.com/perflab/perflab/internal/shard"
)

// cannotCheck is a workload's end as a worker writes it when its driver
// could not read back at all (worker.afterLoad): one unverified check,
// with the reason, as a single process records it.
func cannotCheck(err error) shard.WorkloadEnd {
	return shard.WorkloadEnd{Name: "p/w", Start: time.Unix(1_800_000_000, 0), Checks: run.SettledChecks(nil, err)}
}

// TestWorkerThatCannotCheckIsUnverified: a worker whose driver could not
// read back at all says so as an unverified check, as a single process
// records it (recordChecks), so that the merged run is unverified and
// exits 1 as a single process's would; not as a note beside the checks
// of the workers that could, which passed the run.
func TestWorkerThatCannotCheckIsUnverified(t *testing.T) {
	at := time.Unix(1_800_000_000, 0)
	for _, c := range []struct {
		name string
		err  error
	}{
		{"Verify", errors.New("query refused: 401")},
		{"ReadBackState", errors.New("query refused: 401")},
	} {
		ps := newPhaseShards(2, at, nil)
		for w := range 2 {
			sw := cannotCheck(c.err)
			ps.count(w, nil)
			ps.end(w, endOfWorker(t, w, shard.Detail{Workloads: []shard.WorkloadEnd{sw}}, ""))
		}
		checks, _ := ps.checks("p/w")
		if len(checks) != 1 || checks[0].State != driver.CheckUnverified || !strings.Contains(checks[0].Reason, "query refused: 401") {
			t.Errorf("%s fails on every worker: merged checks %+v, want one unverified, with the reason", c.name, checks)
		}
	}
}

// TestCoordinatorKeepsAWorkersUnverifiedReadBack: of a driver that reads
// back every worker's writes at once, a worker that could not give what
// it acknowledged leaves the coordinator's check of the others'
// unverified: the run exits 1.
func TestCoordinatorKeepsAWorkersUnverifiedReadBack(t *testing.T) {
	at := time.Unix(1_800_000_000, 0)
	rs, err := results.Create(t.TempDir(), results.Meta{Name: "t"})
	if err != nil {
		t.Fatal(err)
	}
	defer rs.Close()
	if err := rs.AddWorkload(results.Workload{Name: "p/w", Driver: "test", Model: results.ModelOpen}); err != nil {
		t.Fatal(err)
	}
	ps := newPhaseShards(2, at, nil)
	good := shard.WorkloadEnd{Name: "p/w", Start: at, ReadBack: []byte(`{"acked":10}`)}
	bad := cannotCheck(errors.New("cannot list acknowledged series"))
	for w, sw := range []shard.WorkloadEnd{good, bad} {
		ps.count(w, nil)
		ps.end(w, endOfWorker(t, w, shard.Detail{Workloads: []shard.WorkloadEnd{sw}}, ""))
	}
	rec := run.OpenRecord(rs, run.Discard{})
	d := &Coordinator{n: 2, last: ps}
	checker := &okShardVerifier{}
	d.readBack(context.Background(), rec, []run.Workload{{Eng: engine.Workload{Name: "p/w", Driver: checker}, Desc: results.Workload{Name: "p/w"}}},
		results.StateCompleted)
	if rec.Err() != nil {
		t.Fatal(rec.Err())
	}
	if checker.states != 1 {
		t.Errorf("the coordinator checked %d workers' states, want the one given", checker.states)
	}
	stored, err := rs.Checks()
	if err != nil {
		t.Fatal(err)
	}
	var states []string
	for _, c := range stored["p/w"] {
		states = append(states, c.Name+":"+c.State)
	}
	if got := strings.Join(states, ","); got != "samples:ok,read-back:unverified" {
		t.Errorf("stored checks %s, want the coordinator's and the worker's unverified one", got)
	}
}

// okShardVerifier finds everything acknowledged.
type okShardVerifier struct {
	noLoad
	states int
}

func (o *okShardVerifier) Verify(context.Context) ([]driver.Check, error) { return nil, nil }
func (o *okShardVerifier) ReadBackState() ([]byte, error)                 { return nil, nil }
func (o *okShardVerifier) VerifyShards(_ context.Context, states [][]byte) ([]driver.Check, error) {
	o.states = len(states)
	return []driver.Check{{Name: "samples", Expected: 10, Found: 10, State: driver.CheckOK}}, nil
}

// noLoad answers every operation at once.
type noLoad struct{}

func (noLoad) Do(_ context.Context, _ int, r *driver.Result) { r.Reset("op") }
