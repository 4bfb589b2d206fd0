//go:build linux

package e2e

import (
	"encoding/hex"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	coltracepb "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	"google.golang.org/protobuf/proto"
)

// traceBackend is a fake OTLP/HTTP receiver and Jaeger query API on
// 127.0.0.1: it keeps the span count of every trace it receives, and
// answers a lookup by ID with lookup(n), n the trace's lookups so far
// (from 1): a status, the trace's spans when 200.
type traceBackend struct {
	lookup  func(n int) int
	mu      sync.Mutex
	spans   map[string]int
	lookups map[string]int
}

func startTraceBackend(t *testing.T, lookup func(n int) int) string {
	t.Helper()
	b := &traceBackend{lookup: lookup, spans: map[string]int{}, lookups: map[string]int{}}
	srv := httptest.NewServer(http.HandlerFunc(b.serve))
	t.Cleanup(srv.Close)
	return srv.URL
}

func (b *traceBackend) serve(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path == "/v1/traces" {
		body, _ := io.ReadAll(r.Body)
		var req coltracepb.ExportTraceServiceRequest
		if err := proto.Unmarshal(body, &req); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		b.mu.Lock()
		for _, rs := range req.ResourceSpans {
			for _, ss := range rs.ScopeSpans {
				for _, sp := range ss.Spans {
					b.spans[hex.EncodeToString(sp.TraceId)]++
				}
			}
		}
		b.mu.Unlock()
		w.Header().Set("Content-Type", "application/x-protobuf")
		return
	}
	id := strings.TrimPrefix(r.URL.Path, "/api/traces/")
	b.mu.Lock()
	b.lookups[id]++
	status, n := b.lookup(b.lookups[id]), b.spans[id]
	b.mu.Unlock()
	if status != http.StatusOK || n == 0 {
		http.Error(w, http.StatusText(status), status)
		return
	}
	fmt.Fprintf(w, `{"data":[{"spans":[%s{}]}]}`, strings.Repeat("{},", n-1))
}

// readBackRun is the part of summary.json the read-back tests read.
type readBackRun struct {
	State     string `json:"state"`
	Message   string `json:"message"`
	Workloads []struct {
		Checks []struct {
			Name            string
			Expected, Found float64
			Lost            bool
			State           string
			Late            float64
			LateBySeconds   float64 `json:"late_by_seconds"`
			Reason          string
		} `json:"checks"`
	} `json:"workloads"`
	SLO struct {
		Gates []struct {
			Expr, State, Note string
		} `json:"gates"`
	} `json:"slo"`
}

// readBackPlan is a plan of one otlp ingest workload that reads back from
// url what it wrote there, looking again for what is missing for wait.
func readBackPlan(url, wait string) string {
	return fmt.Sprintf(`name: readback
profiles:
  - name: p
    duration: 1s
    workloads:
      - name: ingest
        driver: otlp
        rate: 10/s
        params: {endpoint: "%[1]s/v1/traces", protocol: http, shape: small, query_url: "%[1]s", query_api: jaeger,
                 delay: 100ms, verify_sample: 5, verify_wait: %[2]s}
`, url, wait)
}

// TestReadBackLateIsNotLost: traces the query API returns only from their
// second lookup on are late, not lost: the run completes with exit 0 and
// the report says how late.
func TestReadBackLateIsNotLost(t *testing.T) {
	t.Parallel()
	url := startTraceBackend(t, func(n int) int {
		if n == 1 {
			return http.StatusNotFound
		}
		return http.StatusOK
	})
	r := run(t, "run", writePlan(t, readBackPlan(url, "5s")), "--out", t.TempDir())
	s, md, _ := readRunAs[readBackRun](t, r)
	if r.code != 0 || s.State != "completed" {
		t.Fatalf("exit %d, state %s: %s\n%s", r.code, s.State, s.Message, r.stderr)
	}
	atLeast(t, s.Workloads, 1, "workloads")
	checks := s.Workloads[0].Checks
	if len(checks) != 2 {
		t.Fatalf("checks %+v", checks)
	}
	for _, c := range checks {
		if c.State != "late" || c.Lost || c.Found != c.Expected || c.Late != c.Expected || c.LateBySeconds <= 0 {
			t.Errorf("check %+v: want late, everything found", c)
		}
	}
	if !strings.Contains(md, "| traces | 5 traces | 5 traces | late: 5 traces, the last ") || strings.Contains(md, "LOST") {
		t.Errorf("report.md:\n%s", md)
	}
	if !strings.Contains(r.stdout, "ingest: read back traces: 5 of 5 traces: late: 5 traces") {
		t.Errorf("terminal:\n%s", r.stdout)
	}
}

// TestReadBackUnverified: a query API that answers 503 to every lookup
// leaves the read-back unverified, said in summary.json, report.md and
// the terminal. Without an SLO the run completes but exits 1; a gate on
// the loss has insufficient data, saying why.
func TestReadBackUnverified(t *testing.T) {
	t.Parallel()
	url := startTraceBackend(t, func(int) int { return http.StatusServiceUnavailable })
	plan := writePlan(t, readBackPlan(url, "1s"))
	for _, slo := range []bool{false, true} {
		args := []string{"run", plan, "--out", t.TempDir()}
		if slo {
			args = append(args, "--slo", "lost_traces == 0")
		}
		r := run(t, args...)
		s, md, _ := readRunAs[readBackRun](t, r)
		if r.code != 1 || s.State != "completed" {
			t.Fatalf("slo %v: exit %d, state %s: %s\n%s", slo, r.code, s.State, s.Message, r.stderr)
		}
		atLeast(t, s.Workloads, 1, "workloads")
		for _, c := range s.Workloads[0].Checks {
			if c.State != "unverified" || c.Lost || !strings.Contains(c.Reason, "503") {
				t.Errorf("check %+v: want unverified for the 503", c)
			}
		}
		if !strings.Contains(md, "| traces | 5 traces | 0 traces | **UNVERIFIED**: 5 traces had no answer at the end: status_5xx") {
			t.Errorf("report.md:\n%s", md)
		}
		if !strings.Contains(r.stderr, "perflab: warning: cannot verify what p/ingest wrote (traces): 5 traces had no answer") ||
			!strings.Contains(r.stdout, "ingest: read back traces: 0 of 5 traces: UNVERIFIED: ") {
			t.Errorf("terminal:\n%s\n%s", r.stdout, r.stderr)
		}
		if !slo {
			if !strings.HasPrefix(s.Message, "read-back unverified: workload p/ingest: traces: ") ||
				!strings.Contains(r.stderr, "hint: it is not known whether the system under test lost data") {
				t.Errorf("message %q\n%s", s.Message, r.stderr)
			}
			continue
		}
		if g := s.SLO.Gates; len(g) != 1 || g[0].State != "insufficient" ||
			!strings.HasPrefix(g[0].Note, "the read-back of traces is unverified: 5 traces had no answer") {
			t.Errorf("gates %+v", g)
		}
	}
}
