//go:build linux

package e2e

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/perflab/perflab/internal/testutil"
)

// TestExampleRW2Prometheus3 runs examples/rw2-prometheus3.yaml as written
// but for its port (a free one) and with prometheus3 found where
// scripts/install-deps.sh puts it: remote write 2.0 with native
// histograms and exemplars into Prometheus 3, whose read-back finds every
// sample, histogram and exemplar sent, acknowledged by the receiver and
// read back.
func TestExampleRW2Prometheus3(t *testing.T) {
	t.Parallel()
	bin := testutil.Prometheus3Binary(t)
	src, err := os.ReadFile("../../examples/rw2-prometheus3.yaml")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	plan := strings.ReplaceAll(string(src), "18121", strconv.Itoa(testutil.FreePort(t)))
	plan = strings.Replace(plan, "command: prometheus3", "command: "+bin, 1)
	for name, text := range map[string]string{"plan.yaml": plan, "prometheus.yml": "global: {scrape_interval: 15s}\n"} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	r := run(t, "run", filepath.Join(dir, "plan.yaml"), "--out", dir)
	if r.code != 0 {
		t.Fatalf("exit %d\n%s", r.code, r.stderr)
	}
	report, err := os.ReadFile(filepath.Join(runDir(t, r.stderr), "report.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, check := range []string{"series", "samples", "histograms", "histogram_count", "histogram_sum",
		"exemplars", "samples acknowledged", "histograms acknowledged", "exemplars acknowledged"} {
		line := "read back " + check + ": "
		i := strings.Index(r.stdout+r.stderr, line)
		if i < 0 {
			t.Errorf("no %q in the output", line)
			continue
		}
		got, _, _ := strings.Cut((r.stdout + r.stderr)[i+len(line):], "\n")
		found, rest, _ := strings.Cut(got, " of ")
		if want, _, _ := strings.Cut(rest, " "); found != want || !strings.HasSuffix(got, ": ok") || found == "0" {
			t.Errorf("%s%s: want all of a non-zero amount, ok", line, got)
		}
	}
	if !strings.Contains(string(report), "protocol: remote write 2.0") || !strings.Contains(string(report), "sent ") {
		t.Errorf("report.md does not name remote write 2.0 or say what was sent")
	}
}
