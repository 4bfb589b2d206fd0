package report

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/perflab/perflab/internal/analysis"
	"github.com/perflab/perflab/internal/slo"
	"github.com/perflab/perflab/internal/view"
)

// searchFixture is a search that passed 100 and 200/s, failed 400/s on
// its p99 and bisected once to 300/s, which passed; the knee is at 400/s.
func searchFixture() *view.Search {
	ms := func(f float64) time.Duration { return time.Duration(f * float64(time.Millisecond)) }
	step := func(n int, rate, achieved, p99 float64, pass, bisect bool, why string) view.SearchStep {
		return view.SearchStep{N: n, Phase: "step-0" + string(rune('0'+n)), Rate: rate, Bisect: bisect, Achieved: achieved,
			P50: ms(p99 / 3), P99: ms(p99), Count: int64(2 * rate), Pass: pass, Why: why}
	}
	res := singleRun().Cells[0].Phases[0].Resources
	return &view.Search{Plan: "cap", Dir: "/runs/cap-search-20261121-172400", Command: "perflab search cap.yaml --slo 'p99 < 100ms'",
		Profile: "load", Workload: "get", Target: "GET http://127.0.0.1:8080/", Gates: []string{"p99 < 100ms"},
		Start: 100, Max: 100000, Factor: 2, Bisect: 1, StepDuration: 3 * time.Second,
		Steps: []view.SearchStep{step(1, 100, 100, 4, true, false, ""), step(2, 200, 199.5, 5, true, false, ""),
			step(3, 400, 398, 900, false, false, "p99 < 100ms: 900ms"), step(4, 300, 300, 7, true, true, "")},
		Sustained: 300, Failed: 400, Limit: "target",
		Knee: &analysis.Knee{Rate: 400, Below: 300, P99: ms(900), Baseline: ms(4), BaseRate: 100}, Resources: res}
}

func TestGoldenSearch(t *testing.T) {
	s := searchFixture()
	md, term, js := renderSearch(t, s)
	golden(t, "search.md", md.Bytes())
	golden(t, "search.txt", term.Bytes())
	if !json.Valid(js.Bytes()) {
		t.Error("search.json is not valid JSON")
	}
	for _, tt := range []struct {
		limit, want string
	}{{"max", "--max: every rate up to 100000/s passed"}, {"start", "the start rate 100/s already failed"}} {
		s.Limit = tt.limit
		if got := searchLimit(s); got[:len(tt.want)] != tt.want {
			t.Errorf("limit %s: %q", tt.limit, got)
		}
	}
}

// TestReadSearchJSON: search.json read back gives the run's report the
// same Capacity search section as the search itself.
func TestReadSearchJSON(t *testing.T) {
	s := searchFixture()
	s.Steps[2].ClientBound, s.Steps[2].ClientWhy = true, "the generator's CPU at 95 % of its cores"
	s.Limit = "generator"
	var js bytes.Buffer
	if err := SearchJSON(&js, s); err != nil {
		t.Fatal(err)
	}
	back, err := readSearchJSON(&js)
	if err != nil {
		t.Fatal(err)
	}
	section := func(s *view.Search) string {
		d := &doc{}
		searchSection(d, s, 2)
		var b strings.Builder
		d.markdown(&b)
		return b.String()
	}
	s.Command = "" // the run's, not search.json's
	if got, want := section(back), section(s); got != want {
		t.Errorf("read back:\n%s\nwant:\n%s", got, want)
	}
	if !strings.Contains(section(back), "at 400/s it was client-bound (the generator's CPU at 95 % of its cores)") {
		t.Errorf("the limit lost why the generator was client-bound:\n%s", section(back))
	}
	if _, err := readSearchJSON(strings.NewReader(`{"format": "perflab-summary"}`)); err == nil {
		t.Error("a summary.json was read as a search")
	}
}

// A start step that failed no gate but had too few requests for one
// (error_rate < 0.1% needs 1000) says so, and does not advise a lower
// --start, which would give even fewer.
func TestSearchStartWithTooFewRequests(t *testing.T) {
	gate := func(state analysis.GateState) view.Gate {
		return view.Gate{Verdict: analysis.Verdict{Gate: slo.Gate{Expr: "error_rate < 0.1%"}, State: state}}
	}
	for _, tt := range []struct {
		gates []view.Gate
		want  string
	}{
		{[]view.Gate{{Verdict: analysis.Verdict{State: analysis.GatePass}}, gate(analysis.GateInsufficient)}, "too few requests in its window to judge every gate (none failed); lengthen --step-duration"},
		{[]view.Gate{gate(analysis.GateFail), gate(analysis.GateInsufficient)}, "the start rate 100/s already failed; lower --start"},
	} {
		s := searchFixture()
		st := view.SearchStep{N: 1, Rate: 100, Achieved: 100, Gates: tt.gates, Why: "error_rate < 0.1%: insufficient data"}
		st.Insufficient = st.TooFewToJudge() // as the search records it (search.json keeps it; not the gates)
		s.Steps = []view.SearchStep{st}
		s.Sustained, s.Failed, s.Limit = 0, 100, "start"
		if got := searchLimit(s); !strings.Contains(got, tt.want) {
			t.Errorf("gates %v: limit %q, want it to say %q", tt.gates, got, tt.want)
		}
	}
}

// TestSearchLimitNamesWhatStoppedIt: the limit names the generator only
// for a search that ended client-bound, and the step it was at; one that
// was stopped says so, not that the target failed.
func TestSearchLimitNamesWhatStoppedIt(t *testing.T) {
	for _, tt := range []struct {
		limit, stopped string
		want, not      string
	}{
		{"target", "", "the target: at 400/s the SLO failed while the generator kept up", "it was client-bound"},
		{"generator", "", "the generator: at 800/s it was client-bound (generator CPU P99 1.9 of 2 cores)", "the target:"},
		{"stopped", "interrupted by a signal", "the search stopped early: interrupted by a signal", "the target:"},
	} {
		s := searchFixture()
		s.Steps = append(s.Steps, view.SearchStep{N: 5, Rate: 800, ClientBound: true, ClientWhy: "generator CPU P99 1.9 of 2 cores"})
		s.Limit, s.Stopped = tt.limit, tt.stopped
		if got := searchLimit(s); !strings.HasPrefix(got, tt.want) || strings.Contains(got, tt.not) {
			t.Errorf("limit %s: %q, want %q", tt.limit, got, tt.want)
		}
	}
}

// renderSearch is s as search.md, the terminal's table and search.json.
func renderSearch(t *testing.T, s *view.Search) (md, term, js bytes.Buffer) {
	t.Helper()
	if err := SearchMarkdown(&md, s); err != nil {
		t.Fatal(err)
	}
	if err := SearchTerminal(&term, s); err != nil {
		t.Fatal(err)
	}
	if err := SearchJSON(&js, s); err != nil {
		t.Fatal(err)
	}
	return md, term, js
}
