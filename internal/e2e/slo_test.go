//go:build linux

package e2e

import (
	"fmt"
	"strings"
	"testing"

	"github.com/perflab/perflab/internal/testutil"
)

// sloSummary is the slo object of summary.json.
type sloSummary struct {
	State   string `json:"state"`
	Message string `json:"message"`
	SLO     *struct {
		Met   bool `json:"met"`
		Gates []struct {
			Expr     string `json:"expr"`
			Workload string `json:"workload"`
			Source   string `json:"source"`
			State    string `json:"state"`
			Measured string `json:"measured"`
			Note     string `json:"note"`
		} `json:"gates"`
	} `json:"slo"`
}

func readSLO(t *testing.T, dir string) sloSummary {
	t.Helper()
	var s sloSummary
	readSummary(t, dir, &s, "")
	if s.SLO == nil {
		t.Fatalf("summary.json has no slo: %+v", s)
	}
	return s
}

// TestSLOGatesOnTheCommandLine: gates that pass exit 0; one that fails and
// one with too few requests exit 1 with a hint, and the report lists every
// gate with its figure, also when rendered again from the store.
func TestSLOGatesOnTheCommandLine(t *testing.T) {
	t.Parallel()
	url := startTarget(t, "--latency", "5ms")
	out := t.TempDir()
	r := run(t, "http", url, "--rate", "100/s", "--duration", "3s", "--out", out,
		"--slo", "p99 < 1s", "--slo", "error_rate < 1%", "--slo", "dropped == 0")
	if r.code != 0 {
		t.Fatalf("exit %d\n%s", r.code, r.stderr)
	}
	if s := readSLO(t, runDir(t, r.stderr)); !s.SLO.Met || len(s.SLO.Gates) != 3 || s.State != "completed" {
		t.Errorf("passing gates: %+v", s)
	}
	if !strings.Contains(r.stdout, "SLO: all 3 gates pass") {
		t.Errorf("terminal summary lacks the SLO line:\n%s", r.stdout)
	}

	r = run(t, "http", url, "--rate", "100/s", "--duration", "3s", "--out", out,
		"--slo", "p50 < 1ms", "--slo", "error_rate < 0.01%", "--slo", "p99 < 1s")
	if r.code != 1 || !strings.Contains(r.stderr, "SLO not met: p50 < 1ms failed on http (") ||
		!strings.Contains(r.stderr, "error_rate < 0.01% had insufficient data on http") || !strings.Contains(r.stderr, "hint: ") {
		t.Fatalf("failing gates: exit %d\n%s", r.code, r.stderr)
	}
	dir := runDir(t, r.stderr)
	s := readSLO(t, dir)
	states := []string{}
	for _, g := range s.SLO.Gates {
		states = append(states, g.State)
	}
	if s.SLO.Met || strings.Join(states, ",") != "fail,insufficient,pass" || s.SLO.Gates[0].Source != "command line" {
		t.Errorf("gates: %+v", s.SLO)
	}
	again := run(t, "report", dir)
	if again.code != 0 || !strings.Contains(again.stdout, "## SLO gates") || !strings.Contains(again.stdout, "| `p50 < 1ms` | http |") {
		t.Errorf("perflab report: exit %d\n%s", again.code, again.stdout)
	}
}

func TestSLOFlagIsChecked(t *testing.T) {
	t.Parallel()
	for _, args := range [][]string{
		{"http", "http://127.0.0.1:1/", "--slo", "p99 < 200"},
		{"run", "plan.yaml", "--slo", "p99 <"},
	} {
		r := run(t, append(args, "--out", t.TempDir())...)
		if r.code != 2 || !strings.Contains(r.stderr, "--slo: cannot parse SLO gate") {
			t.Errorf("%v: exit %d\n%s", args, r.code, r.stderr)
		}
	}
}

// TestSLOGatesInAPlan: a profile's gates apply to each of its workloads, a
// workload's to it alone, the command line's to all; lost_samples is a
// figure the http driver does not supply. 200/s each, so that even a
// window shortened by a busy machine holds the 100 latencies a p99 needs.
func TestSLOGatesInAPlan(t *testing.T) {
	t.Parallel()
	port := testutil.FreePort(t)
	path := writePlan(t, fmt.Sprintf(`
name: slo
components:
  - name: web
    run:
      command: "{{perflab}}"
      args: [target, http, --addr, "127.0.0.1:%[1]d"]
      ready: {http: "http://127.0.0.1:%[1]d/health"}
profiles:
  - name: load
    duration: 3s
    slo: ["p99 < 2s"]
    workloads:
      - {name: a, driver: http, rate: 200/s, params: {url: "http://127.0.0.1:%[1]d/a"}, slo: ["rate >= 1000/s"]}
      - {name: b, driver: http, rate: 200/s, params: {url: "http://127.0.0.1:%[1]d/b"}, slo: ["lost_samples == 0"]}
`, port))
	r := run(t, "run", path, "--out", t.TempDir(), "--slo", "dropped == 0")
	if r.code != 1 {
		t.Fatalf("exit %d\n%s", r.code, r.stderr)
	}
	s := readSLO(t, runDir(t, r.stderr))
	var got []string
	for _, g := range s.SLO.Gates {
		got = append(got, fmt.Sprintf("%s|%s|%s|%s", g.Expr, g.Workload, g.State, g.Source))
	}
	want := []string{
		"p99 < 2s|load/a|pass|plan: profile load",
		"p99 < 2s|load/b|pass|plan: profile load",
		"rate >= 1000/s|load/a|fail|plan: workload load/a",
		"lost_samples == 0||insufficient|plan: workload load/b",
		"dropped == 0|load/a|pass|command line",
		"dropped == 0|load/b|pass|command line",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("gates:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if len(s.SLO.Gates) < 4 || !strings.Contains(s.SLO.Gates[3].Note, "no workload supplies lost_samples") {
		t.Errorf("lost_samples note: %+v", s.SLO.Gates)
	}
}
