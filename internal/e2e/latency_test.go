//go:build linux

package e2e

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/perflab/perflab/internal/testutil"
)

// failingServer answers on 127.0.0.1: of every five requests (by arrival),
// three get a 500 at once and two a 200 after 20 ms, one 200 in 80 after
// 100 ms instead.
func failingServer(t *testing.T) string {
	t.Helper()
	var n atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		i := n.Add(1) - 1
		switch {
		case i%5 < 3:
			w.WriteHeader(http.StatusInternalServerError)
			return
		case i%200 == 3:
			time.Sleep(100 * time.Millisecond)
		default:
			time.Sleep(20 * time.Millisecond)
		}
		fmt.Fprintln(w, "ok")
	}))
	t.Cleanup(srv.Close)
	return srv.URL + "/"
}

// latencySummary is what these tests read of summary.json.
type latencySummary struct {
	Workloads []struct {
		LatencyOf string `json:"latency_of"`
		Latency   quant  `json:"latency_ms"`
		All       *quant `json:"latency_all_ms"`
		Ops       []struct {
			Requests  int64  `json:"requests"`
			OK        int64  `json:"ok"`
			LatencyOf string `json:"latency_of"`
			Latency   quant  `json:"latency_ms"`
			Failed    *quant `json:"latency_failed_ms"`
			All       *quant `json:"latency_all_ms"`
		} `json:"operations"`
	} `json:"workloads"`
	SLO struct {
		Gates []struct {
			Expr, State, Measured, Note string
			Value                       *float64
		} `json:"gates"`
	} `json:"slo"`
}

// TestLatencyIsOfSuccessfulRequests: with 60 % of the requests failing at
// once, the headline latency is the successful requests' (at least the
// 20 ms the server waits), not pulled down by the failures; every
// request's latency is beside it. The p99 gate is judged on the
// successes, whose tail (1 in 80 at 100 ms) the failures would hide, and
// the error_rate gate fails on its own.
func TestLatencyIsOfSuccessfulRequests(t *testing.T) {
	t.Parallel()
	url := failingServer(t)
	r := run(t, "http", url, "--rate", "200/s", "--duration", "4s", "--out", t.TempDir(),
		"--slo", "p99 < 50ms", "--slo", "p50 >= 19ms", "--slo", "error_rate < 1%")
	if r.code != 1 {
		t.Fatalf("exit %d, want 1 (SLO not met)\n%s", r.code, r.stderr)
	}
	var s latencySummary
	readSummary(t, runDir(t, r.stderr), &s, r.stderr)
	atLeast(t, s.Workloads, 1, "workloads")
	atLeast(t, s.Workloads[0].Ops, 1, "operations")
	w := s.Workloads[0]
	op := w.Ops[0]
	if op.LatencyOf != "successful" || op.Latency.Count != op.OK || op.Latency.P50 < 19.9 || w.Latency.P50 < 19.9 {
		t.Errorf("headline latency %+v of %q over %d ok: want the successes', p50 ≥ 20 ms", op.Latency, op.LatencyOf, op.OK)
	}
	if op.Failed == nil || op.Failed.Count != op.Requests-op.OK || op.All == nil || op.All.Count != op.Requests || w.All == nil {
		t.Errorf("failed %+v, all requests %+v of %d requests: want both", op.Failed, op.All, op.Requests)
	}
	if fail := op.Requests - op.OK; fail*10 < op.Requests*5 {
		t.Errorf("%d of %d requests failed, want 60 %%", fail, op.Requests)
	}
	states := map[string]string{}
	for _, g := range s.SLO.Gates {
		states[g.Expr] = g.State
		if g.Expr == "p99 < 50ms" && (g.Value == nil || *g.Value < 0.0999 || !strings.Contains(g.Note, "successful requests")) {
			t.Errorf("p99 gate %+v: want the successes' p99, at least 100 ms", g)
		}
	}
	if states["p99 < 50ms"] != "fail" || states["p50 >= 19ms"] != "pass" || states["error_rate < 1%"] != "fail" {
		t.Errorf("gates %+v", s.SLO.Gates)
	}
	if !strings.Contains(r.stdout, "GET / (all requests)") {
		t.Errorf("terminal summary lacks the all-requests row:\n%s", r.stdout)
	}
}

// TestLatencyGateWithoutSuccessIsInsufficient: every connection refused
// (a closed port): there is no latency to judge, so a p99 gate has
// insufficient data instead of passing on the refusals' speed.
func TestLatencyGateWithoutSuccessIsInsufficient(t *testing.T) {
	t.Parallel()
	url := fmt.Sprintf("http://127.0.0.1:%d/", testutil.FreePort(t))
	r := run(t, "http", url, "--rate", "200/s", "--duration", "3s", "--out", t.TempDir(),
		"--slo", "p99 < 1s", "--slo", "error_rate < 1%")
	if r.code != 1 {
		t.Fatalf("exit %d, want 1\n%s", r.code, r.stderr)
	}
	var s latencySummary
	readSummary(t, runDir(t, r.stderr), &s, r.stderr)
	atLeast(t, s.Workloads, 1, "workloads")
	atLeast(t, s.Workloads[0].Ops, 1, "operations")
	op := s.Workloads[0].Ops[0]
	if op.OK != 0 || op.Requests < 100 || op.Latency.Count != 0 || op.All == nil || op.All.Count != op.Requests {
		t.Errorf("%d requests, %d ok, latency %+v, all %+v", op.Requests, op.OK, op.Latency, op.All)
	}
	states := map[string]string{}
	for _, g := range s.SLO.Gates {
		states[g.Expr] = g.State
	}
	if states["p99 < 1s"] != "insufficient" || states["error_rate < 1%"] != "fail" {
		t.Errorf("gates %+v", s.SLO.Gates)
	}
}
