//go:build linux

package e2e

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/perflab/perflab/internal/observe"
	"github.com/perflab/perflab/internal/testutil"
)

// withQueueObserver, set to 1 in perflab's environment, registers
// queueObserver in it (TestMain), as its line in package observers would.
const withQueueObserver = "PERFLAB_E2E_QUEUE_OBSERVER"

// queueObserver is a new source as one would be added, in a package of its
// own: the depth of a component's queue (a gauge, always 7) and the jobs
// it has done (a counter, 5 a second). Nothing but its registration tells
// the run, analysis and the reports of it.
type queueObserver struct{}

func (queueObserver) Metrics() []observe.Metric {
	return []observe.Metric{
		{Name: "queue_depth", Kind: observe.Gauge, Unit: observe.Number, Title: "Queue depth", Column: "queue p99"},
		{Name: "queue_jobs", Kind: observe.Counter, Unit: observe.Number, Title: "Jobs done", Column: "jobs p99"},
	}
}

func (queueObserver) Source(c observe.Component) observe.Source {
	if c.PID == 0 {
		return nil
	}
	return queueSource{}
}

type queueSource struct{}

func (queueSource) Name() string { return "queue" }

func (queueSource) Sample(_ context.Context, now time.Time) ([]observe.Point, error) {
	return []observe.Point{{Metric: "queue_depth", Value: 7}, {Metric: "queue_jobs", Value: 5 * float64(now.UnixMilli()) / 1000}}, nil
}

// TestNewObserver runs a plan with queueObserver registered and a
// component with a data directory: the fake's metrics reach the terminal
// table, report.md, report.html and summary.json, and the disk observer's
// table, summary object and comparison are there as before.
func TestNewObserver(t *testing.T) {
	t.Parallel()
	port, data := testutil.FreePort(t), t.TempDir()
	if err := os.WriteFile(filepath.Join(data, "blob"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	path := writePlan(t, fmt.Sprintf(`
name: observer
sample_interval: 100ms
components:
  - name: web
    run:
      command: "{{perflab}}"
      args: [target, http, --addr, "127.0.0.1:%[1]d"]
      ready: {http: "http://127.0.0.1:%[1]d/health"}
    data_dirs: [%[2]s]
profiles:
  - name: load
    duration: 2s
    workloads:
      - {name: get, driver: http, rate: 20/s, params: {url: "http://127.0.0.1:%[1]d/"}}
`, port, data))
	r := runEnv(t, []string{withQueueObserver + "=1"}, "run", path, "--out", t.TempDir())
	if r.code != 0 {
		t.Fatalf("exit %d\n%s", r.code, r.stderr)
	}
	checkQueueTerminal(t, r.stdout)
	type stat struct {
		Samples int      `json:"samples"`
		P99     *float64 `json:"p99"`
	}
	s, md, dir := readRunAs[struct {
		Cells []struct {
			Phases []struct {
				Resources struct {
					Components []struct {
						Name    string          `json:"name"`
						Disk    *stat           `json:"disk"`
						Metrics map[string]stat `json:"metrics"`
					} `json:"components"`
				} `json:"resources"`
			} `json:"phases"`
		} `json:"cells"`
	}](t, r)
	found := false
	for _, c := range s.Cells[0].Phases[0].Resources.Components {
		if c.Name != "web" {
			continue
		}
		found = true
		if q := c.Metrics["queue_depth"]; q.Samples < 10 || q.P99 == nil || *q.P99 != 7 || c.Disk == nil || c.Disk.Samples < 10 {
			t.Errorf("summary.json: web's queue_depth %+v, disk %+v", q, c.Disk)
		}
	}
	if !found {
		t.Errorf("summary.json has no resources of web")
	}
	for _, want := range []string{"#### Queue depth\n\n| Component | P99 | Max | Avg |\n|---|---:|---:|---:|\n| web | 7 | 7 | 7 |\n",
		"#### Jobs done\n\n| Component | P99 | Max | Avg |\n|---|---:|---:|---:|\n| web | 5/s | 5/s | 5/s |\n",
		"#### Disk\n\n| Component | Used at the end of the window | Max |\n|---|---:|---:|\n| web | "} {
		if !strings.Contains(md, want) {
			t.Errorf("report.md lacks %q:\n%s", want, md)
		}
	}
	// The disk observer's metric is compared under its word, in bytes.
	if cmp := run(t, "compare", dir, dir); cmp.code != 0 || !strings.Contains(cmp.stdout, "| web | disk | ") {
		t.Errorf("perflab compare: exit %d, no disk row\n%s%s", cmp.code, cmp.stdout, cmp.stderr)
	}
	page, err := os.ReadFile(filepath.Join(dir, "report.html"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{">Queue depth</h", `<tr><td>web</td><td class="n">7</td><td class="n">7</td><td class="n">7</td></tr>`,
		">Jobs done</h", `<tr><td>web</td><td class="n">5/s</td>`, ">Disk</h", "<th class=\"n\">Used at the end of the window</th>"} {
		if !strings.Contains(string(page), want) {
			t.Errorf("report.html lacks %q", want)
		}
	}
}

// checkQueueTerminal checks the terminal's resource table: columns for the
// fake's two metrics, web's figures in them, none for the generator.
func checkQueueTerminal(t *testing.T, stdout string) {
	t.Helper()
	var rows []string
	_, table, _ := strings.Cut(stdout, "\nresources of ")
	for _, l := range strings.Split(table, "\n")[1:] {
		if l == "" || strings.HasPrefix(l, "warning: ") {
			break
		}
		rows = append(rows, strings.Join(strings.Fields(l), " "))
	}
	if len(rows) != 3 || !strings.HasSuffix(rows[0], "gc/min avg queue p99 jobs p99") ||
		!strings.HasSuffix(rows[1], " 7 5/s") || !strings.HasSuffix(rows[2], " – –") {
		t.Errorf("terminal resource table %q:\n%s", rows, stdout)
	}
}
