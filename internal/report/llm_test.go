package report

import (
	"bytes"
	"encoding/json"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/perflab/perflab/internal/analysis"
	"github.com/perflab/perflab/internal/stats"
	"github.com/perflab/perflab/internal/view"
)

// llmGoodputRun is one openai workload over 10 one-second intervals of 10
// streams each: prompts of 100 to 109 tokens (one of each length an
// interval), answers of 50 tokens, TTFT 40 ms, TTST 5 ms; 8 of the 10
// streams of an interval met the goodput bounds.
func llmGoodputRun() *view.Run {
	var ivs []*stats.Interval
	for i := range 10 {
		st := stats.NewOpStats()
		for k := range 10 {
			st.Latency.Record(300 * time.Millisecond)
			for _, v := range []stats.Timing{{Measure: stats.TTFT, D: 40 * time.Millisecond}, {Measure: stats.TTST, D: 5 * time.Millisecond},
				stats.LengthTiming(stats.PromptLength, int64(100+k)), stats.LengthTiming(stats.OutputLength, 50)} {
				if st.Measures[v.Measure] == nil {
					st.Measures[v.Measure] = stats.NewHist()
				}
				st.Measures[v.Measure].Record(v.D)
			}
		}
		st.Classes[stats.OK] = 10
		st.Counters[stats.PromptTokens], st.Counters[stats.OutputTokens] = 1045, 500
		st.Counters[stats.GoodputJudged], st.Counters[stats.Goodput] = 10, 8
		ivs = append(ivs, &stats.Interval{Index: i, Start: t0.Add(sec(float64(i))), End: t0.Add(sec(float64(i + 1))),
			Ops: map[string]*stats.OpStats{"chat": st}, Lag: stats.NewHist()})
	}
	w := analysis.Workload{Name: "chat", Driver: "openai", Model: "closed", Target: "chat", Start: t0, End: t0.Add(10 * time.Second),
		Window: analysis.Window{Start: t0, End: t0.Add(10 * time.Second), Rule: "test"}}
	sum := analysis.Summarize(w, ivs)
	return &view.Run{Name: "llm", Started: t0, Ended: t0.Add(10 * time.Second), State: "completed", Workloads: []*analysis.Summary{sum},
		Cells: []*view.Cell{{Implicit: true, Phases: []*view.Phase{{Implicit: true, Window: sum.Window, Workloads: []*analysis.Summary{sum}}}}}}
}

// Token lengths and goodput show in every format, and the time to second
// token beside the time to first; lengths are tokens, not a latency.
func TestTokenLengthsGoodputAndTTSTInEveryFormat(t *testing.T) {
	r := llmGoodputRun()
	var md, term, html, js bytes.Buffer
	for _, f := range []struct {
		w      *bytes.Buffer
		render func(*bytes.Buffer, *view.Run) error
	}{
		{&md, func(b *bytes.Buffer, r *view.Run) error { return Markdown(b, r) }},
		{&term, func(b *bytes.Buffer, r *view.Run) error { return Terminal(b, r) }},
		{&html, func(b *bytes.Buffer, r *view.Run) error { return HTML(b, r) }},
		{&js, func(b *bytes.Buffer, r *view.Run) error { return JSON(b, r) }},
	} {
		if err := f.render(f.w, r); err != nil {
			t.Fatal(err)
		}
	}
	for _, want := range []string{"| chat | time to first token (streams) | 40.0 ms |", "| chat | time to second token (after the first) | 5.00 ms |",
		"### Token lengths", "| Operation | Tokens | Count | p50 | p90 | p99 | max | mean |",
		"| chat | prompt | 100 | 104 | 108 | 109 | 109 | 105 |", "| chat | output | 100 | 50 | 50 | 50 | 50 | 50 |",
		"### Goodput", "| Operation | Good | Judged | Share | Rate |", "| chat | 80 | 100 | 80.00 % | 8.00/s |"} {
		if !strings.Contains(md.String(), want) {
			t.Errorf("report.md lacks %q", want)
		}
	}
	if strings.Contains(md.String(), "| chat | prompt_length") || strings.Contains(md.String(), "| 109 µs |") {
		t.Errorf("a length shows as a latency:\n%s", md.String())
	}
	for _, want := range []string{"ttst p50 5.00 ms p99 5.00 ms", "prompt tokens p50 104 p99 109", "output tokens p50 50 p99 50", "goodput 8.00/s (80.00 %)"} {
		if !strings.Contains(term.String(), want) {
			t.Errorf("terminal lacks %q:\n%s", want, term.String())
		}
	}
	for _, want := range []string{"Token lengths", "Goodput", "<td>prompt</td>"} {
		if !strings.Contains(html.String(), want) {
			t.Errorf("report.html lacks %q", want)
		}
	}
	var s struct {
		Workloads []struct {
			Lengths map[string]jsonLengths `json:"token_lengths"`
			Goodput *jsonGoodput           `json:"goodput"`
			Ops     []struct {
				Measures map[string]jsonQ       `json:"measures_ms"`
				Lengths  map[string]jsonLengths `json:"token_lengths"`
				Goodput  *jsonGoodput           `json:"goodput"`
				Counters map[string]jsonCounter `json:"counters"`
			} `json:"operations"`
		} `json:"workloads"`
	}
	if err := json.Unmarshal(js.Bytes(), &s); err != nil || len(s.Workloads) != 1 || len(s.Workloads[0].Ops) != 1 {
		t.Fatalf("summary.json: %v\n%s", err, js.String())
	}
	w, op := s.Workloads[0], s.Workloads[0].Ops[0]
	wantLengths := map[string]jsonLengths{"prompt": {100, 104, 108, 109, 109, 105}, "output": {100, 50, 50, 50, 50, 50}}
	wantGoodput := jsonGoodput{Good: 80, Judged: 100, Share: 0.8, PerSecond: 8}
	for _, got := range []struct {
		lengths map[string]jsonLengths
		goodput *jsonGoodput
	}{{w.Lengths, w.Goodput}, {op.Lengths, op.Goodput}} {
		if len(got.lengths) != 2 || got.lengths["prompt"] != wantLengths["prompt"] || got.lengths["output"] != wantLengths["output"] ||
			got.goodput == nil || *got.goodput != wantGoodput {
			t.Errorf("token_lengths %+v, goodput %+v", got.lengths, got.goodput)
		}
	}
	if _, ok := op.Measures["prompt_length"]; ok || math.Abs(op.Measures["ttst"].P50-5) > 0.01 || op.Counters["goodput"] != (jsonCounter{}) {
		t.Errorf("measures_ms %+v, counters %+v: want ttst and no length, goodput apart", op.Measures, op.Counters)
	}
}
