//go:build linux

package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/perflab/perflab/internal/testutil"
)

// TestRunPlanPrometheusSource runs a plan whose components are read from
// a real Prometheus that the plan starts: the built-in target through the
// self preset, the same process through process-exporter (a capture group
// names the component), and one whose instance Prometheus never scraped.
// The figures are in summary.json and report.md like local components',
// the missing one is a warning in the report, and the bearer token is
// stored nowhere. The two routes' CPU figures agree within 25 % if the
// machine gave Prometheus its scrapes on time (testutil.Measure): beside
// 16 CPU hogs they were 0.19 and 0.25 cores.
func TestRunPlanPrometheusSource(t *testing.T) {
	t.Parallel()
	promBin := testutil.RequireBinary(t, "prometheus")
	peBin := testutil.RequireBinary(t, "prometheus-process-exporter")
	tp, pe, pp := testutil.FreePort(t), testutil.FreePort(t), testutil.FreePort(t)
	dir := t.TempDir()
	addr := func(p int) string { return fmt.Sprintf("127.0.0.1:%d", p) }
	write := func(name, text string) string {
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		return path
	}
	promConf := write("prometheus.yml", testutil.PrometheusConfig(time.Second,
		testutil.ScrapeJob{Name: "target", Targets: []string{addr(tp)}}, testutil.ScrapeJob{Name: "pe", Targets: []string{addr(pe)}}))
	peConf := write("pe.yml", fmt.Sprintf("process_names:\n  - name: target\n    cmdline: [%q]\n", "--addr "+addr(tp)))
	const token = "prom-secret-7c1f"
	path := writePlan(t, fmt.Sprintf(`
name: prometheus-source
components:
  - name: target
    run:
      command: "{{perflab}}"
      args: [target, http, --addr, "%[1]s", --cpu-work, 1ms]
      ready: {http: "http://%[1]s/health"}
    observe: prometheus
    prometheus: {url: "http://%[3]s", preset: self, instance: "%[1]s"}
  - name: pe
    run:
      command: %[4]s
      args: [-config.path=%[5]s, -web.listen-address=%[2]s, -threads=false, -gather-smaps=false]
      ready: {http: "http://%[2]s/metrics"}
  - name: prometheus
    run:
      command: %[6]s
      args: [--config.file=%[7]s, "--storage.tsdb.path={{run_dir}}/prometheus-data", --web.listen-address=%[3]s]
      ready: {http: "http://%[3]s/-/ready"}
  - name: procs
    observe: prometheus
    prometheus: {url: "http://%[3]s", preset: process-exporter, groupname: "(target)"}
  - name: ghost
    observe: prometheus
    prometheus: {url: "http://%[3]s", bearer_token: "${PERFLAB_TEST_PROM_TOKEN}", preset: self, instance: "127.0.0.1:1"}
profiles:
  - name: load
    duration: 10s
    warmup: 3s
    workloads:
      - {name: get, driver: http, rate: 200/s, params: {url: "http://%[1]s/"}}
`, addr(tp), addr(pe), addr(pp), peBin, peConf, promBin, promConf))
	machine := testutil.Measure(t)
	r := runEnv(t, []string{"PERFLAB_TEST_PROM_TOKEN=" + token}, "run", path, "--out", t.TempDir())
	if r.code != 0 {
		t.Fatalf("exit %d\n%s", r.code, r.stderr)
	}
	s, md, runDir := readRun(t, r)
	agree := checkPrometheusComponents(t, s)
	for _, want := range []string{"ghost (from Prometheus): no series for process_cpu_cores", "target from `process_cpu_cores`",
		"procs-target"} {
		if !strings.Contains(md, want) {
			t.Errorf("report.md lacks %q", want)
		}
	}
	if !strings.Contains(r.stderr, "step 1s: the scrape interval in Prometheus' configuration") {
		t.Errorf("stderr does not say which step was taken:\n%s", r.stderr)
	}
	checkNoSecret(t, runDir, r.stderr, token)
	machine.Check(t, agree == "", testutil.Need{}, "%s", agree)
}

// checkPrometheusComponents checks the components read from Prometheus,
// and returns what missed of the two routes' agreement on CPU, a timing
// figure.
func checkPrometheusComponents(t *testing.T, s planSummary) (agree string) {
	t.Helper()
	if len(s.Cells) != 1 || len(s.Cells[0].Phases) != 1 || s.Cells[0].Phases[0].Resources == nil {
		t.Fatalf("cells %+v", s.Cells)
	}
	c := s.Cells[0]
	for name, want := range map[string]string{"target": "run", "procs-target": "prometheus", "ghost": "prometheus"} {
		if kind, _, _, ok := c.component(name); !ok || kind != want {
			t.Errorf("component %s: kind %q (found %v), want %s", name, kind, ok, want)
		}
	}
	cpu := map[string]float64{}
	for _, comp := range c.Phases[0].Resources.Components {
		if comp.CPU != nil && comp.Memory != nil && comp.Memory.Avg > 0 {
			cpu[comp.Name] = comp.CPU.Avg
		}
	}
	// The same process through two routes: the exact agreement is
	// internal/observe/promapi's test; here both must be there and near.
	if cpu["target"] <= 0 || cpu["procs-target"] <= 0 {
		t.Errorf("CPU avg of target %g (self) and procs-target %g (process-exporter): want both", cpu["target"], cpu["procs-target"])
	} else if cpu["procs-target"] < 0.75*cpu["target"] || cpu["procs-target"] > 1.25*cpu["target"] {
		return fmt.Sprintf("CPU avg of target %g (self) and procs-target %g (process-exporter): want both, within 25 %%", cpu["target"], cpu["procs-target"])
	}
	return ""
}

// checkNoSecret checks that the secret is in no file of the run directory
// and not in perflab's output.
func checkNoSecret(t *testing.T, dir, stderr, secret string) {
	t.Helper()
	if strings.Contains(stderr, secret) {
		t.Error("stderr holds the secret")
	}
	err := filepath.Walk(dir, func(path string, info os.FileInfo, err error) error {
		if err != nil || info.IsDir() || strings.Contains(path, "prometheus-data") {
			return err
		}
		b, err := os.ReadFile(path)
		if err == nil && strings.Contains(string(b), secret) {
			t.Errorf("%s holds the secret", path)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
}
