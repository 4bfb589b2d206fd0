package report

import (
	"fmt"
	"io"
	"strings"

	"github.com/perflab/perflab/internal/analysis"
	"github.com/perflab/perflab/internal/stats"
	"github.com/perflab/perflab/internal/view"
)

// measureText names each stats.Measure in the latency tables.
var measureText = [stats.NumMeasures]string{
	stats.TTFT:  "time to first token (streams)",
	stats.TTST:  "time to second token (after the first)",
	stats.ITL:   "inter-token latency (every gap)",
	stats.TPOT:  "time per output token (per stream)",
	stats.NTPOT: "normalized time per output token (request time from its start / output tokens)",
}

// latencyMeasure is one row of a latency table: what was timed, and its quantiles.
type latencyMeasure struct {
	what string
	q    analysis.Quantiles
}

// latencyMeasures are the rows of op's latency table, in order; those
// without values are left out. The latency, service time and TTFB are of
// successful requests; when some failed, the rows say so, and the failed
// requests' latency and every request's follow.
func latencyMeasures(op analysis.Op) []latencyMeasure {
	latency := "latency (from intended start)"
	switch {
	case op.HasFailedLatency():
		latency = "latency, successful requests (from intended start)"
	case op.LatencyOfAll:
		latency = "latency, all requests (from intended start)"
	}
	all := []latencyMeasure{{latency, op.Latency}, {"service time (from actual start)", op.Service},
		{"time to first byte", op.TTFB}}
	if op.HasFailedLatency() {
		all = append(all, latencyMeasure{"latency, failed requests", op.FailedLatency}, latencyMeasure{"latency, all requests", op.AllLatency})
	}
	for m, q := range op.Measures {
		if !stats.Measure(m).IsLength() {
			all = append(all, latencyMeasure{measureText[m], q})
		}
	}
	all = append(all, latencyMeasure{"connect (new connections)", op.Connect})
	out := all[:0]
	for _, m := range all {
		if m.q.Count > 0 {
			out = append(out, m)
		}
	}
	return out
}

// latencyNote says what the latency figures of s are over, when that is
// not plain: some requests failed, or the store kept them with the
// successful ones; "" otherwise.
func latencyNote(s *analysis.Summary) string {
	var failed, mixed bool
	for _, op := range s.Ops {
		failed, mixed = failed || op.HasFailedLatency(), mixed || op.LatencyOfAll
	}
	switch {
	case mixed:
		return "Latency, service time and time to first byte are of all requests, failed ones too: " +
			"this run's store (results format 2 or older) did not keep the failed requests apart."
	case failed:
		return "Latency, service time and time to first byte are of successful requests only, " +
			"so that fast failures (a refused connection, an instant 500) do not pull them down; " +
			"the rows \"failed requests\" and \"all requests\" give the latency of the failed ones and of every request."
	}
	return ""
}

// tokenHead and tokenRow are the table of the tokens a driver counted:
// totals and rates over the window, and the rate of one stream (1/TPOT).
var tokenHead = []string{"Operation", "Prompt tokens", "Prompt tokens/s", "Output tokens", "Output tokens/s",
	"Stream tokens/s p50", "Stream tokens/s p10"}

func tokenRow(op analysis.Op) []string {
	p50, p10 := op.StreamTokensPerSecond()
	rate := func(v float64) string {
		if v == 0 {
			return "–"
		}
		return num3(v) + "/s"
	}
	return []string{op.Name, fmt.Sprint(op.Counters[stats.PromptTokens]), rate(op.CountersPS[stats.PromptTokens]),
		fmt.Sprint(op.Counters[stats.OutputTokens]), rate(op.CountersPS[stats.OutputTokens]), rate(p50), rate(p10)}
}

// tokenNote says how the tokens table's figures are made.
const tokenNote = "Tokens as the answers' usage reports them (else one per content event of a stream), over the window. " +
	"Stream tokens/s is how fast one stream delivered its tokens after the first, 1 / time per output token: " +
	"the median stream's (p50) and the rate the slowest tenth of streams stayed under (p10)."

// tokensTable is the tokens a driver counted per operation, or nil when it
// counted none; Markdown and HTML show the same table.
func tokensTable(s *analysis.Summary) *table {
	t := &table{Title: "Tokens", Note: tokenNote, Head: tokenHead, Right: []bool{false, true, true, true, true, true, true}}
	for _, op := range s.Ops {
		if op.HasCounters() {
			t.Rows = append(t.Rows, tokenRow(op))
		}
	}
	if len(t.Rows) == 0 {
		return nil
	}
	return t
}

// markdownTokens writes the tokens table of s, with its note below it,
// when a driver counted any.
func markdownTokens(b *strings.Builder, s *analysis.Summary, level int) {
	t := tokensTable(s)
	if t == nil {
		return
	}
	heading(b, level, "Tokens")
	t.markdown(b)
	b.WriteString("\n" + tokenNote + "\n")
}

// terminalMeasures writes a line per operation with driver measures or
// counters: the time to first token and the like, and tokens per second.
func terminalMeasures(w io.Writer, r *view.Run) {
	for _, s := range r.Workloads {
		for _, op := range s.Ops {
			var parts []string
			for m, q := range op.Measures {
				if q.Count > 0 && !stats.Measure(m).IsLength() {
					parts = append(parts, fmt.Sprintf("%s p50 %s p99 %s", stats.Measure(m), dur(q.P50), dur(q.P99)))
				}
			}
			if op.HasCounters() {
				parts = append(parts, fmt.Sprintf("output %s tokens/s", num3(op.CountersPS[stats.OutputTokens])))
			}
			if p50, _ := op.StreamTokensPerSecond(); p50 > 0 {
				parts = append(parts, fmt.Sprintf("%s tokens/s per stream (p50)", num3(p50)))
			}
			parts = append(parts, terminalLLM(op)...)
			if len(parts) > 0 {
				fmt.Fprintf(w, "%s %s: %s\n", s.Workload.Name, op.Name, strings.Join(parts, ", "))
			}
		}
	}
}

// jsonCounter is a counter over the window.
type jsonCounter struct {
	Total     int64   `json:"total"`
	PerSecond float64 `json:"per_second"`
}

type jsonStreamRate struct {
	P50 float64 `json:"p50"`
	P10 float64 `json:"p10"`
}

// measuresJSON is the measures with values by name, or nil when none has.
func measuresJSON(qs [stats.NumMeasures]analysis.Quantiles) map[string]jsonQ {
	var out map[string]jsonQ
	for m, q := range qs {
		if q.Count == 0 || stats.Measure(m).IsLength() {
			continue
		}
		if out == nil {
			out = map[string]jsonQ{}
		}
		out[stats.Measure(m).String()] = toJSONQ(q)
	}
	return out
}

// toJSONMeasures fills in op's measures and counters, when it has any.
func toJSONMeasures(jo *jsonOp, op analysis.Op) {
	jo.Measures = measuresJSON(op.Measures)
	jo.Lengths = lengthsJSON(op.Measures)
	jo.Goodput = goodputJSON(op.Goodput())
	if op.HasConnections() {
		jo.Connections = &jsonConnections{BodyBytesPS: op.CountersPS[stats.BodyBytes], Retries: op.Counters[stats.Retries],
			IdleCloses: op.Counters[stats.IdleCloses], StrayAnswers: op.Counters[stats.StrayAnswers]}
	}
	if !op.HasCounters() {
		return
	}
	jo.Counters = map[string]jsonCounter{}
	for c, n := range op.Counters {
		if c := stats.Counter(c); c != stats.Goodput && c != stats.GoodputJudged && !c.Connection() { // in "goodput", "connections"
			jo.Counters[c.String()] = jsonCounter{Total: n, PerSecond: op.CountersPS[c]}
		}
	}
	if p50, p10 := op.StreamTokensPerSecond(); p50 > 0 {
		jo.StreamTokensPS = &jsonStreamRate{P50: p50, P10: p10}
	}
}
