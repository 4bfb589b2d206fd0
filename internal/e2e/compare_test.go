//go:build linux

package e2e

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/perflab/perflab/internal/testutil"
)

// cpuWorkPlan is a plan of the built-in target burning work of CPU per
// request at 50 requests/s for 5 s, sampled every 100 ms: about 40 samples
// in the 4 s window, enough for an interval.
const cpuWorkPlan = `name: cpu-work
sample_interval: 100ms
components:
  - name: target
    run:
      command: "{{perflab}}"
      args: [target, http, --addr, "127.0.0.1:%[1]d", --cpu-work, %[2]s, --size, "256"]
      ready: {http: "http://127.0.0.1:%[1]d/health"}
profiles:
  - name: steady
    duration: 5s
    warmup: 1s
    workloads:
      - {name: get, driver: http, rate: 50/s, params: {url: "http://127.0.0.1:%[1]d/"}}
`

// cpuWorkRun runs cpuWorkPlan and returns its run directory.
func cpuWorkRun(t *testing.T, out, work string) string {
	t.Helper()
	plan := writePlan(t, fmt.Sprintf(cpuWorkPlan, testutil.FreePort(t), work))
	r := run(t, "run", plan, "--out", out)
	if r.code != 0 {
		t.Fatalf("run with --cpu-work %s: exit %d\n%s", work, r.code, r.stderr)
	}
	return runDir(t, r.stderr)
}

type e2eComparison struct {
	Subject, What, Phrase string
	Ratio, Low, High      *float64
	Warnings              []string
}

// compareCPU compares two runs and returns the target's CPU comparison.
func compareCPU(t *testing.T, a, b string) e2eComparison {
	t.Helper()
	r := run(t, "compare", a, b, "--format", "json")
	if r.code != 0 {
		t.Fatalf("compare: exit %d\n%s", r.code, r.stderr)
	}
	var out struct {
		Notes  []string `json:"notes"`
		Groups []struct {
			Comparisons []e2eComparison `json:"comparisons"`
		} `json:"groups"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &out); err != nil {
		t.Fatalf("%v\n%s", err, r.stdout)
	}
	if len(out.Notes) != 1 || !strings.Contains(out.Notes[0], "param url") {
		t.Errorf("notes %q: want the targets' different URLs", out.Notes)
	}
	for _, g := range out.Groups {
		for _, c := range g.Comparisons {
			if c.Subject == "target" && c.What == "CPU" {
				return c
			}
		}
	}
	t.Fatalf("no CPU comparison of the target:\n%s", r.stdout)
	return e2eComparison{}
}

// TestCompareCPUWork: a target doing twice the CPU work per request is
// reported as using about twice the CPU, with an interval that excludes 1;
// two runs of the same target are "~". The work is 0.3 and 0.6 cores; the
// target's own cost of serving 50 requests/s (its Go runtime, HTTP) comes
// on top of both, so the ratio is a little under 2. A low rate keeps that
// cost, which varies with the machine's other work, small.
//
// It runs alone, not in parallel: the heavy target needs 0.6 cores, and
// other tests' load (or four CPU hogs: a ratio of 0.86) takes them from
// it. The comparisons are judged against what the machine gave
// (testutil.Measure).
func TestCompareCPUWork(t *testing.T) {
	testutil.Alone(t)
	out := t.TempDir()
	measured := func(work string) (string, testutil.Given) { // each run's own span: a short stall in one is not diluted by the others
		machine := testutil.Measure(t)
		return cpuWorkRun(t, out, work), machine.Given()
	}
	a, ga := measured("6ms")
	b, gb := measured("12ms")
	a2, ga2 := measured("6ms")

	c := compareCPU(t, a, b)
	t.Logf("double the work: %s, ratio %v, interval %v–%v", c.Phrase, deref(c.Ratio), deref(c.Low), deref(c.High))
	ok := c.Ratio != nil && *c.Ratio >= 1.5 && *c.Ratio <= 2.4 && c.Low != nil && *c.Low > 1 && strings.HasSuffix(c.Phrase, "more CPU")
	double := fmt.Sprintf("double the work: %+v (ratio %v, interval %v–%v)", c, deref(c.Ratio), deref(c.Low), deref(c.High))
	c = compareCPU(t, a, a2)
	t.Logf("the same work: %s, ratio %v, interval %v–%v %q", c.Phrase, deref(c.Ratio), deref(c.Low), deref(c.High), c.Warnings)
	same, sameOK := fmt.Sprintf("the same work: %+v (ratio %v, interval %v–%v)", c, deref(c.Ratio), deref(c.Low), deref(c.High)), c.Phrase == "~"
	md := run(t, "compare", a, b)
	if md.code != 0 || !strings.Contains(md.stdout, "B uses x") || !strings.Contains(md.stdout, "## Profile `steady`") {
		t.Errorf("compare: exit %d\n%s", md.code, md.stdout)
	}
	// The run directory holds the suggested size; the report has the section.
	if y, err := os.ReadFile(filepath.Join(a, "sizes", "default-steady.yaml")); err != nil || !strings.Contains(string(y), "target:\n  resources:\n    requests:\n      cpu: ") {
		t.Errorf("sizes/default-steady.yaml: %v\n%s", err, y)
	}
	if rep, err := os.ReadFile(filepath.Join(a, "report.md")); err != nil || !strings.Contains(string(rep), "## Suggested sizes") {
		t.Errorf("report.md lacks the suggested sizes: %v", err)
	}
	testutil.ShortOf(testutil.Need{}, ga, gb).Check(t, ok, testutil.Need{}, "%s", double)
	testutil.ShortOf(testutil.Need{}, ga, ga2).Check(t, sameOK, testutil.Need{}, "%s", same)
}

func deref(p *float64) any {
	if p == nil {
		return nil
	}
	return *p
}

// sideBySidePlan runs two built-in targets side by side on the same load,
// one with twice the other's CPU work per request, and compares them. The
// work is small (0.1 and 0.2 cores at 50 requests/s) so that the targets
// get the CPU they ask for on a busy machine: at 0.3 and 0.6 cores, beside
// two CPU hogs, the heavy one got less and the ratio fell under 1.5.
const sideBySidePlan = `name: side-by-side
sample_interval: 200ms
components:
  - name: light
    run:
      command: "{{perflab}}"
      args: [target, http, --addr, "127.0.0.1:%[1]d", --cpu-work, 2ms, --size, "256"]
      ready: {http: "http://127.0.0.1:%[1]d/health"}
  - name: heavy
    run:
      command: "{{perflab}}"
      args: [target, http, --addr, "127.0.0.1:%[2]d", --cpu-work, 4ms, --size, "256"]
      ready: {http: "http://127.0.0.1:%[2]d/health"}
profiles:
  - name: steady
    duration: 8s
    warmup: 1s
    workloads:
      - {name: get-light, driver: http, rate: 50/s, params: {url: "http://127.0.0.1:%[1]d/"}}
      - {name: get-heavy, driver: http, rate: 50/s, params: {url: "http://127.0.0.1:%[2]d/"}}
compare:
  - {a: light, b: heavy}
  - {a: get-light, b: get-heavy}
`

// TestSideBySide: a plan's compare pairs put a side-by-side comparison in
// the report: the heavy target uses about twice the light one's CPU, if
// the machine gave it (testutil.Measure): beside 16 CPU hogs the ratio
// was 1.42.
func TestSideBySide(t *testing.T) {
	t.Parallel()
	plan := writePlan(t, fmt.Sprintf(sideBySidePlan, testutil.FreePort(t), testutil.FreePort(t)))
	machine := testutil.Measure(t)
	r := run(t, "run", plan, "--out", t.TempDir())
	if r.code != 0 {
		t.Fatalf("exit %d\n%s", r.code, r.stderr)
	}
	dir := runDir(t, r.stderr)
	if !strings.Contains(r.stdout, "side by side, heavy against light:\n  profile steady: CPU: heavy uses x") {
		t.Errorf("the terminal summary lacks the side-by-side line:\n%s", r.stdout)
	}
	b, err := os.ReadFile(filepath.Join(dir, "summary.json"))
	if err != nil {
		t.Fatal(err)
	}
	var s struct {
		Cells []struct {
			SideBySide []struct {
				A, B   string
				Groups []struct {
					Comparisons []e2eComparison `json:"comparisons"`
				} `json:"groups"`
			} `json:"side_by_side"`
		} `json:"cells"`
	}
	if err := json.Unmarshal(b, &s); err != nil {
		t.Fatal(err)
	}
	if len(s.Cells) != 1 || len(s.Cells[0].SideBySide) != 2 || len(s.Cells[0].SideBySide[0].Groups) != 1 {
		t.Fatalf("side_by_side: %s", b)
	}
	atLeast(t, s.Cells[0].SideBySide[0].Groups[0].Comparisons, 1, "comparisons of heavy against light")
	cpu := s.Cells[0].SideBySide[0].Groups[0].Comparisons[0]
	t.Logf("heavy against light: %s, ratio %v, interval %v–%v", cpu.Phrase, deref(cpu.Ratio), deref(cpu.Low), deref(cpu.High))
	if cpu.What != "CPU" || cpu.Ratio == nil || cpu.Low == nil {
		t.Errorf("CPU: %+v", cpu)
	}
	ratio := cpu.Ratio != nil && *cpu.Ratio >= 1.5 && *cpu.Ratio <= 2.4 && cpu.Low != nil && *cpu.Low > 1
	if w := s.Cells[0].SideBySide[1]; w.A != "get-light" || len(w.Groups) != 1 || len(w.Groups[0].Comparisons) == 0 ||
		w.Groups[0].Comparisons[0].What != "request rate" {
		t.Errorf("workloads: %+v", w)
	}
	md, err := os.ReadFile(filepath.Join(dir, "report.md"))
	if err != nil || !strings.Contains(string(md), "## Side by side: `heavy` against `light`") {
		t.Errorf("report.md lacks the section: %v", err)
	}
	machine.Check(t, ratio, testutil.Need{}, "heavy against light: CPU ratio %v, interval %v–%v; want 1.5 to 2.4, above 1",
		deref(cpu.Ratio), deref(cpu.Low), deref(cpu.High))
}

// remoteWritePlan writes node_exporter-like series to one VictoriaMetrics
// and reads them back from it; %[1]s is its base URL.
const remoteWritePlan = `name: rw
profiles:
  - name: steady
    duration: 3s
    workloads:
      - name: write
        driver: remote_write
        rate: 20/s
        params: {url: "%[1]s/api/v1/write", query_url: "%[1]s", targets: 1, series_per_target: 400, batch: 100, verify_wait: 10s}
`

// TestCompareRemoteWriteSystems: two remote_write runs that differ only in
// where the system is (url, query_url) compare without --force, the
// difference noted.
func TestCompareRemoteWriteSystems(t *testing.T) {
	t.Parallel()
	out := t.TempDir()
	var dirs []string
	for range 2 {
		vm := testutil.StartVictoriaMetrics(t)
		r := run(t, "run", writePlan(t, fmt.Sprintf(remoteWritePlan, vm)), "--out", out)
		if r.code != 0 {
			t.Fatalf("run against %s: exit %d\n%s", vm, r.code, r.stderr)
		}
		dirs = append(dirs, runDir(t, r.stderr))
	}
	r := run(t, "compare", dirs[0], dirs[1], "--format", "json")
	if r.code != 0 {
		t.Fatalf("compare: exit %d\n%s", r.code, r.stderr)
	}
	var c struct {
		Notes       []string `json:"notes"`
		Differences []string `json:"differences"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &c); err != nil {
		t.Fatalf("%v\n%s", err, r.stdout)
	}
	notes := strings.Join(c.Notes, "\n")
	if len(c.Differences) > 0 || !strings.Contains(notes, "param url") || !strings.Contains(notes, "param query_url") {
		t.Errorf("differences %q, notes %q: want url and query_url noted", c.Differences, c.Notes)
	}
}
