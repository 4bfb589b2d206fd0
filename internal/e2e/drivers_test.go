//go:build linux

package e2e

import (
	"fmt"
	"math"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/perflab/perflab/internal/results"
	"github.com/perflab/perflab/internal/stats"
	"github.com/perflab/perflab/internal/testutil"
)

// driverRun is the part of summary.json the driver tests read.
type driverRun struct {
	State     string `json:"state"`
	Message   string `json:"message"`
	Workloads []struct {
		Name       string  `json:"name"`
		TargetRate float64 `json:"target_rate"`
		Ops        []struct {
			Name        string                 `json:"name"`
			Requests    int64                  `json:"requests"`
			OK          int64                  `json:"ok"`
			Rate        float64                `json:"rate"`
			BytesRecvPS float64                `json:"bytes_received_per_second"`
			BytesSentPS float64                `json:"bytes_sent_per_second"`
			TTFB        quantilesMS            `json:"ttfb_ms"`
			Measures    map[string]quantilesMS `json:"measures_ms"`
			Counters    map[string]struct {
				Total     int64   `json:"total"`
				PerSecond float64 `json:"per_second"`
			} `json:"counters"`
			StreamTokensPS struct{ P50, P10 float64 } `json:"stream_tokens_per_second"`
		} `json:"operations"`
		Facts  []struct{ Name, Value string } `json:"facts"`
		Checks []struct {
			Name            string
			Expected, Found float64
			Unit            string
			Lost            bool
			Shortfall       float64
		} `json:"checks"`
	} `json:"workloads"`
}

// quantilesMS is a *_ms object of summary.json.
type quantilesMS struct {
	Count         int64
	P50, P99, Max float64
	Mean          float64
}

// runDriverPlan runs a plan and reads its summary.json and report.md.
func runDriverPlan(t *testing.T, text string) (result, driverRun, string, string) {
	t.Helper()
	r := run(t, "run", writePlan(t, text), "--out", t.TempDir())
	s, md, dir := readRunAs[driverRun](t, r)
	return r, s, md, dir
}

func fact(t *testing.T, s driverRun, workload int, name string) string {
	t.Helper()
	atLeast(t, s.Workloads, workload+1, "workloads")
	for _, f := range s.Workloads[workload].Facts {
		if f.Name == name {
			return f.Value
		}
	}
	t.Errorf("workload %s has no fact %q: %+v", s.Workloads[workload].Name, name, s.Workloads[workload].Facts)
	return ""
}

// TestRemoteWritePlanVictoriaMetrics writes series to VictoriaMetrics,
// started as the plan's component, at the rate the driver implies, and
// reads every one back.
func TestRemoteWritePlanVictoriaMetrics(t *testing.T) {
	t.Parallel()
	bin := testutil.RequireBinary(t, "victoria-metrics")
	port := testutil.FreePort(t)
	base := fmt.Sprintf("http://127.0.0.1:%d", port)
	r, s, md, _ := runDriverPlan(t, fmt.Sprintf(`name: rw
components:
  - name: vm
    run:
      command: %s
      args: ["-httpListenAddr=127.0.0.1:%d", "-storageDataPath={{run_dir}}/vm", "-search.latencyOffset=1s", "-search.disableCache"]
      ready: {http: "%s/health"}
profiles:
  - name: p
    duration: 4s
    workloads:
      - name: write
        driver: remote_write
        params: {url: "%s/api/v1/write", query_url: "%s", targets: 10, series_per_target: 500, scrape_interval: 1s, batch: 1000, verify_wait: 20s}
`, bin, port, base, base, base))
	if r.code != 0 || s.State != "completed" {
		t.Fatalf("exit %d, state %s: %s\n%s", r.code, s.State, s.Message, r.stderr)
	}
	atLeast(t, s.Workloads, 1, "workloads")
	w := s.Workloads[0]
	if len(w.Checks) != 2 {
		t.Fatalf("checks %+v", w.Checks)
	}
	for _, c := range w.Checks {
		if c.Lost || c.Found != c.Expected || c.Expected == 0 {
			t.Errorf("check %+v", c)
		}
	}
	if v := fact(t, s, 0, "rate (from the driver)"); !strings.Contains(v, "the plan sets no rate") || w.TargetRate < 4 || w.TargetRate > 6 {
		t.Errorf("rate %v: %q", w.TargetRate, v)
	}
	if !strings.Contains(md, "#### Read-back checks") || !strings.Contains(md, "| samples |") {
		t.Errorf("report.md lacks the checks:\n%s", md)
	}
}

// TestRemoteWriteLossyReceiver runs remote write against a receiver that
// acknowledges every write and returns none: the run fails, saying so.
func TestRemoteWriteLossyReceiver(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasSuffix(r.URL.Path, "/api/v1/query") {
			fmt.Fprint(w, `{"status":"success","data":{"resultType":"vector","result":[]}}`)
			return
		}
		w.WriteHeader(http.StatusNoContent)
	}))
	defer srv.Close()
	r, s, md, _ := runDriverPlan(t, fmt.Sprintf(`name: lossy
profiles:
  - name: p
    duration: 2s
    workloads:
      - name: write
        driver: remote_write
        rate: 5/s
        params: {url: "%s/api/v1/write", query_url: "%s", targets: 2, series_per_target: 500, batch: 500, verify_wait: 1s}
`, srv.URL, srv.URL))
	if r.code != 1 || s.State != "failed" {
		t.Fatalf("exit %d, state %s\n%s", r.code, s.State, r.stderr)
	}
	for _, want := range []string{"workload p/write lost data (series: 0 of 998 series found, 998 series short; samples: 0 of",
		// nothing found: a loss, or a delay or a query_url elsewhere, alike
		"hint: none of what was written was found: either the system lost it all, or it shows writes later than the read-back waited"} {
		if !strings.Contains(r.stderr, want) {
			t.Errorf("no %q in stderr:\n%s", want, r.stderr)
		}
	}
	atLeast(t, s.Workloads, 1, "workloads")
	if c := s.Workloads[0].Checks; len(c) != 2 || !c[1].Lost || c[1].Shortfall != c[1].Expected {
		t.Errorf("checks %+v", c)
	}
	if !strings.Contains(md, "**LOST** 998 series (none found: ") || !strings.Contains(s.Message, "lost data") {
		t.Errorf("report.md / message: %s\n%s", s.Message, md)
	}
}

// TestS3PlanVersityGW GETs objects from versitygw, started as the plan's
// component: they are uploaded before the load and removed after it,
// bucket and all, and each GET brings one object's bytes.
func TestS3PlanVersityGW(t *testing.T) {
	t.Parallel()
	bin := testutil.VersityGWBinary(t)
	port, dir := testutil.FreePort(t), t.TempDir()
	for _, d := range []string{"root", "meta"} {
		if err := os.Mkdir(filepath.Join(dir, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	r, s, _, runDir := runDriverPlan(t, fmt.Sprintf(`name: s3
components:
  - name: gw
    run:
      command: %s
      args: [--port, "127.0.0.1:%d", --access, ak, --secret, sk-e2e, --health, /health, --quiet, --keep-alive,
             posix, --sidecar, "%s/meta", "%s/root"]
      ready: {http: "http://127.0.0.1:%[2]d/health"}
profiles:
  - name: p
    duration: 3s
    workloads:
      - name: get
        driver: s3
        concurrency: 4
        params: {endpoint: "http://127.0.0.1:%[2]d", bucket: perflab-e2e, create_bucket: true, access_key: ak,
                 secret_key: sk-e2e, path_style: "true", objects: 50, size: 4KiB, link: 1Gbps}
`, bin, port, dir, dir))
	if r.code != 0 {
		t.Fatalf("exit %d: %s\n%s", r.code, s.Message, r.stderr)
	}
	atLeast(t, s.Workloads, 1, "workloads")
	atLeast(t, s.Workloads[0].Ops, 1, "operations")
	op := s.Workloads[0].Ops[0]
	if op.Name != "GET" || op.OK != op.Requests || op.Requests < 50 || math.Abs(op.BytesRecvPS/op.Rate-4096) > 1 {
		t.Errorf("GET: %d requests, %d ok, %.1f/s, %.0f B/s received", op.Requests, op.OK, op.Rate, op.BytesRecvPS)
	}
	if fact(t, s, 0, "objects") != "50" || fact(t, s, 0, "link") != "1 Gbps" {
		t.Errorf("facts %+v", s.Workloads[0].Facts)
	}
	events := runEvents(t, runDir)
	for _, want := range []string{"prepare: p/get: prepared 50 of 50 s3 objects", "cleanup: p/get: removed 50 of 50 s3 objects"} {
		if !strings.Contains(events, want) {
			t.Errorf("no %q in the events:\n%s", want, events)
		}
	}
	left, _ := os.ReadDir(filepath.Join(dir, "root"))
	for _, e := range left {
		if !strings.HasPrefix(e.Name(), ".") { // versitygw's own .vgwlocks
			t.Errorf("left behind in the gateway: %s", e.Name())
		}
	}
	if !strings.Contains(r.stderr, "preparing p/get: s3 objects 50/50") {
		t.Errorf("no progress line:\n%s", r.stderr)
	}
}

// runEvents is the events of a run, one "kind: message" per line.
func runEvents(t *testing.T, dir string) string {
	t.Helper()
	store, err := results.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	evs, err := store.Events()
	if err != nil {
		t.Fatal(err)
	}
	var lines []string
	for _, e := range evs {
		lines = append(lines, e.Kind+": "+e.Message)
	}
	return strings.Join(lines, "\n")
}

// TestOTLPByteRatePlanJaeger exports traces to Jaeger at a byte rate and
// looks up the IDs written: the rate asked and the traces/s derived are
// facts, and the written traces are read back.
func TestOTLPByteRatePlanJaeger(t *testing.T) {
	t.Parallel()
	grpc, _, query := testutil.StartJaeger(t)
	r, s, md, _ := runDriverPlan(t, fmt.Sprintf(`name: otlp
profiles:
  - name: p
    duration: 3s
    workloads:
      - name: ingest
        driver: otlp
        rate: 200kB/s
        params: {endpoint: "%s", shape: small, seed: 1, query_url: "%s", query_api: jaeger, delay: 1s, verify_sample: 20}
      - name: by-id
        driver: otlp
        rate: 10/s
        params: {mode: query, query_url: "%[2]s", query_api: jaeger, queries: [trace_by_id], ids_from: ingest, delay: 1s}
`, grpc, query))
	if r.code != 0 {
		t.Fatalf("exit %d: %s\n%s", r.code, s.Message, r.stderr)
	}
	atLeast(t, s.Workloads, 2, "workloads")
	atLeast(t, s.Workloads[0].Ops, 1, "operations of ingest")
	in := s.Workloads[0]
	if fact(t, s, 0, "byte rate (plan)") != "200kB/s" {
		t.Errorf("facts %+v", in.Facts)
	}
	traces := fact(t, s, 0, "traces/s (derived)")
	if traces == "" || in.TargetRate <= 0 || !strings.Contains(r.stderr, "200kB/s ÷ ") ||
		!strings.Contains(md, "traces/s (derived): "+traces) {
		t.Errorf("target rate %v, traces/s %q\n%s", in.TargetRate, traces, r.stderr)
	}
	if sent := in.Ops[0].BytesSentPS; sent < 150e3 || sent > 250e3 {
		t.Errorf("sent %.0f B/s at 200kB/s", sent)
	}
	if len(in.Checks) != 2 || in.Checks[0].Lost || in.Checks[0].Found != in.Checks[0].Expected {
		t.Errorf("ingest checks %+v", in.Checks)
	}
	// Until a trace is a second old a lookup sends nothing (its own
	// operation); after that every trace_by_id looks up a written trace.
	var found bool
	for _, op := range s.Workloads[1].Ops {
		switch op.Name {
		case "trace_by_id":
			found = op.OK > 0 && op.OK == op.Requests
		case "trace_by_id (no trace old enough yet)":
			if op.BytesRecvPS != 0 {
				t.Errorf("a skipped lookup received %.0f B/s", op.BytesRecvPS)
			}
		default:
			t.Errorf("unexpected operation %q: with ids_from no search runs", op.Name)
		}
	}
	if !found {
		t.Errorf("lookups %+v", s.Workloads[1].Ops)
	}
}

// TestOpenAIPlanMockTarget streams chat completions from `perflab target
// llm`, started as the plan's component and set to a 50 ms time to first
// token and 100 tokens/s: the stored distributions, read back through the
// store and summary.json, give all three within 5 % — time to first token
// 50 ms, inter-token latency and time per output token 10 ms, 100 tokens/s
// per stream — and the output tokens every answer's usage reported. It
// runs alone, not in parallel: 5 % of 10 ms is half a millisecond. A
// time above its bound, or a stream slower than its, is judged against
// what the machine gave (testutil.Measure).
func TestOpenAIPlanMockTarget(t *testing.T) {
	testutil.Alone(t)
	const tokens = 20
	port := testutil.FreePort(t)
	machine := testutil.Measure(t)
	r, s, md, dir := runDriverPlan(t, fmt.Sprintf(`name: llm
components:
  - name: provider
    run:
      command: "{{perflab}}"
      args: [target, llm, --addr, "127.0.0.1:%d", --latency, 50ms, --tokens, "%d", --tokens-per-second, "100"]
      ready: {http: "http://127.0.0.1:%[1]d/v1/models"}
profiles:
  - name: p
    duration: 3s
    workloads:
      - name: chat
        driver: openai
        rate: 20/s
        params: {url: "http://127.0.0.1:%[1]d", model: perflab-mock, stream: true, prompts: [hello, "how are you?"], api_key: sk-literal}
`, port, tokens))
	if r.code != 0 {
		t.Fatalf("exit %d: %s\n%s", r.code, s.Message, r.stderr)
	}
	atLeast(t, s.Workloads, 1, "workloads")
	atLeast(t, s.Workloads[0].Ops, 1, "operations")
	op := s.Workloads[0].Ops[0]
	if op.Name != "chat" || op.Requests < 30 || op.OK != op.Requests {
		t.Errorf("chat: %d requests, %d ok", op.Requests, op.OK)
	}
	t.Logf("TTFT %+v\nITL %+v\nTPOT %+v\nTTFB %+v\nstream tokens/s %+v, counters %+v",
		op.Measures["ttft"], op.Measures["itl"], op.Measures["tpot"], op.TTFB, op.StreamTokensPS, op.Counters)
	var missed []string
	for name, want := range map[string]float64{"ttft": 50, "itl": 10, "tpot": 10} {
		m := op.Measures[name]
		if m.P50 < want*0.95 {
			t.Errorf("stored %s p50 %.3f ms, want %v ms within 5 %%", name, m.P50, want)
		} else if m.P50 > want*1.05 {
			missed = append(missed, fmt.Sprintf("stored %s p50 %.3f ms, want %v ms within 5 %%", name, m.P50, want))
		}
	}
	if m := op.Measures; m["ttft"].Count != op.OK || m["tpot"].Count != op.OK || m["itl"].Count != op.OK*(tokens-1) {
		t.Errorf("counts: ttft %d, tpot %d, itl %d for %d streams of %d tokens", m["ttft"].Count, m["tpot"].Count, m["itl"].Count, op.OK, tokens)
	}
	if p50 := op.StreamTokensPS.P50; p50 > 105 {
		t.Errorf("tokens/s per stream p50 %.1f, want 100 within 5 %%", p50)
	} else if p50 < 95 {
		missed = append(missed, fmt.Sprintf("tokens/s per stream p50 %.1f, want 100 within 5 %%", p50))
	}
	if out := op.Counters["output_tokens"]; out.Total != op.OK*tokens || math.Abs(out.PerSecond-op.Rate*tokens) > 0.01*op.Rate*tokens {
		t.Errorf("output tokens %+v, want %d in the window at %.1f/s", out, op.OK*tokens, op.Rate*tokens)
	}
	if op.TTFB.Count != op.OK || op.TTFB.P50 > op.Measures["ttft"].P50 {
		t.Errorf("TTFB %+v: want the first response byte of every answer, no later than its first token", op.TTFB)
	}
	if v := fact(t, s, 0, "output tokens"); v == "" || v == "0" {
		t.Errorf("output tokens %q", v)
	}
	for _, want := range []string{"| chat | time to first token (streams) | 5", "| chat | inter-token latency (every gap) | ",
		"| chat | time per output token (per stream) | ", "\n#### Tokens\n"} {
		if !strings.Contains(md, want) {
			t.Errorf("report.md lacks %q", want)
		}
	}
	if strings.Contains(md, "sk-literal") {
		t.Error("report.md holds the api key")
	}
	checkStoredMeasures(t, dir, op.Measures["itl"].Count)
	machine.Check(t, len(missed) == 0, testutil.Need{}, "%s", strings.Join(missed, "\n"))
}

// checkStoredMeasures reads the run's store: the intervals of its one
// workload hold the measures, and their inter-token gaps add up to at
// least the window's.
func checkStoredMeasures(t *testing.T, dir string, windowGaps int64) {
	t.Helper()
	store, err := results.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	ws, err := store.Workloads()
	if err != nil || len(ws) != 1 {
		t.Fatalf("workloads %+v, %v", ws, err)
	}
	ivs, err := store.Intervals(ws[0].Name)
	if err != nil {
		t.Fatal(err)
	}
	var gaps, streams int64
	for _, iv := range ivs {
		if st := iv.Ops["chat"]; st != nil && st.Measures[stats.ITL] != nil {
			gaps += st.Measures[stats.ITL].Count()
			streams += st.Measures[stats.TTFT].Count()
		}
	}
	if gaps < windowGaps || streams == 0 {
		t.Errorf("the store holds %d gaps of %d streams, the window %d gaps", gaps, streams, windowGaps)
	}
}
