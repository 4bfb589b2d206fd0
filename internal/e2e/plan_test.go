//go:build linux

package e2e

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/perflab/perflab/internal/testutil"
)

// planSummary is the part of a plan run's summary.json the tests read.
type planSummary struct {
	State     string `json:"state"`
	Message   string `json:"message"`
	Workloads []struct {
		Name     string `json:"name"`
		Short    string `json:"short"`
		Cell     int    `json:"cell"`
		Profile  string `json:"profile"`
		Requests int64  `json:"requests"`
		Window   struct {
			Seconds float64 `json:"seconds"`
		} `json:"window"`
		Ops []struct {
			Requests int64 `json:"requests"`
			OK       int64 `json:"ok"`
			Latency  quant `json:"latency_ms"`
		} `json:"operations"`
	} `json:"workloads"`
	Cells []planCell `json:"cells"`
}

type planCell struct {
	Name       string `json:"name"`
	State      string `json:"state"`
	Message    string `json:"message"`
	Components []struct {
		Name     string `json:"name"`
		Kind     string `json:"kind"`
		PID      int    `json:"pid"`
		Exited   string `json:"exited"`
		ExitText string `json:"exit_text"`
	} `json:"components"`
	Phases []struct {
		Profile   string   `json:"profile"`
		State     string   `json:"state"`
		Workloads []string `json:"workloads"`
		Resources *struct {
			Samples    int `json:"samples"`
			Components []struct {
				Name    string          `json:"name"`
				Kind    string          `json:"kind"`
				Memory  *stat           `json:"memory_bytes"`
				CPU     *stat           `json:"cpu_cores"`
				Metrics map[string]stat `json:"metrics"`
			} `json:"components"`
		} `json:"resources"`
	} `json:"phases"`
}

type stat struct {
	Samples int      `json:"samples"`
	P99     *float64 `json:"p99"`
	Max     float64  `json:"max"`
	Avg     float64  `json:"avg"`
}

// writePlan writes a plan file into a new temporary directory.
func writePlan(t *testing.T, text string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "plan.yaml")
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// readRun reads summary.json and report.md of the run perflab announced.
func readRun(t *testing.T, r result) (planSummary, string, string) {
	t.Helper()
	return readRunAs[planSummary](t, r)
}

// readRunAs reads summary.json (as a T: each test decodes what it checks)
// and report.md of the run perflab announced, and gives its directory.
func readRunAs[T any](t *testing.T, r result) (T, string, string) {
	t.Helper()
	dir := runDir(t, r.stderr)
	var s T
	readSummary(t, dir, &s, r.stderr)
	md, err := os.ReadFile(filepath.Join(dir, "report.md"))
	if err != nil {
		t.Fatal(err)
	}
	return s, string(md), dir
}

// readSummary decodes the summary.json of the run directory dir into s;
// stderr, perflab's, is shown when it cannot.
func readSummary(t *testing.T, dir string, s any, stderr string) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, "summary.json"))
	if err != nil {
		t.Fatalf("%v\n%s", err, stderr)
	}
	if err := json.Unmarshal(b, s); err != nil {
		t.Fatal(err)
	}
}

func (c planCell) component(name string) (kind, exited, exitText string, ok bool) {
	for _, comp := range c.Components {
		if comp.Name == name {
			return comp.Kind, comp.Exited, comp.ExitText, true
		}
	}
	return "", "", "", false
}

var position = regexp.MustCompile(`plan\.yaml:\d+:\d+: `)

func TestPlanCheck(t *testing.T) {
	t.Parallel()
	good := writePlan(t, `
name: check
profiles:
  - name: small
    duration: 3s
    workloads:
      - {name: get, driver: http, rate: 10/s, params: {url: "http://127.0.0.1:1/"}}
`)
	r := run(t, "plan", "check", good)
	if r.code != 0 || !strings.Contains(r.stdout, `valid plan "check"`) || !strings.Contains(r.stdout, "profile small: 3s") {
		t.Errorf("valid plan: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	bad := writePlan(t, `
name: check
components:
  - name: web
    run: {command: /bin/true, ready: {http: "http://127.0.0.1:1/", timeout: -1s}}
profiles:
  - name: small
    duration: 3s
    workloads:
      - {name: get, driver: http, rate: 10, params: {url: "ftp://127.0.0.1/", timeout: fast, methd: GET}}
      - {name: put, driver: grpc, rate: 10/s}
`)
	out := t.TempDir()
	for _, args := range [][]string{{"plan", "check", bad}, {"run", bad, "--out", out}} {
		r := run(t, args...)
		if r.code != 2 {
			t.Errorf("%v: exit %d, want 2\n%s", args, r.code, r.stderr)
		}
		for _, want := range []string{`timeout -1s`, `rate "10" needs a unit`, `scheme must be http or https`,
			`params.timeout: want a duration`, `unknown key "methd"`, `unknown driver "grpc"`} {
			line := lineWith(r.stderr, want)
			if line == "" || !position.MatchString(line) {
				t.Errorf("%v: no problem %q at file:line:col in\n%s", args, want, r.stderr)
			}
		}
	}
	if entries, _ := os.ReadDir(out); len(entries) != 0 {
		t.Errorf("an invalid plan created %d entries in --out", len(entries))
	}
}

func lineWith(text, substr string) string {
	for _, l := range strings.Split(text, "\n") {
		if strings.Contains(l, substr) {
			return l
		}
	}
	return ""
}

// TestRunPlanMatrix runs two components (the built-in target twice, with
// different settings) and nginx where installed, under two profiles and a
// two-value matrix, and checks the report against the load it applied.
// It runs alone, not in parallel: the latency it checks is to 3 ms. Its
// counts and latencies are judged against what the machine gave
// (testutil.Measure): beside a parallel build a p50 was 8.7 ms for 2 ms.
func TestRunPlanMatrix(t *testing.T) {
	testutil.Alone(t)
	portA, portB := testutil.FreePort(t), testutil.FreePort(t)
	var nginx string
	t.Run("nginx", func(t *testing.T) { nginx = testutil.RequireBinary(t, "nginx") })
	components := fmt.Sprintf(`
  - name: fast
    group: front
    run:
      command: "{{perflab}}"
      args: [target, http, --addr, "127.0.0.1:%[1]d", --latency, "{{latency}}"]
      ready: {http: "http://127.0.0.1:%[1]d/health", timeout: 10s}
    metrics: http://127.0.0.1:%[1]d/metrics
  - name: slow
    group: back
    run:
      command: "{{perflab}}"
      args: [target, http, --addr, "127.0.0.1:%[2]d", --latency, 20ms, --size, 4KiB]
      ready: {tcp: "127.0.0.1:%[2]d"}
    metrics: http://127.0.0.1:%[2]d/metrics
`, portA, portB)
	workloads := func(rate int) string {
		return fmt.Sprintf(`
      - {name: a, driver: http, rate: %[1]d/s, params: {url: "http://127.0.0.1:%[2]d/"}}
      - {name: b, driver: http, rate: %[1]d/s, params: {url: "http://127.0.0.1:%[3]d/", timeout: 5s}}`, rate, portA, portB)
	}
	lowLoad, highLoad := workloads(50), workloads(150)
	comps := []string{"fast", "slow"}
	if nginx != "" {
		portN := testutil.FreePort(t)
		components += nginxComponent(t, nginx, portN, nil)
		lowLoad += fmt.Sprintf("\n      - {name: n, driver: http, rate: 50/s, params: {url: \"http://127.0.0.1:%d/\"}}", portN)
		highLoad += fmt.Sprintf("\n      - {name: n, driver: http, rate: 150/s, params: {url: \"http://127.0.0.1:%d/\"}}", portN)
		comps = append(comps, "nginx")
	}
	path := writePlan(t, fmt.Sprintf(`
name: matrix
sample_interval: 500ms
components:%s
matrix:
  latency: [2ms, 12ms]
profiles:
  - name: low
    duration: 3s
    workloads:%s
  - name: high
    duration: 4s
    warmup: 1s
    workloads:%s
`, components, lowLoad, highLoad))
	machine := testutil.Measure(t)
	r := run(t, "run", path, "--out", t.TempDir())
	if r.code != 0 {
		t.Fatalf("exit %d\n%s", r.code, r.stderr)
	}
	s, md, _ := readRun(t, r)
	if s.State != "completed" || len(s.Cells) != 2 {
		t.Fatalf("state %q, %d cells", s.State, len(s.Cells))
	}
	missed := checkMatrixLoad(t, s)
	for _, c := range s.Cells {
		if !strings.Contains(md, "Cell `"+c.Name+"`") {
			t.Errorf("report.md has no section for cell %s", c.Name)
		}
		checkMatrixResources(t, c, comps)
	}
	for _, want := range append([]string{"Matrix summary", "Profile `low`", "Profile `high`", "warm-up of 1s set by the plan"}, comps...) {
		if !strings.Contains(md, want) {
			t.Errorf("report.md lacks %q", want)
		}
	}
	machine.Check(t, len(missed) == 0, testutil.Need{}, "%s", strings.Join(missed, "\n"))
}

// nginxComponent is a plan component that runs nginx on port. With
// metrics, nginx also serves that text at /metrics, and the component
// scrapes it.
func nginxComponent(t *testing.T, bin string, port int, metrics []byte) string {
	dir := t.TempDir()
	user := ""
	if os.Geteuid() == 0 {
		user = "user root;"
	}
	scrape, location := "", ""
	if metrics != nil {
		if err := os.WriteFile(filepath.Join(dir, "metrics"), metrics, 0o644); err != nil {
			t.Fatal(err)
		}
		location = fmt.Sprintf(`location = /metrics { default_type "text/plain; version=0.0.4"; alias %s/metrics; }`, dir)
		scrape = fmt.Sprintf("    metrics: http://127.0.0.1:%d/metrics\n", port)
	}
	conf := fmt.Sprintf(`worker_processes 1;
pid %[1]s/nginx.pid;
error_log stderr warn;
%[2]s
events { worker_connections 1024; }
http {
    access_log off;
    keepalive_requests 1000000;
    client_body_temp_path %[1]s/client_body;
    proxy_temp_path %[1]s/proxy;
    fastcgi_temp_path %[1]s/fastcgi;
    uwsgi_temp_path %[1]s/uwsgi;
    scgi_temp_path %[1]s/scgi;
    server {
        listen 127.0.0.1:%[3]d;
        %[4]s
        location / { return 200 "ok\n"; }
    }
}
`, dir, user, port, location)
	if err := os.WriteFile(filepath.Join(dir, "nginx.conf"), []byte(conf), 0o644); err != nil {
		t.Fatal(err)
	}
	return fmt.Sprintf(`
  - name: nginx
    run:
      command: %s
      args: [-p, %s, -e, stderr, -c, nginx.conf, -g, "daemon off;"]
      ready: {http: "http://127.0.0.1:%d/"}
    data_dirs: [%s]
`, bin, dir, port, dir) + scrape
}

// checkMatrixLoad checks the workloads' counts against the rates and that
// the matrix variable reached the component: p50 ≈ the cell's latency.
// It returns the timing figures that missed their bounds: fewer requests
// than the rate (the generator fell behind) and a p50 more than 3 ms
// above the cell's latency, which a busy machine makes (the target adds
// its --latency to a fraction of a millisecond of its own).
func checkMatrixLoad(t *testing.T, s planSummary) (missed []string) {
	t.Helper()
	if len(s.Workloads) < 8 {
		t.Fatalf("%d workloads, want 2 cells × 2 profiles × ≥ 2", len(s.Workloads))
	}
	for _, w := range s.Workloads {
		if len(w.Ops) == 0 || w.Cell < 0 || w.Cell >= len(s.Cells) {
			t.Errorf("%s: operations %+v in cell %d of %d", w.Name, w.Ops, w.Cell, len(s.Cells))
			continue
		}
		rate := map[string]float64{"low": 50, "high": 150}[w.Profile]
		want := rate * w.Window.Seconds
		count := fmt.Sprintf("%s: %d requests (%d ok) in %.1f s, want %.0f ± 10 %%", w.Name, w.Requests, w.Ops[0].OK, w.Window.Seconds, want)
		if float64(w.Requests)-want > 0.1*want || w.Ops[0].OK != w.Ops[0].Requests {
			t.Error(count)
		} else if want-float64(w.Requests) > 0.1*want {
			missed = append(missed, count)
		}
		if !strings.HasPrefix(w.Name, s.Cells[w.Cell].Name+"/"+w.Profile+"/") {
			t.Errorf("workload %q is not named cell/profile/short", w.Name)
		}
		if w.Short != "a" {
			continue
		}
		p50 := map[int]float64{0: 2, 1: 12}[w.Cell]
		got := w.Ops[0].Latency.P50
		latency := fmt.Sprintf("%s: p50 %.2f ms, want %.0f ms from the cell's --latency (+ up to 3 ms)", w.Name, got, p50)
		if got < p50 {
			t.Error(latency)
		} else if got > p50+3 {
			missed = append(missed, latency)
		}
	}
	return missed
}

func checkMatrixResources(t *testing.T, c planCell, comps []string) {
	t.Helper()
	if c.State != "completed" || len(c.Phases) != 2 {
		t.Errorf("cell %s: %s with %d phases", c.Name, c.State, len(c.Phases))
		return
	}
	for _, name := range append(comps, "perflab") {
		if _, _, _, ok := c.component(name); !ok {
			t.Errorf("cell %s lacks component %s", c.Name, name)
		}
	}
	for _, p := range c.Phases {
		if p.Resources == nil || p.Resources.Samples < 3 {
			t.Errorf("cell %s, profile %s: resources %+v", c.Name, p.Profile, p.Resources)
			continue
		}
		seen := map[string]bool{}
		for _, rc := range p.Resources.Components {
			seen[rc.Name] = true
			// nginx serves 50 requests a second in less than the 10 ms
			// the kernel counts CPU time in: its CPU may read 0.
			if rc.CPU == nil || rc.Memory == nil || rc.CPU.Avg <= 0 && rc.Name != "nginx" || rc.Memory.Max < 1<<20 {
				t.Errorf("cell %s, profile %s, %s: cpu %+v, memory %+v", c.Name, p.Profile, rc.Name, rc.CPU, rc.Memory)
			}
			if rc.Name == "fast" && rc.Metrics["go_heap_inuse_bytes"].Samples == 0 {
				t.Errorf("cell %s, profile %s: no heap figures scraped from fast's /metrics", c.Name, p.Profile)
			}
		}
		for _, name := range append(comps, "perflab") {
			if !seen[name] {
				t.Errorf("cell %s, profile %s: no resources of %s", c.Name, p.Profile, name)
			}
		}
	}
}

// checkDemoResources checks that the demo sampled its target (kind run)
// and perflab itself in each of its two load levels.
func checkDemoResources(t *testing.T, summaryJSON []byte, md string) {
	t.Helper()
	var s planSummary
	if err := json.Unmarshal(summaryJSON, &s); err != nil {
		t.Fatal(err)
	}
	if len(s.Cells) != 1 || len(s.Cells[0].Phases) != 4 {
		t.Fatalf("demo: %d cells", len(s.Cells))
	}
	if kind, _, _, ok := s.Cells[0].component("target"); !ok || kind != "run" {
		t.Errorf("demo: target component %q, %v", kind, ok)
	}
	for _, p := range s.Cells[0].Phases {
		if p.Resources == nil {
			t.Errorf("demo: phase %v has no resources", p.Workloads)
			continue
		}
		found := false
		for _, rc := range p.Resources.Components {
			if rc.Name != "target" {
				continue
			}
			found = true
			if rc.CPU == nil || rc.CPU.Avg <= 0 || rc.Memory == nil || rc.Memory.Max < 1<<20 {
				t.Errorf("demo %v: target cpu %+v, memory %+v", p.Workloads, rc.CPU, rc.Memory)
			}
		}
		if !found {
			t.Errorf("demo %v: no figures of the target", p.Workloads)
		}
	}
	for _, want := range []string{"# Memory", "# CPU (cores)", "| target |"} {
		if !strings.Contains(md, want) {
			t.Errorf("demo report.md lacks %q", want)
		}
	}
}
