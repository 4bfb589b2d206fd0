package report

import (
	"bytes"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/perflab/perflab/internal/analysis"
	"github.com/perflab/perflab/internal/stats"
	"github.com/perflab/perflab/internal/view"
)

// sweepFixture is a sweep of 5 that stopped at 80/s: 20/s one at a
// time, 100/s with 16 VUs, then 46.7/s passed and 73.3/s did not.
func sweepFixture() *view.Search {
	ms := time.Millisecond
	llm := func(ttft time.Duration, total, perUser float64) *view.StepLLM {
		return &view.StepLLM{TTFTP50: ttft, TTFTP99: 2 * ttft, ITLP50: 5 * ms, OutputTokensPS: total, PerUserTokensPS: perUser,
			Goodput: &analysis.Goodput{Good: 90, Judged: 100, Share: 0.9, Rate: 45}}
	}
	return &view.Search{Plan: "llm", Profile: "p", Workload: "chat", Target: "openai chat", StepDuration: 10 * time.Second, Limit: "saturated",
		Sustained: 46.7, Failed: 73.3,
		Sweep: &view.Sweep{Size: 5, VUs: 16, Sync: 20, Throughput: 100, Rates: []float64{46.7, 73.3, 100}, Saturated: 73.3},
		Steps: []view.SearchStep{
			{N: 1, Phase: "step-01", Kind: analysis.SweepSynchronous, VUs: 1, Achieved: 20, P50: 50 * ms, P99: 60 * ms, Pass: true, LLM: llm(20*ms, 200, 200)},
			{N: 2, Phase: "step-02", Kind: analysis.SweepThroughput, VUs: 16, Achieved: 100, P50: 160 * ms, P99: 200 * ms, Pass: true, LLM: llm(130*ms, 1000, 62.5)},
			{N: 3, Phase: "step-03", Kind: analysis.SweepConstant, Rate: 46.7, Achieved: 46.5, P50: 50 * ms, P99: 70 * ms, Pass: true, LLM: llm(20*ms, 600, 150)},
			{N: 4, Phase: "step-04", Kind: analysis.SweepConstant, Rate: 73.3, Achieved: 60.1, P50: 900 * ms, P99: 2 * time.Second,
				Why: "over-saturated: achieved 60.1/s, under 95 % of the rate", LLM: llm(850*ms, 700, 70)},
		}}
}

// A sweep reports its kind of steps, rates, limit and LLM figures in
// search.md, the terminal and search.json, which reads back the same.
func TestSweepReport(t *testing.T) {
	s := sweepFixture()
	md, term, js := renderSearch(t, s)
	for _, want := range []string{"# Sweep `llm`", "| Result | synchronous rate **20/s** (one request at a time), throughput **100/s** (16 VUs); highest constant rate that passed: **46.7/s** |",
		"| Limit | over-saturation at 73.3/s: achieved 60.1/s (a constant rate is over-saturated when it achieves under 95 % of itself) |",
		"then constant rates (the open model, at most 16 VUs) evenly spaced up to the throughput, lowest first: 46.7/s, 73.3/s, 100/s |",
		"| # | Kind | Rate | Achieved | p50 | p99 | TTFT p50 | TTFT p99 | ITL p50 | Output tokens/s | Tokens/s per user | Goodput | Errors | Dropped | Verdict | Why not |",
		"| 2 | throughput (16 VUs) | – | 100.0/s | 160.0 ms | 200.0 ms | 130.0 ms | 260.0 ms | 5.00 ms | 1000/s | 62.5/s | 90.00 % (45.0/s) |",
		"| 4 | constant | 73.3/s | 60.1/s |"} {
		if !strings.Contains(md.String(), want) {
			t.Errorf("search.md lacks %q:\n%s", want, md.String())
		}
	}
	for _, want := range []string{"synchronous (1 VU)", "ttft p50", "result: synchronous rate 20/s", "limit:  over-saturation at 73.3/s"} {
		if !strings.Contains(term.String(), want) {
			t.Errorf("terminal lacks %q:\n%s", want, term.String())
		}
	}
	back, err := readSearchJSON(&js)
	if err != nil {
		t.Fatal(err)
	}
	if back.Sweep == nil || back.Sweep.Saturated != 73.3 || len(back.Sweep.Rates) != 3 || len(back.Steps) != 4 ||
		back.Steps[1].Kind != analysis.SweepThroughput || back.Steps[1].VUs != 16 || back.Steps[1].LLM == nil ||
		back.Steps[1].LLM.TTFTP50 != 130*time.Millisecond || back.Steps[1].LLM.Goodput.Share != 0.9 || back.Steps[1].LLM.PerUserTokensPS != 62.5 {
		t.Errorf("read back %+v, steps %+v", back.Sweep, back.Steps)
	}
	d := &doc{}
	searchSection(d, back, 2)
	var b strings.Builder
	d.markdown(&b)
	if !strings.Contains(b.String(), "## Sweep `llm`") || !strings.Contains(b.String(), "| `step-04` |") {
		t.Errorf("the run report's section:\n%s", b.String())
	}
}

// A sweep's page draws total against per-user output tokens/s, a dot per
// step that has both, in order of the per-user rate; a search without
// LLM steps draws none.
func TestSweepParetoChart(t *testing.T) {
	r := singleRun()
	r.Search = sweepFixture()
	var page bytes.Buffer
	if err := HTML(&page, r); err != nil {
		t.Fatal(err)
	}
	html := page.String()
	i := strings.Index(html, `<figure id="pareto">`)
	if i < 0 || !strings.Contains(html[i:], "<title>Output tokens/s, total against per user (a point per step)</title>") {
		t.Fatalf("no Pareto chart in the page")
	}
	fig := html[i : i+strings.Index(html[i:], "</figure>")]
	if n := strings.Count(fig, "<circle "); n != 4 {
		t.Errorf("%d dots, want one per step (4)", n)
	}
	svg := paretoChart(sweepFixture())
	if xs := circleXs(string(svg)); len(xs) != 4 || !slices.IsSorted(xs) {
		t.Errorf("dots at x %v: want 4, in order of the per-user rate", xs)
	}
	r.Search = searchFixture()
	page.Reset()
	if err := HTML(&page, r); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(page.String(), `<figure id="pareto">`) {
		t.Error("a Pareto chart for a search without LLM steps")
	}
}

// circleXs are the cx of every circle of an SVG.
func circleXs(svg string) []float64 {
	var xs []float64
	for _, part := range strings.Split(svg, `<circle cx="`)[1:] {
		v, _ := strconv.ParseFloat(part[:strings.IndexByte(part, '"')], 64)
		xs = append(xs, v)
	}
	return xs
}

// A plan whose profiles sweep a streaming workload's load draws its total
// against per-user output tokens/s, a dot per profile.
func TestProfileParetoChart(t *testing.T) {
	phase := func(name string, tpot time.Duration, outPerSecond int64) *view.Phase {
		s := &analysis.Summary{Workload: analysis.Workload{Name: name + "/chat", Short: "chat", Profile: name}, Seconds: 10,
			Ops: []analysis.Op{{Name: "chat"}}}
		s.Measures[stats.TPOT] = analysis.Quantiles{Count: 100, P50: tpot}
		s.Ops[0].Counters[stats.OutputTokens] = 10 * outPerSecond
		return &view.Phase{Profile: name, Workloads: []*analysis.Summary{s}}
	}
	r := &view.Run{Cells: []*view.Cell{{Phases: []*view.Phase{phase("c1", 5*time.Millisecond, 200), phase("c10", 20*time.Millisecond, 500)}}}}
	svg := string(profileParetoChart(r))
	if xs := circleXs(svg); len(xs) != 2 || !slices.IsSorted(xs) || !strings.Contains(svg, "a point per profile") {
		t.Errorf("dots at %v in\n%s", xs, svg)
	}
	r.Cells[0].Phases = r.Cells[0].Phases[:1]
	if profileParetoChart(r) != nil {
		t.Error("a chart of one profile")
	}
}
