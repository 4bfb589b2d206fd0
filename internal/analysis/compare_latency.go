package analysis

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"time"

	"github.com/perflab/perflab/internal/stats"
)

// MinLatencyBatches is the fewest batches of intervals per side a latency
// comparison gives an interval for (25 intervals make 5 batches of 5).
const MinLatencyBatches = 5

// LatencySide is one side of a latency comparison: its interval
// histograms in time order, or only the whole window's merged histogram.
type LatencySide struct {
	Merged    *stats.Hist   // used when Intervals is empty; then there is no interval
	Intervals []*stats.Hist // one per interval (e.g. per second): enables the 95 % interval
}

// LatencyComparison compares one latency quantile of two sides.
type LatencyComparison struct {
	Quantile float64 // e.g. 0.99
	A, B     time.Duration
	Ratio    Ratio // B / A
}

// MinCountFor is the fewest values a quantile q is given for: ⌈1 / (1 − q)⌉,
// so the quantile is not simply the maximum (2 for p50, 100 for p99, 1000
// for p99.9).
func MinCountFor(q float64) int64 {
	if q >= 1 {
		return math.MaxInt64
	}
	return int64(math.Ceil(1/(1-q) - 1e-9))
}

// CompareLatency compares quantile q of B's latency with A's, from the
// merged histograms (exact, as in the summary). With interval histograms on
// both sides, the 95 % interval is a block bootstrap over time: the
// intervals are merged into batches of ⌈√n⌉ consecutive intervals (which
// keeps most of the correlation between neighbouring seconds inside a
// batch), each resample draws as many batches as there are, with
// replacement, merges them and reads the quantile; the interval is the
// 2.5th and 97.5th percentiles of the resampled ratios. Without interval
// histograms the ratio has no interval (NoInterval). Fewer than
// MinCountFor(q) values, or fewer than MinLatencyBatches batches on a side,
// give "~".
func CompareLatency(a, b LatencySide, q float64, o BootstrapOptions) LatencyComparison {
	ma, mb := a.merged(), b.merged()
	c := LatencyComparison{Quantile: q, A: ma.Quantile(q), B: mb.Quantile(q)}
	method := fmt.Sprintf("bootstrap over batches of ⌈√n⌉ consecutive intervals' histograms: %d resamples, seed %d, 95 %% percentile interval", o.Resamples, o.Seed)
	if len(a.Intervals) == 0 || len(b.Intervals) == 0 {
		method = "point estimate from the merged histograms: no interval histograms, so no interval"
	}
	c.Ratio = newRatio(c.A.Seconds(), c.B.Seconds(), len(a.Intervals), len(b.Intervals), method)
	need := MinCountFor(q)
	if ma.Count() < need || mb.Count() < need {
		c.Ratio.Warnings = append(c.Ratio.Warnings, fmt.Sprintf("%d and %d latencies: p%s needs at least %d on each side",
			ma.Count(), mb.Count(), quantileName(q), need))
		return c
	}
	if len(a.Intervals) == 0 || len(b.Intervals) == 0 {
		c.Ratio.Significance = NoInterval
		return c
	}
	ba, bb := batches(a.Intervals), batches(b.Intervals)
	if len(ba) < MinLatencyBatches || len(bb) < MinLatencyBatches || o.Resamples < 100 {
		c.Ratio.Warnings = append(c.Ratio.Warnings, fmt.Sprintf("%d and %d intervals (%d and %d batches), %d resamples: an interval needs %d batches on each side and 100 resamples",
			len(a.Intervals), len(b.Intervals), len(ba), len(bb), o.Resamples, MinLatencyBatches))
		return c
	}
	if math.IsNaN(c.Ratio.Value) {
		return c
	}
	c.Ratio.Low, c.Ratio.High = bootstrapQuantileRatio(ba, bb, q, o)
	c.Ratio.judge()
	return c
}

func (s LatencySide) merged() *stats.Hist {
	if len(s.Intervals) == 0 {
		if s.Merged == nil {
			return stats.NewHist()
		}
		return s.Merged
	}
	h := stats.NewHist()
	for _, iv := range s.Intervals {
		h.Merge(iv)
	}
	return h
}

// quantileName is "99" for 0.99, "99.9" for 0.999.
func quantileName(q float64) string {
	return fmt.Sprintf("%g", math.Round(q*1e6)/1e4)
}

// batches merges hs into consecutive batches of ⌈√n⌉ histograms.
func batches(hs []*stats.Hist) []*stats.Hist {
	l := blockLen(len(hs))
	var out []*stats.Hist
	for i := 0; i < len(hs); i += l {
		b := stats.NewHist()
		for _, h := range hs[i:min(i+l, len(hs))] {
			b.Merge(h)
		}
		out = append(out, b)
	}
	return out
}

// sparseHist is a histogram as (bucket index, count) pairs over a shared,
// sorted list of bucket values, so a resample adds counts into one array.
type sparseHist struct {
	idx    []int
	counts []int64
}

// bootstrapQuantileRatio is the 95 % percentile interval of the resampled
// ratios quantile(B) / quantile(A).
func bootstrapQuantileRatio(ba, bb []*stats.Hist, q float64, o BootstrapOptions) (float64, float64) {
	values, sa, sb := sparse(ba, bb)
	dense := make([]int64, len(values))
	rng := o.rand()
	ratios := make([]float64, o.Resamples)
	for i := range ratios {
		qa := resampleQuantile(sa, dense, values, q, rng)
		qb := resampleQuantile(sb, dense, values, q, rng)
		ratios[i] = float64(qb) / float64(qa)
	}
	return percentileInterval(ratios)
}

// sparse lists the bucket values of every histogram of a and b in
// ascending order, and each histogram's counts against them.
func sparse(a, b []*stats.Hist) ([]time.Duration, []sparseHist, []sparseHist) {
	sides := [][]*stats.Hist{a, b}
	dists := make([][][]stats.Bucket, len(sides))
	seen := map[time.Duration]bool{}
	for s, hs := range sides {
		for _, h := range hs {
			d := h.Distribution()
			dists[s] = append(dists[s], d)
			for _, b := range d {
				seen[b.Value] = true
			}
		}
	}
	values := make([]time.Duration, 0, len(seen))
	for v := range seen {
		values = append(values, v)
	}
	slices.Sort(values)
	out := make([][]sparseHist, len(sides))
	for s := range sides {
		for _, d := range dists[s] {
			var sh sparseHist
			for _, b := range d {
				i, _ := slices.BinarySearch(values, b.Value)
				sh.idx, sh.counts = append(sh.idx, i), append(sh.counts, b.Count)
			}
			out[s] = append(out[s], sh)
		}
	}
	return values, out[0], out[1]
}

// resampleQuantile draws len(hs) histograms with replacement, adds them
// into dense and reads quantile q the way the HDR histogram does: the
// value of the bucket where the running count reaches ⌊q × total + 0.5⌋.
func resampleQuantile(hs []sparseHist, dense []int64, values []time.Duration, q float64, rng *rand.Rand) time.Duration {
	clear(dense)
	var total int64
	for range hs {
		h := hs[rng.IntN(len(hs))]
		for j, i := range h.idx {
			dense[i] += h.counts[j]
			total += h.counts[j]
		}
	}
	rank := max(1, int64(q*float64(total)+0.5))
	var cum int64
	for i, c := range dense {
		cum += c
		if cum >= rank {
			return values[i]
		}
	}
	return values[len(values)-1]
}
