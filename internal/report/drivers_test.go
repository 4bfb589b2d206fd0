package report

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/perflab/perflab/internal/analysis"
	"github.com/perflab/perflab/internal/driver"
	"github.com/perflab/perflab/internal/view"
)

// TestDriverNotes renders a run whose write workload lost samples, got
// its series late and could not verify its exemplars: the Markdown has
// its facts and a late, a LOST and an UNVERIFIED row, the terminal a line
// per check, summary.json the facts and checks with the shortfall, state,
// lateness and reason; the read workload, whose driver told nothing, has
// none.
func TestDriverNotes(t *testing.T) {
	write := workload("a/write", "write", "a", 0, t0, 5)
	read := workload("a/read", "read", "a", 0, t0, 5)
	notes := &view.DriverNotes{
		Facts: []driver.Fact{{Name: "rate (from the driver)", Value: "1.2 requests/s"}, {Name: "active series", Value: "36000"}},
		Checks: []driver.Check{
			{Name: "series", Expected: 36000, Found: 36000, Unit: "series", Note: "every acknowledged series was read back", State: driver.CheckLate,
				Late: 400, LateBy: 1500 * time.Millisecond},
			{Name: "exemplars", Expected: 10, Unit: "exemplars", Note: "none answered", State: driver.CheckUnverified,
				Reason: "HTTP 503: unavailable"},
			{Name: "samples", Expected: 432000, Found: 400000, Unit: "samples", Note: "32000 samples | missing", State: driver.CheckLost},
		},
	}
	r := &view.Run{Name: "rw", Started: t0, State: "failed", Workloads: []*analysis.Summary{write, read},
		Cells: []*view.Cell{{Index: 0, Name: "default", State: "completed", Phases: []*view.Phase{{Profile: "a", State: "completed",
			Workloads: []*analysis.Summary{write, read}, Drivers: map[string]*view.DriverNotes{"a/write": notes}}}}}}
	var md, term, js bytes.Buffer
	if err := Markdown(&md, r); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"#### Driver facts\n\n- rate (from the driver): 1.2 requests/s\n- active series: 36000\n",
		"#### Read-back checks",
		"| series | 36000 series | 36000 series | late: 400 series, the last 1.5s after its write | every acknowledged series was read back |",
		"| samples | 432000 samples | 400000 samples | **LOST** 32000 samples | 32000 samples \\| missing |",
		"| exemplars | 10 exemplars | 0 exemplars | **UNVERIFIED**: HTTP 503: unavailable | none answered |"} {
		if !strings.Contains(md.String(), want) {
			t.Errorf("report.md lacks %q:\n%s", want, md.String())
		}
	}
	if strings.Count(md.String(), "Driver facts") != 1 {
		t.Error("the read workload has driver facts")
	}
	if err := Terminal(&term, r); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"a/write: read back samples: 400000 of 432000 samples: LOST 32000 samples",
		"a/write: read back series: 36000 of 36000 series: late: 400 series, the last 1.5s after its write",
		"a/write: read back exemplars: 0 of 10 exemplars: UNVERIFIED: HTTP 503: unavailable"} {
		if !strings.Contains(term.String(), want) {
			t.Errorf("terminal lacks %q:\n%s", want, term.String())
		}
	}
	if err := JSON(&js, r); err != nil {
		t.Fatal(err)
	}
	var out struct {
		Workloads []struct {
			Facts  []driver.Fact `json:"facts"`
			Checks []struct {
				Lost          bool    `json:"lost"`
				Shortfall     float64 `json:"shortfall"`
				State         string  `json:"state"`
				Late          float64 `json:"late"`
				LateBySeconds float64 `json:"late_by_seconds"`
				Reason        string  `json:"reason"`
			} `json:"checks"`
		} `json:"workloads"`
	}
	if err := json.Unmarshal(js.Bytes(), &out); err != nil {
		t.Fatal(err)
	}
	w := out.Workloads
	if len(w[0].Facts) != 2 || len(w[0].Checks) != 3 || !w[0].Checks[2].Lost || w[0].Checks[2].Shortfall != 32000 ||
		w[0].Checks[2].State != "lost" || w[1].Facts != nil || w[1].Checks != nil {
		t.Errorf("summary.json workloads %+v", w)
	}
	if c := w[0].Checks[0]; c.State != "late" || c.Late != 400 || c.LateBySeconds != 1.5 || c.Lost {
		t.Errorf("summary.json late check %+v", c)
	}
	if c := w[0].Checks[1]; c.State != "unverified" || c.Reason != "HTTP 503: unavailable" || c.Lost {
		t.Errorf("summary.json unverified check %+v", c)
	}
}

// A check that found nothing of what was written says that a system that
// shows writes late, or a query_url reading elsewhere, looks the same: a
// VictoriaMetrics read back within its 30 s latency offset is not lost.
func TestLostCheckThatFoundNothing(t *testing.T) {
	none := driver.Check{Name: "samples", Expected: 24000, Unit: "samples", State: driver.CheckLost}
	some := driver.Check{Name: "samples", Expected: 24000, Found: 100, Unit: "samples", State: driver.CheckLost}
	id := func(s string) string { return s }
	if got := checkResult(none, id); !strings.HasPrefix(got, "LOST 24000 samples (none found: ") || !strings.Contains(got, "verify_wait") {
		t.Errorf("nothing found: %q", got)
	}
	if got := checkResult(some, id); got != "LOST 23900 samples" {
		t.Errorf("some found: %q", got)
	}
}
