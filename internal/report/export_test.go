package report

import (
	"bytes"
	"encoding/csv"
	"encoding/xml"
	"strings"
	"testing"
	"time"

	"github.com/perflab/perflab/internal/analysis"
	"github.com/perflab/perflab/internal/view"
)

// TestCSV: one row per operation per interval, sorted, with the figures
// of that operation alone and empty percentiles where it had no
// successful request.
func TestCSV(t *testing.T) {
	t0 := time.Date(2026, 11, 27, 12, 0, 0, 0, time.UTC)
	ms := time.Millisecond
	r := &view.Run{OpTimelines: map[string]map[string][]analysis.IntervalFigures{
		"p/get": {
			"GET /b": {{Start: t0, End: t0.Add(time.Second), Requests: 10, Errors: 10, Rate: 10}},
			"GET /a": {{Start: t0, End: t0.Add(time.Second), Requests: 100, Errors: 1, Rate: 100, Latencies: 99, P50: 2 * ms, P90: 3 * ms, P99: 4500 * time.Microsecond},
				{Start: t0.Add(time.Second), End: t0.Add(2 * time.Second), Requests: 50, Rate: 50, Latencies: 50, P50: ms, P90: ms, P99: ms}},
		},
	}}
	var b bytes.Buffer
	if err := CSV(&b, r); err != nil {
		t.Fatal(err)
	}
	rows, err := csv.NewReader(&b).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	want := [][]string{csvHeader,
		{"p/get", "GET /a", "2026-11-27T12:00:00.000Z", "2026-11-27T12:00:01.000Z", "100", "1", "100.000", "99", "2.000", "3.000", "4.500"},
		{"p/get", "GET /a", "2026-11-27T12:00:01.000Z", "2026-11-27T12:00:02.000Z", "50", "0", "50.000", "50", "1.000", "1.000", "1.000"},
		{"p/get", "GET /b", "2026-11-27T12:00:00.000Z", "2026-11-27T12:00:01.000Z", "10", "10", "10.000", "0", "", "", ""},
	}
	if len(rows) != len(want) {
		t.Fatalf("rows %q, want %q", rows, want)
	}
	for i := range want {
		if strings.Join(rows[i], ",") != strings.Join(want[i], ",") {
			t.Errorf("row %d: %q, want %q", i, rows[i], want[i])
		}
	}
}

// TestJUnit: the run's state and every gate are test cases; a failed gate
// and one with insufficient data fail, as the exit code does; a passed
// one does not; a run that did not complete fails its state case.
func TestJUnit(t *testing.T) {
	gate := func(expr string, s analysis.GateState, measured string) view.Gate {
		return view.Gate{Verdict: analysis.Verdict{Expr: expr, Workload: "p/get", State: s, Measured: measured}}
	}
	t0 := time.Date(2026, 11, 27, 12, 0, 0, 0, time.UTC)
	for _, c := range []struct {
		state    string
		failures int
	}{{"completed", 2}, {"failed", 3}} {
		r := &view.Run{Name: "t", State: c.state, Started: t0, Ended: t0.Add(90 * time.Second),
			SLO: []view.Gate{gate("p99 < 200ms", analysis.GatePass, "183ms"), gate("error_rate < 0.1%", analysis.GateFail, "0.5%"),
				gate("p99.9 < 1s", analysis.GateInsufficient, "")}}
		var b bytes.Buffer
		if err := JUnit(&b, r); err != nil {
			t.Fatal(err)
		}
		var got junitSuites
		if err := xml.Unmarshal(b.Bytes(), &got); err != nil {
			t.Fatalf("%s\n%v", b.String(), err)
		}
		s := got.Suites[0]
		if s.Tests != 4 || s.Failures != c.failures || s.Time != "90.000" || len(s.Cases) != 4 {
			t.Errorf("%s run: suite %+v, want 4 tests, %d failures", c.state, s, c.failures)
		}
		if f := s.Cases[2].Failure; f == nil || f.Type != "failed" || !strings.Contains(f.Message, "0.5%") {
			t.Errorf("the failed gate: %+v", s.Cases[2])
		}
		if s.Cases[1].Failure != nil || s.Cases[1].Name != "p99 < 200ms on p/get" {
			t.Errorf("the passed gate: %+v", s.Cases[1])
		}
		if f := s.Cases[3].Failure; f == nil || f.Type != "insufficient data" {
			t.Errorf("the gate with insufficient data: %+v", s.Cases[3])
		}
	}
}
