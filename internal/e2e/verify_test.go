//go:build linux

package e2e

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	junit "github.com/joshdk/go-junit"

	"github.com/perflab/perflab/internal/testutil"
)

// verifyPlan is the built-in target burning $VERIFY_WORK of CPU per
// request and holding $VERIFY_RESIDENT of memory, driven at 100/s: the
// environment of perflab size --verify may make the same plan a heavier
// system than the one its sizes came from.
func verifyPlan(t *testing.T) string {
	port := testutil.FreePort(t)
	return writePlan(t, fmt.Sprintf(`
name: verify
sample_interval: 250ms
components:
  - name: api
    run:
      command: "{{perflab}}"
      args: [target, http, --addr, "127.0.0.1:%[1]d", --cpu-work, "${VERIFY_WORK}", --resident, "${VERIFY_RESIDENT}"]
      ready: {tcp: "127.0.0.1:%[1]d"}
profiles:
  - name: small
    duration: 8s
    workloads:
      - {name: get, driver: http, rate: 100/s, params: {url: "http://127.0.0.1:%[1]d/"}}
`, port))
}

// sizedRun runs verifyPlan with env, in parallel with other tests, and
// names its run directory; it skips where perflab cannot make cgroups.
func sizedRun(t *testing.T, env []string) string {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("perflab size --verify and --search-limits make cgroups: they need root")
	}
	t.Parallel()
	r := runEnv(t, env, "run", verifyPlan(t), "--out", t.TempDir())
	if r.code != 0 {
		t.Fatalf("run: exit %d\n%s", r.code, r.stderr)
	}
	return runDir(t, r.stderr)
}

type verifiedSummary struct {
	Cells []struct {
		Insights struct {
			Sizes []struct {
				Size     string `json:"size"`
				Verified *struct {
					Holds        bool     `json:"holds"`
					Inconclusive bool     `json:"inconclusive"`
					Reasons      []string `json:"reasons"`
					Evidence     []struct {
						Component      string  `json:"component"`
						Periods        uint64  `json:"periods"`
						ThrottledShare float64 `json:"throttled_share"`
						MemoryPeak     int64   `json:"memory_peak_bytes"`
						OOMKills       uint64  `json:"oom_kills"`
					} `json:"evidence"`
				} `json:"verified"`
			} `json:"sizes"`
		} `json:"insights"`
	} `json:"cells"`
}

// perflab size --verify runs a size's load again with the target held to
// the size's limits: the size of the run holds; the same size against a
// target that burns 8 times the CPU per request does not (throttled, its
// latency far beyond the unconfined run's); against one that holds 400 MiB
// under a limit of a few dozen, the kernel kills it and the size does not
// hold. Each verdict lands in summary.json, report.md and the sizes file.
func TestSizeVerify(t *testing.T) {
	base := []string{"VERIFY_WORK=1ms", "VERIFY_RESIDENT=16MiB"}
	dir := sizedRun(t, base)
	verdict := func(env []string, more ...string) (result, verifiedSummary) {
		t.Helper()
		v := runEnv(t, env, append([]string{"size", dir, "--verify", "--verify-duration", "6s"}, more...)...)
		return v, verifiedOf(t, dir, v)
	}

	v, s := verdict(base)
	got := s.Cells[0].Insights.Sizes[0].Verified
	md, _ := os.ReadFile(filepath.Join(dir, "report.md"))
	yaml, _ := os.ReadFile(filepath.Join(dir, "sizes", "default-small.yaml"))
	switch {
	case got.Inconclusive: // the run fell short with no limit binding: the machine's doing, said so
		t.Logf("the machine was too busy to verify the size that holds: %q", got.Reasons)
		if v.code != 1 || !strings.Contains(v.stderr, "could not be verified") || !strings.Contains(string(yaml), "perflab.io/verified: 'not verified at") {
			t.Errorf("not verified: exit %d\n%s%s", v.code, v.stderr, yaml)
		}
	case v.code != 0 || !got.Holds || len(got.Evidence) != 1 || got.Evidence[0].Periods == 0 || got.Evidence[0].OOMKills != 0:
		t.Errorf("the run's own size: exit %d, %+v\n%s%s", v.code, got, v.stdout, v.stderr)
	case !strings.Contains(string(md), "**holds**") || !strings.Contains(string(yaml), "perflab.io/verified: 'holds at"):
		t.Errorf("report.md or the sizes file lack the verdict:\n%s\n%s", md, yaml)
	}
	if !strings.Contains(string(md), "## Verified") {
		t.Errorf("report.md lacks its Verified section:\n%s", md)
	}

	v, s = verdict([]string{"VERIFY_WORK=8ms", "VERIFY_RESIDENT=16MiB"})
	got = s.Cells[0].Insights.Sizes[0].Verified
	busy := strings.Contains(strings.Join(got.Reasons, "\n"), "the machine was busy with other work")
	switch {
	case got.Inconclusive && busy: // even unconfined it could not keep up: the machine said so
		t.Logf("the machine was too busy to tell 8 times the CPU per request from the machine: %q", got.Reasons)
	case v.code != 1 || got.Holds || got.Inconclusive || len(got.Evidence) != 1 || got.Evidence[0].ThrottledShare < 0.3 ||
		!strings.Contains(v.stderr, "size small does not hold inside its limits"):
		t.Errorf("8 times the CPU per request: exit %d, %+v\n%s%s", v.code, got, v.stdout, v.stderr)
	}

	junitFile := filepath.Join(t.TempDir(), "junit.xml")
	v, s = verdict([]string{"VERIFY_WORK=1ms", "VERIFY_RESIDENT=400MiB"}, "--junit", junitFile)
	got = s.Cells[0].Insights.Sizes[0].Verified
	if v.code != 1 || got.Holds || !strings.Contains(strings.Join(got.Reasons, "\n"), "OOM-killed") {
		t.Errorf("400 MiB resident: exit %d, %+v\n%s%s", v.code, got, v.stdout, v.stderr)
	}
	// --junit: the size that does not hold is a failed test case, as a CI
	// system reads it, with the reason.
	suites, err := junit.IngestFile(junitFile)
	if err != nil || len(suites) != 1 {
		t.Fatalf("--junit: %d suites, %v", len(suites), err)
	}
	var found bool
	for _, tc := range suites[0].Tests {
		if tc.Name == "size verified: small" {
			found = tc.Status == junit.StatusFailed && strings.Contains(tc.Message, "OOM-killed")
			if !found {
				t.Errorf("--junit: %+v", tc)
			}
		}
	}
	if !found {
		t.Errorf("--junit has no failed case for size small: %+v", suites[0].Tests)
	}
}

// limitCurve is a curve of perflab size --search-limits as the run's
// verify/ directory keeps it.
type limitCurve struct {
	Points []struct {
		CPU    float64  `json:"cpu_cores"`
		Memory int64    `json:"memory_bytes"`
		Scale  float64  `json:"scale"`
		Holds  bool     `json:"holds"`
		Why    []string `json:"reasons"`
	} `json:"points"`
	Smallest float64 `json:"smallest_holding_scale"`
	Stopped  bool    `json:"stopped_unverified"`
	Knee     *struct {
		Fitted float64 `json:"fitted"`
		Steps  int     `json:"steps"`
	} `json:"knee"`
}

// searchLimits runs perflab size --search-limits of one resource on the
// run in dir and reads its curve.
func searchLimits(t *testing.T, dir string, env []string, resource, file string) (result, limitCurve) {
	t.Helper()
	s := runEnv(t, env, "size", dir, "--search-limits", "--resource", resource, "--verify-duration", "5s")
	b, err := os.ReadFile(filepath.Join(dir, "verify", file))
	if s.code != 0 || err != nil {
		t.Fatalf("search: exit %d, %v\n%s%s", s.code, err, s.stdout, s.stderr)
	}
	var c limitCurve
	if err := json.Unmarshal(b, &c); err != nil {
		t.Fatal(err)
	}
	switch {
	case c.Stopped && c.Knee == nil: // a step the machine was too busy to verify ended the search
		t.Skipf("the machine was too busy to search the limits: nothing to judge\n%s", s.stdout)
	case c.Stopped:
		t.Logf("the machine was too busy to finish the search:\n%s", s.stdout)
	case len(c.Points) < 2 || len(c.Points) > 7:
		t.Errorf("%d steps, want 2 to 7\n%s", len(c.Points), s.stdout)
	}
	return s, c
}

// perflab size --search-limits bisects the size's CPU limit at the
// profile's rate: a target that burns 6 ms of CPU per request at 100/s
// needs 0.6 cores (and a little more to serve the requests: 0.6 ms a
// request was measured), so no limit
// below that holds, the smallest that holds was run and held, and the
// knee fitted on the steps is that need, within 15 %. The curve is kept
// in the run's verify/.
func TestSizeSearchLimits(t *testing.T) {
	const need = 0.6
	env := []string{"VERIFY_WORK=6ms", "VERIFY_RESIDENT=16MiB"}
	s, c := searchLimits(t, sizedRun(t, env), env, "cpu", "limits-0-small.json")
	smallest := -1.0
	for _, p := range c.Points {
		if p.Holds && p.CPU < need {
			t.Errorf("%.3g cores held a load that needs %v\n%s", p.CPU, need, s.stdout)
		}
		if p.Scale == c.Smallest {
			smallest = p.CPU
			if !p.Holds {
				t.Errorf("the smallest limit that holds did not hold\n%s", s.stdout)
			}
		}
	}
	if c.Smallest > 0 && smallest < need {
		t.Errorf("smallest CPU that holds %.3g cores (scale %v), want a probed one of %v or more\n%s", smallest, c.Smallest, need, s.stdout)
	}
	busy := c.Stopped || strings.Contains(s.stdout, "the machine was busy with other work")
	switch {
	case c.Knee == nil || c.Knee.Steps == 0:
		t.Errorf("no knee fitted\n%s", s.stdout)
	case c.Knee.Fitted < need*0.95 || c.Knee.Fitted < need && !busy:
		t.Errorf("knee %.3g cores, below the %v the work alone takes\n%s", c.Knee.Fitted, need, s.stdout)
	case c.Knee.Fitted < need:
		// the CPU a sample span saw is spread evenly over it; a machine
		// that stalls the target and then lets it catch up breaks that
		t.Logf("the machine was busy: the knee %.3g cores is below the %v the work takes, by less than 5 %%", c.Knee.Fitted, need)
	case c.Knee.Fitted > need*1.15 && busy:
		// contention for caches and cores makes a request cost more CPU
		t.Logf("the machine was busy: the knee %.3g cores is more than 15 %% above the %v the work takes; not judged", c.Knee.Fitted, need)
	case c.Knee.Fitted > need*1.15:
		t.Errorf("knee %.3g cores, want within 15 %% above %v\n%s", c.Knee.Fitted, need, s.stdout)
	}
	if !strings.Contains(s.stdout, "CPU LIMIT") || !strings.Contains(s.stdout, "the knee: ") {
		t.Errorf("no curve printed:\n%s", s.stdout)
	}
}

// The memory search: a target that holds 64 MiB resident breaks under any
// memory limit below that, killed or at its limit, and the smallest limit
// that holds is above it; the knee is bracketed between the two.
func TestSizeSearchMemoryLimits(t *testing.T) {
	env := []string{"VERIFY_WORK=0s", "VERIFY_RESIDENT=64MiB"}
	s, c := searchLimits(t, sizedRun(t, env), env, "memory", "memory-limits-0-small.json")
	for _, p := range c.Points {
		if p.Memory <= 0 || p.CPU != 0 {
			t.Errorf("step of %d bytes and %v cores, want a memory limit alone\n%s", p.Memory, p.CPU, s.stdout)
		}
		if p.Holds && p.Memory < 64<<20 {
			t.Errorf("%d MiB held 64 MiB resident\n%s", p.Memory>>20, s.stdout)
		}
		why := strings.Join(p.Why, "\n")
		if !p.Holds && p.Memory < 64<<20 && !strings.Contains(why, "memory limit") && !strings.Contains(why, "OOM") {
			t.Errorf("a step of %d MiB broke for %q, want its memory limit named\n%s", p.Memory>>20, p.Why, s.stdout)
		}
	}
	if c.Knee == nil || !strings.Contains(s.stdout, "the knee: ") || !strings.Contains(s.stdout, "MEMORY LIMIT") {
		t.Errorf("knee %+v, want it printed\n%s", c.Knee, s.stdout)
	}
}

// verifiedOf is the summary.json of run dir after perflab size --verify
// ended with v: one cell, one size, its verdict; the test ends without.
func verifiedOf(t *testing.T, dir string, v result) verifiedSummary {
	t.Helper()
	var s verifiedSummary
	b, err := os.ReadFile(filepath.Join(dir, "summary.json"))
	if err == nil {
		err = json.Unmarshal(b, &s)
	}
	if err != nil || len(s.Cells) != 1 || len(s.Cells[0].Insights.Sizes) != 1 || s.Cells[0].Insights.Sizes[0].Verified == nil {
		t.Fatalf("summary.json after --verify (exit %d, %v):\n%s%s", v.code, err, v.stdout, v.stderr)
	}
	return s
}
