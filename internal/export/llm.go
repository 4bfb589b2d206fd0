package export

import (
	"time"

	"github.com/perflab/perflab/internal/stats"
)

// The series of what a driver measures and counts besides latency: an
// LLM's time to first token, inter-token latency and time per output
// token, its tokens and its goodput. Each exists from the first interval
// that has a value of it, so that a run of another driver sends none.

// measureSeries names the summary of each measure that is a duration; the
// lengths (token counts per request) go out as the token counters instead.
var measureSeries = map[stats.Measure]string{
	stats.TTFT: "perflab_ttft_seconds",
	stats.TTST: "perflab_ttst_seconds",
	stats.ITL:  "perflab_itl_seconds",
	stats.TPOT: "perflab_tpot_seconds",
}

// tokenSeries names the counters of an LLM's tokens and goodput.
var tokenSeries = map[stats.Counter]string{
	stats.PromptTokens:  "perflab_prompt_tokens_total",
	stats.OutputTokens:  "perflab_output_tokens_total",
	stats.GoodputJudged: "perflab_goodput_judged_total",
	stats.Goodput:       "perflab_goodput_total",
}

// measures adds an operation's measure summaries, token and goodput
// counters (each from its first value, its zero at first, the
// operation's start) and the interval iv's output tokens/s and goodput
// ratio to out.
func (c *converter) measures(out []Series, ls labels, first time.Time, iv *stats.Interval, op *stats.OpStats) []Series {
	end := iv.End
	for m := stats.Measure(0); m < stats.NumMeasures; m++ {
		name, ok := measureSeries[m]
		if !ok {
			continue
		}
		h := op.Measures[m]
		var n int64
		var sum float64
		if h != nil {
			n, sum = h.Count(), h.Mean().Seconds()*float64(h.Count())
		}
		if s := summaryOf(name, ls, end, h); n > 0 || c.tt.has(s) {
			out = c.tt.add(out, s, first, 0, uint64(n), sum)
		}
	}
	judged := op.Counters[stats.GoodputJudged]
	for k := stats.PromptTokens; k <= stats.Goodput; k++ {
		s := counterOf(tokenSeries[k], ls, end)
		// Goodput starts with the judged, so that none good is a 0.
		if n := op.Counters[k]; n > 0 || k == stats.Goodput && judged > 0 || c.tt.has(s) {
			out = c.tt.add(out, s, first, float64(n), 0, 0)
		}
	}
	if c.tt.has(counterOf(tokenSeries[stats.OutputTokens], ls, end)) {
		perSecond := float64(op.Counters[stats.OutputTokens]) / end.Sub(iv.Start).Seconds()
		out = append(out, gaugeOf("perflab_output_tokens_per_second", ls, end, perSecond))
	}
	if judged > 0 {
		out = append(out, gaugeOf("perflab_goodput_ratio", ls, end, float64(op.Counters[stats.Goodput])/float64(judged)))
	}
	return out
}
