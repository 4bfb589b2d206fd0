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

// repeatPlan runs two built-in targets side by side at 50 requests/s each,
// with the CPU work per request of %[3]s (light) and %[4]s (heavy), for 4 s
// sampled every 200 ms: about 15 samples in each repetition's 3 s window.
// The work is small (0.1 to 0.2 cores a target) so that the targets keep up
// on a busy shared machine.
const repeatPlan = `name: repeat
sample_interval: 200ms
components:
  - name: light
    run:
      command: "{{perflab}}"
      args: [target, http, --addr, "127.0.0.1:%[1]d", --cpu-work, %[3]s, --size, "256"]
      ready: {http: "http://127.0.0.1:%[1]d/health"}
  - name: heavy
    run:
      command: "{{perflab}}"
      args: [target, http, --addr, "127.0.0.1:%[2]d", --cpu-work, %[4]s, --size, "256"]
      ready: {http: "http://127.0.0.1:%[2]d/health"}
profiles:
  - name: steady
    duration: 4s
    warmup: 1s
    workloads:
      - {name: get-light, driver: http, rate: 50/s, params: {url: "http://127.0.0.1:%[1]d/"}}
      - {name: get-heavy, driver: http, rate: 50/s, params: {url: "http://127.0.0.1:%[2]d/"}}
compare:
  - {a: light, b: heavy}
`

// repeatSummary is what the test reads of a repeated run's summary.json.
type repeatSummary struct {
	Repeat int `json:"repeat"`
	Cells  []struct {
		Name       string `json:"name"`
		Repetition int    `json:"repetition"`
	} `json:"cells"`
	Repeated []struct {
		Name        string `json:"name"`
		Repetitions []int  `json:"repetitions"`
		Profiles    []struct {
			Components []struct {
				Name string `json:"name"`
				CPU  struct {
					Values []float64 `json:"values"`
				} `json:"cpu_p99_cores"`
			} `json:"components"`
		} `json:"profiles"`
		SideBySide []struct {
			A, B        string
			Repetitions int `json:"repetitions"`
			Groups      []struct {
				Comparisons []struct {
					e2eComparison
					NA     int `json:"n_a"`
					Method string
				} `json:"comparisons"`
			} `json:"groups"`
		} `json:"side_by_side"`
	} `json:"repeated"`
}

// repeatRun runs repeatPlan with --repeat 3 and returns its run directory,
// its summary.json and report.md.
func repeatRun(t *testing.T, out, light, heavy string) (string, repeatSummary, string) {
	t.Helper()
	plan := writePlan(t, fmt.Sprintf(repeatPlan, testutil.FreePort(t), testutil.FreePort(t), light, heavy))
	r := run(t, "run", plan, "--repeat", "3", "--out", out)
	if r.code != 0 {
		t.Fatalf("run --repeat 3 (%s, %s): exit %d\n%s", light, heavy, r.code, r.stderr)
	}
	for i := 1; i <= 3; i++ {
		if want := fmt.Sprintf("perflab: cell %d/3 repetition=%d\n", i, i); !strings.Contains(r.stderr, want) {
			t.Errorf("stderr lacks %q: the repetitions run in order", want)
		}
	}
	s, md, dir := readRunAs[repeatSummary](t, r)
	if s.Repeat != 3 || len(s.Cells) != 3 || s.Cells[2].Name != "repetition=3" || s.Cells[2].Repetition != 3 ||
		len(s.Repeated) != 1 || s.Repeated[0].Name != "default" || len(s.Repeated[0].Repetitions) != 3 {
		t.Fatalf("summary.json: repeat %d, cells %+v, repeated %+v", s.Repeat, s.Cells, s.Repeated)
	}
	return dir, s, md
}

// sideCPU is the CPU comparison of the side-by-side pair light/heavy.
func sideCPU(t *testing.T, s repeatSummary) (e2eComparison, int, string) {
	t.Helper()
	sbs := s.Repeated[0].SideBySide
	if len(sbs) != 1 || sbs[0].Repetitions != 3 || len(sbs[0].Groups) != 1 || len(sbs[0].Groups[0].Comparisons) == 0 {
		t.Fatalf("side_by_side: %+v", sbs)
	}
	c := sbs[0].Groups[0].Comparisons[0]
	if c.What != "CPU" {
		t.Fatalf("first comparison %+v, want CPU", c)
	}
	return c.e2eComparison, c.NA, c.Method
}

// firstCPU is the CPU P99 per repetition of the first component (light)
// in the first profile, for the log; nil when the summary has none.
func firstCPU(s repeatSummary) []float64 {
	if len(s.Repeated) == 0 || len(s.Repeated[0].Profiles) == 0 || len(s.Repeated[0].Profiles[0].Components) == 0 {
		return nil
	}
	return s.Repeated[0].Profiles[0].Components[0].CPU.Values
}

// TestRepeatSideBySide: a plan with two built-in targets, one doing twice
// the other's CPU work per request, run with --repeat 3, reports the CPU
// ratio about x2 with Fieller's interval from the three repetitions, which
// excludes 1, and says where the interval comes from; the same plan with
// equal work on both sides reports ~. perflab compare on the two runs takes
// the repetitions as repeated runs: light's work doubled (x2), heavy's
// did not (~).
//
// It runs alone, not in parallel: among the other e2e tests on 2 cores,
// light's CPU across repetitions varied so much that its doubled work in
// the second run read ~ (interval 0.17–2.97). The comparisons are judged
// against what the machine gave (testutil.Measure).
func TestRepeatSideBySide(t *testing.T) {
	testutil.Alone(t)
	out := t.TempDir()
	machine := testutil.Measure(t)
	var missed []string
	a, sa, mdA := repeatRun(t, out, "2ms", "4ms")
	cpu, n, method := sideCPU(t, sa)
	t.Logf("heavy (4 ms) against light (2 ms) over 3 repetitions: %s, ratio %v, interval %v–%v; light's CPU P99 per repetition %v",
		cpu.Phrase, deref(cpu.Ratio), deref(cpu.Low), deref(cpu.High), firstCPU(sa))
	if n != 3 || !strings.Contains(method, "Fieller") {
		t.Errorf("double the work: %d repetitions, method %s; want 3 and Fieller's", n, method)
	}
	if cpu.Ratio == nil || *cpu.Ratio < 1.5 || *cpu.Ratio > 2.4 || cpu.Low == nil || *cpu.Low <= 1 || !strings.HasSuffix(cpu.Phrase, "more CPU") {
		missed = append(missed, fmt.Sprintf("double the work: %+v (ratio %v, interval %v–%v)", cpu, deref(cpu.Ratio), deref(cpu.Low), deref(cpu.High)))
	}
	for _, want := range []string{"| Repetitions | 3: every cell ran 3 times, interleaved", "## Summary across repetitions",
		"## Across 3 repetitions: `default`", "### Side by side: `heavy` against `light`",
		"in each of 3 repetitions", "the interval comes from the variation between the 3 repetitions",
		"| components | CPU |", "heavy uses x", "## Cell `repetition=1`", "## Cell `repetition=3`", "`sizes/default-steady.yaml`"} {
		if !strings.Contains(mdA, want) {
			t.Errorf("report.md lacks %q", want)
		}
	}
	if _, err := os.Stat(filepath.Join(a, "sizes", "default-steady.yaml")); err != nil {
		t.Errorf("sizes from the pooled repetitions: %v", err)
	}

	b, sb, _ := repeatRun(t, out, "4ms", "4ms")
	same, _, _ := sideCPU(t, sb)
	t.Logf("equal work over 3 repetitions: %s, ratio %v, interval %v–%v %q", same.Phrase, deref(same.Ratio), deref(same.Low), deref(same.High), same.Warnings)
	if same.Phrase != "~" {
		missed = append(missed, fmt.Sprintf("equal work: %+v (ratio %v, interval %v–%v)", same, deref(same.Ratio), deref(same.Low), deref(same.High)))
	}

	r := run(t, "compare", a, b, "--format", "json")
	if r.code != 0 {
		t.Fatalf("compare: exit %d\n%s", r.code, r.stderr)
	}
	var c struct {
		Method string `json:"method"`
		Groups []struct {
			Name        string `json:"name"`
			Comparisons []struct {
				e2eComparison
				NA int `json:"n_a"`
			} `json:"comparisons"`
		} `json:"groups"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &c); err != nil || len(c.Groups) != 1 || c.Groups[0].Name != "Profile `steady`" {
		t.Fatalf("compare: %v\n%s", err, r.stdout)
	}
	if !strings.Contains(c.Method, "Fieller") || !strings.Contains(c.Method, "3 on side A, 3 on side B") {
		t.Errorf("compare method %q: want Fieller's interval over 3 and 3 repetitions", c.Method)
	}
	for _, x := range c.Groups[0].Comparisons {
		if x.What != "CPU" || (x.Subject != "light" && x.Subject != "heavy") {
			continue
		}
		t.Logf("compare, %s's CPU (B / A): %s, ratio %v, interval %v–%v, %d repetitions", x.Subject, x.Phrase,
			deref(x.Ratio), deref(x.Low), deref(x.High), x.NA)
		switch {
		case x.NA != 3:
			t.Errorf("%s: n_a %d, want the 3 repetitions", x.Subject, x.NA)
		case x.Subject == "light" && (x.Ratio == nil || *x.Ratio < 1.5 || *x.Ratio > 2.4 || x.Low == nil || *x.Low <= 1):
			missed = append(missed, fmt.Sprintf("light, twice the work in B: %+v (ratio %v, interval %v–%v)", x, deref(x.Ratio), deref(x.Low), deref(x.High)))
		case x.Subject == "heavy" && (x.Ratio == nil || *x.Ratio < 1/1.15 || *x.Ratio > 1.15):
			// The same work in both runs. Two invocations made at
			// different times on a busy machine differ by a few percent;
			// under two CPU hogs and the other e2e tests, heavy's CPU
			// differed by 6.3 % (interval 1.025–1.101), beyond the 5 %
			// that the guard shows as "~" (tested exactly in
			// analysis.TestMinRunEffectGuardsAtTheEdge). What must not
			// happen is a large difference where there is none.
			missed = append(missed, fmt.Sprintf("heavy, the same work in both: %+v (ratio %v, interval %v–%v)", x, deref(x.Ratio), deref(x.Low), deref(x.High)))
		case x.Subject == "heavy" && x.Phrase != "~":
			t.Logf("heavy, the same work in both, reads %s: the machine's load differed between the two runs", x.Phrase)
		}
	}
	machine.Check(t, len(missed) == 0, testutil.Need{}, "%s", strings.Join(missed, "\n"))
}
