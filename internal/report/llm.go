package report

import (
	"fmt"
	"strings"

	"github.com/perflab/perflab/internal/analysis"
	"github.com/perflab/perflab/internal/stats"
)

// The token lengths and the goodput of LLM workloads (the openai driver's
// length measures and goodput counters), in every format.

// lengthName names each length measure in the reports.
var lengthName = map[stats.Measure]string{stats.PromptLength: "prompt", stats.OutputLength: "output"}

// lengthsNote says what the token lengths table holds.
const lengthsNote = "Tokens of each successful request, as the answers' usage reports them (else one per content event of a stream), over the window: " +
	"the prompt's and the answer's, beside the latency."

// lengthsTable is the distribution of prompt and output lengths per
// operation, or nil when no operation has any.
func lengthsTable(s *analysis.Summary) *table {
	t := &table{Title: "Token lengths", Note: lengthsNote, Head: []string{"Operation", "Tokens", "Count", "p50", "p90", "p99", "max", "mean"},
		Right: []bool{false, false, true, true, true, true, true, true}}
	for _, op := range s.Ops {
		for _, m := range []stats.Measure{stats.PromptLength, stats.OutputLength} {
			if q := op.Measures[m]; q.Count > 0 {
				l := analysis.LengthsOf(q)
				t.Rows = append(t.Rows, []string{op.Name, lengthName[m], fmt.Sprint(l.Count), fmt.Sprint(l.P50),
					fmt.Sprint(l.P90), fmt.Sprint(l.P99), fmt.Sprint(l.Max), fmt.Sprint(l.Mean)})
			}
		}
	}
	if len(t.Rows) == 0 {
		return nil
	}
	return t
}

// goodputNote says what the goodput table holds.
const goodputNote = "A request counts toward goodput when it succeeded and met every bound of the workload's goodput params " +
	"(listed in the driver's facts: TTFT, the request's mean ITL, its TPOT, its latency); every request is judged, failed ones too. " +
	"Rate is good requests per second of the window."

// goodputTable is each operation's goodput, or nil when none was judged.
func goodputTable(s *analysis.Summary) *table {
	t := &table{Title: "Goodput", Note: goodputNote, Head: []string{"Operation", "Good", "Judged", "Share", "Rate"},
		Right: []bool{false, true, true, true, true}}
	for _, op := range s.Ops {
		if g, ok := op.Goodput(); ok {
			t.Rows = append(t.Rows, []string{op.Name, fmt.Sprint(g.Good), fmt.Sprint(g.Judged), pct(g.Share, 1), num3(g.Rate) + "/s"})
		}
	}
	if len(t.Rows) == 0 {
		return nil
	}
	return t
}

// markdownLLM writes the token lengths and goodput tables of s, each with
// its note, when it has them.
func markdownLLM(b *strings.Builder, s *analysis.Summary, level int) {
	for _, t := range []*table{lengthsTable(s), goodputTable(s)} {
		if t == nil {
			continue
		}
		heading(b, level, "%s", t.Title)
		t.markdown(b)
		b.WriteString("\n" + t.Note + "\n")
	}
}

// terminalLLM is what the terminal line of an operation says of its token
// lengths and goodput.
func terminalLLM(op analysis.Op) []string {
	var parts []string
	for _, m := range []stats.Measure{stats.PromptLength, stats.OutputLength} {
		if q := op.Measures[m]; q.Count > 0 {
			l := analysis.LengthsOf(q)
			parts = append(parts, fmt.Sprintf("%s tokens p50 %d p99 %d", lengthName[m], l.P50, l.P99))
		}
	}
	if g, ok := op.Goodput(); ok {
		parts = append(parts, fmt.Sprintf("goodput %s/s (%s)", num3(g.Rate), pct(g.Share, 1)))
	}
	return parts
}

// jsonLengths is a length measure's figures in tokens.
type jsonLengths struct {
	Count int64 `json:"count"`
	P50   int64 `json:"p50"`
	P90   int64 `json:"p90"`
	P99   int64 `json:"p99"`
	Max   int64 `json:"max"`
	Mean  int64 `json:"mean"`
}

// jsonGoodput is the goodput over the window.
type jsonGoodput struct {
	Good      int64   `json:"good"`
	Judged    int64   `json:"judged"`
	Share     float64 `json:"share"`
	PerSecond float64 `json:"per_second"`
}

// lengthsJSON is the token lengths by name ("prompt", "output"), or nil
// when there are none.
func lengthsJSON(qs [stats.NumMeasures]analysis.Quantiles) map[string]jsonLengths {
	var out map[string]jsonLengths
	for _, m := range []stats.Measure{stats.PromptLength, stats.OutputLength} {
		if qs[m].Count == 0 {
			continue
		}
		if out == nil {
			out = map[string]jsonLengths{}
		}
		l := analysis.LengthsOf(qs[m])
		out[lengthName[m]] = jsonLengths{Count: l.Count, P50: l.P50, P90: l.P90, P99: l.P99, Max: l.Max, Mean: l.Mean}
	}
	return out
}

func goodputJSON(g analysis.Goodput, ok bool) *jsonGoodput {
	if !ok {
		return nil
	}
	return &jsonGoodput{Good: g.Good, Judged: g.Judged, Share: round6(g.Share), PerSecond: round6(g.Rate)}
}
