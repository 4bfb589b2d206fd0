package cli

import (
	"context"
	"errors"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/perflab/perflab/internal/driver"
	"github.com/perflab/perflab/internal/engine"
	"github.com/perflab/perflab/internal/results"
	"github.com/perflab/perflab/internal/run"
	"github.com/perflab/perflab/internal/secret"
	"github.com/perflab/perflab/internal/shard"
)

// blindVerifier is a driver whose read-back cannot check at all: Verify
// (and, as a driver.ShardVerifier, ReadBackState) fails with err.
type blindVerifier struct {
	countingDriver
	err error
}

func (b *blindVerifier) Verify(context.Context) ([]driver.Check, error) { return nil, b.err }

type blindShardVerifier struct{ blindVerifier }

func (b *blindShardVerifier) ReadBackState() ([]byte, error) { return nil, b.err }
func (b *blindShardVerifier) VerifyShards(context.Context, [][]byte) ([]driver.Check, error) {
	return nil, errors.New("no state to check")
}

// workerChecks is what worker index of n says of the read-back of a
// workload whose driver is d, after a completed load.
func workerChecks(t *testing.T, d driver.Driver, index, n int) shardWorkload {
	t.Helper()
	w := &worker{e: &env{stdout: io.Discard, stderr: io.Discard}, index: index, n: n, kill: context.Background()}
	ws := []run.Workload{{Eng: engine.Workload{Name: "p/w", Driver: d}}}
	det := shardDetail{Workloads: []shardWorkload{{Name: "p/w", Start: time.Unix(1_800_000_000, 0)}}}
	w.afterLoad(&det, ws, results.StateCompleted)
	return det.Workloads[0]
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
		d    driver.Driver
	}{
		{"Verify", &blindVerifier{err: errors.New("query refused: 401")}},
		{"ReadBackState", &blindShardVerifier{blindVerifier{err: errors.New("query refused: 401")}}},
	} {
		ps := newPhaseShards(2, at, nil)
		for w := range 2 {
			sw := workerChecks(t, c.d, w, 2)
			ps.count(w, nil)
			ps.end(w, endOfWorker(t, w, shardDetail{Workloads: []shardWorkload{sw}}, ""))
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
	good := shardWorkload{Name: "p/w", Start: at, ReadBack: []byte(`{"acked":10}`)}
	bad := workerChecks(t, &blindShardVerifier{blindVerifier{err: errors.New("cannot list acknowledged series")}}, 1, 2)
	for w, sw := range []shardWorkload{good, bad} {
		ps.count(w, nil)
		ps.end(w, endOfWorker(t, w, shardDetail{Workloads: []shardWorkload{sw}}, ""))
	}
	rec := run.OpenRecord(rs, run.Discard{})
	d := &coordinator{n: 2, last: ps}
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
	countingDriver
	states int
}

func (o *okShardVerifier) Verify(context.Context) ([]driver.Check, error) { return nil, nil }
func (o *okShardVerifier) ReadBackState() ([]byte, error)                 { return nil, nil }
func (o *okShardVerifier) VerifyShards(_ context.Context, states [][]byte) ([]driver.Check, error) {
	o.states = len(states)
	return []driver.Check{{Name: "samples", Expected: 10, Found: 10, State: driver.CheckOK}}, nil
}

// TestWorkerEndIsScrubbed: whatever text of a worker's end holds a
// credential of the plan (its error, a driver's fact, a check's note or
// reason, a cleanup error) reaches the shared store scrubbed.
func TestWorkerEndIsScrubbed(t *testing.T) {
	const secret = "s3cr3t-token-value"
	store, err := shard.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	run := shard.Run{Store: store, ID: "rs"}
	w := &worker{e: &env{stdout: io.Discard, stderr: io.Discard}, run: run, stop: context.Background(), kill: context.Background(),
		scrub: envScrubber(secret, "${TOKEN}")}
	d := shardDetail{Workloads: []shardWorkload{{Name: "p/w", CheckNote: "skipped " + secret, Cleanup: "delete " + secret,
		Facts:  []wireFact{{Name: "endpoint", Value: "http://u:" + secret + "@h/"}},
		Checks: []wireCheck{{Name: "samples", State: driver.CheckUnverified, Reason: "401: bad token " + secret, Note: "echo " + secret}}}}}
	_ = w.finish(shard.NewUploader(run, 0, 0), d, errors.New("refused "+secret))
	f := shard.NewFollower(run, 0, 1)
	if _, _, err := f.Poll(context.Background()); err != nil {
		t.Fatal(err)
	}
	end := f.Ends()[0]
	if end == nil {
		t.Fatal("no end written")
	}
	if text := end.Error + string(end.Detail); strings.Contains(text, secret) || !strings.Contains(text, "${TOKEN}") {
		t.Errorf("the end is not scrubbed: %s", text)
	}
}

// envScrubber is the scrubber of one value read from the environment as
// ref.
func envScrubber(value, ref string) *secret.Scrubber {
	set := secret.Set{}
	set.Env(value, ref)
	return set.Scrubber()
}
