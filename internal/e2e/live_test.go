//go:build linux

package e2e

import (
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"strings"
	"testing"
)

// perflab report on the directory of a run still going says it is in
// progress: it was told the run was killed.
func TestReportOfARunInProgress(t *testing.T) {
	t.Parallel()
	url := startTarget(t, "--latency", "1ms")
	cmd := exec.Command(perflab, "http", url, "--rate", "50/s", "--duration", "1h", "--out", t.TempDir())
	stderr, _ := cmd.StderrPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Wait()
	defer cmd.Process.Signal(os.Interrupt)
	dir := waitForProgress(t, stderr)
	md := run(t, "report", dir)
	if md.code != 0 || strings.Contains(md.stdout, "killed") || !strings.Contains(md.stdout, "| State | running: in progress") {
		t.Errorf("report of a run in progress: exit %d\n%s%s", md.code, md.stdout, md.stderr)
	}
}

// A directory that holds no run is a bad argument, as the exit codes
// say: 2, not the 1 of a run that failed.
func TestNoRunDirectoryIsABadArgument(t *testing.T) {
	t.Parallel()
	empty := t.TempDir()
	for _, args := range [][]string{{"report", empty}, {"size", empty + "/none"}, {"compare", empty, empty}} {
		if r := run(t, args...); r.code != 2 || !strings.Contains(r.stderr, "cannot open run") {
			t.Errorf("perflab %s: exit %d, want 2\n%s", strings.Join(args, " "), r.code, r.stderr)
		}
	}
}

// Every request answered 404 is not a server that is down: the hint
// points at the path, not at reachability.
func TestAllFailedHintFollowsTheErrorClass(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(http.NotFoundHandler())
	defer srv.Close()
	r := run(t, "http", srv.URL+"/wrong", "--rate", "20/s", "--duration", "1s", "--out", t.TempDir())
	if r.code != 1 || !strings.Contains(r.stderr, "hint: GET "+srv.URL+"/wrong answers, with a 4xx status: check the URL's path") ||
		strings.Contains(r.stderr, "is up and reachable") {
		t.Errorf("exit %d\n%s", r.code, r.stderr)
	}
}

// An --slo gate scoped to a workload the plan does not have is refused
// before anything starts: judged after the run, it had insufficient data
// and failed a run a typo had wasted.
func TestSLOGateOnAnUnknownWorkloadIsRefused(t *testing.T) {
	t.Parallel()
	path := writePlan(t, `
name: slo-typo
profiles:
  - name: low
    duration: 1s
    workloads:
      - {name: get, driver: http, rate: 1/s, params: {url: "http://127.0.0.1:9/"}}
`)
	out := t.TempDir()
	r := run(t, "run", path, "--out", out, "--slo", `p99{workload="gte"} < 1s`, "--slo", `p99{workload="low/get"} < 1s`)
	if r.code != 2 || !strings.Contains(r.stderr, `no workload "gte" (they have get)`) || strings.Contains(r.stderr, `"low/get"`) {
		t.Errorf("exit %d, want 2 naming gte alone:\n%s", r.code, r.stderr)
	}
	if entries, _ := os.ReadDir(out); len(entries) != 0 {
		t.Errorf("a run directory was created: %v", entries)
	}
	r = run(t, "http", "http://127.0.0.1:9/", "--out", out, "--slo", `p99{workload="web"} < 1s`)
	if r.code != 2 || !strings.Contains(r.stderr, `perflab http runs one workload, "http", not "web"`) {
		t.Errorf("perflab http: exit %d\n%s", r.code, r.stderr)
	}
}
