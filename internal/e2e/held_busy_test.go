//go:build linux

package e2e

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/perflab/perflab/internal/testutil"
)

// TestSustainedVerdictIsStableOnABusyMachine: five runs of one plan at
// once, each loading its own built-in target (a fixed 2 ms, no limit on
// what it serves) at 50/s and then 100/s, while the suite's other tests
// share the machine too: each run is the others' busy machine. Both
// profiles are well within what the target serves, so every run must
// judge both sustained — or say that the machine was busy or bound and
// leave the profile out for that — never a knee in one run that another
// did not see (the Tempo profile that flipped in one of four identical
// runs).
func TestSustainedVerdictIsStableOnABusyMachine(t *testing.T) {
	t.Parallel()
	const runs = 5
	type size struct {
		Size         string `json:"size"`
		Sustained    bool   `json:"sustained"`
		SustainedWhy string `json:"sustained_why"`
		MachineBound bool   `json:"machine_bound"`
		MachineBusy  bool   `json:"machine_busy"`
		BusyWhy      string `json:"machine_busy_reason"`
	}
	machine := testutil.Measure(t)
	verdicts := make([][]size, runs)
	var wg sync.WaitGroup
	for i := range runs {
		port := testutil.FreePort(t)
		plan := writePlan(t, fmt.Sprintf(`
name: busy-%[2]d
sample_interval: 250ms
components:
  - name: target
    run:
      command: "{{perflab}}"
      args: [target, http, --addr, "127.0.0.1:%[1]d", --latency, 2ms, --size, 512B]
      ready: {http: "http://127.0.0.1:%[1]d/health"}
    metrics: http://127.0.0.1:%[1]d/metrics
profiles:
  - name: low
    duration: 6s
    warmup: 1s
    workloads:
      - {name: get, driver: http, rate: 50/s, params: {url: "http://127.0.0.1:%[1]d/"}}
  - name: high
    duration: 6s
    warmup: 1s
    workloads:
      - {name: get, driver: http, rate: 100/s, params: {url: "http://127.0.0.1:%[1]d/"}}
`, port, i))
		dir := filepath.Join(t.TempDir(), "run")
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := run(t, "run", plan, "--run-dir", dir, "--quiet")
			if r.code != 0 {
				t.Errorf("run %d: exit %d\n%s", i, r.code, r.stderr)
				return
			}
			b, err := os.ReadFile(filepath.Join(dir, "summary.json"))
			var s struct {
				Cells []struct {
					Insights struct {
						Sizes []size `json:"sizes"`
					} `json:"insights"`
				} `json:"cells"`
			}
			if err == nil {
				err = json.Unmarshal(b, &s)
			}
			if err != nil || len(s.Cells) != 1 || len(s.Cells[0].Insights.Sizes) != 2 {
				t.Errorf("run %d: summary.json (%v):\n%s", i, err, b)
				return
			}
			verdicts[i] = s.Cells[0].Insights.Sizes
		}()
	}
	wg.Wait()
	judged := 0
	for i, sizes := range verdicts {
		for _, s := range sizes {
			switch {
			case s.MachineBusy || s.MachineBound:
				t.Logf("run %d, %s: left out, the machine busy or bound: %s", i, s.Size, s.BusyWhy)
			case !s.Sustained:
				t.Errorf("run %d, %s: judged not sustained at a load far within the target's capacity: %s", i, s.Size, s.SustainedWhy)
			default:
				judged++
			}
		}
	}
	t.Logf("%d of %d profile verdicts judged (the rest left out for a busy machine, and said so)", judged, 2*runs)
	// Every verdict left out is right only where the machine was that
	// busy. Each run's others are the other runs and the suite's parallel
	// tests, all this test's processes to Measure: the machine as a whole
	// must have been saturated.
	if g := machine.Given(); judged == 0 {
		if why := g.Saturated(); why != "" {
			t.Logf("every verdict was left out, rightly: %s (%s)", why, g)
		} else {
			t.Errorf("every one of the %d verdicts was left out as machine-busy or bound, on a machine not saturated: %s", 2*runs, g)
		}
	}
}
