//go:build linux

package e2e

import (
	"encoding/csv"
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/perflab/perflab/internal/testutil"
)

// exportPlan starts the built-in target as a component (10 % of its
// answers 500s, %[1]d its port) and loads it at 150 requests/s for 5 s
// (about 135 successful a second: an interval's p99 needs 100), exporting
// to the remote write URL %[2]s with a token from the environment.
const exportPlan = `name: export
sample_interval: 250ms
components:
  - name: api
    run:
      command: "{{perflab}}"
      args: [target, http, --addr, "127.0.0.1:%[1]d", --latency, 3ms, --jitter, 1ms, --dist, uniform, --error-rate, "0.1"]
      ready: {http: "http://127.0.0.1:%[1]d/health"}
    metrics: http://127.0.0.1:%[1]d/metrics
export:
  - kind: remote-write
    url: "%[2]s"
    headers: {Authorization: "Bearer ${EXPORT_TOKEN}"}
    interval: 500ms
profiles:
  - name: steady
    duration: 5s
    workloads:
      - {name: get, driver: http, rate: 150/s, params: {url: "http://127.0.0.1:%[1]d/"}}
`

// exportToken is the credential the export sends: it must not reach the
// run directory.
const exportToken = "exp0rt-t0ken-value"

// storedRun is what the run store holds of one operation, read back by
// perflab report --format csv: every interval's counts and p99.
type storedRun struct {
	requests, errors int64
	latencies        int64             // successful requests, whose latency counts
	p99              map[int64]float64 // interval end (Unix ms) → p99 in ms
	start, end       time.Time
}

// TestExportLive runs a plan that exports to VictoriaMetrics (its export
// block), and with --export to Prometheus' remote write receiver and to an
// OTLP receiver over HTTP and gRPC. What each received equals what the
// run stored: requests and errors in all, and the p99 of every interval.
// Then every panel of the shipped Grafana dashboard shows, from
// VictoriaMetrics, the figures of the run's one cell (default), as
// TestDashboardCells checks them, and from Prometheus a series of it.
func TestExportLive(t *testing.T) {
	t.Parallel()
	machine := testutil.Measure(t) // what the run got, for the dashboard's figures
	vm, prom := testutil.StartVictoriaMetrics(t), testutil.StartPrometheus(t, "--enable-feature=native-histograms")
	otlpHTTP, otlpGRPC := testutil.StartOTLPMetrics(t), testutil.StartOTLPMetrics(t)
	plan := writePlan(t, fmt.Sprintf(exportPlan, testutil.FreePort(t), vm+"/api/v1/write"))
	r := runEnv(t, []string{"EXPORT_TOKEN=" + exportToken}, "run", plan, "--out", t.TempDir(),
		"--export", "remote-write="+prom+"/api/v1/write", "--export", "otlp="+strings.TrimSuffix(otlpHTTP.HTTPURL, "/v1/metrics"),
		"--export", "otlp=grpc://"+otlpGRPC.GRPCAddr, "--export-header", "Authorization: Bearer ${EXPORT_TOKEN}", "--export-native-histograms")
	if r.code != 0 {
		t.Fatalf("exit %d\n%s", r.code, r.stderr)
	}
	dir := runDir(t, r.stderr)
	id := filepath.Base(dir)
	st := readStored(t, dir)
	if st.errors == 0 || st.requests < 400 {
		t.Fatalf("the run stored %d requests, %d errors: want about 500 and some errors", st.requests, st.errors)
	}
	md, _ := os.ReadFile(filepath.Join(dir, "report.md"))
	if n := strings.Count(string(md), "| Live export | export to "); n != 4 || strings.Contains(string(md), "batches failed") {
		t.Errorf("report.md has %d lines of export, want 4 that sent everything:\n%s", n, md)
	}
	checkNoToken(t, dir)
	for name, base := range map[string]string{"victoriametrics": vm, "prometheus": prom} {
		t.Run(name, func(t *testing.T) { checkPromAPI(t, base, id, st) })
	}
	t.Run("prometheus-native-histogram", func(t *testing.T) {
		q := fmt.Sprintf(`histogram_count(perflab_latency_histogram_seconds{run=%q,workload="get"})`, id)
		if res := promQuery(t, prom, q, time.Time{}, time.Time{}, 0); len(res) != 1 || sampleValue(t, res[0].Value[1]) != float64(st.latencies) {
			t.Errorf("%s: %+v, want the %d successful requests", q, res, st.latencies)
		}
	})
	t.Run("otlp-http", func(t *testing.T) { checkOTLP(t, otlpHTTP, id, st); checkAuth(t, otlpHTTP) })
	t.Run("otlp-grpc", func(t *testing.T) { checkOTLP(t, otlpGRPC, id, st); checkAuth(t, otlpGRPC) })
	d, dr := readDashboard(t), dashRunOf(t, dir)
	t.Run("dashboard", func(t *testing.T) { checkDashboard(t, d, vm, dr, machine) })
	t.Run("dashboard-prometheus", func(t *testing.T) { checkDashboard(t, d, prom, dr, nil) })
}

// readStored reads the run's figures back with perflab report --format csv.
func readStored(t *testing.T, dir string) storedRun {
	t.Helper()
	r := run(t, "report", dir, "--format", "csv")
	if r.code != 0 {
		t.Fatalf("report --format csv: exit %d\n%s", r.code, r.stderr)
	}
	rows, err := csv.NewReader(strings.NewReader(r.stdout)).ReadAll()
	if err != nil || len(rows) < 3 {
		t.Fatalf("csv: %v\n%s", err, r.stdout)
	}
	st := storedRun{p99: map[int64]float64{}}
	col := map[string]int{}
	for i, name := range rows[0] {
		col[name] = i
	}
	for _, name := range []string{"start", "end", "requests", "errors", "latency_count", "latency_p99_ms"} {
		if _, ok := col[name]; !ok {
			t.Fatalf("csv has no column %s: %q", name, rows[0])
		}
	}
	for _, row := range rows[1:] {
		start, _ := time.Parse(time.RFC3339Nano, row[col["start"]])
		end, _ := time.Parse(time.RFC3339Nano, row[col["end"]])
		n, _ := strconv.ParseInt(row[col["requests"]], 10, 64)
		e, _ := strconv.ParseInt(row[col["errors"]], 10, 64)
		lat, _ := strconv.ParseInt(row[col["latency_count"]], 10, 64)
		st.requests, st.errors, st.latencies = st.requests+n, st.errors+e, st.latencies+lat
		if st.start.IsZero() || start.Before(st.start) {
			st.start = start
		}
		st.end = end
		if p99 := row[col["latency_p99_ms"]]; p99 != "" {
			st.p99[end.UnixMilli()], _ = strconv.ParseFloat(p99, 64)
		}
	}
	return st
}

// checkNoToken fails when the export's token is anywhere in the run
// directory.
func checkNoToken(t *testing.T, dir string) {
	t.Helper()
	_ = filepath.Walk(dir, func(path string, fi os.FileInfo, err error) error {
		if err != nil || fi.IsDir() {
			return err
		}
		if b, _ := os.ReadFile(path); strings.Contains(string(b), exportToken) {
			t.Errorf("%s holds the export's token", path)
		}
		return nil
	})
}

// promSeries is one series of a Prometheus API answer.
type promSeries struct {
	Metric map[string]string `json:"metric"`
	Values [][2]any          `json:"values"`
	Value  [2]any            `json:"value"`
}

// promQuery runs a query against the Prometheus API at base: an instant
// query at end (now when end is zero), or with step > 0 a range query
// from start to end.
func promQuery(t *testing.T, base, q string, start, end time.Time, step time.Duration) []promSeries {
	t.Helper()
	v := url.Values{"query": {q}}
	path := "/api/v1/query"
	if step == 0 && !end.IsZero() {
		v.Set("time", strconv.FormatFloat(float64(end.UnixMilli())/1000, 'f', 3, 64))
	}
	if step > 0 {
		path = "/api/v1/query_range"
		v.Set("start", strconv.FormatFloat(float64(start.UnixMilli())/1000, 'f', 3, 64))
		v.Set("end", strconv.FormatFloat(float64(end.UnixMilli())/1000, 'f', 3, 64))
		v.Set("step", strconv.FormatFloat(step.Seconds(), 'f', -1, 64))
	}
	resp, err := http.Get(base + path + "?" + v.Encode())
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var out struct {
		Status string `json:"status"`
		Error  string `json:"error"`
		Data   struct {
			Result []promSeries `json:"result"`
		} `json:"data"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil || out.Status != "success" {
		t.Fatalf("%s: %v %s %s", q, err, out.Status, out.Error)
	}
	return out.Data.Result
}

func sampleValue(t *testing.T, v any) float64 {
	t.Helper()
	s, _ := v.(string)
	f, err := strconv.ParseFloat(s, 64)
	if err != nil {
		t.Fatalf("value %v: %v", v, err)
	}
	return f
}

// lastSum is the sum over the series of q's raw samples' last values,
// each series' samples over the last hour ([1h]).
func lastSum(t *testing.T, base, sel string) float64 {
	t.Helper()
	sum := 0.0
	for _, s := range promQuery(t, base, sel+"[1h]", time.Time{}, time.Time{}, 0) {
		if len(s.Values) > 0 {
			sum += sampleValue(t, s.Values[len(s.Values)-1][1])
		}
	}
	return sum
}

// checkPromAPI checks what a remote write receiver holds of run id.
func checkPromAPI(t *testing.T, base, id string, st storedRun) {
	sel := func(name string) string {
		return fmt.Sprintf(`%s{run=%q,profile="steady",workload="get",operation="GET /"}`, name, id)
	}
	// VictoriaMetrics shows samples, and new series, a second or so after
	// their write: wait for the last series the run sent.
	unissued := fmt.Sprintf(`perflab_unissued_total{run=%q,workload="get"}[1h]`, id)
	reqs := lastSum(t, base, sel("perflab_requests_total"))
	for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); {
		if reqs == float64(st.requests) && len(promQuery(t, base, unissued, time.Time{}, time.Time{}, 0)) > 0 {
			break
		}
		time.Sleep(500 * time.Millisecond)
		reqs = lastSum(t, base, sel("perflab_requests_total"))
	}
	if reqs != float64(st.requests) {
		t.Errorf("perflab_requests_total %v, the run stored %d", reqs, st.requests)
	}
	if errs := lastSum(t, base, sel("perflab_errors_total")); errs != float64(st.errors) {
		t.Errorf("perflab_errors_total %v, the run stored %d", errs, st.errors)
	}
	res := promQuery(t, base, strings.TrimSuffix(sel("perflab_latency_seconds"), "}")+`,quantile="0.99"}[1h]`, time.Time{}, time.Time{}, 0)
	if len(res) != 1 {
		t.Fatalf("p99: %d series, want 1", len(res))
	}
	got := map[int64]float64{}
	for _, v := range res[0].Values {
		got[int64(math.Round(v[0].(float64)*1000))] = sampleValue(t, v[1]) * 1000
	}
	checkP99(t, got, st)
	for _, name := range []string{"perflab_vus", "perflab_dropped_total", "perflab_unissued_total", "perflab_scheduler_lag_p99_seconds"} {
		if len(promQuery(t, base, fmt.Sprintf(`%s{run=%q,workload="get"}[1h]`, name, id), time.Time{}, time.Time{}, 0)) == 0 {
			t.Errorf("no %s", name)
		}
	}
	for _, comp := range []string{"perflab", "api"} {
		if len(promQuery(t, base, fmt.Sprintf(`perflab_component_cpu_cores{run=%q,component=%q}[1h]`, id, comp), time.Time{}, time.Time{}, 0)) == 0 {
			t.Errorf("no perflab_component_cpu_cores of %s", comp)
		}
	}
}

// checkP99 compares the exported p99 of each interval (end in Unix ms →
// ms) with the stored one, which the CSV rounds to the microsecond: the
// same intervals have one (those of 100 latencies or more), at least 3 of
// a 5 s load.
func checkP99(t *testing.T, got map[int64]float64, st storedRun) {
	t.Helper()
	if len(st.p99) < 3 || len(got) != len(st.p99) {
		t.Errorf("%d intervals with a p99 exported, %d stored: %v, %v", len(got), len(st.p99), got, st.p99)
	}
	for end, want := range st.p99 {
		if v, ok := got[end]; !ok || math.Abs(v-want) > 0.001 {
			t.Errorf("p99 of the interval ending %v: exported %v ms (%v), stored %v ms", time.UnixMilli(end).UTC(), v, ok, want)
		}
	}
}

// checkOTLP checks what an OTLP receiver was sent of run id.
func checkOTLP(t *testing.T, rcv *testutil.OTLPMetrics, id string, st storedRun) {
	var reqs, errs float64
	errsByClass := map[string]float64{}
	p99 := map[int64]float64{}
	for _, p := range rcv.Points() {
		if p.Attrs["run"] != id {
			t.Fatalf("%s: attributes %v, want run %s", p.Name, p.Attrs, id)
		}
		switch p.Name {
		case "perflab_requests_total":
			if !p.Monotonic || !p.Cumulative || p.Kind != "sum" {
				t.Errorf("requests: %+v, want a cumulative monotonic sum", p)
			}
			reqs = max(reqs, p.Value)
		case "perflab_errors_total":
			errsByClass[p.Attrs["class"]] = max(errsByClass[p.Attrs["class"]], p.Value)
		case "perflab_latency_seconds":
			if v, ok := p.Quantiles[0.99]; ok {
				p99[p.Time.UnixMilli()] = v * 1000
			}
		}
	}
	for _, n := range errsByClass {
		errs += n
	}
	if reqs != float64(st.requests) || errs != float64(st.errors) {
		t.Errorf("requests %v, errors %v; the run stored %d, %d", reqs, errs, st.requests, st.errors)
	}
	checkP99(t, p99, st)
}

// checkAuth checks the Authorization the OTLP receiver was sent.
func checkAuth(t *testing.T, rcv *testutil.OTLPMetrics) {
	if _, auth := rcv.Requests(); len(auth) == 0 || auth[0] != "Bearer "+exportToken {
		t.Errorf("Authorization %q", auth)
	}
}

// TestExportFailuresReported: an export whose receiver refuses every push
// does not fail the run; stderr says so once, and report.md counts the
// failed pushes with the last error.
func TestExportFailuresReported(t *testing.T) {
	t.Parallel()
	target := startTarget(t)
	refuse := fmt.Sprintf("http://127.0.0.1:%d/api/v1/write", testutil.FreePort(t))
	r := run(t, "http", target, "--rate", "50/s", "--duration", "2s", "--out", t.TempDir(), "--export", "remote-write="+refuse)
	if r.code != 0 {
		t.Fatalf("exit %d\n%s", r.code, r.stderr)
	}
	if n := strings.Count(r.stderr, "cannot export to "+refuse); n != 1 {
		t.Errorf("stderr says %d times that it cannot export, want once:\n%s", n, r.stderr)
	}
	md, err := os.ReadFile(filepath.Join(runDir(t, r.stderr), "report.md"))
	if err != nil {
		t.Fatal(err)
	}
	line := "| Live export | export to " + refuse + " (remote-write): "
	i := strings.Index(string(md), line)
	if i < 0 {
		t.Fatalf("report.md lacks %q:\n%s", line, md)
	}
	rest := string(md)[i+len(line):]
	var failed, pushes int
	if _, err := fmt.Sscanf(rest, "%d of %d batches failed: last error ", &failed, &pushes); err != nil || failed != pushes || failed < 2 ||
		!strings.Contains(strings.SplitN(rest, "\n", 2)[0], "connection refused") {
		t.Errorf("report.md: %q", strings.SplitN(rest, "\n", 2)[0])
	}
}

// TestExportDistributed: in a run made by two workers, the coordinator
// exports the merged intervals: the exported totals and p99s equal the
// run's, counted once, with no series per worker.
func TestExportDistributed(t *testing.T) {
	t.Parallel()
	target := startTarget(t, "--error-rate", "0.05")
	rcv := testutil.StartOTLPMetrics(t)
	r := run(t, "run", fixedPlan(t, target, 200, 3), "--workers", "2", "--out", t.TempDir(), "--export", "otlp=grpc://"+rcv.GRPCAddr)
	if r.code != 0 {
		t.Fatalf("exit %d\n%s", r.code, r.stderr)
	}
	dir := runDir(t, r.stderr)
	st := readStored(t, dir)
	if st.requests < 500 || st.errors == 0 {
		t.Fatalf("the run stored %d requests, %d errors", st.requests, st.errors)
	}
	checkOTLP(t, rcv, filepath.Base(dir), st)
	for _, p := range rcv.Points() {
		if _, ok := p.Attrs["worker"]; ok {
			t.Fatalf("%s has a worker label: %v", p.Name, p.Attrs)
		}
	}
}
