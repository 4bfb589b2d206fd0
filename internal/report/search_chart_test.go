package report

import (
	"strings"
	"testing"

	"github.com/perflab/perflab/internal/analysis"
	"github.com/perflab/perflab/internal/view"
)

// A sweep step with too few requests to judge its gate says "insufficient
// data", neither pass nor fail, in search.md, the terminal and
// search.json (read back the same); the terminal's LLM columns include
// output tokens/s; report.html draws latency against the rate achieved,
// without the throughput step.
func TestSweepInsufficientDataAndRateChart(t *testing.T) {
	s := sweepFixture()
	short := view.Gate{Verdict: analysis.Verdict{Expr: "p99 < 1s", State: analysis.GateInsufficient, Note: "p99 needs at least 100"}}
	st := &s.Steps[0]
	st.Pass, st.Insufficient, st.Gates, st.Why = false, true, []view.Gate{short}, "p99 < 1s: insufficient data (p99 needs at least 100)"
	md, term, js := renderSearch(t, s)
	if want := "| 0 | insufficient data | p99 < 1s: insufficient data (p99 needs at least 100) |"; !strings.Contains(md.String(), want) {
		t.Errorf("search.md lacks %q:\n%s", want, md.String())
	}
	lines := strings.Split(term.String(), "\n")
	if !strings.Contains(lines[0], "output tokens/s") || !strings.Contains(lines[2], "1000/s") ||
		!strings.HasSuffix(strings.TrimSpace(lines[1]), "insufficient data") || strings.Contains(lines[1], "FAIL") {
		t.Errorf("terminal:\n%s", term.String())
	}
	back, err := readSearchJSON(&js)
	if err != nil {
		t.Fatal(err)
	}
	if !back.Steps[0].Insufficient || back.Steps[0].Verdict() != "insufficient data" || back.Steps[3].Verdict() != "fail" {
		t.Errorf("read back steps %+v", back.Steps)
	}
	d := &doc{}
	searchSection(d, back, 2)
	html := string(docHTML(d))
	i := strings.Index(html, "<svg")
	if i < 0 {
		t.Fatalf("no chart in the HTML section:\n%s", html)
	}
	svg := html[i:]
	for _, want := range []string{"Latency against the rate achieved", ">p50<", ">p99<", ">TTFT p99<", "operations/s achieved"} {
		if !strings.Contains(svg, want) {
			t.Errorf("the chart lacks %q", want)
		}
	}
	// The steps drawn achieved 20 to 60.1/s; the throughput step's 100/s
	// would widen the axis past 60.
	if strings.Contains(svg, ">100<") || strings.Contains(svg, ">80<") {
		t.Errorf("the chart's rate axis reaches the throughput step's 100/s:\n%s", svg)
	}
	if strings.Contains(html, `<tr class="fail"><td class="n">1</td>`) {
		t.Errorf("the insufficient step's row is marked failed")
	}
}
