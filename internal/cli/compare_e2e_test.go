package cli_test

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
// request at 100 requests/s for 8 s, sampled every 200 ms: about 35 samples
// in the 7 s window, enough for an interval.
const cpuWorkPlan = `name: cpu-work
sample_interval: 200ms
components:
  - name: target
    run:
      command: "{{perflab}}"
      args: [target, http, --addr, "127.0.0.1:%[1]d", --cpu-work, %[2]s, --size, "256"]
      ready: {http: "http://127.0.0.1:%[1]d/health"}
profiles:
  - name: steady
    duration: 8s
    warmup: 1s
    workloads:
      - {name: get, driver: http, rate: 100/s, params: {url: "http://127.0.0.1:%[1]d/"}}
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
// target's own cost of serving 100 requests/s (its Go runtime, HTTP) comes
// on top of both, so the ratio is a little under 2 (1.8 on a 2-core VM).
func TestCompareCPUWork(t *testing.T) {
	out := t.TempDir()
	a := cpuWorkRun(t, out, "3ms")
	b := cpuWorkRun(t, out, "6ms")
	a2 := cpuWorkRun(t, out, "3ms")

	c := compareCPU(t, a, b)
	t.Logf("double the work: %s, ratio %v, interval %v–%v", c.Phrase, deref(c.Ratio), deref(c.Low), deref(c.High))
	if c.Ratio == nil || *c.Ratio < 1.5 || *c.Ratio > 2.4 || c.Low == nil || *c.Low <= 1 || !strings.HasSuffix(c.Phrase, "more CPU") {
		t.Errorf("double the work: %+v (ratio %v, interval %v–%v)", c, deref(c.Ratio), deref(c.Low), deref(c.High))
	}
	c = compareCPU(t, a, a2)
	t.Logf("the same work: %s, ratio %v, interval %v–%v %q", c.Phrase, deref(c.Ratio), deref(c.Low), deref(c.High), c.Warnings)
	if c.Phrase != "~" {
		t.Errorf("the same work: %+v (ratio %v, interval %v–%v)", c, deref(c.Ratio), deref(c.Low), deref(c.High))
	}
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
}

func deref(p *float64) any {
	if p == nil {
		return nil
	}
	return *p
}
