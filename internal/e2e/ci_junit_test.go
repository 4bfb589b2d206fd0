//go:build linux

package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	junit "github.com/joshdk/go-junit"
)

// TestCIPipelineReadsTheJUnitFile is a GitLab-style pipeline job: in its
// own working directory it runs perflab http against the built-in target
// on loopback with an SLO gate the target cannot meet and --junit, as
// README's CI example does; the job fails (exit 1), and a JUnit reader
// (github.com/joshdk/go-junit, as CI systems read the file) finds the
// failed gate as a failed test case with its message and detail, the
// gate that passed as passed, and the run itself completed.
func TestCIPipelineReadsTheJUnitFile(t *testing.T) {
	t.Parallel()
	url := startTarget(t, "--latency", "5ms")
	job := t.TempDir()
	cmd := perflabCmd("http", url, "--rate", "100/s", "--duration", "3s", "--slo", "p99 < 1ms", "--slo", "p50 < 10s",
		"--junit", "reports/perflab-junit.xml", "--csv", "reports/perflab.csv", "--run-dir", "perflab-run")
	cmd.Dir = job
	r := runCmd(t, cmd)
	if r.code != 1 {
		t.Fatalf("exit %d, want 1 (the job fails on the gate)\n%s", r.code, r.stderr)
	}
	suites, err := junit.IngestFile(filepath.Join(job, "reports", "perflab-junit.xml"))
	if err != nil || len(suites) != 1 {
		t.Fatalf("the JUnit reader: %d suites, %v", len(suites), err)
	}
	tests := map[string]junit.Test{}
	for _, tc := range suites[0].Tests {
		tests[tc.Name] = tc
	}
	failed := tests["p99 < 1ms on http"]
	if failed.Status != junit.StatusFailed || !strings.HasPrefix(failed.Message, "p99 < 1ms: measured ") || failed.Classname != "perflab.slo" {
		t.Errorf("the failed gate: %+v", failed)
	}
	if e, ok := failed.Error.(junit.Error); !ok || e.Type != "failed" || !strings.Contains(e.Body, "measured: ") {
		t.Errorf("the failed gate's detail: %#v", failed.Error)
	}
	if tc := tests["p50 < 10s on http"]; tc.Status != junit.StatusPassed {
		t.Errorf("the gate that passed: %+v", tc)
	}
	if tc := tests["run completed"]; tc.Status != junit.StatusPassed || tc.Duration <= 0 {
		t.Errorf("run completed: %+v", tc)
	}
	if suites[0].Totals.Failed < 1 || suites[0].Totals.Tests != len(suites[0].Tests) {
		t.Errorf("totals: %+v", suites[0].Totals)
	}
	if _, err := os.Stat(filepath.Join(job, "perflab-run", "summary.json")); err != nil {
		t.Errorf("--run-dir: %v", err)
	}
	if b, err := os.ReadFile(filepath.Join(job, "reports", "perflab.csv")); err != nil || !strings.HasPrefix(string(b), "start,end,") {
		t.Errorf("--csv: %v\n%.200s", err, b)
	}
}
