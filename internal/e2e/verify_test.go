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

type verifiedSummary struct {
	Cells []struct {
		Insights struct {
			Sizes []struct {
				Size     string `json:"size"`
				Verified *struct {
					Holds    bool     `json:"holds"`
					Reasons  []string `json:"reasons"`
					Evidence []struct {
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
	if os.Geteuid() != 0 {
		t.Skip("perflab size --verify makes cgroups: it needs root")
	}
	t.Parallel()
	plan, out := verifyPlan(t), t.TempDir()
	base := []string{"VERIFY_WORK=1ms", "VERIFY_RESIDENT=16MiB"}
	r := runEnv(t, base, "run", plan, "--out", out)
	if r.code != 0 {
		t.Fatalf("run: exit %d\n%s", r.code, r.stderr)
	}
	dir := runDir(t, r.stderr)
	verdict := func(env []string) (result, verifiedSummary) {
		t.Helper()
		v := runEnv(t, env, "size", dir, "--verify", "--verify-duration", "6s")
		var s verifiedSummary
		b, err := os.ReadFile(filepath.Join(dir, "summary.json"))
		if err == nil {
			err = json.Unmarshal(b, &s)
		}
		if err != nil || len(s.Cells) != 1 || len(s.Cells[0].Insights.Sizes) != 1 || s.Cells[0].Insights.Sizes[0].Verified == nil {
			t.Fatalf("summary.json after --verify (exit %d, %v):\n%s%s", v.code, err, v.stdout, v.stderr)
		}
		return v, s
	}

	v, s := verdict(base)
	got := s.Cells[0].Insights.Sizes[0].Verified
	if v.code != 0 || !got.Holds || len(got.Evidence) != 1 || got.Evidence[0].Periods == 0 || got.Evidence[0].OOMKills != 0 {
		t.Errorf("the run's own size: exit %d, %+v\n%s%s", v.code, got, v.stdout, v.stderr)
	}
	md, _ := os.ReadFile(filepath.Join(dir, "report.md"))
	yaml, _ := os.ReadFile(filepath.Join(dir, "sizes", "default-small.yaml"))
	if !strings.Contains(string(md), "## Verified") || !strings.Contains(string(md), "**holds**") ||
		!strings.Contains(string(yaml), "perflab.io/verified: 'holds at") {
		t.Errorf("report.md or the sizes file lack the verdict:\n%s\n%s", md, yaml)
	}

	v, s = verdict([]string{"VERIFY_WORK=8ms", "VERIFY_RESIDENT=16MiB"})
	got = s.Cells[0].Insights.Sizes[0].Verified
	if v.code != 1 || got.Holds || len(got.Evidence) != 1 || got.Evidence[0].ThrottledShare < 0.3 ||
		!strings.Contains(v.stderr, "size small does not hold inside its limits") {
		t.Errorf("8 times the CPU per request: exit %d, %+v\n%s%s", v.code, got, v.stdout, v.stderr)
	}

	v, s = verdict([]string{"VERIFY_WORK=1ms", "VERIFY_RESIDENT=400MiB"})
	got = s.Cells[0].Insights.Sizes[0].Verified
	if v.code != 1 || got.Holds || !strings.Contains(strings.Join(got.Reasons, "\n"), "OOM-killed") {
		t.Errorf("400 MiB resident: exit %d, %+v\n%s%s", v.code, got, v.stdout, v.stderr)
	}
}
