package worker

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
	"github.com/perflab/perflab/internal/secret"
	"github.com/perflab/perflab/internal/shard"
)

// blindVerifier is a driver whose read-back cannot check at all: Verify
// (and, as a driver.ShardVerifier, ReadBackState) fails with err.
type blindVerifier struct {
	noLoad
	err error
}

func (b *blindVerifier) Verify(context.Context) ([]driver.Check, error) { return nil, b.err }

type blindShardVerifier struct{ blindVerifier }

func (b *blindShardVerifier) ReadBackState() ([]byte, error) { return nil, b.err }
func (b *blindShardVerifier) VerifyShards(context.Context, [][]byte) ([]driver.Check, error) {
	return nil, errors.New("no state to check")
}

// noLoad answers every operation at once.
type noLoad struct{}

func (noLoad) Do(_ context.Context, _ int, r *driver.Result) { r.Reset("op") }

// workerChecks is what worker index of n says of the read-back of a
// workload whose driver is d, after a completed load.
func workerChecks(t *testing.T, d driver.Driver, index, n int) shard.WorkloadEnd {
	t.Helper()
	w := &Worker{events: run.Discard{}, index: index, n: n, kill: context.Background()}
	ws := []run.Workload{{Eng: engine.Workload{Name: "p/w", Driver: d}}}
	det := shard.Detail{Workloads: []shard.WorkloadEnd{{Name: "p/w", Start: time.Unix(1_800_000_000, 0)}}}
	w.afterLoad(&det, ws, results.StateCompleted)
	return det.Workloads[0]
}

// TestWorkerThatCannotCheckSaysSo: a worker whose driver could not read
// back at all says so as an unverified check with the reason, as a single
// process records it (run.SettledChecks), whether Verify or, of a driver
// that reads back every worker's writes at once, ReadBackState failed.
func TestWorkerThatCannotCheckSaysSo(t *testing.T) {
	for _, c := range []struct {
		name string
		d    driver.Driver
	}{
		{"Verify", &blindVerifier{err: errors.New("query refused: 401")}},
		{"ReadBackState", &blindShardVerifier{blindVerifier{err: errors.New("query refused: 401")}}},
	} {
		for w := range 2 {
			checks := workerChecks(t, c.d, w, 2).Checks
			if len(checks) != 1 || checks[0].State != driver.CheckUnverified || !strings.Contains(checks[0].Reason, "query refused: 401") {
				t.Errorf("%s fails on worker %d: checks %+v, want one unverified, with the reason", c.name, w, checks)
			}
		}
	}
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
	sr := shard.Run{Store: store, ID: "rs"}
	w := &Worker{events: run.Discard{}, run: sr, stop: context.Background(), kill: context.Background(),
		scrub: envScrubber(secret, "${TOKEN}")}
	d := shard.Detail{Workloads: []shard.WorkloadEnd{{Name: "p/w", CheckNote: "skipped " + secret, Cleanup: "delete " + secret,
		Facts:  []driver.Fact{{Name: "endpoint", Value: "http://u:" + secret + "@h/"}},
		Checks: []driver.Check{{Name: "samples", State: driver.CheckUnverified, Reason: "401: bad token " + secret, Note: "echo " + secret}}}}}
	_ = w.finish(shard.NewUploader(sr, 0, 0), d, errors.New("refused "+secret))
	f := shard.NewFollower(sr, 0, 1)
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
