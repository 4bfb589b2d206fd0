//go:build linux

package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/perflab/perflab/internal/testutil"
)

// rwMemoryPlan writes 2000-sample remote write requests to the built-in
// target at a rate, for 6 s.
const rwMemoryPlan = `name: rw-memory
components:
  - name: sink
    run:
      command: "{{perflab}}"
      args: [target, http, --addr, "127.0.0.1:%[1]d", --size, "0"]
      ready: {http: "http://127.0.0.1:%[1]d/health"}
profiles:
  - name: p
    duration: 6s
    warmup: 1s
    workloads:
      - name: w
        driver: remote_write
        rate: %[2]d/s
        params: {url: "http://127.0.0.1:%[1]d/api/v1/write", targets: 400, series_per_target: 1000, batch: 2000}
`

// peakRSS runs rwMemoryPlan at rate and returns perflab's peak RSS, KiB.
func peakRSS(t *testing.T, rate int) int {
	t.Helper()
	dir := t.TempDir()
	rss := filepath.Join(dir, "rss")
	r := runEnv(t, []string{"PERFLAB_PEAK_RSS=" + rss}, "run",
		writePlan(t, fmt.Sprintf(rwMemoryPlan, testutil.FreePort(t), rate)), "--out", dir)
	if r.code != 0 && r.code != 1 { // 1: the overloaded run fails its rate, as it should
		t.Fatalf("rate %d/s: exit %d\n%s", rate, r.code, r.stderr)
	}
	b, err := os.ReadFile(rss)
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(l, "VmHWM:"); ok {
			kb, err := strconv.Atoi(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")))
			if err != nil {
				t.Fatal(err)
			}
			return kb
		}
	}
	t.Fatalf("no VmHWM in %s", b)
	return 0
}

// TestRemoteWriteMemoryWhenBehind: a remote_write workload asked for far
// more than the machine can send (10,000 requests/s of 2000 samples, 20 M
// samples/s: several times what two cores build) costs arrivals, not
// memory: perflab's peak RSS stays within twice that of the same load at
// 50 requests/s (issue 31: 1.3–1.7 GiB against 50–100 MiB before).
func TestRemoteWriteMemoryWhenBehind(t *testing.T) {
	onTarget := peakRSS(t, 50)
	behind := peakRSS(t, 10_000)
	t.Logf("peak RSS at 50/s %d KiB, at 10000/s %d KiB", onTarget, behind)
	if behind > 2*onTarget {
		t.Errorf("peak RSS %d KiB at 10000/s, %d KiB at 50/s: want at most twice", behind, onTarget)
	}
}
