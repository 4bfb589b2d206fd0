//go:build linux

package e2e

import (
	"fmt"
	"slices"
	"strconv"
	"testing"

	"github.com/perflab/perflab/internal/analysis"
	"github.com/perflab/perflab/internal/stats"
)

// llmPlan starts the built-in OpenAI-compatible mock afresh in each of
// two cells (%[1]d its port), answering after 30 ms with 10 tokens 5 ms
// apart and, in one cell, 10 %% of its requests with a 500, and streams
// from it at 10 requests/s for 4 s, prompts of 50 tokens, exporting to
// the remote write URL %[2]s. The goodput bound on the time to first
// token is one any answer meets: the failed requests are what it misses.
const llmPlan = `name: llm-cells
sample_interval: 250ms
matrix:
  errors: ["0", "0.1"]
components:
  - name: provider
    run:
      command: "{{perflab}}"
      args: [target, llm, --addr, "127.0.0.1:%[1]d", --latency, 30ms, --tokens, "10", --tokens-per-second, "200", --error-rate, "{{errors}}"]
      ready: {http: "http://127.0.0.1:%[1]d/v1/models"}
    metrics: http://127.0.0.1:%[1]d/metrics
export:
  - {kind: remote-write, url: "%[2]s", interval: 500ms}
profiles:
  - name: steady
    duration: 4s
    workloads:
      - name: chat
        driver: openai
        rate: 10/s
        params:
          url: "http://127.0.0.1:%[1]d"
          model: perflab-mock
          stream: true
          input_tokens: {mean: 50}
          goodput: {ttft: 10s}
`

// llm is what summary.json says of an openai workload: over its whole
// load (its facts), the tokens of its successful requests, the requests
// judged against the goodput bounds and those that met them.
type llm struct {
	openai                     bool
	promptTokens, outputTokens float64
	good, judged               float64
}

// llmOf reads an openai workload's facts.
func llmOf(t *testing.T, facts []struct{ Name, Value string }) llm {
	t.Helper()
	l := llm{openai: true}
	for _, f := range facts {
		var err error
		switch f.Name {
		case "prompt tokens":
			l.promptTokens, err = strconv.ParseFloat(f.Value, 64)
		case "output tokens":
			l.outputTokens, err = strconv.ParseFloat(f.Value, 64)
		case "goodput":
			_, err = fmt.Sscanf(f.Value, "%g of %g requests met", &l.good, &l.judged)
		}
		if err != nil {
			t.Fatalf("fact %s: %q: %v", f.Name, f.Value, err)
		}
	}
	return l
}

func isLLM(f figure) bool { return f.openai }

// llmPanelChecks are the checks of the dashboard's LLM panels, of the
// openai workloads' figures alone: the store's intervals give the
// measures' quantiles and means, the summary's whole-load facts the token
// rates and the goodput ratio.
var llmPanelChecks = map[string]panelCheck{
	"LLM time to first token (per interval)":   {by: byOperation, check: measureQuantiles("ttft"), of: isLLM},
	"LLM inter-token latency (per interval)":   {by: byOperation, check: measureQuantiles("itl"), of: isLLM},
	"LLM time per output token (per interval)": {by: byOperation, check: measureQuantiles("tpot"), of: isLLM},
	// The means of the whole load, as latency's.
	"LLM mean TTFT, ITL and TPOT": {by: byOperation, check: func(f figure, ss []panelSample) string {
		for _, s := range ss {
			name := map[string]string{"A": "ttft", "B": "itl", "C": "tpot"}[s.ref]
			if msg := within(s.v, f.whole.measureMean(name), 1e-6, 0, "mean "+name+" (s)"); msg != "" {
				return msg
			}
		}
		return count(ss, 3)
	}, of: isLLM},
	"LLM tokens/s": {by: byOperation, check: func(f figure, ss []panelSample) string {
		return twoRates(ss, f.seconds, f.promptTokens, "prompt tokens/s", f.outputTokens, "output tokens/s", 0.03, 0)
	}, of: isLLM},
	"LLM goodput ratio": {by: byOperation, check: func(f figure, ss []panelSample) string {
		return one(ss, f.good/f.judged, 0.01, 0.001, "goodput ratio")
	}, of: func(f figure) bool { return f.judged > 0 }},
}

// measureQuantiles checks a panel of an LLM measure's per-interval
// quantiles: the last interval's, as latency's.
func measureQuantiles(name string) func(figure, []panelSample) string {
	return func(f figure, ss []panelSample) string {
		m, err := stats.ParseMeasure(name)
		if err != nil || len(f.whole.measureHists[m]) == 0 {
			return "the run has no " + name
		}
		return lastQuantiles(ss, f.whole.measureHists[m])
	}
}

// lastQuantiles checks that ss are the quantiles 0.5, 0.9, 0.99 and 1
// the panel shows at the run's end, as the exporter computed them from
// hists, an operation's intervals with a value: each quantile that of the
// last interval with the values it needs (the exporter sends none of an
// interval with fewer: analysis.MinCountFor), exact but for rounding; a
// quantile no interval had, no series.
func lastQuantiles(ss []panelSample, hists []*stats.Hist) string {
	want := map[string]float64{}
	for _, q := range []float64{0.5, 0.9, 0.99, 1} {
		for _, h := range slices.Backward(hists) {
			if q == 1 {
				want["1"] = h.Max().Seconds()
				break
			}
			if h.Count() >= analysis.MinCountFor(q) {
				want[strconv.FormatFloat(q, 'g', -1, 64)] = h.Quantile(q).Seconds()
				break
			}
		}
	}
	seen := map[string]bool{}
	for _, s := range ss {
		label := s.labels["quantile"]
		v, ok := want[label]
		if !ok {
			return fmt.Sprintf("q%s %g: no interval had the values it needs", label, s.v)
		}
		if msg := within(s.v, v, 1e-6, 0, "q"+label+" (s) of the last interval with it"); msg != "" {
			return msg
		}
		seen[label] = true
	}
	if len(seen) != len(want) || len(ss) != len(want) {
		return fmt.Sprintf("quantiles %v, want one series each of %v", seen, want)
	}
	return ""
}

// checkLLMTotals checks that VictoriaMetrics holds, of the openai run r,
// exactly the tokens and goodput the run counted (its facts): the last
// values of the counters, summed over the cells. A failed request of the
// mock carries no tokens, so the counters of every request are those of
// the successful ones.
func checkLLMTotals(t *testing.T, vm string, r dashRun) {
	t.Helper()
	var want llm
	for _, f := range r.figures(t) {
		want.promptTokens, want.outputTokens = want.promptTokens+f.promptTokens, want.outputTokens+f.outputTokens
		want.good, want.judged = want.good+f.good, want.judged+f.judged
	}
	for name, n := range map[string]float64{"perflab_prompt_tokens_total": want.promptTokens, "perflab_output_tokens_total": want.outputTokens,
		"perflab_goodput_total": want.good, "perflab_goodput_judged_total": want.judged} {
		if got := lastSum(t, vm, fmt.Sprintf(`%s{run=%q}`, name, r.id)); got != n || n == 0 {
			t.Errorf("%s: VictoriaMetrics holds %v, the run counted %v", name, got, n)
		}
	}
}
