//go:build linux

package e2e

import (
	"encoding/csv"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/perflab/perflab/internal/testutil"
)

// A plan's result_interval sets how long each stored interval covers: a
// 3 s load at 100/s with result_interval 250ms is stored as 12 intervals
// of 250 ms, each starting a whole multiple of 250 ms after the load (and
// a drain after them), holding every request; the window leaves out the
// first 250 ms, not a second; the CSV's rows are of 0.250 s, at rates of
// requests per second, not per interval.
func TestResultInterval(t *testing.T) {
	t.Parallel()
	port := testutil.FreePort(t)
	plan := fmt.Sprintf(`name: quarter-seconds
result_interval: 250ms
components:
  - name: api
    run:
      command: "{{perflab}}"
      args: [target, http, --addr, "127.0.0.1:%[1]d", --latency, 2ms]
      ready: {http: "http://127.0.0.1:%[1]d/health"}
profiles:
  - name: steady
    duration: 3s
    workloads:
      - {name: get, driver: http, rate: 100/s, params: {url: "http://127.0.0.1:%[1]d/"}}
`, port)
	csvPath := filepath.Join(t.TempDir(), "intervals.csv")
	r := run(t, "run", writePlan(t, plan), "--out", t.TempDir(), "--csv", csvPath)
	if r.code != 0 {
		t.Fatalf("exit %d\n%s", r.code, r.stderr)
	}
	var s struct {
		Workloads []struct {
			Name          string `json:"name"`
			RequestsTotal int64  `json:"requests_total"`
			Window        struct {
				Start time.Time `json:"start"`
				Rule  string    `json:"rule"`
			} `json:"window"`
		} `json:"workloads"`
	}
	dir := runDir(t, r.stderr)
	readSummary(t, dir, &s, r.stderr)
	if len(s.Workloads) != 1 {
		t.Fatalf("workloads %+v", s.Workloads)
	}
	w := s.Workloads[0]
	ivs := intervalsOf(t, dir, w.Name)
	if len(ivs) < 12 {
		t.Fatalf("%d intervals, want 12 of 250 ms and a drain", len(ivs))
	}
	start, n := ivs[0].Start, int64(0)
	for i, iv := range ivs {
		for _, op := range iv.Ops {
			n += op.Classes.Total()
		}
		if i >= 12 {
			continue // the drain, after the load
		}
		if d := iv.End.Sub(iv.Start); d != 250*time.Millisecond || iv.Start.Sub(start) != time.Duration(i)*250*time.Millisecond {
			t.Errorf("interval %d: [%v, %v) of %v, want [%d × 250 ms, +250 ms) after the load's start", i,
				iv.Start.Sub(start), iv.End.Sub(start), d, i)
		}
	}
	if n != w.RequestsTotal || n < 295 {
		t.Errorf("the intervals hold %d requests, the summary %d: want the same, about 300", n, w.RequestsTotal)
	}
	if got := w.Window.Start.Sub(start); got != 250*time.Millisecond || !strings.Contains(w.Window.Rule, "first interval") {
		t.Errorf("window from %v after the load's start (%q), want 250 ms: the first interval", got, w.Window.Rule)
	}
	f, err := os.Open(csvPath)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rows, err := csv.NewReader(f).ReadAll()
	if err != nil || len(rows) < 13 {
		t.Fatalf("CSV: %d rows, %v", len(rows), err)
	}
	col := map[string]int{}
	for i, name := range rows[0] {
		col[name] = i
	}
	row := rows[5]
	rate, err := strconv.ParseFloat(row[col["rate_per_s"]], 64)
	if row[col["interval_s"]] != "0.250" || err != nil || rate < 80 || rate > 120 {
		t.Errorf("CSV row %q of %q: interval_s %q and rate_per_s %q, want 0.250 and about 100", row, rows[0], row[col["interval_s"]], row[col["rate_per_s"]])
	}
}
