package analysis

import (
	"math"
	"time"

	"github.com/perflab/perflab/internal/stats"
)

// IntervalFigures are one recorded interval of a workload, every operation
// together: what charts plot over time.
type IntervalFigures struct {
	Start, End time.Time
	Requests   int64   // operations completed in the interval
	Errors     int64   // of which failed
	Dropped    int64   // arrivals dropped: every VU was busy
	Rate       float64 // Requests per second
	P50        time.Duration
	P90        time.Duration
	P99        time.Duration
	Latencies  int64 // latencies the quantiles rest on; 0 leaves them unset
	// LLM holds an LLM stream's figures of the interval: time to first
	// token, inter-token latency and time per output token at p50 and p99
	// (each set where it has values), and the tokens; zero for other
	// operations.
	LLM LLMFigures
}

// LLMFigures are an interval's figures of LLM operations.
type LLMFigures struct {
	TTFT, ITL, TPOT            [2]time.Duration // p50, p99
	TTFTs, ITLs, TPOTs         int64            // values each rests on
	PromptTokens, OutputTokens int64
}

// Timeline is the figures of every interval, in order. Quantiles are from
// the interval's histograms merged across operations, never averaged.
func Timeline(ivs []*stats.Interval) []IntervalFigures {
	out := make([]IntervalFigures, 0, len(ivs))
	for _, iv := range ivs {
		f := figuresOf(iv, func(string) bool { return true })
		f.Dropped = iv.Dropped
		out = append(out, f)
	}
	return out
}

// OpTimelines is Timeline of each operation alone, by operation name: an
// interval in which an operation did not run has zero figures for it.
// Dropped arrivals are the workload's, in Timeline only.
func OpTimelines(ivs []*stats.Interval) map[string][]IntervalFigures {
	out := map[string][]IntervalFigures{}
	for _, iv := range ivs {
		for name := range iv.Ops {
			out[name] = nil
		}
	}
	for name := range out {
		for _, iv := range ivs {
			out[name] = append(out[name], figuresOf(iv, func(op string) bool { return op == name }))
		}
	}
	return out
}

// figuresOf is the figures of the operations of iv that keep selects, their
// latency histograms merged.
func figuresOf(iv *stats.Interval, keep func(op string) bool) IntervalFigures {
	f := IntervalFigures{Start: iv.Start, End: iv.End}
	lat := stats.NewHist()
	measures := map[stats.Measure]*stats.Hist{stats.TTFT: stats.NewHist(), stats.ITL: stats.NewHist(), stats.TPOT: stats.NewHist()}
	for name, st := range iv.Ops {
		if !keep(name) {
			continue
		}
		f.Requests += st.Classes.Total()
		f.Errors += st.Classes.Errors()
		lat.Merge(st.Latency)
		for m, h := range measures {
			if st.Measures[m] != nil {
				h.Merge(st.Measures[m])
			}
		}
		f.LLM.PromptTokens += st.Counters[stats.PromptTokens]
		f.LLM.OutputTokens += st.Counters[stats.OutputTokens]
	}
	for _, x := range []struct {
		m  stats.Measure
		q  *[2]time.Duration
		nn *int64
	}{{stats.TTFT, &f.LLM.TTFT, &f.LLM.TTFTs}, {stats.ITL, &f.LLM.ITL, &f.LLM.ITLs}, {stats.TPOT, &f.LLM.TPOT, &f.LLM.TPOTs}} {
		if h := measures[x.m]; h.Count() > 0 {
			*x.nn, x.q[0], x.q[1] = h.Count(), h.Quantile(0.5), h.Quantile(0.99)
		}
	}
	if secs := iv.End.Sub(iv.Start).Seconds(); secs > 0 {
		f.Rate = float64(f.Requests) / secs
	}
	// equivalent mutant: f.Latencies >= 0; with no latencies Quantile is 0, as the fields are
	if f.Latencies = lat.Count(); f.Latencies > 0 {
		f.P50, f.P90, f.P99 = lat.Quantile(0.5), lat.Quantile(0.9), lat.Quantile(0.99)
	}
	return f
}

// SpectrumPoint is one quantile of a latency distribution.
type SpectrumPoint struct {
	Q     float64 // 0 < Q < 1
	Value time.Duration
}

// Spectrum is h's latency at quantiles spaced evenly on the log scale of
// 1/(1−q), as HdrHistogram plots them: ten per decade from the median up
// to the last quantile the sample supports (1 − 1/count).
func Spectrum(h *stats.Hist) []SpectrumPoint {
	n := h.Count()
	if n < 2 {
		return nil
	}
	var out []SpectrumPoint
	top := math.Log10(float64(n))
	for k := 3; float64(k)/10 <= top; k++ { // 1/(1−q) from 10^0.3 ≈ 2, the median
		q := 1 - math.Pow(10, -float64(k)/10)
		out = append(out, SpectrumPoint{Q: q, Value: h.Quantile(q)})
	}
	return out
}
