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
	for name, st := range iv.Ops {
		if !keep(name) {
			continue
		}
		f.Requests += st.Classes.Total()
		f.Errors += st.Classes.Errors()
		lat.Merge(st.Latency)
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
